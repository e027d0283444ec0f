package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/checkpoint"
	"github.com/primeintellect/terraform-provider-prime/internal/command"
	"github.com/primeintellect/terraform-provider-prime/internal/egress"
	"github.com/primeintellect/terraform-provider-prime/internal/files"
	"github.com/primeintellect/terraform-provider-prime/internal/image"
	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/network"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/sandbox"
	"github.com/primeintellect/terraform-provider-prime/internal/ssh"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
	"github.com/primeintellect/terraform-provider-prime/internal/volume"
)

// Address is the provider's registry address.
const Address = "registry.terraform.io/primeintellect/prime"

// Defaults of the client pacing attributes, measured with make bench (see
// their descriptions): generous enough that a fleet of a thousand members is
// not slowed by the provider itself, low enough that a runaway configuration
// cannot flood the API.
const (
	defaultMaxRequestsPerSecond  = 0.0 // none: see max_requests_per_second
	defaultMaxConcurrentRequests = 64
)

var (
	_ provider.Provider                       = (*primeProvider)(nil)
	_ provider.ProviderWithValidateConfig     = (*primeProvider)(nil)
	_ provider.ProviderWithListResources      = (*primeProvider)(nil)
	_ provider.ProviderWithActions            = (*primeProvider)(nil)
	_ provider.ProviderWithEphemeralResources = (*primeProvider)(nil)
)

type primeProvider struct {
	version string
	// journalDir overrides where the create journal lives (tests give each
	// test its own); "" means the user cache directory, per working
	// directory.
	journalDir string
}

// New returns a constructor for the provider, as providerserver expects.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &primeProvider{version: version} }
}

// NewWithJournalDir is New with the create, job and checkpoint journals in
// dir instead of the user cache directory. The acceptance tests serve the
// provider in their own process, where the default (keyed by working
// directory) would be shared by every parallel test; each test gives its
// own directory.
func NewWithJournalDir(version, dir string) func() provider.Provider {
	return func() provider.Provider { return &primeProvider{version: version, journalDir: dir} }
}

type providerModel struct {
	APIKey                types.String  `tfsdk:"api_key"`
	BaseURL               types.String  `tfsdk:"base_url"`
	TeamID                types.String  `tfsdk:"team_id"`
	MaxRequestsPerSecond  types.Float64 `tfsdk:"max_requests_per_second"`
	MaxConcurrentRequests types.Int64   `tfsdk:"max_concurrent_requests"`
	MaxRetries            types.Int64   `tfsdk:"max_retries"`
	InsecureHTTP          types.Bool    `tfsdk:"insecure_http"`
	CreateJournal         types.Bool    `tfsdk:"create_journal"`
	WorkspaceScope        types.String  `tfsdk:"workspace_scope"`
	PlatformRecovery      types.Bool    `tfsdk:"platform_recovery"`
}

// providerData is what resources and data sources receive from Configure.
type providerData struct {
	client  *prime.Client
	journal *journal.Creates
	// baselines are the notes of policy creates that failed closed.
	baselines *egress.Baselines
	// jobs is the journal of background jobs between start and judgement.
	jobs *journal.Jobs
	// checkpoints is the journal of checkpoint creates until Terraform
	// holds them.
	checkpoints *journal.Checkpoints
	// recovery labels every sandbox for the workspace scope and adopts
	// what a lost apply of that scope created.
	recovery *sandbox.Recovery
}

func (p *primeProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "prime"
	resp.Version = p.version
}

