package prime

// Run claims: the record, inside the sandbox, that a run was started as a
// job. The provider keeps its own record of the jobs it starts on the
// machine that runs Terraform; a new machine (a CI runner after a lost
// one) has none, but it has the sandbox. So the command that starts a job
// first claims its run — a file /tmp/prime-runs/<run>/<job id>.<unix
// start>[.<run ID>] — in the same command, before the job's own wrapper, and refuses
// to start when another job already claimed the run: it lists the claims
// and exits claimedExit instead. A later apply on any machine thus learns
// the job a lost apply started, and attaches to it (its canonical
// /tmp/job_<id>.* files are what it collects) instead of starting the run
// again. The claim and the job live and die together with the sandbox's
// /tmp.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// RunClaimsDir holds one directory of claims per run (exported so that
// tests can tell the claim commands from a user's).
const RunClaimsDir = "/tmp/prime-runs"

// claimedExit is the exit code of a start refused because the run is
// claimed (EX_TEMPFAIL: nothing was started).
const claimedExit = 75

var (
	runPattern   = regexp.MustCompile(`^[0-9a-f]{16,64}$`)
	claimPattern = regexp.MustCompile(`^([0-9a-f]{8})\.([0-9]{1,12})(?:\.([0-9a-f]{1,64}))?$`)
)

// JobClaim is a job that claimed a run: its ID and when it was started
// (by the clock of the machine that started it).
type JobClaim struct {
	JobID   string
	Started time.Time
	// RunID is the run ID the starter gave the job (RunClaim.RunID; empty
	// from a starter that gave none).
	RunID string
}

// ClaimedError is a start refused because other jobs claimed the run: the
// caller attaches to one of them (or, if they are all its own, starts
// again with Force).
type ClaimedError struct {
	Run    string
	Claims []JobClaim
}

func (e *ClaimedError) Error() string {
	ids := make([]string, len(e.Claims))
	for i, c := range e.Claims {
		ids[i] = c.JobID
	}
	return fmt.Sprintf("run %s is already claimed by job(s) %s: nothing was started", e.Run, strings.Join(ids, ", "))
}

// RunClaim names the run a job start claims (JobRequest.Claim).
type RunClaim struct {
	// Run is the run's name: 16 to 64 lowercase hex characters (a hash).
	Run string
	// Force claims the run even when other jobs did (the caller knows
	// they are its own, or done with).
	Force bool
	// Started is recorded in the claim (the caller's clock).
	Started time.Time
	// RunID, when set, is recorded in the claim too (lowercase hex, see
	// ValidRunID): the ID the job's results are stamped with, which an
	// apply that attaches to the job from another machine must record as
	// its run, or the results read as another run's.
	RunID string
}

func (rc *RunClaim) check() error {
	if rc != nil && !runPattern.MatchString(rc.Run) {
		return fmt.Errorf("%w: run name %q is not 16 to 64 lowercase hex characters", ErrInvalidRequest, rc.Run)
	}
	if rc != nil && rc.RunID != "" && !ValidRunID(rc.RunID) {
		return fmt.Errorf("%w: run ID %q is not 1 to 64 lowercase hex characters", ErrInvalidRequest, rc.RunID)
	}
	return nil
}

// runClaimDir is the directory of a run's claims.
func runClaimDir(run string) string { return RunClaimsDir + "/" + run }

// claimPrefix is the command that claims the run for job before its
// wrapper starts: it creates the claim, unless (without Force) another
// job's claim is there already, in which case it lists the claims and
// exits claimedExit. A claim of this very job does not count: starting a
// job again with its own ID (one whose start never happened) is allowed.
func claimPrefix(job Job, rc RunClaim) string {
	dir := runClaimDir(rc.Run)
	claim := dir + "/" + job.ID + "." + strconv.FormatInt(rc.Started.Unix(), 10)
	if rc.RunID != "" {
		claim += "." + rc.RunID
	}
	s := "mkdir -p " + dir + " || exit 1; "
	if !rc.Force {
		s += "ls -A " + dir + " | grep -v '^" + job.ID + "\\.' | grep -q . && ls -A " + dir + " && exit " +
			strconv.Itoa(claimedExit) + "; "
	}
	return s + "touch " + claim + " || exit 1; "
}

// parseClaims reads the claims a refused start listed (one per line),
// oldest first; names that are not claims are skipped.
func parseClaims(out string) []JobClaim {
	var claims []JobClaim
	for _, line := range strings.Split(out, "\n") {
		m := claimPattern.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		sec, _ := strconv.ParseInt(m[2], 10, 64)
		claims = append(claims, JobClaim{JobID: m[1], Started: time.Unix(sec, 0).UTC(), RunID: m[3]})
	}
	sort.SliceStable(claims, func(i, j int) bool { return claims[i].Started.Before(claims[j].Started) })
	return claims
}

// claimRefusal turns a start's answer into a ClaimedError when the start
// was refused because of claims (nil otherwise).
func claimRefusal(rc *RunClaim, res *ExecResult) error {
	if rc == nil || rc.Force || res == nil || res.ExitCode != claimedExit {
		return nil
	}
	claims := parseClaims(res.Stdout)
	if len(claims) == 0 {
		return nil
	}
	return &ClaimedError{Run: rc.Run, Claims: claims}
}

// RetireRunClaims removes claims in one sandbox, so that those runs start
// afresh next time: each of runs is a run name, alone (every claim of the
// run) or "<run>/<job id>" (that job's claim). A sandbox that is gone took
// its claims with it: success.
func (c *Client) RetireRunClaims(ctx context.Context, sandboxID string, runs ...string) error {
	if len(runs) == 0 {
		return nil
	}
	var paths []string
	for _, r := range runs {
		run, job, one := strings.Cut(r, "/")
		if !runPattern.MatchString(run) || (one && !jobIDPattern.MatchString(job)) {
			return fmt.Errorf("retiring run claims: %w: %q is not a run or a run/job", ErrInvalidRequest, r)
		}
		if one {
			paths = append(paths, runClaimDir(run)+"/"+job+".*")
		} else {
			paths = append(paths, runClaimDir(run))
		}
	}
	sort.Strings(paths)
	err := c.runChecked(ctx, sandboxID, "retiring run claims", "rm -rf "+strings.Join(paths, " "), jobControlTimeout)
	if errors.Is(err, ErrSandboxNotRunning) {
		return nil
	}
	return err
}
