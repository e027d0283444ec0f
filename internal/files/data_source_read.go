package files

// Results into HCL: the prime_sandbox_file and prime_fleet_file data
// sources read small files (a reward JSON, a verdict) from sandboxes, so
// jsondecode() can use them in outputs and other resources. They read
// through the gateway's download route, as the verifiers framework reads
// results: bytes exactly as written, one gateway call per file. This file
// holds the read rule and the attributes both share.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// Read limits of the file data sources: what is read lands in state and
// in every plan, so it is kept small; larger results go to disk with the
// artifact resources. The cap is the platform's read_file limit (10 MiB,
// the 2026 files guide), the most a data source promises to read.
const (
	defaultReadMaxSize int64 = 1 << 20
	maxReadMaxSize     int64 = 10 << 20
)

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
		"stale": schema.BoolAttribute{Computed: true, MarkdownDescription: "With a run to check against: `true` when a " +
			"file was there but cannot be that run's result — older than the run's start, or the run never started " +
			"in this sandbox — so it reads as missing (`exists = false`, content null). `false` otherwise."},
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

func maxSizeOf(v types.Int64) int64 {
	if v.IsNull() || v.IsUnknown() {
		return defaultReadMaxSize
	}
	return v.ValueInt64()
}

// smallFile is what a data source read. SandboxGone: the sandbox no
// longer exists, so neither does the file (see readSmallFile).
type smallFile struct {
	Exists      bool
	SandboxGone bool
	Data        []byte
	SHA256      string
	// Stale: a file was there, but not the expected run's (see
	// checkRunResult); StaleWhy says why, for the warning.
	Stale    bool
	StaleWhy string
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
//
// With runID, the file must be that run's (checkRunResult): one that is
// not reads as missing and Stale (an error without allowMissing), never as
// the run's result.
func readSmallFile(ctx context.Context, c *prime.Client, sandboxID, remote string, maxSize int64, allowMissing bool, runID string) (*smallFile, error) {
	if runID != "" {
		check, err := checkRunResult(ctx, c, sandboxID, remote, runID)
		switch {
		case err != nil:
			return nil, err
		case check == runResultGone:
			return &smallFile{SandboxGone: true}, nil
		case check == runResultMissing && allowMissing:
			return &smallFile{}, nil
		case check == runResultMissing:
			return nil, fmt.Errorf("run %s wrote no file %s in sandbox %s (set allow_missing = true if that can be normal)", runID, remote, sandboxID)
		case check.stale() && allowMissing:
			return &smallFile{Stale: true, StaleWhy: check.why(remote, sandboxID, runID)}, nil
		case check.stale():
			return nil, fmt.Errorf("%s: %w (set allow_missing = true to read it as missing instead)", check.why(remote, sandboxID, runID), errStaleResult)
		}
	}
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
	Exists, SHA256, Size, Content, ContentBase64, Stale attr.Value
	Sensitive                                           types.Object
	NotText                                             bool
}

var sensitiveContentAttrTypes = map[string]attr.Type{"content": types.StringType, "content_base64": types.StringType}

func sensitiveContentType() types.ObjectType {
	return types.ObjectType{AttrTypes: sensitiveContentAttrTypes}
}

func fileReadValuesOf(f *smallFile, sensitive bool) fileReadValues {
	v := fileReadValues{
		Exists: types.BoolValue(f.Exists), SHA256: types.StringNull(), Size: types.Int64Null(),
		Content: types.StringNull(), ContentBase64: types.StringNull(), Sensitive: types.ObjectNull(sensitiveContentAttrTypes),
		Stale: types.BoolValue(f.Stale),
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
