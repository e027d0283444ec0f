package command

// A run's provenance: what the provider itself knows of each run of a
// command — its ID (also the name of its stamp in the sandbox, see
// prime.StampedRunCommand), when it started and ended, how it ended, and
// the egress policy the sandbox enforced when it started, read from the
// platform, not taken from the configuration — recorded in state and, with
// output_dir, in a run.json beside the run's logs. What only the
// configuration knows (the image or checkpoint, the task, the setup) is
// recorded as the run's triggers: those re-run the command when they
// change, so a record never names inputs its run did not have.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

// runStart is what a run records when it starts.
type runStart struct {
	RunID     string    `json:"run_id"`
	StartedAt time.Time `json:"started_at"`
	// Egress is the policy the sandbox enforced when the run started; nil
	// when it could not be read.
	Egress *runEgress `json:"egress,omitempty"`
}

// runEgress is the egress policy a run started under: the generation the
// data plane enforced and the digest of its lists (prime.EgressPolicy's
// Digest, the lists_sha256 of the block or policy that wrote it). The
// digest is empty when the data plane still enforced an older generation
// than the newest one written, whose lists the platform no longer shows.
type runEgress struct {
	Generation int64  `json:"generation"`
	SHA256     string `json:"lists_sha256,omitempty"`
}

// newRunID is a run's ID: 16 lowercase hex characters (prime.ValidRunID).
func newRunID() string { return prime.NewIdempotencyKey()[:16] }

// startRun begins a run in a sandbox: a new ID, the time, and the egress
// policy in force, read once — the same read that refuses to start a run
// with requireOpen on restricted egress (checkEgressOpen). A read that
// fails otherwise is no reason not to run: the record says it is not known.
func startRun(ctx context.Context, c *prime.Client, sandboxID string, requireOpen bool) (runStart, error) {
	run := runStart{RunID: newRunID()}
	var st *prime.EgressPolicyStatus
	if requireOpen {
		var err error
		if st, err = checkEgressOpen(ctx, c, sandboxID); err != nil {
			return run, &commandError{Summary: "Egress is restricted", Err: err}
		}
	} else {
		st, _ = c.GetEgressPolicy(ctx, sandboxID)
	}
	run.Egress = runEgressOf(st)
	run.StartedAt = time.Now().UTC()
	return run, nil
}

// runEgressOf is the policy a status says the data plane enforces (nil
// without a status). A VM's untouched generation 0 is open, enforced or
// not: nothing was ever restricted.
func runEgressOf(st *prime.EgressPolicyStatus) *runEgress {
	switch {
	case st == nil:
		return nil
	case st.Enforces(st.Generation) || st.Generation == 0 && st.Policy.IsOpen():
		return &runEgress{Generation: st.Generation, SHA256: st.Policy.Digest()}
	}
	return &runEgress{Generation: st.AppliedGeneration}
}

// encode is the run as the job journal keeps it beside its jobs.
func (r *runStart) encode() json.RawMessage {
	if r == nil {
		return nil
	}
	b, _ := json.Marshal(r)
	return b
}

// decodeRunStart reads a run the job journal kept (nil when it kept none:
// an entry of a build before runs were recorded).
func decodeRunStart(b json.RawMessage) *runStart {
	if len(b) == 0 {
		return nil
	}
	var r runStart
	if json.Unmarshal(b, &r) != nil || !prime.ValidRunID(r.RunID) {
		return nil
	}
	return &r
}

// orNewRun is r, or, when no start was recorded (a run an older build
// began), a run with a new ID whose start and egress are not known.
func orNewRun(r *runStart) runStart {
	if r == nil {
		return runStart{RunID: newRunID()}
	}
	return *r
}

// runValues are a run's provenance attributes in state.
type runValues struct {
	StartedAt        types.String `tfsdk:"started_at"`
	EgressGeneration types.Int64  `tfsdk:"egress_generation"`
	EgressSHA256     types.String `tfsdk:"egress_sha256"`
}

func (r runStart) values() runValues {
	v := runValues{StartedAt: types.StringNull(), EgressGeneration: types.Int64Null(), EgressSHA256: types.StringNull()}
	if !r.StartedAt.IsZero() {
		v.StartedAt = types.StringValue(r.StartedAt.Format(time.RFC3339))
	}
	if r.Egress != nil {
		v.EgressGeneration = types.Int64Value(r.Egress.Generation)
		if r.Egress.SHA256 != "" {
			v.EgressSHA256 = types.StringValue(r.Egress.SHA256)
		}
	}
	return v
}

// commandsDigest names a command's steps: the SHA-256 (hex) of their JSON
// array, what `sha256(jsonencode(commands))` gives in Terraform (both
// escape <, > and & the same way).
func commandsDigest(commands []string) string {
	if commands == nil {
		commands = []string{}
	}
	b, _ := json.Marshal(commands)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// commandDigest names prime_sandbox_command's command: the SHA-256 (hex)
// of its text, what `sha256(command)` gives.
func commandDigest(command string) string {
	sum := sha256.Sum256([]byte(command))
	return hex.EncodeToString(sum[:])
}

// runRecord is a run's run.json: its provenance, in one machine-readable
// record, written beside its logs in output_dir.
type runRecord struct {
	RunID            string            `json:"run_id"`
	Member           string            `json:"member,omitempty"`
	SandboxID        string            `json:"sandbox_id"`
	StartedAt        *string           `json:"started_at"`
	EndedAt          *string           `json:"ended_at"`
	ExitCode         *int64            `json:"exit_code"`
	Failed           bool              `json:"failed"`
	Error            *string           `json:"error"`
	CommandsSHA256   string            `json:"commands_sha256,omitempty"`
	CommandSHA256    string            `json:"command_sha256,omitempty"`
	EgressGeneration *int64            `json:"egress_generation"`
	EgressSHA256     *string           `json:"egress_sha256"`
	Triggers         map[string]string `json:"triggers"`
	MemberTrigger    *string           `json:"member_trigger,omitempty"`
}

// RunRecordName is the run record's file name in output_dir (a fleet
// member's in output_dir/<key>).
const RunRecordName = "run.json"

// writeRunRecord writes rec as dir/run.json, under a temporary name
// renamed when complete, so a reader never sees half a record.
func writeRunRecord(dir string, rec runRecord) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: the operator's results
		return err
	}
	tmp, err := os.CreateTemp(dir, ".run.json-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if werr == nil && cerr == nil {
		if werr = os.Chmod(tmp.Name(), 0o644); werr == nil { //nolint:gosec // G302: the operator's results
			werr = os.Rename(tmp.Name(), filepath.Join(dir, RunRecordName))
		}
	}
	if werr != nil || cerr != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, RunRecordName), firstError(werr, cerr))
	}
	return nil
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// stringPtr is a state string as a record field (nil when null).
func stringPtr(v types.String) *string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	s := v.ValueString()
	return &s
}

func int64Ptr(v types.Int64) *int64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	n := v.ValueInt64()
	return &n
}
