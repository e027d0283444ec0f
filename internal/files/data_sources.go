package files

// Results into HCL: the prime_sandbox_file and prime_fleet_file data
// sources read small files (a reward JSON, a verdict) from sandboxes, so
// jsondecode() can use them in outputs and other resources. They read
// through the gateway's download route, as the verifiers framework reads
// results: bytes exactly as written, one gateway call per file.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/fleet"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

var (
	_ datasource.DataSourceWithConfigure = (*sandboxFileDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*fleetFileDataSource)(nil)
)

// Read limits of the file data sources: what is read lands in state and
// in every plan, so it is kept small; larger results go to disk with the
// artifact resources. The cap is the platform's read_file limit (10 MiB,
// the 2026 files guide), the most a data source promises to read.
const (
	defaultReadMaxSize int64 = 1 << 20
	maxReadMaxSize     int64 = 10 << 20
)

// maxSizeValidator refuses a max_size over the read cap at plan time,
// pointing to the artifact resources.
type maxSizeValidator struct{}

func (maxSizeValidator) Description(context.Context) string {
	return fmt.Sprintf("between 1 and %d (10 MiB)", maxReadMaxSize)
}

func (v maxSizeValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (maxSizeValidator) ValidateInt64(_ context.Context, req validator.Int64Request, resp *validator.Int64Response) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if msg := maxSizeProblem(req.ConfigValue.ValueInt64()); msg != "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid max_size", msg)
	}
}

// maxSizeProblem explains why a max_size is refused ("" when it is not).
func maxSizeProblem(n int64) string {
	switch {
	case n < 1:
		return fmt.Sprintf("max_size must be at least 1 byte, got %d", n)
	case n > maxReadMaxSize:
		return fmt.Sprintf("max_size %d is over %d bytes (10 MiB), the platform's limit on reading a file: a data source "+
			"keeps what it reads in state and plans. Download larger results to disk with prime_sandbox_artifact "+
			"(prime_fleet_artifact for a fleet)", n, maxReadMaxSize)
	}
	return ""
}

// smallFile is what a data source read. SandboxGone: the sandbox no
// longer exists, so neither does the file (see readSmallFile).
type smallFile struct {
	Exists      bool
	SandboxGone bool
	Data        []byte
	SHA256      string
}

// errTooLargeToRead: a file over the data source's max_size.
var errTooLargeToRead = errors.New("larger than max_size")

