package tfcli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestWithNoColor(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"apply", "-auto-approve"}, []string{"apply", "-no-color", "-auto-approve"}},
		{[]string{"apply", "plan.tfplan"}, []string{"apply", "-no-color", "plan.tfplan"}},
		{[]string{"version"}, []string{"version", "-no-color"}},
		{[]string{"plan", "-no-color"}, []string{"plan", "-no-color"}},
		{[]string{"state", "rm", "a.b"}, []string{"state", "rm", "a.b"}},
		{[]string{"untaint", "a.b"}, []string{"untaint", "a.b"}},
		{nil, nil},
	} {
		if got := withNoColor(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("withNoColor(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// fakeTerraform is a script standing in for terraform: it prints its
// arguments, then runs body.
func fakeTerraform(t *testing.T, body string) *Workspace {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "terraform")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"$@\"\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return New(dir, bin, nil)
}

func TestRunExitCodeAndOutput(t *testing.T) {
	w := fakeTerraform(t, "exit 3")
	res := w.Run(context.Background(), "plan", "-detailed-exitcode")
	if res.Err != nil || res.ExitCode != 3 || res.OK() || res.Output != "plan -no-color -detailed-exitcode\n" {
		t.Fatalf("Run = exit %d, err %v, output %q", res.ExitCode, res.Err, res.Output)
	}
	if res := fakeTerraform(t, "exit 0").Run(context.Background(), "apply"); !res.OK() {
		t.Fatalf("Run of a zero exit: %s", res.Describe())
	}
}

func TestRunKilledWhenContextEnds(t *testing.T) {
	w := fakeTerraform(t, "exec sleep 600")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res := w.Run(ctx, "apply")
	if res.Err == nil || res.ExitCode != -1 || res.OK() {
		t.Fatalf("a run killed at its deadline: %s", res.Describe())
	}
}

// Stream gets the output as it comes, and Color leaves -no-color out.
func TestRunStreamStdoutColor(t *testing.T) {
	w := fakeTerraform(t, "echo warned >&2")
	var streamed bytes.Buffer
	w.Stream, w.Color = &streamed, true
	res := w.Run(context.Background(), "output", "-json")
	if !res.OK() || res.Output != "output -json\nwarned\n" || streamed.String() != res.Output {
		t.Fatalf("output %q, streamed %q (%s)", res.Output, streamed.String(), res.Describe())
	}
	if err := fakeTerraform(t, "exit 2").Run(context.Background(), "plan").Check(); err == nil || err.Error() != "exit status 2" {
		t.Fatalf("Check of exit 2: %v", err)
	}
}
