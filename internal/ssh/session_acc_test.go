package ssh_test

import (
	"net/http"
	"path"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/echoprovider"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// testPublicKey is a well-formed OpenSSH public key line.
const testPublicKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHk3c2FuZGJveC1zc2gtdGVzdC1rZXktMDAwMDAwMDAw tester@example"

// withEcho adds the echo provider, which copies an ephemeral value into a
// resource's state: the only way a test sees what Open returned.
func withEcho(t *testing.T) map[string]func() (tfprotov6.ProviderServer, error) {
	f := acctest.ProviderFactories(t)
	f["echo"] = echoprovider.NewProviderServer()
	return f
}

// An SSH session is opened for the run and closed at its end: the echo
// resource sees host, port and ttl; the mock saw every opened session
// closed by request.
func TestAccSSHSession_openClose(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	cfg := m.Config(acctest.SandboxHCL("box", "debug-me") + `ephemeral "prime_sandbox_ssh_session" "debug" {
  sandbox_id  = prime_sandbox.box.id
  public_key  = "` + testPublicKey + `"
  ttl_seconds = 600
}
provider "echo" {
  data = ephemeral.prime_sandbox_ssh_session.debug
}
resource "echo" "session" {}
`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: withEcho(t),
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_10_0)},
		CheckDestroy:             m.CheckNoLiveSandboxes,
		Steps: []resource.TestStep{{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("echo.session", tfjsonpath.New("data").AtMapKey("ttl_seconds"), knownvalue.Int64Exact(600)),
				statecheck.ExpectKnownValue("echo.session", tfjsonpath.New("data").AtMapKey("host"), knownvalue.StringExact("127.0.0.1")),
				statecheck.ExpectKnownValue("echo.session", tfjsonpath.New("data").AtMapKey("port"), knownvalue.NotNull()),
				statecheck.ExpectKnownValue("echo.session", tfjsonpath.New("data").AtMapKey("session_id"), knownvalue.NotNull()),
				statecheck.ExpectKnownValue("echo.session", tfjsonpath.New("data").AtMapKey("expires_at"), knownvalue.NotNull()),
			},
		}},
	})
	// Every session the provider opened, it asked to close (the destroy
	// run's closes after the sandbox is gone, which the platform has
	// already ended with it: a 404 that counts as closed), and the mock
	// holds none open.
	opened, closedByEnd := map[string]bool{}, map[string]string{}
	for _, e := range m.Events() {
		switch e.Type {
		case primemock.EventSSHOpened:
			opened[e.SessionID] = true
		case primemock.EventSSHClosed:
			closedByEnd[e.SessionID] = e.Message
		}
	}
	closeRequests := map[string]bool{}
	for _, r := range m.Requests() {
		if r.Method == http.MethodDelete && strings.Contains(r.Path, "/ssh-session/") {
			closeRequests[path.Base(r.Path)] = true
		}
	}
	if len(opened) == 0 {
		t.Fatal("no SSH session was opened")
	}
	for id := range opened {
		if !closeRequests[id] {
			t.Errorf("session %s was opened but the provider never asked to close it", id)
		}
		if closedByEnd[id] == "" {
			t.Errorf("session %s is still open on the platform", id)
		}
	}
}

// A private key in public_key is refused at validation, before any request.
func TestAccSSHSession_privateKeyRefused(t *testing.T) {
	m := mocktest.New(t, mocktest.Fast())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: withEcho(t),
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_10_0)},
		Steps: []resource.TestStep{{
			Config: m.Config(`
ephemeral "prime_sandbox_ssh_session" "debug" {
  sandbox_id = "sb-any"
  public_key = "-----BEGIN OPENSSH PRIVATE KEY-----"
}
provider "echo" {
  data = ephemeral.prime_sandbox_ssh_session.debug
}
resource "echo" "session" {}
`),
			ExpectError: acctest.ExpectErr("public_key: public_key holds a private key; send the .pub file's single line instead"),
		}},
	})
	m.NoAPICalls(t)
}
