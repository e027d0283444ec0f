package ssh

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit/tfkittest"
)

func TestModelCodecMatchesTheFramework(t *testing.T) {
	tfkittest.CheckCodec(t, []tfkittest.CodecCase{{
		Name: "prime_sandbox_ssh_session",
		Schema: func() tfsdk.State {
			var resp ephemeral.SchemaResponse
			NewSessionResource().Schema(context.Background(), ephemeral.SchemaRequest{}, &resp)
			return tfsdk.State{Schema: resp.Schema}
		},
		Model: func() any { return &sessionModel{} },
	}})
}

func TestApplySession(t *testing.T) {
	exp := time.Date(2026, 12, 2, 15, 0, 0, 0, time.FixedZone("x", 7200))
	for _, c := range []struct {
		name    string
		ttlIn   types.Int64
		ss      prime.SSHSession
		wantTTL types.Int64
		wantExp types.String
	}{
		{"granted ttl", types.Int64Unknown(), prime.SSHSession{SessionID: "s", Host: "h", Port: 22, ExpiresAt: exp, TTLSeconds: 900},
			types.Int64Value(900), types.StringValue("2026-12-02T13:00:00Z")},
		{"no ttl in the answer keeps the configured one", types.Int64Value(60), prime.SSHSession{SessionID: "s", Host: "h", Port: 22},
			types.Int64Value(60), types.StringNull()},
		{"no ttl anywhere", types.Int64Unknown(), prime.SSHSession{SessionID: "s", Host: "h", Port: 22},
			types.Int64Null(), types.StringNull()},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := sessionModel{TTLSeconds: c.ttlIn}
			applySession(&m, &c.ss)
			if !m.TTLSeconds.Equal(c.wantTTL) || !m.ExpiresAt.Equal(c.wantExp) || m.Port.ValueInt64() != 22 || m.Host.ValueString() != "h" {
				t.Fatalf("got %+v", m)
			}
		})
	}
}

func TestErrorTexts(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("x: %w", prime.ErrNotFound): "no sandbox has the ID",
		fmt.Errorf("x: %w", prime.ErrConflict): "must be a RUNNING VM sandbox",
		errors.New("boom"):                     "failed: boom",
	} {
		if got := openErrorText("sb-1", err); !strings.Contains(got, want) {
			t.Errorf("openErrorText(%v) = %q, want %q in it", err, got, want)
		}
	}
	err := prime.ValidateSSHPublicKey("-----BEGIN OPENSSH PRIVATE KEY-----")
	if got := stripSentinel(err); strings.HasPrefix(got, "invalid request") || !strings.Contains(got, "private key") {
		t.Fatalf("stripSentinel = %q", got)
	}
}
