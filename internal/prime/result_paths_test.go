package prime

import "testing"

func TestCheckResultPath(t *testing.T) {
	for _, c := range []struct{ path, why string }{
		{"/results", ""},
		{"/results/", ""},
		{"/home/agent/out/reward.json", ""},
		{"/results/./x", ""},
		{"/tmp/results", ""},
		{"/a/..b", ""},
		{"", "it is empty"},
		{"results", "it is not absolute (it must start with /)"},
		{"./results", "it is not absolute (it must start with /)"},
		{"/results/../etc", `it contains a ".." element`},
		{"/..", `it contains a ".." element`},
		{"/", "it is the root directory"},
		{"//", "it is the root directory"},
		{"/.", "it is the root directory"},
		{"/tmp", "it is /tmp, which holds every background job's logs and exit file"},
		{"/tmp/.", "it is /tmp, which holds every background job's logs and exit file"},
		{"/a\x00b", "it contains a NUL byte"},
	} {
		if got := CheckResultPath(c.path); got != c.why {
			t.Errorf("CheckResultPath(%q) = %q, want %q", c.path, got, c.why)
		}
	}
}

func TestClearResultPathsCommand(t *testing.T) {
	for _, c := range []struct {
		paths   []string
		command string
		want    string
	}{
		{nil, "python agent.py", "python agent.py"},
		{[]string{"/results"}, "python agent.py",
			": prime result_paths; rm -rf -- /results || (echo 'prime: result_paths could not be removed, so the command did not run' >&2; exit 125) || exit 125\npython agent.py"},
		{[]string{"/out dir", "/it's"}, "a\nb",
			": prime result_paths; rm -rf -- '/out dir' '/it'\"'\"'s' || (echo 'prime: result_paths could not be removed, so the command did not run' >&2; exit 125) || exit 125\na\nb"},
	} {
		if got := ClearResultPathsCommand(c.paths, c.command); got != c.want {
			t.Errorf("ClearResultPathsCommand(%q, %q) =\n%s\nwant\n%s", c.paths, c.command, got, c.want)
		}
	}
}

func TestStampedRunCommand(t *testing.T) {
	got := StampedRunCommand([]string{"/results"}, "0123abcd", "python agent.py")
	want := ": prime result_paths; rm -rf -- /results && mkdir -p -- /tmp/.prime-runs && : > /tmp/.prime-runs/0123abcd || " +
		"(echo 'prime: result_paths could not be removed, so the command did not run' >&2; exit 125) || exit 125\npython agent.py"
	if got != want {
		t.Errorf("StampedRunCommand =\n%s\nwant\n%s", got, want)
	}
	if got := StampedRunCommand(nil, "0123abcd", "x"); got != "x" {
		t.Errorf("without result paths: %q, want the command alone", got)
	}
	if got := ResultFreshCommand("ab", "/results/reward.json"); got != "test -e /tmp/.prime-runs/ab || exit 3; test -e /results/reward.json || exit 4; "+
		"test /results/reward.json -ot /tmp/.prime-runs/ab && exit 5; exit 0" {
		t.Errorf("ResultFreshCommand = %q", got)
	}
	for id, ok := range map[string]bool{"0123abcdef": true, "": false, "ABC": false, "../x": false, "a/b": false} {
		if ValidRunID(id) != ok {
			t.Errorf("ValidRunID(%q) = %v, want %v", id, !ok, ok)
		}
	}
}