func (p *primeProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The Prime provider manages [Prime Intellect](https://www.primeintellect.ai) sandboxes " +
			"and their egress policies, so an evaluation fleet's whole protocol — provision, trusted setup with the " +
			"network open, lock egress down to an allowlist, start the agent only once the lock is enforced, tear " +
			"down — is expressed as Terraform configuration.\n\n" +
			"The connection settings `api_key`, `base_url` and `team_id` are resolved like the Prime SDK does it: " +
			"the value in this block, then an environment variable, then `~/.prime/config.json` (written by " +
			"`prime login`). The other settings exist only in this block.",
		Attributes: map[string]schema.Attribute{
			"api_key": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				MarkdownDescription: "Prime API key, sent as a Bearer token. Defaults to `PRIME_API_KEY` (when " +
					"non-empty), then `api_key` in `~/.prime/config.json`. The key never appears in logs.",
			},
			"base_url": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "API origin. Defaults to `PRIME_API_BASE_URL`, then `PRIME_BASE_URL`, then " +
					"`base_url` in `~/.prime/config.json`, then `https://api.primeintellect.ai`. It must be an absolute " +
					"`https://` URL, or `http://` on a loopback host (`localhost`, `127.0.0.1`, `[::1]`) such as a local " +
					"`prime-mock`; `http://` to any other host is refused unless `insecure_http = true`, because the API " +
					"key travels in every request. A trailing `/api/v1` is accepted and removed.",
			},
			"insecure_http": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Allow a plain `http://` `base_url` on a non-loopback host (for example a " +
					"`prime-mock` on another test machine). The API key is then sent in cleartext. Default `false`.",
			},
			"create_journal": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Keep the create journal (default `true`): before each sandbox create the " +
					"provider notes the request's idempotency key in a small file under the user cache directory " +
					"(per Terraform working directory and workspace) and keeps it until a plan shows the sandbox in " +
					"state (or ten minutes after a clean end of the apply), so if Terraform itself is killed mid-create, " +
					"or before it stored a create that returned, the next apply of the same configuration adopts that " +
					"sandbox instead of making a second one. It only helps where the next apply runs on the same machine and user as " +
					"the killed one (ephemeral CI runners are covered from the platform instead: see `workspace_scope`), and it only " +
					"adopts a sandbox less than 24 hours old whose name and image match and that still runs. The same " +
					"journal covers `prime_sandbox_checkpoint`: each checkpoint request is noted (source sandbox, " +
					"`ttl_seconds`, `triggers`) before it is sent, with the checkpoint's ID once the platform answers, so " +
					"if Terraform is killed while the checkpoint uploads, the next apply of the same configuration adopts " +
					"that checkpoint (if it is less than 24 hours old and neither `FAILED` nor `DELETING`; otherwise it " +
					"deletes it and takes a new one) instead of leaving it untracked and billed. Beside it, " +
					"an egress policy create that fails closed notes what the sandbox held before its write, so that the " +
					"create retrying it restores that on destroy rather than the unenforced write. Set " +
					"`false` to turn it off. Unix only: on Windows, which has no lock that dies with its process, " +
					"the journal is always off.",
			},
			"workspace_scope": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Names the Terraform state this configuration works for, so that an apply on " +
					"another machine (a new CI runner after a lost one) finds what a lost apply created. Defaults to " +
					"`PRIME_WORKSPACE_SCOPE`, then to what the provider derives itself: the backend `terraform init` " +
					"recorded (where the state is stored: an S3 bucket and key, an HCP Terraform organization and " +
					"workspace, ...; never credentials) and the current workspace, or without a backend the working " +
					"directory and workspace. Every sandbox is created with a label of this scope " +
					"(`tfprime-ws-<hash>`) and one of its create (`tfprime-id-<hash>`: the resource type and the create " +
					"request, without secret values); a create first adopts a live sandbox with both labels that no plan " +
					"saw in state, instead of creating a second one. Sandboxes of another scope are never adopted, nor " +
					"deleted. Set it when two states the provider cannot tell apart share an account — two machines each " +
					"with a local state at the same path, say — and keep it the same on every machine that applies one " +
					"state. See the guide *Evaluations on ephemeral CI runners*.",
			},
			"platform_recovery": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Label every sandbox for its workspace scope and create (see `workspace_scope`) " +
					"and adopt a lost apply's sandboxes from the platform (default `true`). It costs one list request " +
					"per team before an apply's first create (more pages when many of the workspace's sandboxes run). " +
					"`false` creates sandboxes without the labels and never looks: after a lost runner, only the create " +
					"journal on the same machine can adopt what it created. Background jobs' claims and checkpoints' " +
					"markers inside sandboxes do not depend on it.",
			},
			"team_id": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Team to create and list sandboxes in. Defaults to `PRIME_TEAM_ID` (set wins, " +
					"even when empty, as in the SDK), then `team_id` in `~/.prime/config.json`; unset means the " +
					"key's personal account.",
			},
			"max_requests_per_second": schema.Float64Attribute{
				Optional: true,
				MarkdownDescription: "Process-wide cap on API requests per second, shared by every resource of this " +
					"provider process that talks to the same API. Default: no cap (`0` says the same), as in the Prime SDK. " +
					"The platform's limits are per route and per sandbox, in 60-second windows: the provider keeps to " +
					"them by design (batched status reads, one egress write per change, bulk deletes of 500), keeps " +
					"the sandbox lookups of every provider process of the user on this machine under the token's " +
					"ceiling of 30,000 a minute (a shared ledger per token in the user's cache directory), and a `429` " +
					"answer's `Retry-After` pauses the whole process (other machines on the same token). Why no cap by " +
					"default: the former default, 1,000/s, was what bounded a 3,000-member destroy and a 10,000-member apply, not the platform (`make bench-scale`). " +
					"Set it to leave room for other tools on the same token.",
				Validators: []validator.Float64{float64validator.AtLeast(0)},
			},
			"max_concurrent_requests": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: fmt.Sprintf("Process-wide cap on API requests in flight. Default `%d`. `0` "+
					"disables the cap. A `429 Too Many Requests` answer's `Retry-After` pauses every request of the "+
					"process, not just the one that received it. Why that default: it is about what a fleet apply "+
					"keeps in flight at the platform's pace (make bench peaks below it), the SDK's HTTP client allows "+
					"100 connections, and 200 in flight was slower on a 2-core runner, not faster. Command streams "+
					"are not counted (they are bounded per fleet command by `max_concurrency`).", defaultMaxConcurrentRequests),
				Validators: []validator.Int64{int64validator.AtLeast(0)},
			},
			"max_retries": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: fmt.Sprintf("How many times an idempotent request (reads, deletes, egress "+
					"policy writes, and creates, which carry an idempotency key) is retried after `429`, `502`, `503`, "+
					"`504` or a dropped connection, with exponential backoff and jitter. Default `%d`. Commands are "+
					"never retried after reaching the sandbox.", prime.DefaultMaxRetries),
				Validators: []validator.Int64{int64validator.Between(0, 20)},
			},
		},
	}
}

