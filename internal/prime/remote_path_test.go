package prime

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// remotePathCases is the one remote-path rule's table: what the plan-time
// validator (internal/files) and every client call that names a path in a
// sandbox accept, and why they refuse the rest.
var remotePathCases = []struct {
	path string
	// want is "" for an accepted path, else a part of the refusal.
	want string
}{
	{"/task/x.json", ""},
	{"/root", ""},
	{"/a b/c", ""},
	{"/tmp/job_0a1b2c3d.exit", ""},
	{"", "must not be empty"},
	{"task/x.json", `"task/x.json" is relative: give an absolute path such as "/task/x.json"`},
	{"./task", `"./task" is relative: give an absolute path such as "/task"`},
	{"/", `"/" is the root directory`},
	{"/task/", `"/task/" is not clean`},
	{"/a/../b", `"/a/../b" is not clean`},
	{"/a/./b", `write "/a/b"`},
	{"//a", `"//a" is not clean`},
	{"/a\x00b", "must not contain a NUL byte"},
}

func TestCheckRemotePath(t *testing.T) {
	for _, tc := range remotePathCases {
		err := CheckRemotePath(tc.path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckRemotePath(%q) = %v, want nil", tc.path, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckRemotePath(%q) = %v, want an error containing %q", tc.path, err, tc.want)
		}
	}
}

// TestClientRefusesRemotePathsTheRuleRefuses: the client's file calls hold
// the same rule as plan time and refuse before any request, so that no path
// a configuration could not hold (an unclean one that names one file under
// two spellings, the root, a NUL byte) reaches the gateway.
func TestClientRefusesRemotePathsTheRuleRefuses(t *testing.T) {
	var requests atomic.Int32
	c, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}), nil)
	ctx := context.Background()
	calls := map[string]func(p string) error{
		"DownloadFile": func(p string) error {
			return c.DownloadFile(ctx, "sbx-1", p, func(io.Reader) error { return nil })
		},
		"ReadFile": func(p string) error { _, err := c.ReadFile(ctx, "sbx-1", ReadFileRequest{Path: p}); return err },
		"UploadFile": func(p string) error {
			_, err := c.UploadFile(ctx, "sbx-1", p, bytesSource("x", []byte("x")))
			return err
		},
		"PutFile": func(p string) error {
			_, err := c.PutFile(ctx, "sbx-1", PutFileRequest{Path: p, Source: bytesSource("x", []byte("x"))})
			return err
		},
		"ChangeMode": func(p string) error { return c.ChangeMode(ctx, "sbx-1", p, 0o644) },
		"RemovePath": func(p string) error { return c.RemovePath(ctx, "sbx-1", p, true) },
		"FetchDirectory": func(p string) error {
			return c.FetchDirectory(ctx, "sbx-1", p, func(io.Reader) error { return nil })
		},
	}
	for name, call := range calls {
		for _, tc := range remotePathCases {
			if tc.want == "" {
				continue
			}
			err := call(tc.path)
			if !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s(%q) = %v, want ErrInvalidRequest saying %q", name, tc.path, err, tc.want)
			}
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached the API, want none", n)
	}
}
