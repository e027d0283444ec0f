package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

var minimalSandbox = acctest.SandboxHCL("test", "eval-0")

// Create, read, import (CLI and import block), destroy; unset arguments are
// sent with the platform's defaults and read back, and nothing retired (vm,
// guaranteed, a default start command) is sent; the second plan (run by the
// harness after every apply) is empty.
func TestAccSandbox_basic(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(minimalSandbox),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("status"), knownvalue.StringExact("RUNNING")),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("vm"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("cpu_cores"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("arch"), knownvalue.StringExact("amd64")),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("guaranteed"), knownvalue.Null()),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("start_command"), knownvalue.Null()),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("memory_gb"), knownvalue.Float64Exact(1)),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("disk_size_gb"), knownvalue.Float64Exact(5)),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("timeout_minutes"), knownvalue.Int64Exact(60)),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("gpu_count"), knownvalue.Int64Exact(0)),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("disk_mount_path"), knownvalue.StringExact("/sandbox-workspace")),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("started_at"), knownvalue.NotNull()),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("labels"), knownvalue.Null()),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("start_argv"), knownvalue.Null()),
				},
				Check: func(*terraform.State) error {
					bodies := m.CreateBodies(t)
					if len(bodies) != 1 {
						return fmt.Errorf("%d create requests, want 1", len(bodies))
					}
					// The create body, field by field: the defaults are sent;
					// no vm, arch, guaranteed or start command.
					body := bodies[0]
					key, _ := body["idempotency_key"].(string)
					if len(key) != 32 {
						return fmt.Errorf("idempotency_key = %q", key)
					}
					delete(body, "idempotency_key")
					want := map[string]any{
						"name": "eval-0", "docker_image": "python:3.12-slim",
						"cpu_cores": 1.0, "memory_gb": 1.0, "disk_size_gb": 5.0, "gpu_count": 0.0, "timeout_minutes": 60.0,
						"labels": []any{},
					}
					if !reflect.DeepEqual(body, want) {
						return fmt.Errorf("create body %v,\nwant %v", body, want)
					}
					return nil
				},
			},
			{
				ResourceName:      "prime_sandbox.test",
				ImportState:       true,
				ImportStateVerify: true,
				// timeouts is configuration only.
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				// A configuration that says only what the platform reports
				// imports without any other change (what `terraform query
				// -generate-config-out` relies on).
				ResourceName:      "prime_sandbox.test",
				ImportState:       true,
				ImportStateKind:   resource.ImportBlockWithID,
				ImportPlanChecks:  resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("prime_sandbox.test", plancheck.ResourceActionNoop)}},
				ImportStateVerify: false,
			},
		},
	})
}

// A sandbox with every argument set; import verifies them all.
func TestAccSandbox_everything(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(`
resource "prime_sandbox" "test" {
  name                 = "web"
  docker_image         = "nginx:1.27"
  arch                 = "arm64"
  start_argv           = ["/bin/sh", "-c", "sleep infinity"]
  cpu_cores            = 2
  memory_gb            = 4
  disk_size_gb         = 20
  timeout_minutes      = 120
  idle_timeout_minutes = 30
  region               = "us"
  labels               = ["eval", "run-42"]
  environment_vars     = { MODE = "test", EMPTY = "" }
  secrets              = { API_TOKEN = "s3cr3t-value" }
}
`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("vm"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("arch"), knownvalue.StringExact("arm64")),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("cpu_cores"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("labels"), knownvalue.SetExact([]knownvalue.Check{
						knownvalue.StringExact("eval"), knownvalue.StringExact("run-42")})),
					statecheck.ExpectSensitiveValue("prime_sandbox.test", tfjsonpath.New("secrets")),
				},
				Check: func(*terraform.State) error {
					body := m.CreateBodies(t)[0]
					sc, _ := body["start_command"].(map[string]any)
					if sc["executable"] != "/bin/sh" || body["arch"] != "arm64" || body["cpu_cores"] != 2.0 {
						return fmt.Errorf("create body = %v", body)
					}
					for _, retired := range []string{"vm", "guaranteed", "registry_credentials_id"} {
						if _, ok := body[retired]; ok {
							return fmt.Errorf("the create body carries the retired %s: %v", retired, body)
						}
					}
					if sec, _ := body["secrets"].(map[string]any); sec["API_TOKEN"] != "s3cr3t-value" {
						return fmt.Errorf("secrets not sent: %v", body["secrets"])
					}
					return nil
				},
			},
			{
				ResourceName:            "prime_sandbox.test",
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts", "secrets"},
			},
		},
	})
}

