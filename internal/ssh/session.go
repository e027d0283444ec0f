package ssh

// prime_sandbox_ssh_session: POST /sandbox/{id}/ssh-session on Open,
// DELETE /sandbox/{id}/ssh-session/{session_id} on Close.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ ephemeral.EphemeralResourceWithConfigure      = (*sessionResource)(nil)
	_ ephemeral.EphemeralResourceWithClose          = (*sessionResource)(nil)
	_ ephemeral.EphemeralResourceWithValidateConfig = (*sessionResource)(nil)
)

// privateKey is where Open leaves what Close needs.
const privateKey = "session"

// NewSessionResource is the prime_sandbox_ssh_session constructor.
func NewSessionResource() ephemeral.EphemeralResource { return &sessionResource{} }

type sessionResource struct{ client *prime.Client }

func (r *sessionResource) Metadata(_ context.Context, req ephemeral.MetadataRequest, resp *ephemeral.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_ssh_session"
}

func (r *sessionResource) Configure(_ context.Context, req ephemeral.ConfigureRequest, resp *ephemeral.ConfigureResponse) {
	r.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *sessionResource) Schema(_ context.Context, _ ephemeral.SchemaRequest, resp *ephemeral.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An ephemeral SSH session to a running VM sandbox (Terraform 1.10 or later), for " +
			"debugging a member by hand. Terraform opens it when a value of it is needed and closes it when the " +
			"run is done; it is never stored in a plan or in state, so no access outlives the run that asked for " +
			"it (or its `ttl_seconds`, whichever ends first).\n\n" +
			"Only the public key is sent; the private key never leaves your machine (a value that looks like a " +
			"private key is refused before any request). A session needs the sandbox `RUNNING`: pausing or ending " +
			"it drops the session. Hand the values to something that uses them within the same run (a provisioner, " +
			"an `output` marked `ephemeral` in a module, a write-only argument).",
		Attributes: map[string]schema.Attribute{
			"sandbox_id": schema.StringAttribute{Required: true, MarkdownDescription: "ID of the VM sandbox to open the session to; it must be `RUNNING`.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
			"public_key": schema.StringAttribute{Required: true,
				MarkdownDescription: "One OpenSSH public key line (`TYPE BASE64 [comment]`, e.g. the contents of " +
					"`~/.ssh/id_ed25519.pub`) that the session accepts. A private key is refused."},
			"ttl_seconds": schema.Int64Attribute{Optional: true, Computed: true,
				MarkdownDescription: fmt.Sprintf("How long the session may live, 1 to %d seconds. Unset: the "+
					"platform's default (900 seconds as last published); the value granted is reported here.", prime.MaxSSHSessionTTLSeconds),
				Validators: []validator.Int64{int64validator.Between(1, prime.MaxSSHSessionTTLSeconds)}},
			"session_id": schema.StringAttribute{Computed: true, MarkdownDescription: "The session's ID."},
			"host":       schema.StringAttribute{Computed: true, MarkdownDescription: "Host to connect to."},
			"port":       schema.Int64Attribute{Computed: true, MarkdownDescription: "Port to connect to."},
			"expires_at": schema.StringAttribute{Computed: true, MarkdownDescription: "When the session ends at the latest (RFC 3339)."},
		},
	}
}

// ValidateConfig refuses a key that is not one public key line before any
// request (and, above all, a private key).
func (r *sessionResource) ValidateConfig(ctx context.Context, req ephemeral.ValidateConfigRequest, resp *ephemeral.ValidateConfigResponse) {
	var m sessionModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() || m.PublicKey.IsNull() || m.PublicKey.IsUnknown() {
		return
	}
	if err := prime.ValidateSSHPublicKey(m.PublicKey.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("public_key"), "Invalid public_key", "public_key: "+stripSentinel(err))
	}
}