// ValidateConfig refuses a base_url written in the configuration that the
// provider would not send the API key to, at validate and plan time.
func (p *primeProvider) ValidateConfig(ctx context.Context, req provider.ValidateConfigRequest, resp *provider.ValidateConfigResponse) {
	var m providerModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() || m.BaseURL.IsNull() || m.BaseURL.IsUnknown() || m.InsecureHTTP.IsUnknown() {
		return
	}
	if problem := checkBaseURL(m.BaseURL.ValueString(), m.InsecureHTTP.ValueBool()); problem != "" {
		resp.Diagnostics.AddAttributeError(path.Root("base_url"), "Invalid base_url", "base_url: "+problem)
	}
}

func (p *primeProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// A value known only after apply (say, a key from a secrets manager
	// resource) cannot be resolved during plan; resources then report that
	// the provider is not configured if they need the API before apply.
	for name, v := range map[string]interface{ IsUnknown() bool }{
		"api_key": m.APIKey, "base_url": m.BaseURL, "team_id": m.TeamID, "insecure_http": m.InsecureHTTP,
	} {
		if v.IsUnknown() {
			tflog.Debug(ctx, "provider attribute unknown during plan; deferring client setup", map[string]any{"attribute": name})
			return
		}
	}

	cfg := prime.ResolveConfig(prime.ConfigInput{
		APIKey:  m.APIKey.ValueStringPointer(),
		BaseURL: m.BaseURL.ValueStringPointer(),
		TeamID:  m.TeamID.ValueStringPointer(),
	})
	// The same rule as ValidateConfig, for a base URL that came from the
	// environment or ~/.prime/config.json: refused before any request.
	if problem := checkBaseURL(cfg.BaseURL, m.InsecureHTTP.ValueBool()); problem != "" {
		resp.Diagnostics.AddAttributeError(path.Root("base_url"), "Invalid base_url",
			"base_url (resolved from the environment or ~/.prime/config.json): "+problem)
		return
	}
	if cfg.APIKey == "" {
		resp.Diagnostics.AddAttributeError(path.Root("api_key"), "Missing Prime API key",
			"No API key was found. Set api_key in the provider block, the PRIME_API_KEY environment variable, "+
				"or api_key in ~/.prime/config.json (written by `prime login`).")
		return
	}

	rps := defaultMaxRequestsPerSecond
	if !m.MaxRequestsPerSecond.IsNull() {
		rps = m.MaxRequestsPerSecond.ValueFloat64()
	}
	concurrent := defaultMaxConcurrentRequests
	if !m.MaxConcurrentRequests.IsNull() {
		concurrent = int(m.MaxConcurrentRequests.ValueInt64())
	}
	retries := prime.DefaultMaxRetries
	if !m.MaxRetries.IsNull() {
		retries = int(m.MaxRetries.ValueInt64())
		if retries == 0 {
			retries = -1 // prime.Options: negative disables retries
		}
	}

	account := prime.Account(cfg.BaseURL, cfg.APIKey)
	throttle := prime.SharedThrottle(cfg.BaseURL, prime.ThrottleOptions{RequestsPerSecond: rps, MaxConcurrent: concurrent, Account: account})
	throttle.ShareLookups(p.lookupLedger(account))
	client, err := prime.New(prime.Options{
		Config:     cfg,
		Version:    p.version,
		Log:        clientLog(os.Getenv),
		MaxRetries: retries,
		Throttle:   throttle,
	})
	if err != nil {
		resp.Diagnostics.AddError("Cannot configure the Prime client", err.Error())
		return
	}
	tflog.Debug(ctx, "Prime client configured", map[string]any{
		"base_url": cfg.BaseURL, "api_key_source": string(cfg.APIKeySource), "team_source": string(cfg.TeamIDSource),
	})
	creates := journal.NewCreates("")
	switch {
	case !m.CreateJournal.IsNull() && !m.CreateJournal.ValueBool():
	case p.journalDir != "":
		creates = journal.NewCreates(p.journalDir)
	default:
		creates = journal.DefaultCreates()
	}
	scope := journal.Scope{} // platform_recovery = false: no labels, no lookups
	if m.PlatformRecovery.IsNull() || m.PlatformRecovery.ValueBool() {
		scope = workspaceScope(m.WorkspaceScope)
	}
	tflog.Info(ctx, "workspace scope of recovery from the platform", map[string]any{"scope": scope.ID, "source": scope.Source})
	data := &providerData{client: client, journal: creates, baselines: egress.BaselinesOf(creates), jobs: journal.JobsOf(creates),
		checkpoints: journal.CheckpointsOf(creates), recovery: sandbox.NewRecovery(client, scope, creates.Held)}
	resp.ResourceData = data
	resp.DataSourceData = data
	resp.ListResourceData = data
	resp.ActionData = data
	resp.EphemeralResourceData = data
}

