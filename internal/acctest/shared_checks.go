package acctest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest/mocktest"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock"
)

// FleetMemberBoxes is count sandboxes whose environment sets FAIL_CODE: "3" for
// the indexes in failing, "0" for the others. Members are keyed by index.
func FleetMemberBoxes(count int, failing ...int) string {
	codes := make([]string, count)
	for i := range codes {
		codes[i] = `"0"`
		for _, f := range failing {
			if f == i {
				codes[i] = `"3"`
			}
		}
	}
	return fmt.Sprintf(`
locals {
  fail_codes = [%s]
}

resource "prime_sandbox" "box" {
  count            = %d
  name             = "member-${count.index}"
  docker_image     = "python:3.12-slim"
  environment_vars = { FAIL_CODE = local.fail_codes[count.index] }
}
`, strings.Join(codes, ", "), count)
}

// FleetMemberIDs is the sandbox_ids map of the FleetMemberBoxes members,
// keyed by index.
const FleetMemberIDs = `{ for i, s in prime_sandbox.box : tostring(i) => s.id }`

// ExpectInOrder matches the parts in order, anything between them; inside a
// part, blanks match any run of white space (Terraform wraps diagnostics).
func ExpectInOrder(parts ...string) *regexp.Regexp {
	res := make([]string, len(parts))
	for i, p := range parts {
		res[i] = strings.TrimPrefix(ExpectErr(p).String(), "(?s)")
	}
	return regexp.MustCompile(`(?s)` + strings.Join(res, `.*`))
}

// RouteHost is the interception endpoint route the egress fixtures name:
// framework routes are auto-allowlisted, so it is reachable under any lock.
const RouteHost = "intercept.example.net"

// Reachability checks that the sandbox reaches exactly the hosts expected
// under the mock's applied policy.
func Reachability(t *testing.T, m *mocktest.Mock, want map[string]bool) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		id, err := StateID(s, "prime_sandbox.vm")
		if err != nil {
			return err
		}
		for host, expected := range want {
			if got := m.Reaches(t, id, host); got != expected {
				return fmt.Errorf("%s reachable = %t, want %t", host, got, expected)
			}
		}
		return nil
	}
}

// CommandRuns counts the finished executions of commands that start with
// prefix, per sandbox.
func CommandRuns(m *mocktest.Mock, prefix string) map[string]int {
	runs := map[string]int{}
	for _, e := range m.Events() {
		if e.Type == primemock.EventCommandExecuted && strings.HasPrefix(e.Command, prefix) {
			runs[e.SandboxID]++
		}
	}
	return runs
}

// LiveLabelled counts the running sandboxes that carry label.
func LiveLabelled(ctx context.Context, t *testing.T, c *prime.Client, label string) int {
	t.Helper()
	active := true
	list, err := c.ListSandboxes(ctx, prime.ListSandboxesOptions{Labels: []string{label}, IsActive: &active})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, sb := range list {
		if !prime.IsTerminalStatus(sb.Status) && prime.HasAllLabels(sb.Labels, []string{label}) {
			n++
		}
	}
	return n
}

// CountStarts counts how many times a command containing text started, on
// any transport (a background job's script included).
func CountStarts(events []primemock.Event, text string) int {
	n := 0
	for _, e := range events {
		if e.Type == primemock.EventCommandStarted && strings.Contains(e.Command, text) && e.Transport == "background" {
			n++
		}
	}
	return n
}

// SHA256Hex is the hex SHA-256 of b, as the file resources report it.
func SHA256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// GatewayProbe is the command prime_sandbox runs to know the gateway
// answers (the SDK's Reachability probe).
const GatewayProbe = "echo 'sandbox ready'"

// BoxIDsInto reads the IDs of prime_sandbox.box[0..n-1] into ids.
func BoxIDsInto(ids *[]string, n int) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		*ids = (*ids)[:0]
		for i := range n {
			id, err := StateID(s, fmt.Sprintf("prime_sandbox.box.%d", i))
			if err != nil {
				return err
			}
			*ids = append(*ids, id)
		}
		return nil
	}
}

// PolicyPutsBySandbox counts accepted policy writes per sandbox.
func PolicyPutsBySandbox(m *mocktest.Mock) map[string]int {
	out := map[string]int{}
	for _, e := range m.Events() {
		if e.Type == primemock.EventPolicyPut {
			out[e.SandboxID]++
		}
	}
	return out
}

// WantPolicyPuts checks PolicyPutsBySandbox for the boxes, in order.
func WantPolicyPuts(m *mocktest.Mock, ids *[]string, want ...int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		puts := PolicyPutsBySandbox(m)
		for i, id := range *ids {
			if puts[id] != want[i] {
				return fmt.Errorf("member %d (%s) got %d policy writes, want %d (all: %v)", i, id, puts[id], want[i], puts)
			}
		}
		return nil
	}
}

// SandboxName reads a sandbox's name from the mock (deleted sandboxes stay
// readable until a reset).
func SandboxName(t *testing.T, m *mocktest.Mock, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := m.Client(t).GetSandbox(ctx, id)
	if err != nil {
		t.Fatalf("reading sandbox %s: %v", id, err)
	}
	return sb.Name
}

// ProtocolHCL is the setup-then-restrict protocol on one sandbox, as the
// docs teach it: the setup step requires open egress, the lock names the
// setup in after, the agent names the lock in triggers.
func ProtocolHCL(setupVersion string, withAfter bool) string {
	// Without after, the lock still follows the setup (depends_on), as
	// configurations written before after existed do.
	after := "depends_on = [prime_sandbox_command.setup]"
	if withAfter {
		after = "after = [prime_sandbox_command.setup.id]"
	}
	return fmt.Sprintf(SandboxHCL("box", "day-two")+`
resource "prime_sandbox_command" "setup" {
  sandbox_id          = prime_sandbox.box.id
  command             = "echo installing %[1]s && probe pypi.org"
  require_open_egress = true
}

resource "prime_egress_policy" "lock" {
  sandbox_id = prime_sandbox.box.id
  allow      = ["example.com"]
  %[2]s
}

resource "prime_sandbox_command" "agent" {
  sandbox_id = prime_egress_policy.lock.sandbox_id
  command    = "echo probing && probe example.com"
  triggers   = { lock = prime_egress_policy.lock.id }
}
`, setupVersion, after)
}