// readSmallFile reads a whole file of at most maxSize bytes. A missing
// file is an error unless allowMissing; a larger one is always an error
// that points to the artifact resources. A sandbox that is gone (deleted
// out of band, past its lifetime) reads as a missing file whatever
// allowMissing says, marked SandboxGone for the caller's warning: that is
// drift, which the next apply repairs by creating the sandbox again, and
// an error here would fail every refresh (`plan -refresh-only` included)
// until then.
func readSmallFile(ctx context.Context, c *prime.Client, sandboxID, remote string, maxSize int64, allowMissing bool) (*smallFile, error) {
	var buf bytes.Buffer
	err := c.DownloadFile(ctx, sandboxID, remote, func(body io.Reader) error {
		buf.Reset() // a retried download starts over
		n, err := io.Copy(&buf, io.LimitReader(body, maxSize+1))
		if err != nil {
			return err
		}
		if n > maxSize {
			return errTooLargeToRead
		}
		return nil
	})
	switch {
	case errors.Is(err, errTooLargeToRead):
		return nil, fmt.Errorf("%s in sandbox %s is larger than max_size (%d bytes). A data source keeps what it reads in "+
			"state and plans, so it is meant for small results: raise max_size (at most %d), or download the file to "+
			"disk with prime_sandbox_artifact (prime_fleet_artifact for a fleet)", remote, sandboxID, maxSize, maxReadMaxSize)
	case errors.Is(err, prime.ErrFileNotFound) && allowMissing:
		return &smallFile{}, nil
	case errors.Is(err, prime.ErrFileNotFound):
		return nil, fmt.Errorf("there is no file %s in sandbox %s (set allow_missing = true if that can be normal)", remote, sandboxID)
	case prime.GoneWithSandbox(err):
		return &smallFile{SandboxGone: true}, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s in sandbox %s: %w", remote, sandboxID, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return &smallFile{Exists: true, Data: buf.Bytes(), SHA256: hex.EncodeToString(sum[:])}, nil
}

// fileReadValues are the attributes a read fills, one file's: content is
// null when the bytes are not UTF-8 text (content_base64 always holds
// them), and both move to the sensitive object when sensitive is set.
type fileReadValues struct {
	Exists, SHA256, Size, Content, ContentBase64 attr.Value
	Sensitive                                    types.Object
	NotText                                      bool
}

var sensitiveContentAttrTypes = map[string]attr.Type{"content": types.StringType, "content_base64": types.StringType}

func sensitiveContentType() types.ObjectType {
	return types.ObjectType{AttrTypes: sensitiveContentAttrTypes}
}

func fileReadValuesOf(f *smallFile, sensitive bool) fileReadValues {
	v := fileReadValues{
		Exists: types.BoolValue(f.Exists), SHA256: types.StringNull(), Size: types.Int64Null(),
		Content: types.StringNull(), ContentBase64: types.StringNull(), Sensitive: types.ObjectNull(sensitiveContentAttrTypes),
	}
	if !f.Exists {
		return v
	}
	v.SHA256, v.Size = types.StringValue(f.SHA256), types.Int64Value(int64(len(f.Data)))
	content, b64 := types.StringNull(), types.StringValue(base64.StdEncoding.EncodeToString(f.Data))
	if utf8.Valid(f.Data) {
		content = types.StringValue(string(f.Data))
	} else {
		v.NotText = true
	}
	if sensitive {
		v.Sensitive = types.ObjectValueMust(sensitiveContentAttrTypes, map[string]attr.Value{"content": content, "content_base64": b64})
		return v
	}
	v.Content, v.ContentBase64 = content, b64
	return v
}

// readArgumentAttributes are the arguments both data sources share.
func readArgumentAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"max_size": schema.Int64Attribute{
			Optional: true,
			MarkdownDescription: fmt.Sprintf("Largest file to read, in bytes. Default `%d` (1 MiB), at most `%d` (10 MiB, "+
				"the platform's limit on reading a file; a larger value is refused at plan time): what is read is kept in "+
				"state and shown in plans. A larger file fails the read with an error that says so; download large "+
				"results to disk with `prime_sandbox_artifact` / `prime_fleet_artifact`.",
				defaultReadMaxSize, maxReadMaxSize),
			Validators: []validator.Int64{maxSizeValidator{}},
		},
		"sensitive": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: "Treat the content as secret: it is returned in `sensitive_content` (hidden in plans and " +
				"CLI output) instead of `content` and `content_base64`. Default `false`.",
		},
		"allow_missing": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: "Read a missing file as `exists = false` (content null) instead of failing. Default " +
				"`false`: a result the agent did not write is an error naming the sandbox and the path. A sandbox that " +
				"is gone (deleted out of band, past its `timeout_minutes`) reads as missing either way, with a warning " +
				"naming it: that is drift, which the next apply repairs, so a refresh never fails on it.",
		},
	}
}

// readResultAttributes are one file's computed attributes.
func readResultAttributes(sensitiveHere bool) map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{
		"exists": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the file exists (always `true` " +
			"without `allow_missing`, except when the sandbox itself is gone: that reads as `false`, with a warning)."},
		"sha256": schema.StringAttribute{Computed: true, MarkdownDescription: "SHA-256 of the bytes (hex)."},
		"size":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Size in bytes."},
		"content": schema.StringAttribute{Computed: true, MarkdownDescription: "The bytes as text, for `jsondecode()` " +
			"and the like. Null when they are not valid UTF-8 (use `content_base64`), or with `sensitive`."},
		"content_base64": schema.StringAttribute{Computed: true, MarkdownDescription: "The bytes, base64-encoded. Null with `sensitive`."},
	}
	if sensitiveHere {
		attrs["sensitive_content"] = schema.SingleNestedAttribute{
			Computed: true, Sensitive: true,
			MarkdownDescription: "With `sensitive`: `content` and `content_base64`, hidden in plans and CLI output. Null otherwise.",
			Attributes: map[string]schema.Attribute{
				"content":        schema.StringAttribute{Computed: true, MarkdownDescription: "The bytes as text (null when not UTF-8)."},
				"content_base64": schema.StringAttribute{Computed: true, MarkdownDescription: "The bytes, base64-encoded."},
			},
		}
	}
	return attrs
}

func maxSizeOf(v types.Int64) int64 {
	if v.IsNull() || v.IsUnknown() {
		return defaultReadMaxSize
	}
	return v.ValueInt64()
}

// NewFileDataSource is the prime_sandbox_file data source constructor.
func NewFileDataSource() datasource.DataSource { return &sandboxFileDataSource{} }

type sandboxFileDataSource struct{ client *prime.Client }

type sandboxFileDataModel struct {
	ID               types.String `tfsdk:"id"`
	SandboxID        types.String `tfsdk:"sandbox_id"`
	Path             types.String `tfsdk:"path"`
	MaxSize          types.Int64  `tfsdk:"max_size"`
	Sensitive        types.Bool   `tfsdk:"sensitive"`
	AllowMissing     types.Bool   `tfsdk:"allow_missing"`
	Exists           types.Bool   `tfsdk:"exists"`
	SHA256           types.String `tfsdk:"sha256"`
	Size             types.Int64  `tfsdk:"size"`
	Content          types.String `tfsdk:"content"`
	ContentBase64    types.String `tfsdk:"content_base64"`
	SensitiveContent types.Object `tfsdk:"sensitive_content"`
}