// lookupLedger is the ledger of the token's sandbox lookups that every
// provider process of this user shares (journal.Lookups): beside the
// create journals in tests, under the user's cache directory otherwise.
// A nil ledger (none to be had) leaves each process counting its own.
func (p *primeProvider) lookupLedger(account string) prime.WindowLedger {
	var l *journal.Lookups
	if p.journalDir != "" {
		l = journal.OpenLookups(filepath.Join(p.journalDir, "lookups"), account)
	} else {
		l = journal.DefaultLookups(account)
	}
	if l == nil {
		return nil // not a typed nil in the interface
	}
	return l
}

// workspaceScope is the scope recovery from the platform labels sandboxes
// for: workspace_scope when set, else what the process can see (see
// journal.DetectScope). A working directory that cannot be read leaves
// recovery off rather than guessing.
func workspaceScope(explicit types.String) journal.Scope {
	if v := strings.TrimSpace(explicit.ValueString()); v != "" {
		return journal.ExplicitScope(v)
	}
	wd, err := os.Getwd()
	if err != nil {
		return journal.Scope{}
	}
	return journal.DetectScope(os.Getenv, wd)
}

// clientLog is the client's debug sink: none when the provider's logs are
// switched off (TF_LOG_PROVIDER=OFF, which the provider binary sets when
// no TF_LOG* variable asks for logs), so a fleet's thousands of requests
// skip building and redacting records nobody receives. Any other setting
// keeps them; the logger's own level filters as usual.
func clientLog(getenv func(string) string) func(context.Context, string, map[string]any) {
	if strings.EqualFold(strings.TrimSpace(getenv("TF_LOG_PROVIDER")), "off") {
		return nil
	}
	return logToTflog
}

