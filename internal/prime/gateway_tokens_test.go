package prime

import (
	"context"
	"errors"
	"testing"
)

// Dropping a refused token waits for a fetch of the same sandbox's token
// in progress only as long as the caller's context lasts: a cancelled
// command must not hang behind another caller's slow POST /auth.
func TestGatewayTokenInvalidateHonoursContext(t *testing.T) {
	var g gatewayTokens
	e := g.entry("vm-1")
	e.auth = &GatewayAuth{Token: "old"}
	e.lock <- struct{}{} // another caller is fetching a token

	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("apply interrupted")
	cancel(cause)
	if err := g.invalidate(ctx, "vm-1", "old"); !errors.Is(err, cause) {
		t.Fatalf("invalidate with a cancelled context = %v, want its cause", err)
	}
	<-e.lock // the fetch ends

	if err := g.invalidate(context.Background(), "vm-1", "newer"); err != nil || e.auth == nil {
		t.Fatalf("invalidate of a token no longer cached: err %v, cached %v; want the cached one kept", err, e.auth)
	}
	if err := g.invalidate(context.Background(), "vm-1", "old"); err != nil || e.auth != nil {
		t.Fatalf("invalidate of the cached token: err %v, cached %v; want it dropped", err, e.auth)
	}
}
