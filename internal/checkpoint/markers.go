package checkpoint

// Checkpoint markers: the record, inside the source sandbox, of the
// checkpoints a configuration requested. The checkpoint journal keeps that
// record on the machine that runs Terraform; a new machine (a CI runner
// after a lost one) has none, but it has the source sandbox, which its
// state holds. So right after the platform answers a checkpoint request,
// an empty file /tmp/prime-checkpoints/<configuration hash>/<checkpoint
// id> is written there; the next create of that configuration, on any
// machine, reads the directory and adopts (or deletes) the checkpoint a
// lost apply left, instead of requesting a second one and leaving the first
// untracked and billed.

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/primeintellect/terraform-provider-prime/internal/journal"
	"github.com/primeintellect/terraform-provider-prime/internal/prime"
)

const (
	// MarkersDir holds the markers (exported so that tests can tell the
	// marker commands from a user's).
	MarkersDir = "/tmp/prime-checkpoints"
	// markerTimeout bounds each marker command.
	markerTimeout = 30 * time.Second
)

var (
	markerHashPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// checkpointIDPattern is what a marker's name may be: the platform's
	// IDs are 1 to 64 characters [I: their alphabet is not published;
	// anything else is neither written nor read].
	checkpointIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// markerDir is the directory of one configuration's markers.
func markerDir(hash string) string { return MarkersDir + "/" + hash }

// markCheckpoint writes the marker of checkpoint id of configuration hash
// into source sandboxID. Best effort: without it, only this machine's
// journal knows the checkpoint until Create returns it.
func markCheckpoint(ctx context.Context, c *prime.Client, sandboxID, hash, id string) {
	if !markerHashPattern.MatchString(hash) || !checkpointIDPattern.MatchString(id) {
		return
	}
	dir := markerDir(hash)
	res, err := c.Exec(ctx, sandboxID, prime.ExecRequest{Command: "mkdir -p " + dir + " && touch " + dir + "/" + id, Timeout: markerTimeout})
	if err == nil && res.ExitCode != 0 {
		err = errors.New(strings.TrimSpace(res.Stderr))
	}
	if err != nil {
		tflog.Warn(ctx, "the checkpoint's marker was not written in its source sandbox: an apply on another machine "+
			"cannot adopt it if this one is lost before Terraform stores it", map[string]any{"checkpoint_id": id, "error": err.Error()})
	}
}

// markedCheckpoints lists the checkpoints of configuration hash marked in
// source sandboxID.
func markedCheckpoints(ctx context.Context, c *prime.Client, sandboxID, hash string) ([]string, error) {
	if !markerHashPattern.MatchString(hash) {
		return nil, nil
	}
	res, err := c.Exec(ctx, sandboxID, prime.ExecRequest{Command: "ls -A " + markerDir(hash) + " 2>/dev/null; true", Timeout: markerTimeout})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, line := range strings.Split(res.Stdout, "\n") {
		if id := strings.TrimSpace(line); checkpointIDPattern.MatchString(id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// unmarkCheckpoint removes a marker whose checkpoint is gone or deleted
// (best effort: a marker left behind names a checkpoint the next create
// finds gone, and removes then).
func unmarkCheckpoint(ctx context.Context, c *prime.Client, sandboxID, hash, id string) {
	if markerHashPattern.MatchString(hash) && checkpointIDPattern.MatchString(id) {
		_, _ = c.Exec(ctx, sandboxID, prime.ExecRequest{Command: "rm -f " + markerDir(hash) + "/" + id, Timeout: markerTimeout})
	}
}

// adoptMarked returns the checkpoint a lost apply requested for
// configuration hash of source sandboxID, found by its marker, if one is
// usable and neither held by Terraform (a plan on this machine saw it in
// state) nor taken by this process; unusable ones are deleted and their
// markers removed. A source that cannot be asked (not running: paused,
// deleted) has nothing to offer: nil, nil.
func adoptMarked(ctx context.Context, c *prime.Client, j *journal.Checkpoints, hash, sandboxID string) (*prime.Checkpoint, error) {
	ids, err := markedCheckpoints(ctx, c, sandboxID, hash)
	if errors.Is(err, prime.ErrSandboxNotRunning) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if j.Held(id) || !j.Take(id) {
			continue
		}
		ck, err := usableLeftover(ctx, c, id, sandboxID)
		if err != nil {
			return nil, &leftoverError{id: id, err: err}
		}
		if ck == nil {
			unmarkCheckpoint(ctx, c, sandboxID, hash, id)
			continue
		}
		tflog.Info(ctx, "recovery: adopting the checkpoint an earlier, lost apply requested (its marker is in the source sandbox)",
			map[string]any{"checkpoint_id": ck.ID, "sandbox_id": sandboxID, "state": ck.State})
		return ck, nil
	}
	return nil, nil
}