func (d *sandboxFileDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sandbox_file"
}

func (d *sandboxFileDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *sandboxFileDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := readArgumentAttributes()
	for k, v := range readResultAttributes(true) {
		attrs[k] = v
	}
	attrs["id"] = schema.StringAttribute{Computed: true, MarkdownDescription: "`<sandbox_id>:<path>`."}
	attrs["sandbox_id"] = schema.StringAttribute{Required: true, MarkdownDescription: "Sandbox to read from."}
	attrs["path"] = schema.StringAttribute{
		Required: true, MarkdownDescription: "Absolute path of the file in the sandbox.",
		Validators: []validator.String{remotePathValidator{}},
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a small file from a sandbox — a reward JSON, a verdict — so that `jsondecode(...)` can use " +
			"it in outputs and other resources. Read it after the command that writes it: reference the command (for " +
			"example `depends_on = [prime_sandbox_command.agent]`), so Terraform reads it once the command has run. " +
			"One gateway call (the download route, bytes exactly as written), which works under an egress lock.\n\n" +
			"Files over `max_size` (default 1 MiB) are refused with an error: large results and directories belong on " +
			"disk, through `prime_sandbox_artifact`. The sandbox is untrusted (its agent wrote the file): the content is " +
			"data, and `sensitive = true` keeps it out of plans and CLI output." + ResultPathsAdvice,
		Attributes: attrs,
	}
}

func (d *sandboxFileDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !tfkit.RequireClient(d.client, &resp.Diagnostics) {
		return
	}
	var m sandboxFileDataModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, remote := m.SandboxID.ValueString(), m.Path.ValueString()
	f, err := readSmallFile(ctx, d.client, id, remote, maxSizeOf(m.MaxSize), m.AllowMissing.ValueBool())
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the file", err.Error())
		return
	}
	if f.SandboxGone {
		resp.Diagnostics.AddWarning("Sandbox is gone",
			fmt.Sprintf("Sandbox %s no longer exists, so %s reads as missing (exists = false). Its resource drops it at "+
				"refresh, and the next apply creates it again.", id, remote))
	}
	v := fileReadValuesOf(f, m.Sensitive.ValueBool())
	if v.NotText {
		resp.Diagnostics.AddAttributeWarning(path.Root("content"), "File is not text",
			fmt.Sprintf("%s in sandbox %s is not valid UTF-8, so content is null; use content_base64.", remote, id))
	}
	m.ID = types.StringValue(id + ":" + remote)
	m.Exists = v.Exists.(types.Bool)
	m.SHA256, m.Size = v.SHA256.(types.String), v.Size.(types.Int64)
	m.Content, m.ContentBase64, m.SensitiveContent = v.Content.(types.String), v.ContentBase64.(types.String), v.Sensitive
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &m)...)
}

// NewFleetFileDataSource is the prime_fleet_file data source constructor.
func NewFleetFileDataSource() datasource.DataSource { return &fleetFileDataSource{} }

type fleetFileDataSource struct{ client *prime.Client }

type fleetFileDataModel struct {
	ID             types.String `tfsdk:"id"`
	SandboxIDs     types.Map    `tfsdk:"sandbox_ids"`
	Path           types.String `tfsdk:"path"`
	MaxSize        types.Int64  `tfsdk:"max_size"`
	Sensitive      types.Bool   `tfsdk:"sensitive"`
	AllowMissing   types.Bool   `tfsdk:"allow_missing"`
	MaxConcurrency types.Int64  `tfsdk:"max_concurrency"`
	Files          types.Map    `tfsdk:"files"`
	SensitiveFiles types.Map    `tfsdk:"sensitive_files"`
}

var fleetReadAttrTypes = map[string]attr.Type{
	"sandbox_id": types.StringType, "exists": types.BoolType, "sha256": types.StringType, "size": types.Int64Type,
	"content": types.StringType, "content_base64": types.StringType,
}

func fleetReadType() types.ObjectType { return types.ObjectType{AttrTypes: fleetReadAttrTypes} }

func (d *fleetFileDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_fleet_file"
}

