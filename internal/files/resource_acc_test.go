package files_test

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// fileSandboxHCL is one VM sandbox for the file tests.
var fileSandboxHCL = acctest.SandboxHCL("box", "files")

// sandboxIDOf reads a resource's sandbox_id (or id) from state.
func sandboxIDOf(s *terraform.State, addr string) string {
	rs := s.RootModule().Resources[addr]
	if rs == nil {
		return ""
	}
	if id := rs.Primary.Attributes["sandbox_id"]; id != "" {
		return id
	}
	return rs.Primary.ID
}

// A task directory goes up as one archive and is unpacked in the sandbox;
// a binary file with NUL bytes goes up and comes back byte-identical,
// through the data source (small) and an artifact (to disk); a second plan
// is empty, an unchanged directory plans nothing and a changed one plans a
// replacement; destroy removes the files.
func TestAccSandboxFile_roundTrip(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	dir := t.TempDir()
	task := filepath.Join(dir, "task")
	if err := os.MkdirAll(filepath.Join(task, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(task, "task.json"), `{"id":"t1"}`)
	writeFile(t, filepath.Join(task, "sub", "run.sh"), "echo run\n")
	blob := make([]byte, 5<<20)
	if _, err := rand.Read(blob); err != nil {
		t.Fatal(err)
	}
	copy(blob[100:], []byte{0, 0, 0, 0})
	blobPath := filepath.Join(dir, "blob.bin")
	if err := os.WriteFile(blobPath, blob, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out", "blob.bin")
	hcl := func() string {
		return m.Config(fileSandboxHCL + fmt.Sprintf(`
resource "prime_sandbox_file" "task" {
  sandbox_id = prime_sandbox.box.id
  path       = "/task"
  source_dir = %q
}

resource "prime_sandbox_file" "blob" {
  sandbox_id = prime_sandbox.box.id
  path       = "/data/in/blob.bin"
  source     = %q
  mode       = "0640"
}

resource "prime_sandbox_file" "note" {
  sandbox_id = prime_sandbox.box.id
  path       = "/notes/note.txt"
  content    = "hello"
}

data "prime_sandbox_file" "note" {
  sandbox_id = prime_sandbox_file.note.sandbox_id
  path       = prime_sandbox_file.note.path
}

resource "prime_sandbox_artifact" "blob" {
  sandbox_id  = prime_sandbox_file.blob.sandbox_id
  remote_path = prime_sandbox_file.blob.path
  local_path  = %q
  keep_on_destroy = false
}
`, task, blobPath, out))
	}
	var id string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: hcl(),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("prime_sandbox_file.blob", "sha256", acctest.SHA256Hex(blob)),
					resource.TestCheckResourceAttr("prime_sandbox_file.blob", "size", fmt.Sprint(len(blob))),
					resource.TestCheckResourceAttr("data.prime_sandbox_file.note", "content", "hello"),
					resource.TestCheckResourceAttr("data.prime_sandbox_file.note", "sha256", acctest.SHA256Hex([]byte("hello"))),
					resource.TestCheckResourceAttr("prime_sandbox_artifact.blob", "files.0.sha256", acctest.SHA256Hex(blob)),
					func(s *terraform.State) error {
						id = sandboxIDOf(s, "prime_sandbox.box")
						for name, want := range map[string]string{"/task/task.json": `{"id":"t1"}`, "/task/sub/run.sh": "echo run\n", "/notes/note.txt": "hello"} {
							got, ok := m.ReadFile(id, name)
							if !ok || string(got) != want {
								return fmt.Errorf("%s in the sandbox: %q (exists %t), want %q", name, got, ok, want)
							}
						}
						got, ok := m.ReadFile(id, "/data/in/blob.bin")
						if !ok || !bytes.Equal(got, blob) {
							return fmt.Errorf("the uploaded blob differs (exists %t, %d bytes)", ok, len(got))
						}
						back, err := os.ReadFile(out)
						if err != nil || !bytes.Equal(back, blob) {
							return fmt.Errorf("the downloaded blob differs (%w, %d bytes)", err, len(back))
						}
						if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*prime-download*")); len(leftovers) > 0 {
							return fmt.Errorf("temporary files left behind: %v", leftovers)
						}
						return nil
					},
				),
			},
			{
				// Unchanged sources plan nothing.
				Config:             hcl(),
				PlanOnly:           true,
				ExpectNonEmptyPlan: false,
			},
			{
				// A changed file in the directory is a planned replacement.
				PreConfig: func() { writeFile(t, filepath.Join(task, "task.json"), `{"id":"t2"}`) },
				Config:    hcl(),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("prime_sandbox_file.task", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction("prime_sandbox_file.blob", plancheck.ResourceActionNoop),
				}},
				Check: func(*terraform.State) error {
					if got, _ := m.ReadFile(id, "/task/task.json"); string(got) != `{"id":"t2"}` {
						return fmt.Errorf("task.json after the change: %q", got)
					}
					return nil
				},
			},
			{
				// Destroy removes the uploads and, with keep_on_destroy =
				// false, the download.
				Config:  hcl(),
				Destroy: true,
				Check: func(*terraform.State) error {
					if _, err := os.Stat(out); !os.IsNotExist(err) {
						return fmt.Errorf("the download is still there: %w", err)
					}
					return nil
				},
			},
		},
	})
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Bad input fails at plan time, before any API call, naming the attribute.
func TestAccSandboxFile_planTimeErrors(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	missing := filepath.Join(t.TempDir(), "no-such-file")
	step := func(body string, want ...string) resource.TestStep {
		return resource.TestStep{
			Config: m.Config(`
resource "prime_sandbox_file" "f" {
  sandbox_id = "sbx-1"
` + body + `
}`),
			PlanOnly:    true,
			ExpectError: acctest.ExpectInOrder(want...),
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{
			step(`path = "task/x.json"`+"\n"+`content = "x"`, `path: "task/x.json" is relative`),
			step(`path = "/task/x"`+"\n"+`content = "x"`+"\n"+`source = "x"`, `content and source are all set; set exactly one of`),
			step(`path = "/task/x"`, `set exactly one of content, content_base64, content_wo, source, source_dir`),
			step(`path = "/task/x"`+"\n"+fmt.Sprintf(`source = %q`, missing), `source: local file`, `no-such-file": does not exist`),
			step(`path = "/task/x"`+"\n"+`content = "x"`+"\n"+`mode = "rw-r--r--"`, `mode: "rw-r--r--" is not an octal mode`),
			step(`path = "/task/x"`+"\n"+`content = "x"`+"\n"+`mode = "0999"`, `mode: "0999" is not an octal mode`),
			step(`path = "/task/x"`+"\n"+`content_base64 = "not base64!"`, `content_base64: not valid base64`),
			step(`path = "/task/"`+"\n"+`content = "x"`, `is not clean`),
		},
	})
	m.NoAPICalls(t)
}