// logToTflog forwards the client's already redacted debug records to tflog
// (TF_LOG_PROVIDER=DEBUG shows them).
func logToTflog(ctx context.Context, msg string, fields map[string]any) {
	tflog.Debug(ctx, msg, fields)
}

func (p *primeProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		sandbox.NewResource,
		egress.NewPolicyResource,
		command.NewResource,
		sandbox.NewFleetResource,
		command.NewFleetResource,
		egress.NewFleetPolicyResource,
		files.NewFileResource,
		files.NewFleetFileResource,
		files.NewArtifactResource,
		files.NewFleetArtifactResource,
		network.NewNetworkResource,
		network.NewMemberResource,
		volume.NewVolumeResource,
		checkpoint.NewResource,
		image.NewVMBuildResource,
	}
}

// ListResources are what `terraform query` lists (Terraform 1.14+), one per
// importable resource type whose remote objects can be found.
func (p *primeProvider) ListResources(context.Context) []func() list.ListResource {
	return []func() list.ListResource{
		sandbox.NewListResource,
		sandbox.NewFleetListResource,
	}
}

// Actions are run with `terraform apply -invoke` or an action_trigger
// (Terraform 1.14+).
func (p *primeProvider) Actions(context.Context) []func() action.Action {
	return []func() action.Action{
		command.NewExecAction,
		command.NewFleetExecAction,
		sandbox.NewSweepAction,
	}
}

// EphemeralResources are opened and closed within one Terraform run and
// never stored (Terraform 1.10+).
func (p *primeProvider) EphemeralResources(context.Context) []func() ephemeral.EphemeralResource {
	return []func() ephemeral.EphemeralResource{
		ssh.NewSessionResource,
	}
}

func (p *primeProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		sandbox.NewDataSource,
		sandbox.NewSandboxesDataSource,
		egress.NewPolicyDataSource,
		files.NewFileDataSource,
		files.NewFleetFileDataSource,
		network.NewNetworkDataSource,
		volume.NewVolumeDataSource,
		checkpoint.NewDataSource,
		image.NewDataSource,
	}
}

// PrimeClient is the configured client (tfkit.ClientFrom asks for it).
func (pd *providerData) PrimeClient() *prime.Client { return pd.client }

// EgressBaselines are the policy notes (egress.BaselinesFrom asks for them).
func (pd *providerData) EgressBaselines() *egress.Baselines { return pd.baselines }

// CreateJournal is the create journal (journal.CreatesFrom asks for it).
func (pd *providerData) CreateJournal() *journal.Creates { return pd.journal }

// JobJournal is the job journal (journal.JobsFrom asks for it).
func (pd *providerData) JobJournal() *journal.Jobs { return pd.jobs }

// SandboxRecovery is the recovery from the platform (sandbox.RecoveryFrom
// asks for it).
func (pd *providerData) SandboxRecovery() *sandbox.Recovery { return pd.recovery }

// CheckpointJournal is the checkpoint journal (journal.CheckpointsFrom asks
// for it).
func (pd *providerData) CheckpointJournal() *journal.Checkpoints { return pd.checkpoints }
