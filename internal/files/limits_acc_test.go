package files_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// The platform's file limits (the 2026 files guide): 16 MiB per uploaded
// file, 10 MiB per read.

// A 40 MiB binary source and a 40 MiB source_dir go up and come back
// byte-identical through the artifacts, although no upload request may
// carry more than 16 MiB: both go up in parts, joined and checked in the
// sandbox; nothing temporary stays beside them; the second plan is empty.
func TestAccSandboxFile_overTheUploadLimit(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	dir := t.TempDir()
	random := func(n int) []byte {
		b := make([]byte, n)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	blob := random(40 << 20)
	blobPath := filepath.Join(dir, "blob.bin")
	if err := os.WriteFile(blobPath, blob, 0o600); err != nil {
		t.Fatal(err)
	}
	task := filepath.Join(dir, "task")
	if err := os.MkdirAll(filepath.Join(task, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	dataset := random(40 << 20)
	if err := os.WriteFile(filepath.Join(task, "data", "dataset.bin"), dataset, 0o600); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(task, "task.json"), `{"id":"big"}`)
	outBlob := filepath.Join(dir, "out", "blob.bin")
	outTask := filepath.Join(dir, "out", "task")
	hcl := m.Config(fmt.Sprintf(acctest.SandboxHCL("box", "big-files")+`
resource "prime_sandbox_file" "blob" {
  sandbox_id = prime_sandbox.box.id
  path       = "/data/in/blob.bin"
  source     = %q
}

resource "prime_sandbox_file" "task" {
  sandbox_id = prime_sandbox.box.id
  path       = "/task"
  source_dir = %q
}

resource "prime_sandbox_artifact" "blob" {
  sandbox_id      = prime_sandbox_file.blob.sandbox_id
  remote_path     = prime_sandbox_file.blob.path
  local_path      = %q
  max_size        = 67108864
  keep_on_destroy = false
}

resource "prime_sandbox_artifact" "task" {
  sandbox_id      = prime_sandbox_file.task.sandbox_id
  remote_path     = prime_sandbox_file.task.path
  kind            = "directory"
  local_path      = %q
  max_size        = 67108864
  keep_on_destroy = false
}
`, blobPath, task, outBlob, outTask))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: hcl,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("prime_sandbox_file.blob", "sha256", acctest.SHA256Hex(blob)),
				resource.TestCheckResourceAttr("prime_sandbox_file.blob", "size", fmt.Sprint(len(blob))),
				func(s *terraform.State) error {
					if got, err := os.ReadFile(outBlob); err != nil || !bytes.Equal(got, blob) {
						return fmt.Errorf("the blob came back as %d bytes (%w), not the %d sent", len(got), err, len(blob))
					}
					got, err := os.ReadFile(filepath.Join(outTask, "data", "dataset.bin"))
					if err != nil || !bytes.Equal(got, dataset) {
						return fmt.Errorf("the dataset came back as %d bytes (%w), not the %d sent", len(got), err, len(dataset))
					}
					if got, err := os.ReadFile(filepath.Join(outTask, "task.json")); err != nil || string(got) != `{"id":"big"}` {
						return fmt.Errorf("task.json came back as %q (%w)", got, err)
					}
					id := sandboxIDOf(s, "prime_sandbox_file.blob")
					return checkUploadsUnderTheLimit(m, id, "/data/in", "/")
				},
			),
		}, {
			Config:   hcl,
			PlanOnly: true,
		}},
	})
}

// checkUploadsUnderTheLimit: no upload to the sandbox was over 16 MiB, and
// the directories hold no temporary upload.
func checkUploadsUnderTheLimit(m *mocktest.Mock, id string, dirs ...string) error {
	parts := 0
	for _, e := range m.Events() {
		if e.Type != primemock.EventFileUploaded || e.SandboxID != id {
			continue
		}
		if e.Size > prime.MaxUploadBytes {
			return fmt.Errorf("an upload of %d bytes to %s: over the 16 MiB limit", e.Size, e.Path)
		}
		if strings.Contains(e.Path, ".part") {
			parts++
		}
	}
	if parts < 6 {
		return fmt.Errorf("%d part uploads, want at least 6 (3 per 40 MiB source)", parts)
	}
	for _, d := range dirs {
		files, err := m.ListFiles(id, d)
		if err != nil {
			return err
		}
		for _, f := range files {
			if strings.HasPrefix(f.Name, ".prime-upload-") {
				return fmt.Errorf("%s/%s: a temporary upload stayed behind", d, f.Name)
			}
		}
	}
	return nil
}

// The file data sources read at most 10 MiB, the platform's read limit: a
// larger max_size is refused at plan time, before any request, pointing
// to the artifact resources.
func TestAccSandboxFileData_readCap(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var steps []resource.TestStep
	for _, name := range []string{"prime_sandbox_file", "prime_fleet_file"} {
		ids := `sandbox_id = "sbx"`
		if name == "prime_fleet_file" {
			ids = `sandbox_ids = { a = "sbx" }`
		}
		steps = append(steps, resource.TestStep{
			Config: m.Config(fmt.Sprintf("data %q \"big\" {\n  %s\n  path = \"/r/big\"\n  max_size = 16777216\n}\n", name, ids)),
			ExpectError: acctest.ExpectInOrder(`max_size 16777216 is over 10485760 bytes (10 MiB), the platform's limit on reading a file`,
				`prime_sandbox_artifact`),
		})
	}
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: acctest.ProviderFactories(t), Steps: steps})
	m.NoAPICalls(t)
}