// A file whose bytes are not text reads as content_base64 only; one over
// max_size is refused with an error that points to the artifacts; a
// missing one is an error unless allow_missing; sensitive content is kept
// out of content.
func TestAccSandboxFileData_limits(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	sb := m.RunningVM(t, "reads")
	if err := m.WriteFile(sb, "/r/bin", []byte{0xff, 0xfe, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile(sb, "/r/big", bytes.Repeat([]byte("x"), 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile(sb, "/r/secret", []byte(`{"key":"s3cr3t-value"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	data := func(name, body string) string {
		return fmt.Sprintf("data \"prime_sandbox_file\" %q {\n  sandbox_id = %q\n%s\n}\n", name, sb, body)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{
			{
				Config: m.Config(data("bin", `path = "/r/bin"`) + data("none", `path = "/r/none"`+"\n"+`allow_missing = true`) +
					data("secret", `path = "/r/secret"`+"\n"+`sensitive = true`)),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr("data.prime_sandbox_file.bin", "content"),
					resource.TestCheckResourceAttr("data.prime_sandbox_file.bin", "content_base64", base64.StdEncoding.EncodeToString([]byte{0xff, 0xfe, 0})),
					resource.TestCheckResourceAttr("data.prime_sandbox_file.none", "exists", "false"),
					resource.TestCheckNoResourceAttr("data.prime_sandbox_file.secret", "content"),
					resource.TestCheckResourceAttr("data.prime_sandbox_file.secret", "sensitive_content.content", `{"key":"s3cr3t-value"}`),
				),
			},
			{
				Config:      m.Config(data("big", `path = "/r/big"`+"\n"+`max_size = 1024`)),
				ExpectError: acctest.ExpectInOrder(`/r/big in sandbox`, `is larger than max_size (1024 bytes)`, `prime_sandbox_artifact`),
			},
			{
				Config:      m.Config(data("none", `path = "/r/none"`)),
				ExpectError: acctest.ExpectInOrder(`there is no file /r/none in sandbox ` + sb),
			},
		},
	})
}

// The sandbox is untrusted: an archive the agent wrote, holding ../escape,
// an absolute name and a symlink to /etc with a file under it, writes
// nothing outside its destination and names what it refused.
func TestAccSandboxArtifact_hostileArchive(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	sb := m.RunningVM(t, "hostile")
	archive := hostileTar(t)
	if err := m.WriteFile(sb, "/results/out.tar", archive, 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dest := filepath.Join(root, "safe", "results")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config: m.Config(fmt.Sprintf(`
resource "prime_sandbox_artifact" "out" {
  sandbox_id  = %q
  remote_path = "/results/out.tar"
  kind        = "archive"
  local_path  = %q
}
`, sb, dest)),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("prime_sandbox_artifact.out", "files.#", "1"),
				resource.TestCheckResourceAttr("prime_sandbox_artifact.out", "files.0.path", filepath.Join(dest, "ok.txt")),
				resource.TestCheckResourceAttr("prime_sandbox_artifact.out", "refused.#", "4"),
				func(*terraform.State) error {
					var outside []string
					err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
						if err != nil {
							return err
						}
						if !strings.HasPrefix(p, dest) && !info.IsDir() {
							outside = append(outside, p)
						}
						if info.Mode()&os.ModeSymlink != 0 {
							outside = append(outside, "symlink "+p)
						}
						return nil
					})
					if err != nil || len(outside) > 0 {
						return fmt.Errorf("written outside %s: %v (%w)", dest, outside, err)
					}
					return nil
				},
			),
		}},
	})
}

// hostileTar is an archive an untrusted agent might write: one honest
// file, and entries that try to leave the destination.
func hostileTar(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(h *tar.Header, body string) {
		h.Size = int64(len(body))
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if body != "" {
			if _, err := tw.Write([]byte(body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(&tar.Header{Name: "ok.txt", Typeflag: tar.TypeReg}, "fine")
	add(&tar.Header{Name: "../escape", Typeflag: tar.TypeReg}, "escaped")
	add(&tar.Header{Name: "/abs/passwd", Typeflag: tar.TypeReg}, "root")
	add(&tar.Header{Name: "etc", Typeflag: tar.TypeSymlink, Linkname: "/etc"}, "")
	add(&tar.Header{Name: "etc/evil", Typeflag: tar.TypeReg}, "through the link")
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A result directory (archived by tar in the sandbox) that holds a
// symbolic link to /etc downloads its files, never the link, and names it.
func TestAccSandboxArtifact_directoryWithSymlink(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	sb := m.RunningVM(t, "symlinked")
	res, err := m.Client(t).Exec(mocktest.WaitCtx(t), sb, prime.ExecRequest{
		Command: "mkdir -p /results/sub && echo ok > /results/sub/ok.txt && ln -s /etc /results/etc && ln -s ../../etc/hostname /results/sub/host",
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("preparing the directory: %v %+v", err, res)
	}
	root := t.TempDir()
	dest := filepath.Join(root, "out")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config: m.Config(fmt.Sprintf(`
resource "prime_sandbox_artifact" "out" {
  sandbox_id  = %q
  remote_path = "/results"
  kind        = "directory"
  local_path  = %q
}
`, sb, dest)),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("prime_sandbox_artifact.out", "files.#", "1"),
				resource.TestCheckResourceAttr("prime_sandbox_artifact.out", "files.0.path", filepath.Join(dest, "sub", "ok.txt")),
				resource.TestCheckResourceAttr("prime_sandbox_artifact.out", "refused.#", "2"),
				func(*terraform.State) error {
					return filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
						if err != nil {
							return err
						}
						if info.Mode()&os.ModeSymlink != 0 {
							return fmt.Errorf("a link was created: %s", p)
						}
						return nil
					})
				},
			),
		}},
	})
}
