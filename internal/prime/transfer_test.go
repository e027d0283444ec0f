package prime

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// Expected values are Python 3's shlex.quote outputs for the same inputs.
func TestShellQuoteMatchesShlex(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", `''`},
		{"abc", `abc`},
		{"/tmp/job_1234abcd.exit", `/tmp/job_1234abcd.exit`},
		{"a b", `'a b'`},
		{"it's", `'it'"'"'s'`},
		{"a$b", `'a$b'`},
		{"$HOME", `'$HOME'`},
		{"x;rm -rf /", `'x;rm -rf /'`},
		{"é", `'é'`},
		{`a"b`, `'a"b'`},
		{"-n", `-n`},
		{"a=b,c:d@e%f+g", `a=b,c:d@e%f+g`},
		{"~user", `'~user'`},
		{"*", `'*'`},
		{"tab\there", "'tab\there'"},
		{"new\nline", "'new\nline'"},
		{"''", `''"'"''"'"''`},
		{`back\slash`, `'back\slash'`},
		{"!bang", `'!bang'`},
	} {
		if got := shellQuote(tt.in); got != tt.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// randomParts hides the random names in commands, for golden strings.
var randomParts = regexp.MustCompile(`(\.prime-(?:upload|fetch)-)[0-9a-f]{16}`)

func commandsSent(g *fakeGateway) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, b := range g.commands {
		out = append(out, randomParts.ReplaceAllString(b.Command, "${1}RAND"))
	}
	return out
}

func checkCommands(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("commands:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestPutFileCommands(t *testing.T) {
	mode := uint32(0o755)
	tests := []struct {
		name     string
		req      PutFileRequest
		commands []string
		upload   string
	}{
		{name: "file", req: PutFileRequest{Path: "/srv/app/conf.json", Source: bytesSource("conf.json", []byte("{}"))},
			upload: "/srv/app/.prime-upload-RAND",
			commands: []string{
				"mv -f -- /srv/app/.prime-upload-RAND /srv/app/conf.json",
			}},
		{name: "file with a mode and a space", req: PutFileRequest{Path: "/srv/my app/run.sh", Source: bytesSource("run.sh", []byte("#!")), Mode: &mode},
			upload: "/srv/my app/.prime-upload-RAND",
			commands: []string{
				"mv -f -- '/srv/my app/.prime-upload-RAND' '/srv/my app/run.sh' && chmod 755 -- '/srv/my app/run.sh'",
			}},
		{name: "directory", req: PutFileRequest{Path: "/srv/site", Source: bytesSource("site.tar", []byte("tar")), Extract: true},
			upload: "/srv/.prime-upload-RAND.tar",
			commands: []string{
				"mkdir -p -- /srv/site && tar -xf /srv/.prime-upload-RAND.tar -C /srv/site; s=$?; rm -f -- /srv/.prime-upload-RAND.tar; exit $s",
			}},
		{name: "directory with a mode", req: PutFileRequest{Path: "/srv/site", Source: bytesSource("site.tar", []byte("tar")), Extract: true, Mode: &mode},
			upload: "/srv/.prime-upload-RAND.tar",
			commands: []string{
				"mkdir -p -- /srv/site && tar -xf /srv/.prime-upload-RAND.tar -C /srv/site && chmod 755 -- /srv/site; s=$?; rm -f -- /srv/.prime-upload-RAND.tar; exit $s",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t)
			g.add("sb-1", &fakeSandbox{})
			c, _ := g.client(nil)
			res, err := c.PutFile(context.Background(), "sb-1", tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Path != tt.req.Path || res.Size != tt.req.Source.Size {
				t.Errorf("result %+v", res)
			}
			checkCommands(t, commandsSent(g), tt.commands)
			reqs := g.fileRequests()
			if len(reqs) != 1 || randomParts.ReplaceAllString(reqs[0].path, "${1}RAND") != tt.upload {
				t.Errorf("uploads %+v, want one to %s", reqs, tt.upload)
			}
			// Two gateway calls in all: the upload creates the parent.
			if n := g.count("Start") + g.count("upload"); n != 2 {
				t.Errorf("%d gateway calls, want 2", n)
			}
		})
	}
}

// A failed upload leaves no temporary file behind, and nothing under the
// final name.
func TestPutFileRemovesTheTemporaryOnFailure(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	g.onFile = func(_ int, _ string, w http.ResponseWriter, _ *http.Request) bool {
		writeJSON(w, http.StatusForbidden, map[string]any{"error": "forbidden", "message": "Operation not permitted"})
		return true
	}
	c, _ := g.client(nil)
	_, err := c.PutFile(context.Background(), "sb-1", PutFileRequest{Path: "/etc/x", Source: bytesSource("x", []byte("1"))})
	if err == nil || !strings.Contains(err.Error(), "putting the file /etc/x in sandbox sb-1") || !strings.Contains(err.Error(), "Operation not permitted") {
		t.Fatalf("err = %v", err)
	}
	checkCommands(t, commandsSent(g), []string{"rm -f -- /etc/.prime-upload-RAND"})

	// A move that fails (non-zero exit) removes it too.
	g2 := newFakeGateway(t)
	g2.add("sb-1", &fakeSandbox{})
	g2.onCommand = func(_ int, b fakeCommand) (int, string, string, error) {
		if strings.HasPrefix(b.Command, "mv ") {
			return 1, "", "mv: cannot move: Permission denied\n", nil
		}
		return 0, "", "", nil
	}
	c2, _ := g2.client(nil)
	_, err = c2.PutFile(context.Background(), "sb-1", PutFileRequest{Path: "/etc/x", Source: bytesSource("x", []byte("1"))})
	var failed *CommandFailedError
	if !errors.As(err, &failed) || failed.ExitCode != 1 || !strings.Contains(err.Error(), "Permission denied") {
		t.Fatalf("err = %v", err)
	}
	checkCommands(t, commandsSent(g2), []string{"mv -f -- /etc/.prime-upload-RAND /etc/x", "rm -f -- /etc/.prime-upload-RAND"})
}

func TestRemovePath(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	c, _ := g.client(nil)
	for _, p := range []string{"/", "//", "/tmp/..", "relative"} {
		if err := c.RemovePath(context.Background(), "sb-1", p, true); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("RemovePath(%q): err = %v, want a refusal", p, err)
		}
	}
	if err := c.RemovePath(context.Background(), "sb-1", "/srv/a b", false); err != nil {
		t.Fatal(err)
	}
	if err := c.RemovePath(context.Background(), "sb-1", "/srv/dir", true); err != nil {
		t.Fatal(err)
	}
	checkCommands(t, commandsSent(g), []string{"rm -f -- '/srv/a b'", "rm -rf -- /srv/dir"})
}