func (d *fleetFileDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = tfkit.ClientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *fleetFileDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := readArgumentAttributes()
	entry := readResultAttributes(false)
	entry["sandbox_id"] = schema.StringAttribute{Computed: true, MarkdownDescription: "Sandbox the file was read from."}
	attrs["id"] = schema.StringAttribute{Computed: true, MarkdownDescription: "The path read."}
	attrs["sandbox_ids"] = fleet.SandboxIDsDataSourceAttribute("Member key → sandbox ID, usually " +
		"`prime_sandbox_fleet.<name>.sandbox_ids` or, for what a command wrote, the members it succeeded on: " +
		"`{ for k, r in prime_fleet_command.agent.results : k => r.sandbox_id if !r.failed }` (which also orders " +
		"the read after it).")
	attrs["path"] = schema.StringAttribute{
		Required: true, MarkdownDescription: "Absolute path of the file, the same in every member.",
		Validators: []validator.String{remotePathValidator{}},
	}
	attrs["max_concurrency"] = schema.Int64Attribute{
		Optional: true, MarkdownDescription: fmt.Sprintf("How many members are read at once. Default `%d`.", fleet.DefaultConcurrency),
		Validators: []validator.Int64{int64validator.AtLeast(1)},
	}
	attrs["files"] = schema.MapNestedAttribute{
		Computed: true,
		MarkdownDescription: "Member key → the member's file: `sandbox_id`, `exists`, `sha256`, `size`, `content` and " +
			"`content_base64` (both null with `sensitive`; see `sensitive_files`).",
		NestedObject: schema.NestedAttributeObject{Attributes: entry},
	}
	attrs["sensitive_files"] = schema.MapAttribute{
		Computed: true, Sensitive: true, ElementType: sensitiveContentType(),
		MarkdownDescription: "With `sensitive`: member key → `content` and `content_base64`, hidden in plans and CLI output. Null otherwise.",
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads the same small file from every member of a fleet — each rollout's reward, say — as " +
			"the `prime_sandbox_file` data source reads one (same limits, same errors): one gateway call per member, " +
			"concurrently. Every member that fails is named in one error." + ResultPathsAdvice,
		Attributes: attrs,
	}
}

func (d *fleetFileDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !tfkit.RequireClient(d.client, &resp.Diagnostics) {
		return
	}
	var m fleetFileDataModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	ids := tfkit.StringMapOf(ctx, m.SandboxIDs, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	remote, maxSize, sensitive := m.Path.ValueString(), maxSizeOf(m.MaxSize), m.Sensitive.ValueBool()
	limit := fleet.DefaultConcurrency
	if !m.MaxConcurrency.IsNull() {
		limit = int(m.MaxConcurrency.ValueInt64())
	}
	var mu sync.Mutex
	files := make(map[string]attr.Value, len(ids))
	secret := make(map[string]attr.Value, len(ids))
	var notText, gone []string
	var problems fleet.Problems
	fleet.ForEachMember(ctx, tfkit.SortedKeys(ids), limit, func(ctx context.Context, key string) {
		f, err := readSmallFile(ctx, d.client, ids[key], remote, maxSize, m.AllowMissing.ValueBool())
		if err != nil {
			problems.Add(key, "%v", err)
			return
		}
		v := fileReadValuesOf(f, sensitive)
		obj := types.ObjectValueMust(fleetReadAttrTypes, map[string]attr.Value{
			"sandbox_id": types.StringValue(ids[key]), "exists": v.Exists, "sha256": v.SHA256, "size": v.Size,
			"content": v.Content, "content_base64": v.ContentBase64,
		})
		mu.Lock()
		defer mu.Unlock()
		files[key] = obj
		if sensitive {
			secret[key] = v.Sensitive
		}
		if v.NotText {
			notText = append(notText, key)
		}
		if f.SandboxGone {
			gone = append(gone, fmt.Sprintf("%q (%s)", key, ids[key]))
		}
	})
	if problems.Len() > 0 {
		resp.Diagnostics.AddError("Cannot read the fleet's files",
			fmt.Sprintf("Reading %s failed on %d of %d members:\n\n%s", remote, problems.Len(), len(ids), problems.String()))
		return
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		resp.Diagnostics.AddWarning("Fleet members' sandboxes are gone",
			fmt.Sprintf("These members' sandboxes no longer exist, so %s reads as missing there (exists = false): %s. "+
				"The fleet drops them at refresh, and its next apply creates them again.", remote, strings.Join(gone, ", ")))
	}
	if len(notText) > 0 {
		resp.Diagnostics.AddWarning("Files are not text", fmt.Sprintf("%s is not valid UTF-8 on members %s, so their content "+
			"is null; use content_base64.", remote, tfkit.QuoteKeys(tfkit.SortedKeys(tfkit.SetOf(notText)))))
	}
	m.ID = types.StringValue(remote)
	m.Files = types.MapValueMust(fleetReadType(), files)
	m.SensitiveFiles = types.MapNull(sensitiveContentType())
	if sensitive {
		m.SensitiveFiles = types.MapValueMust(sensitiveContentType(), secret)
	}
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &m)...)
}
