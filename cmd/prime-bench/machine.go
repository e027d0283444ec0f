package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/soak"
)

type machine struct {
	date       time.Time
	nproc      int
	cpu        string
	memTotal   string
	kernel     string
	goVersion  string
	terraform  string
	loadStart  string
	loadEnd    string
	hostGoarch string
}

func machineFacts(terraform string) machine {
	m := machine{
		date:       time.Now().UTC(),
		nproc:      runtime.NumCPU(),
		goVersion:  runtime.Version(),
		hostGoarch: runtime.GOOS + "/" + runtime.GOARCH,
		loadStart:  loadAvg(),
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				if kib, err := strconv.ParseFloat(f[1], 64); err == nil {
					m.memTotal = fmt.Sprintf("%.1f GiB", kib/(1<<20))
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = strings.TrimSpace(string(b))
	}
	m.terraform = terraformVersion(terraform)
	if m.terraform == "" {
		m.terraform = "unknown (" + terraform + ")"
	}
	return m
}

// terraformVersion asks terraform for its version, in a throwaway home
// like every other terraform process of the benchmark (soak.IsolatedEnv).
// It returns "" when that fails.
func terraformVersion(terraform string) string {
	home, err := os.MkdirTemp("", "prime-bench-home-")
	if err != nil {
		return ""
	}
	defer func() { _ = os.RemoveAll(home) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, terraform, "version", "-json")
	cmd.Env = soak.IsolatedEnv(home)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if json.Unmarshal(out, &v) != nil {
		return ""
	}
	return v.Version
}

// loadAvg is the 1/5/15-minute load average: the machine is shared, so
// figures taken under load are flagged by it.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