func (r *sessionResource) Open(ctx context.Context, req ephemeral.OpenRequest, resp *ephemeral.OpenResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	var m sessionModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	sandboxID := m.SandboxID.ValueString()
	ss, err := r.client.CreateSSHSession(ctx, sandboxID, prime.CreateSSHSessionRequest{PublicKey: m.PublicKey.ValueString(), TTLSeconds: ttlOf(m.TTLSeconds)})
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("sandbox_id"), "SSH session not opened", openErrorText(sandboxID, err))
		return
	}
	tflog.Info(ctx, "SSH session opened", map[string]any{"sandbox_id": sandboxID, "session_id": ss.SessionID})
	applySession(&m, ss)
	raw, err := json.Marshal(closeRef{SandboxID: sandboxID, SessionID: ss.SessionID})
	if err != nil {
		resp.Diagnostics.AddError("SSH session not recorded", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateKey, raw)...)
	resp.Diagnostics.Append(resp.Result.Set(ctx, &m)...)
}

// Close ends the session; one already gone (expired, or dropped with a
// paused or ended sandbox) counts as closed.
func (r *sessionResource) Close(ctx context.Context, req ephemeral.CloseRequest, resp *ephemeral.CloseResponse) {
	if !tfkit.RequireClient(r.client, &resp.Diagnostics) {
		return
	}
	raw, d := req.Private.GetKey(ctx, privateKey)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() || len(raw) == 0 {
		return
	}
	var ref closeRef
	if err := json.Unmarshal(raw, &ref); err != nil {
		resp.Diagnostics.AddError("SSH session not closed", fmt.Sprintf("its record is unreadable: %v", err))
		return
	}
	err := r.client.CloseSSHSession(ctx, ref.SandboxID, ref.SessionID)
	if err != nil && !errors.Is(err, prime.ErrNotFound) {
		resp.Diagnostics.AddError("SSH session not closed",
			fmt.Sprintf("Closing SSH session %s of sandbox %s failed: %v. It ends by itself when its ttl_seconds pass.", ref.SessionID, ref.SandboxID, err))
		return
	}
	tflog.Info(ctx, "SSH session closed", map[string]any{"sandbox_id": ref.SandboxID, "session_id": ref.SessionID})
}

// closeRef is what Close needs (private data of the ephemeral resource).
type closeRef struct {
	SandboxID string `json:"sandbox_id"`
	SessionID string `json:"session_id"`
}

// applySession fills the computed attributes from the platform's answer.
func applySession(m *sessionModel, ss *prime.SSHSession) {
	m.SessionID = types.StringValue(ss.SessionID)
	m.Host = types.StringValue(ss.Host)
	m.Port = types.Int64Value(int64(ss.Port))
	m.ExpiresAt = types.StringNull()
	if !ss.ExpiresAt.IsZero() {
		m.ExpiresAt = types.StringValue(ss.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if ss.TTLSeconds > 0 {
		m.TTLSeconds = types.Int64Value(int64(ss.TTLSeconds))
	} else if m.TTLSeconds.IsUnknown() {
		m.TTLSeconds = types.Int64Null()
	}
}

func openErrorText(sandboxID string, err error) string {
	switch {
	case errors.Is(err, prime.ErrNotFound):
		return fmt.Sprintf("sandbox_id: no sandbox has the ID %q. (%v)", sandboxID, err)
	case errors.Is(err, prime.ErrConflict):
		return fmt.Sprintf("sandbox_id: sandbox %s does not take SSH sessions now; it must be a RUNNING VM sandbox. (%v)", sandboxID, err)
	}
	return fmt.Sprintf("Opening an SSH session to sandbox %s failed: %v", sandboxID, err)
}

// stripSentinel is err's message without the "invalid request: " its
// sentinel prefixes.
func stripSentinel(err error) string {
	msg, prefix := err.Error(), prime.ErrInvalidRequest.Error()+": "
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		return msg[len(prefix):]
	}
	return msg
}

func ttlOf(v types.Int64) *int {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	n := int(v.ValueInt64())
	return &n
}

type sessionModel struct {
	SandboxID  types.String `tfsdk:"sandbox_id"`
	PublicKey  types.String `tfsdk:"public_key"`
	TTLSeconds types.Int64  `tfsdk:"ttl_seconds"`
	SessionID  types.String `tfsdk:"session_id"`
	Host       types.String `tfsdk:"host"`
	Port       types.Int64  `tfsdk:"port"`
	ExpiresAt  types.String `tfsdk:"expires_at"`
}
