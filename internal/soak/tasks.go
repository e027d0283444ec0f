package soak

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// TaskFleet is an evaluation's shape on the fleet path: one
// prime_sandbox_fleet, optionally a prime_fleet_file putting a task
// directory on every member, one prime_fleet_command (the agent), and
// optionally a prime_fleet_file data source reading every member's result
// after the agent ran. The benchmark's file and background-job runs render
// it with and without the parts they measure.
type TaskFleet struct {
	N       int
	BaseURL string
	// Image defaults to python:3.12-slim.
	Image string
	// TaskDir, when set, is the local directory prime_fleet_file "task"
	// unpacks into TaskPath on every member (the agent runs after it).
	TaskDir string
	// Command is the agent's one step (default ResultCommand).
	Command string
	// Background runs the agent as a background job.
	Background bool
	// MaxConcurrency of the agent (0: the resource's default).
	MaxConcurrency int
	// ReadResult adds data "prime_fleet_file" "result", reading
	// ResultPath from every member the agent ran on.
	ReadResult bool
	// ProviderExtra is added to the provider block verbatim.
	ProviderExtra string
	// Prefix is the fleet's name_prefix (default "fleet").
	Prefix string
}

// Paths and addresses of a TaskFleet.
const (
	TaskPath       = "/task"
	ResultPath     = "/task/result.json"
	TaskFileAddr   = "prime_fleet_file.task"
	AgentFleetAddr = "prime_fleet_command.agent"
	ResultDataAddr = "data.prime_fleet_file.result"
)

// ResultCommand writes a small result file; it creates TaskPath itself so
// the same command runs with and without the task directory.
const ResultCommand = `mkdir -p /task && echo "{\"reward\": 1}" > /task/result.json`

// ResultContent is what ResultCommand writes.
const ResultContent = "{\"reward\": 1}\n"

// HCL renders the configuration.
func (f TaskFleet) HCL() string {
	var b strings.Builder
	fmt.Fprintf(&b, `terraform {
  required_providers {
    prime = { source = "primeintellect/prime" }
  }
}

provider "prime" {
  base_url = %q
  api_key  = %q
%s}

resource "prime_sandbox_fleet" "fleet" {
  name_prefix  = %q
  size         = %d
  docker_image = %q
}
`, f.BaseURL, APIKey, indent(f.ProviderExtra), orStr(f.Prefix, "fleet"), f.N, orStr(f.Image, "python:3.12-slim"))
	deps := ""
	if f.TaskDir != "" {
		fmt.Fprintf(&b, `
resource "prime_fleet_file" "task" {
  sandbox_ids = prime_sandbox_fleet.fleet.sandbox_ids
  path        = %q
  source_dir  = %q
}
`, TaskPath, f.TaskDir)
		deps = "  depends_on  = [prime_fleet_file.task]\n"
	}
	extra := ""
	if f.Background {
		extra += "  background  = true\n"
	}
	if f.MaxConcurrency > 0 {
		extra += fmt.Sprintf("  max_concurrency = %d\n", f.MaxConcurrency)
	}
	fmt.Fprintf(&b, `
resource "prime_fleet_command" "agent" {
  sandbox_ids = prime_sandbox_fleet.fleet.sandbox_ids
  commands    = [%q]
%s%s}
`, orStr(f.Command, ResultCommand), extra, deps)
	if f.ReadResult {
		fmt.Fprintf(&b, `
data "prime_fleet_file" "result" {
  sandbox_ids = { for k, r in prime_fleet_command.agent.results : k => r.sandbox_id }
  path        = %q
}
`, ResultPath)
	}
	return b.String()
}

// TaskArchive describes a generated task directory: the tar archive
// prime_fleet_file uploads for it (prime.WriteDirTar's, the provider's own).
type TaskArchive struct {
	Dir    string
	Size   int64
	SHA256 string
}

// taskDataFile is the incompressible part of a generated task directory.
const taskDataFile = "data.bin"

// WriteTaskDir creates dir as a task directory whose archive is size bytes
// (exactly, when size is a multiple of 512 and at least a few KiB): a small
// task.json, a run.sh, and data.bin of pseudo-random bytes from seed
// (incompressible, and the same for the same seed, so runs compare).
func WriteTaskDir(dir string, size int64, seed int64) (TaskArchive, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return TaskArchive{}, err
	}
	small := map[string]string{
		"task.json": `{"task": "bench", "inputs": "data.bin"}` + "\n",
		"run.sh":    "#!/bin/sh\nsha256sum /task/data.bin\n",
	}
	for name, content := range small {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return TaskArchive{}, err
		}
	}
	data := filepath.Join(dir, taskDataFile)
	if err := writeRandom(data, 0, seed); err != nil {
		return TaskArchive{}, err
	}
	overhead, err := prime.WriteDirTar(io.Discard, dir)
	if err != nil {
		return TaskArchive{}, err
	}
	n := (size - overhead) / 512 * 512
	if n < 0 {
		return TaskArchive{}, fmt.Errorf("an archive of %d bytes is smaller than the task directory's %d bytes of headers", size, overhead)
	}
	if err := writeRandom(data, n, seed); err != nil {
		return TaskArchive{}, err
	}
	return ArchiveOf(dir)
}

// ArchiveOf is dir's archive as the provider builds it.
func ArchiveOf(dir string) (TaskArchive, error) {
	h := sha256.New()
	n, err := prime.WriteDirTar(h, dir)
	if err != nil {
		return TaskArchive{}, err
	}
	return TaskArchive{Dir: dir, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

func writeRandom(path string, n, seed int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600) //nolint:gosec // the benchmark's own work directory
	if err != nil {
		return err
	}
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:8], uint64(seed)) //nolint:gosec // a seed: its bits, not its value
	_, werr := io.CopyN(f, rand.NewChaCha8(key), n)
	return errors.Join(werr, f.Close())
}