func TestFetchDirectory(t *testing.T) {
	g := newFakeGateway(t)
	g.add("sb-1", &fakeSandbox{})
	var archive bytes.Buffer
	tw := tar.NewWriter(&archive)
	_ = tw.WriteHeader(&tar.Header{Name: "./a.txt", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644})
	_, _ = tw.Write([]byte("a"))
	_ = tw.Close()
	tarCmd := regexp.MustCompile(`^tar -cf (\S+) `)
	g.onCommand = func(_ int, b fakeCommand) (int, string, string, error) {
		if m := tarCmd.FindStringSubmatch(b.Command); m != nil {
			if strings.Contains(b.Command, "/missing") {
				return 2, "", "tar: /missing: Cannot chdir: No such file or directory\ntar: Error is not recoverable: exiting now\n", nil
			}
			g.putFile("sb-1", m[1], archive.Bytes())
		}
		return 0, "", "", nil
	}
	c, _ := g.client(nil)
	var got []byte
	err := c.FetchDirectory(context.Background(), "sb-1", "/srv/out dir", func(r io.Reader) error {
		var err error
		got, err = io.ReadAll(r)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, archive.Bytes()) {
		t.Error("the sink did not get the archive")
	}
	err = c.FetchDirectory(context.Background(), "sb-1", "/missing", func(io.Reader) error { return nil })
	if !errors.Is(err, ErrFileNotFound) || !strings.Contains(err.Error(), "/missing") {
		t.Fatalf("missing directory: err = %v", err)
	}
	checkCommands(t, commandsSent(g), []string{
		"tar -cf /tmp/.prime-fetch-RAND.tar -C '/srv/out dir' .",
		"rm -f -- /tmp/.prime-fetch-RAND.tar",
		"tar -cf /tmp/.prime-fetch-RAND.tar -C /missing .",
		"rm -f -- /tmp/.prime-fetch-RAND.tar",
	})
}