func TestAccSandbox_vmArgvAndGPU(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(`
resource "prime_sandbox" "test" {
  name            = "trainer"
  docker_image    = "pytorch/pytorch:latest"
  start_argv      = ["/bin/sh", "-c", "sleep infinity"]
  gpu_count       = 2
  gpu_type        = "A100"
  timeout_minutes = -1
}
`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("timeout_minutes"), knownvalue.Int64Exact(-1)),
					statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("gpu_type"), knownvalue.StringExact("A100")),
				},
				Check: func(*terraform.State) error {
					sc, _ := m.CreateBodies(t)[0]["start_command"].(map[string]any)
					if sc["executable"] != "/bin/sh" || fmt.Sprint(sc["args"]) != "[-c sleep infinity]" {
						return fmt.Errorf("start_command = %v", sc)
					}
					return nil
				},
			},
			{ResourceName: "prime_sandbox.test", ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"}},
		},
	})
}

// A start process is one-shot: when it exits, the sandbox stops, and the
// create says so (and keeps the sandbox in state, tainted, for the next
// apply to replace).
func TestAccSandbox_startProcessExitStopsSandbox(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config:      m.Config(acctest.SandboxHCL("test", "one-shot", `start_argv = ["/bin/sh", "-c", "exit 3"]`)),
			ExpectError: acctest.ExpectErr("The start command exited with code 3, which stops the sandbox"),
		}},
	})
}

