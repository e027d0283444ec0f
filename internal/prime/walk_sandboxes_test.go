package prime_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// WalkSandboxes stops paging as soon as the visitor has enough: a walk of
// 25 sandboxes, 10 per page, that stops at the 12th asks for two pages, not
// three, and sees the sandboxes in the platform's order.
func TestWalkSandboxesStopsAtTheVisitor(t *testing.T) {
	ctx := context.Background()
	c, m := mockClient(t)
	for i := range 25 {
		if _, err := c.CreateSandbox(ctx, prime.CreateSandboxRequest{Name: fmt.Sprintf("s%02d", i), DockerImage: "img"}); err != nil {
			t.Fatal(err)
		}
	}
	before := m.Stats().Requests["GET /api/v1/sandbox"]
	var names []string
	err := c.WalkSandboxes(ctx, prime.ListSandboxesOptions{PerPage: 10}, func(sb prime.Sandbox) bool {
		names = append(names, sb.Name)
		return len(names) < 12
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Stats().Requests["GET /api/v1/sandbox"] - before; got != 2 {
		t.Fatalf("%d list requests for 12 of 25 sandboxes at 10 per page, want 2", got)
	}
	if len(names) != 12 || names[0] != "s00" || names[11] != "s11" {
		t.Fatalf("visited %v, want s00 … s11 in order", names)
	}

	all := 0
	if err := c.WalkSandboxes(ctx, prime.ListSandboxesOptions{PerPage: 10}, func(prime.Sandbox) bool { all++; return true }); err != nil || all != 25 {
		t.Fatalf("a walk to the end visited %d (err %v), want 25", all, err)
	}
}