// Every plan-time rule fails before any API call, with a message that names
// the attribute.
func TestAccSandbox_planTimeValidation(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"gpu type without count", `gpu_type = "A100"`, `gpu_type: needs gpu_count > 0`},
		{"gpu count without type", `gpu_count = 1`, `gpu_type: is required when gpu_count > 0`},
		{"vm false", `vm = false`, `vm: Prime retired container sandboxes on 2026-09-18; every sandbox is now a VM, and the platform answers a request for a container with HTTP 410 Gone`},
		{"guaranteed", `guaranteed = true`, `guaranteed: Prime retired container sandboxes on 2026-09-18`},
		{"guaranteed with vm", "vm = true\nguaranteed = true", `guaranteed was a container option and has no VM equivalent: remove it`},
		{"registry credentials", `registry_credentials_id = "c"`, `registry_credentials_id: Prime retired container sandboxes on 2026-09-18`},
		{"start_command", `start_command = "python app.py"`, `start_command: Prime retired container sandboxes on 2026-09-18; every sandbox is now a VM, and the platform answers a request for a container with HTTP 410 Gone. The shell-string start command was the containers' form. Use start_argv, which runs without a shell, for example start_argv = ["/bin/sh", "-c", "python app.py"]. Its process is one-shot: when it exits, the sandbox stops`},
		{"container everything", "vm = false\nguaranteed = true\nstart_command = \"x\"", `guaranteed: Prime retired container sandboxes`},
		{"fractional cpu_cores", `cpu_cores = 1.5`, `cpu_cores: must be a whole number of vCPUs (the platform takes no fractions), got 1.5`},
		{"cpu_cores zero", `cpu_cores = 0`, `cpu_cores: must be at least 1 (whole vCPUs), got 0`},
		{"bad arch", `arch = "x86"`, `arch: must be "amd64" or "arm64", got "x86"`},
		{"start_argv empty", `start_argv = []`, `start_argv: the argv form needs an executable (at least one element)`},
		{"start_argv NUL", `start_argv = ["/bin/x", "a\u0000b"]`, `start_argv: argument 1 must not contain NUL bytes`},
		{"idle below 1", `idle_timeout_minutes = 0`, `idle_timeout_minutes: must be between 1 and 1440 minutes (24 hours), got 0`},
		{"idle above a day", "timeout_minutes = -1\nidle_timeout_minutes = 1441", `idle_timeout_minutes: must be between 1 and 1440 minutes (24 hours), got 1441`},
		{"idle above timeout", "timeout_minutes = 10\nidle_timeout_minutes = 11", `idle_timeout_minutes: must not exceed timeout_minutes (10), got 11`},
		{"idle above the default timeout", `idle_timeout_minutes = 61`, `idle_timeout_minutes: must not exceed the sandbox's lifetime, 60 minutes (timeout_minutes is unset, so its default applies), got 61`},
		{"timeout zero", `timeout_minutes = 0`, `timeout_minutes: must be negative for no lifetime limit (-1) or >= 1, got 0`},
		{"memory negative", `memory_gb = -1`, `memory_gb: must be greater than 0, got -1`},
		{"disk zero", `disk_size_gb = 0`, `disk_size_gb: must be greater than 0`},
		{"empty label", `labels = ["ok", ""]`, `labels: labels must not be empty strings`},
		{"bad env name", `environment_vars = { "1X" = "v" }`, `environment_vars: "1X" is not a valid variable name`},
		{"bad secret name", `secrets = { "A-B" = "v" }`, `secrets: "A-B" is not a valid variable name`},
		{"bad write-only secret name", `secrets_wo = { "A B" = "v" }`, `secrets_wo: "A B" is not a valid variable name`},
		{"empty name", `name2 = ""`, `Attribute name string length must be at least 1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mocktest.New(t, mocktest.Fast())
			name := `name = "x"`
			body := tc.body
			if strings.HasPrefix(body, "name2") {
				name, body = `name = ""`, ""
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProviderFactories(t),
				Steps: []resource.TestStep{{
					Config: m.Config(fmt.Sprintf(`
resource "prime_sandbox" "test" {
  %s
  docker_image = "img"
  %s
}
`, name, body)),
					PlanOnly:    true,
					ExpectError: acctest.ExpectErr(tc.want),
				}},
			})
			m.NoAPICalls(t)
		})
	}
}

// A value only known after apply skips the rules that depend on it rather
// than failing or guessing.
func TestAccSandbox_unknownValuesDeferValidation(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(`
resource "prime_sandbox" "base" {
  name         = "base"
  docker_image = "img"
}
resource "prime_sandbox" "test" {
  name                 = "dependent"
  docker_image         = "img"
  timeout_minutes      = length(prime_sandbox.base.id)
  idle_timeout_minutes = 20
}
`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("idle_timeout_minutes"), knownvalue.Int64Exact(20)),
			},
		}},
	})
}

// A sandbox deleted behind Terraform's back is recreated on the next apply.
func TestAccSandbox_driftDeletedOutOfBand(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	var firstID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(minimalSandbox),
				Check: func(s *terraform.State) (err error) {
					firstID, err = acctest.StateID(s, "prime_sandbox.test")
					return err
				},
			},
			{
				PreConfig: func() {
					if err := m.Client(t).DeleteSandbox(mocktest.WaitCtx(t), firstID); err != nil {
						t.Fatal(err)
					}
				},
				Config: m.Config(minimalSandbox),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("prime_sandbox.test", plancheck.ResourceActionCreate)},
				},
				Check: func(s *terraform.State) error {
					id, err := acctest.StateID(s, "prime_sandbox.test")
					if err == nil && id == firstID {
						err = fmt.Errorf("the deleted sandbox %s is still in state", id)
					}
					return err
				},
			},
		},
	})
}

// A sandbox that goes to ERROR while booting fails the apply with the
// platform's error type and message.
func TestAccSandbox_bootErrorFailsApply(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(`
resource "prime_sandbox" "test" {
  name         = "broken"
  docker_image = "prime-mock/error:latest"
}
`),
			ExpectError: acctest.ExpectErr("is ERROR (IMAGE_PULL_FAILED)"),
		}},
	})
	if got := m.Stats().SandboxesCreated; got != 1 {
		t.Fatalf("sandboxes created = %d, want 1", got)
	}
	if !hasEvent(m.Events(), primemock.EventSandboxError) {
		t.Fatal("the mock never put the sandbox in ERROR")
	}
}

// A create that times out while the sandbox is still booting leaves the ID
// in state (tainted): the next plan replaces that sandbox instead of
// creating a second, untracked one; destroy removes it.
func TestAccSandbox_createTimeoutKeepsIDInState(t *testing.T) {
	o := mocktest.Fast()
	o.ImageBuildDelay = time.Hour // a first-use VM image build that never ends
	m := mocktest.New(t, o)
	cfg := m.Config(`
resource "prime_sandbox" "test" {
  name         = "slow"
  docker_image = "prime-mock/build:v1"
  timeouts {
    create      = "1s"
    image_build = "2s"
  }
}
`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config:      cfg,
				ExpectError: acctest.ExpectErr("the VM image build for sandbox"),
			},
			{
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectResourceAction("prime_sandbox.test", plancheck.ResourceActionReplace)},
				},
			},
		},
	})
	if got := m.Stats().SandboxesCreated; got != 1 {
		t.Fatalf("sandboxes created = %d, want 1", got)
	}
}

// secrets_wo reaches the platform and never the state.
func TestAccSandbox_writeOnlySecretsStayOutOfState(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	const secret = "wo-s3cret-value-123"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(fmt.Sprintf(`
resource "prime_sandbox" "test" {
  name               = "wo"
  docker_image       = "img"
  secrets_wo         = { API_TOKEN = %q }
  secrets_wo_version = 1
}
`, secret)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("secrets_wo"), knownvalue.Null()),
				statecheck.ExpectKnownValue("prime_sandbox.test", tfjsonpath.New("secrets"), knownvalue.Null()),
			},
			Check: func(s *terraform.State) error {
				for addr, rs := range s.RootModule().Resources {
					for k, v := range rs.Primary.Attributes {
						if strings.Contains(v, secret) {
							return fmt.Errorf("%s.%s holds the write-only secret", addr, k)
						}
					}
				}
				sec, _ := m.CreateBodies(t)[0]["secrets"].(map[string]any)
				if sec["API_TOKEN"] != secret {
					return fmt.Errorf("the secret was not sent: %v", sec)
				}
				return nil
			},
		}},
	})
}

// Twenty sandboxes in one apply are polled together: status rounds name
// several sandboxes at once, so the mock sees fewer status:batchGet
// requests than sandbox ids they named, and at most one per-sandbox GET
// each. The check counts requests and ids, never time: the first create is
// held until a second one arrives, so two sandboxes always boot (800 ms on
// the mock's clock) side by side, whatever the load on the machine.
func TestAccSandbox_fleetStatusIsBatched(t *testing.T) {
	o := mocktest.Fast()
	o.BootDelay = 800 * time.Millisecond
	second := make(chan struct{})
	var creates atomic.Int32
	m := mocktest.NewHooked(t, o, func(_ http.ResponseWriter, r *http.Request, _ []byte) bool {
		if r.Method == http.MethodPost && r.URL.Path == prime.APIPrefix+"/sandbox" {
			switch creates.Add(1) {
			case 1:
				<-second // Terraform creates ten at a time: a second one comes
			case 2:
				close(second)
			}
		}
		return false
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: m.Config(`
resource "prime_sandbox" "fleet" {
  count        = 20
  name         = "eval-${count.index}"
  docker_image = "img"
  labels       = ["fleet"]
}
`),
			Check: func(*terraform.State) error {
				batches, named := 0, 0
				for _, r := range m.Requests() {
					if r.Method != http.MethodPost || r.Path != prime.APIPrefix+"/sandbox/status:batchGet" {
						continue
					}
					var body prime.BatchStatusRequest
					if err := json.Unmarshal(r.Body, &body); err != nil {
						return fmt.Errorf("status:batchGet body %s: %w", r.Body, err)
					}
					batches++
					named += len(body.SandboxIDs)
				}
				if batches == 0 || batches >= named {
					return fmt.Errorf("%d status:batchGet requests named %d sandbox ids: no round polled two sandboxes together", batches, named)
				}
				if gets := m.Stats().Requests["GET /api/v1/sandbox/{id}"]; gets > 20 {
					return fmt.Errorf("%d per-sandbox GETs during create, want at most one read per sandbox", gets)
				}
				t.Logf("20 sandboxes: %d status:batchGet requests named %d ids", batches, named)
				return nil
			},
		}},
	})
}

func TestAccSandboxDataSources(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{
			{
				Config: m.Config(`
resource "prime_sandbox" "a" {
  name         = "a"
  docker_image = "img"
  labels       = ["eval", "team-x"]
}
resource "prime_sandbox" "b" {
  name         = "b"
  docker_image = "img"
  labels       = ["eval"]
}
`),
			},
			{
				Config: m.Config(`
resource "prime_sandbox" "a" {
  name         = "a"
  docker_image = "img"
  labels       = ["eval", "team-x"]
}
resource "prime_sandbox" "b" {
  name         = "b"
  docker_image = "img"
  labels       = ["eval"]
}
data "prime_sandbox" "a" {
  id = prime_sandbox.a.id
}
data "prime_sandboxes" "both" {
  labels     = ["eval"]
  depends_on = [prime_sandbox.a, prime_sandbox.b]
}
data "prime_sandboxes" "team" {
  labels     = ["eval", "team-x"]
  status     = "RUNNING"
  depends_on = [prime_sandbox.a, prime_sandbox.b]
}
`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrPair("data.prime_sandbox.a", "name", "prime_sandbox.a", "name"),
					resource.TestCheckResourceAttr("data.prime_sandbox.a", "status", "RUNNING"),
					resource.TestCheckResourceAttr("data.prime_sandboxes.both", "ids.#", "2"),
					resource.TestCheckResourceAttr("data.prime_sandboxes.both", "sandboxes.#", "2"),
					resource.TestCheckResourceAttr("data.prime_sandboxes.team", "ids.#", "1"),
					resource.TestCheckResourceAttrPair("data.prime_sandboxes.team", "ids.0", "prime_sandbox.a", "id"),
					resource.TestCheckResourceAttr("data.prime_sandboxes.team", "sandboxes.0.name", "a"),
				),
			},
		},
	})
}

func TestAccSandboxDataSource_unknownID(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories(t),
		Steps: []resource.TestStep{{
			Config:      m.Config(`data "prime_sandbox" "x" { id = "does-not-exist" }`),
			ExpectError: acctest.ExpectErr(`No sandbox has the ID "does-not-exist"`),
		}},
	})
}

func hasEvent(events []primemock.Event, typ string) bool {
	for _, e := range events {
		if e.Type == typ {
			return true
		}
	}
	return false
}
