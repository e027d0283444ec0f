package shell

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
)

// shellBox is a machine of its own (file system and processes) on which
// test scripts run one after the other; bg reports each background
// process as it ends.
type shellBox struct {
	t  *testing.T
	m  *Machine
	bg chan bgDone
}

type bgDone struct {
	pid uint32
	out Outcome
	err error
}

func newShellBox(t *testing.T) *shellBox {
	t.Helper()
	b := &shellBox{t: t, m: NewMachine(sandboxfs.New(sandboxfs.NewStore(), "box", nil), Hooks{}), bg: make(chan bgDone, 64)}
	b.m.hooks.Launch = func(p *Process, run func(context.Context) (Outcome, error)) {
		go func() {
			out, err := run(context.Background())
			b.bg <- bgDone{p.pid, out, err}
		}()
	}
	return b
}

// run runs a script as a new top-level process, as the transports do.
func (b *shellBox) run(script string) (stdout, stderr string, exit int) {
	b.t.Helper()
	var mu sync.Mutex
	var o, e strings.Builder
	out := &sink{output: func(isErr bool, s string) {
		mu.Lock()
		defer mu.Unlock()
		if isErr {
			e.WriteString(s)
		} else {
			o.WriteString(s)
		}
	}}
	in := b.m.shell(b.m.spawn(0, true), out, standardFDs(), nil, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := in.run(ctx, script)
	if err != nil {
		b.t.Fatalf("%q: %v", script, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return o.String(), e.String(), res.Exit
}

func (b *shellBox) file(p string) string {
	b.t.Helper()
	data, err := b.m.fs.ReadFile(p)
	if err != nil {
		b.t.Fatalf("%s: %v", p, err)
	}
	return string(data)
}

func (b *shellBox) exists(p string) bool {
	_, err := b.m.fs.Stat(p, false)
	return err == nil
}

// waitBackground waits for the next background process to end.
func (b *shellBox) waitBackground() bgDone {
	b.t.Helper()
	select {
	case d := <-b.bg:
		return d
	case <-time.After(20 * time.Second):
		b.t.Fatal("no background process ended")
	}
	return bgDone{}
}

func sumOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestShellFileCommands: each case runs setup, then script, in a fresh
// box, and compares the script's output and status with bash and
// coreutils' (C locale).
func TestShellFileCommands(t *testing.T) {
	const setup = "mkdir -p /w/d && echo hello > /w/f && echo -n 12345 > /w/n && ln -s /w/f /w/link && ln -s /etc /w/etc"
	for _, tc := range []struct {
		script         string
		stdout, stderr string
		exit           int
	}{
		// cat
		{"cat /w/f /w/n", "hello\n12345", "", 0},
		{"cat /w/link", "hello\n", "", 0},
		{"cat /x; echo $?", "1\n", "cat: /x: No such file or directory\n", 0},
		{"cat /w/d", "", "cat: /w/d: Is a directory\n", 1},
		{"cat < /w/f", "hello\n", "", 0},
		{"cd /w && cat f n", "hello\n12345", "", 0},
		// mkdir
		{"mkdir -p -- '/w/a/b' && test -d /w/a/b && echo ok", "ok\n", "", 0},
		{"mkdir /w/x/y", "", "mkdir: cannot create directory '/w/x/y': No such file or directory\n", 1},
		{"mkdir /w/d", "", "mkdir: cannot create directory '/w/d': File exists\n", 1},
		{"mkdir -p /w/f", "", "mkdir: cannot create directory '/w/f': File exists\n", 1},
		{"mkdir -p /w/p /w/q && ls /w", "d\netc\nf\nlink\nn\np\nq\n", "", 0},
		{"mkdir", "", "mkdir: missing operand\nTry 'mkdir --help' for more information.\n", 1},
		// mv
		{"mv -f -- '/w/f' '/w/g' && cat /w/g && test -e /w/f || echo moved", "hello\nmoved\n", "", 0},
		{"mv /w/f /w/d && cat /w/d/f", "hello\n", "", 0},
		{"mv /w/f /w/n && cat /w/n", "hello\n", "", 0},
		{"mv /w/nope /w/x", "", "mv: cannot stat '/w/nope': No such file or directory\n", 1},
		{"mv /w/d /w/d/e", "", "mv: cannot move '/w/d' to a subdirectory of itself, '/w/d/e'\n", 1},
		// cp
		{"cp /w/f /w/c && cat /w/c", "hello\n", "", 0},
		{"cp /w/f /w/d && cat /w/d/f", "hello\n", "", 0},
		{"cp /w/d /w/e", "", "cp: -r not specified; omitting directory '/w/d'\n", 1},
		{"echo x > /w/d/in && cp -r /w/d /w/e && cat /w/e/in", "x\n", "", 0},
		// chmod
		{"chmod 0755 -- '/w/f' && test -x /w/f && echo x", "x\n", "", 0},
		{"chmod +x /w/n && test -x /w/n && chmod a-x /w/n && test -x /w/n || echo not", "not\n", "", 0},
		{"chmod 644 /nope", "", "chmod: cannot access '/nope': No such file or directory\n", 1},
		{"chmod 9 /w/f", "", "chmod: invalid mode: '9'\nTry 'chmod --help' for more information.\n", 1},
		{"echo y > /w/d/y && chmod -R 700 /w/d && test -x /w/d/y && echo recursive", "recursive\n", "", 0},
		// rm
		{"rm -f -- '/w/f' && test -e /w/f || echo gone", "gone\n", "", 0},
		{"rm -f /w/nope; echo $?", "0\n", "", 0},
		{"rm /w/nope", "", "rm: cannot remove '/w/nope': No such file or directory\n", 1},
		{"rm /w/d", "", "rm: cannot remove '/w/d': Is a directory\n", 1},
		{"rm -rf -- '/w' && test -e /w || echo gone", "gone\n", "", 0},
		{"rm -rf /", "", "rm: it is dangerous to operate recursively on '/'\nrm: use --no-preserve-root to override this failsafe\n", 1},
		{"rm -rf /w/etc && test -e /etc/hostname && echo kept", "kept\n", "", 0},
		// test and [
		{"test -e /w/f && test -f /w/f && test -d /w/d && test -s /w/f && echo yes", "yes\n", "", 0},
		{"[ -f '/w/f' ] && [ ! -d /w/f ] && echo yes", "yes\n", "", 0},
		{"test -e /a || test -e /b || test -e /w/n && echo third", "third\n", "", 0},
		{"touch /w/empty; test -s /w/empty || echo empty", "empty\n", "", 0},
		{"test -L /w/link && test -h /w/etc && ! test -L /w/f; echo $?", "0\n", "", 0},
		{"! true; echo $?; ! false && echo negated", "1\nnegated\n", "", 0},
		{"[ -f /w/f", "", "bash: line 1: [: missing `]'\n", 2},
		{"[ 3 -gt 2 ] && [ a = a ] && [ a != b ] && [ -n x ] && [ -z '' ] && echo ok", "ok\n", "", 0},
		{"[ x -gt 2 ]", "", "bash: line 1: [: x: integer expression expected\n", 2},
		{"test", "", "", 1},
		// ls
		{"ls /w", "d\netc\nf\nlink\nn\n", "", 0},
		{"ls -a /w/d", ".\n..\n", "", 0},
		{"ls /w/f", "/w/f\n", "", 0},
		{"ls /nope", "", "ls: cannot access '/nope': No such file or directory\n", 2},
		{"ls -l /w/link", "", "", 0},
		// wc, sha256sum, head, tail
		{"wc -c /w/f", "6 /w/f\n", "", 0},
		{"wc -c < /w/n", "5\n", "", 0},
		{"wc -l /w/f /w/n", " 1 /w/f\n 0 /w/n\n 1 total\n", "", 0},
		{"wc /w/f", "1 1 6 /w/f\n", "", 0},
		{"wc -c /nope", "", "wc: /nope: No such file or directory\n", 1},
		{"sha256sum /w/f /w/n", sumOf("hello\n") + "  /w/f\n" + sumOf("12345") + "  /w/n\n", "", 0},
		{"sha256sum < /w/n", sumOf("12345") + "  -\n", "", 0},
		{"sha256sum /nope", "", "sha256sum: /nope: No such file or directory\n", 1},
		{"tail -c 3 -- /w/n", "345", "", 0},
		{"tail -c +2 /w/n", "2345", "", 0},
		{"tail -c 99 /w/n", "12345", "", 0},
		{"head -c 2 /w/n", "12", "", 0},
		{"head -c -2 /w/n", "123", "", 0},
		{"printf_is_missing 2>/dev/null; tail -n 1 /w/f", "hello\n", "", 0},
		{"tail -c 3 /nope", "", "tail: cannot open '/nope' for reading: No such file or directory\n", 1},
		{"head -c x /w/n", "", "head: invalid number of bytes: 'x'\n", 1},
		// ln, touch
		{"ln -s /w/n /w/l2 && cat /w/l2", "12345", "", 0},
		{"ln -s /w/n /w/f", "", "ln: failed to create symbolic link '/w/f': File exists\n", 1},
		{"ln -sf /w/n /w/f && cat /w/f", "12345", "", 0},
		{"cd /w/d && ln -s ../n && cat n", "12345", "", 0},
		{"touch /w/t && test -f /w/t && echo made", "made\n", "", 0},
		{"touch /w/x/t", "", "touch: cannot touch '/w/x/t': No such file or directory\n", 1},
		// Bad options.
		{"rm -z /w/f", "", "rm: invalid option -- 'z'\nTry 'rm --help' for more information.\n", 1},
	} {
		b := newShellBox(t)
		if _, stderr, code := b.run(setup); code != 0 {
			t.Fatalf("setup: %d %s", code, stderr)
		}
		stdout, stderr, exit := b.run(tc.script)
		if tc.script == "ls -l /w/link" {
			// The time column varies: check the shape.
			if !strings.HasPrefix(stdout, "lrwxrwxrwx 1 root root 4 ") || !strings.HasSuffix(stdout, " /w/link -> /w/f\n") || exit != 0 {
				t.Errorf("ls -l of a link: %q %q %d", stdout, stderr, exit)
			}
			continue
		}
		if stdout != tc.stdout || stderr != tc.stderr || exit != tc.exit {
			t.Errorf("%q:\n got stdout %q stderr %q exit %d\nwant stdout %q stderr %q exit %d",
				tc.script, stdout, stderr, exit, tc.stdout, tc.stderr, tc.exit)
		}
	}
}

// TestShellRedirections: redirections reach the file system, apply left
// to right with dup semantics, and a file that cannot be opened fails the
// command with bash's message, without running it.
func TestShellRedirections(t *testing.T) {
	for _, tc := range []struct {
		script         string
		stdout, stderr string
		exit           int
		files          map[string]string // expected contents; "" absent
	}{
		{"echo a > /tmp/f; echo b >> /tmp/f; cat /tmp/f", "a\nb\n", "", 0, nil},
		{"echo a > /tmp/f; echo b > /tmp/f", "", "", 0, map[string]string{"/tmp/f": "b\n"}},
		{"nosuch 2> /tmp/err; echo $?", "127\n", "", 0, map[string]string{"/tmp/err": "bash: line 1: nosuch: command not found\n" + mockLacks("nosuch")}},
		{"echo out &> /tmp/both; nosuch &>> /tmp/both", "", "", 127,
			map[string]string{"/tmp/both": "out\nbash: line 1: nosuch: command not found\n" + mockLacks("nosuch")}},
		{"echo x > /nodir/f", "", "bash: line 1: /nodir/f: No such file or directory\n", 1, map[string]string{"/nodir/f": ""}},
		{"echo x > /tmp", "", "bash: line 1: /tmp: Is a directory\n", 1, nil},
		{"cat < /missing; echo $?", "1\n", "bash: line 1: /missing: No such file or directory\n", 0, nil},
		{"echo data > /tmp/in; wc -c < /tmp/in", "5\n", "", 0, nil},
		// The client's tail: output to the original stderr, errors nowhere.
		{"echo 0123456789 > /tmp/log; tail -c 4 -- /tmp/log 1>&2 2>/dev/null; tail -c 4 -- /missing 1>&2 2>/dev/null", "", "789\n", 1, nil},
		{"echo to-err >/dev/stderr; echo to-out 2>&1 >/dev/stdout", "to-out\n", "to-err\n", 0, nil},
		{"echo hi 5>&3", "", "bash: line 1: 3: Bad file descriptor\n", 1, nil},
		{"echo x >&/tmp/amp; cat /tmp/amp", "x\n", "", 0, nil},
		{"false; echo $? > /tmp/status; cat /tmp/status", "1\n", "", 0, nil},
		{"echo $$ > /tmp/pid; test -s /tmp/pid && echo ok", "ok\n", "", 0, nil},
		{"cd /tmp && echo rel > r && cat /tmp/r", "rel\n", "", 0, nil},
		{"echo x > /dev/null; cat /dev/null; echo end", "end\n", "", 0, nil},
	} {
		b := newShellBox(t)
		stdout, stderr, exit := b.run(tc.script)
		if stdout != tc.stdout || stderr != tc.stderr || exit != tc.exit {
			t.Errorf("%q:\n got stdout %q stderr %q exit %d\nwant stdout %q stderr %q exit %d",
				tc.script, stdout, stderr, exit, tc.stdout, tc.stderr, tc.exit)
		}
		for p, want := range tc.files {
			if want == "" {
				if b.exists(p) {
					t.Errorf("%q: %s exists", tc.script, p)
				}
				continue
			}
			if got := b.file(p); got != want {
				t.Errorf("%q: %s = %q, want %q", tc.script, p, got, want)
			}
		}
	}
}

// TestShellClientFileCommands runs the exact commands the provider's
// client sends.
func TestShellClientFileCommands(t *testing.T) {
	b := newShellBox(t)
	if _, stderr, code := b.run("mkdir -p -- '/srv/app data'"); code != 0 {
		t.Fatal(stderr)
	}
	if err := b.m.fs.WriteFile("/tmp/up.part", []byte("payload"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := b.run("mv -f -- '/tmp/up.part' '/srv/app data/file' && chmod 0600 -- '/srv/app data/file'"); code != 0 {
		t.Fatal(stderr)
	}
	if fi, err := b.m.fs.Stat("/srv/app data/file", true); err != nil || fi.Mode != 0o600 || b.file("/srv/app data/file") != "payload" {
		t.Fatalf("moved file: %+v %v", fi, err)
	}
	// It's quoting: an embedded single quote, as shlex.quote writes it.
	if _, stderr, code := b.run(`echo q > '/tmp/it'"'"'s'; cat '/tmp/it'"'"'s'`); code != 0 || b.file("/tmp/it's") != "q\n" {
		t.Fatal(stderr)
	}

	// Unpacking an uploaded archive: directories, modes, symlinks; the
	// archive goes, the status is tar's.
	archive := tarOf(t, []tarEntry{
		{name: "./", dir: true, mode: 0o755},
		{name: "./bin/", dir: true, mode: 0o700},
		{name: "./bin/run.sh", body: "#!/bin/sh\necho run\n", mode: 0o755},
		{name: "./data.txt", body: "rows\n", mode: 0o600},
		{name: "./etc", link: "/etc"},
		{name: "./rel", link: "data.txt"},
	})
	if err := b.m.fs.WriteFile("/tmp/a.tar", archive, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := b.run("mkdir -p -- '/opt/out' && tar -xf '/tmp/a.tar' -C '/opt/out'; s=$?; rm -f -- '/tmp/a.tar'; exit $s")
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("unpack: %d %q %q", code, stdout, stderr)
	}
	if b.exists("/tmp/a.tar") {
		t.Error("the archive was not removed")
	}
	for p, want := range map[string]fs.FileMode{"/opt/out/bin": 0o700, "/opt/out/bin/run.sh": 0o755, "/opt/out/data.txt": 0o600} {
		if fi, err := b.m.fs.Stat(p, false); err != nil || fi.Mode != want {
			t.Errorf("%s: %+v %v, want mode %v", p, fi, err, want)
		}
	}
	if fi, _ := b.m.fs.Stat("/opt/out/etc", false); fi.Type != "symlink" || fi.Target != "/etc" {
		t.Errorf("the symlink: %+v", fi)
	}
	if b.file("/opt/out/rel") != "rows\n" {
		t.Error("a relative symlink does not lead to its target")
	}

	// A failed unpack keeps its status through "s=$?; ...; exit $s".
	_ = b.m.fs.WriteFile("/tmp/bad.tar", []byte("not a tar archive at all, not at all"), 0o644)
	_, stderr, code = b.run("mkdir -p -- '/opt/bad' && tar -xf '/tmp/bad.tar' -C '/opt/bad'; s=$?; rm -f -- '/tmp/bad.tar'; exit $s")
	if code != 2 || stderr != "tar: This does not look like a tar archive\ntar: Exiting with failure status due to previous errors\n" || b.exists("/tmp/bad.tar") {
		t.Errorf("a bad archive: %d %q", code, stderr)
	}
	_, stderr, code = b.run("tar -xf /tmp/none.tar -C /opt")
	if code != 2 || stderr != "tar: /tmp/none.tar: Cannot open: No such file or directory\ntar: Error is not recoverable: exiting now\n" {
		t.Errorf("a missing archive: %d %q", code, stderr)
	}

	// Packing a result directory, hostile symlink included, and reading it
	// back: names as GNU tar writes them, the link as a link.
	stdout, stderr, code = b.run("tar -cf '/tmp/res.tar' -C '/opt/out' .")
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("pack: %d %q %q", code, stdout, stderr)
	}
	got := readTar(t, []byte(b.file("/tmp/res.tar")))
	want := []string{"./ dir 755", "./bin/ dir 700", "./bin/run.sh file 755 #!/bin/sh\necho run\n", "./data.txt file 600 rows\n", "./etc symlink /etc", "./rel symlink data.txt"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("packed:\n got %q\nwant %q", got, want)
	}
	// Round trip: unpacked elsewhere, the tree is the same.
	stdout, stderr, code = b.run("mkdir /opt/again && tar -xf /tmp/res.tar -C /opt/again && tar -cf /tmp/again.tar -C /opt/again . && sha256sum /opt/again/bin/run.sh")
	if code != 0 || stdout != sumOf("#!/bin/sh\necho run\n")+"  /opt/again/bin/run.sh\n" {
		t.Fatalf("round trip: %d %q %q", code, stdout, stderr)
	}
	if again := readTar(t, []byte(b.file("/tmp/again.tar"))); strings.Join(again, "|") != strings.Join(want, "|") {
		t.Errorf("round trip:\n got %q\nwant %q", again, want)
	}
	// The archive meets itself when written inside the tree.
	_, stderr, code = b.run("tar -cf /opt/out/self.tar -C /opt/out .")
	if code != 0 || stderr != "tar: ./self.tar: file is the archive; not dumped\n" {
		t.Errorf("self: %d %q", code, stderr)
	}
	// Hostile names are not extracted.
	evil := tarOf(t, []tarEntry{{name: "../escape", body: "x", mode: 0o644}, {name: "/abs", body: "y", mode: 0o644}})
	_ = b.m.fs.WriteFile("/tmp/evil.tar", evil, 0o644)
	_, stderr, code = b.run("mkdir /opt/evil && tar -xf /tmp/evil.tar -C /opt/evil")
	if code != 2 || b.exists("/opt/escape") || b.file("/opt/evil/abs") != "y" ||
		stderr != "tar: ../escape: Member name contains '..'\ntar: Removing leading `/' from member names\ntar: Exiting with failure status due to previous errors\n" {
		t.Errorf("hostile names: %d %q", code, stderr)
	}
	// Compressed, listed, and old-style options.
	stdout, _, code = b.run("tar czf /tmp/z.tgz -C /opt/out data.txt && tar -tf /tmp/z.tgz && tar -xzf /tmp/z.tgz -C /tmp && cat /tmp/data.txt")
	if code != 0 || stdout != "data.txt\nrows\n" {
		t.Errorf("gzip: %d %q", code, stdout)
	}
}

type tarEntry struct {
	name, body, link string
	dir              bool
	mode             int64
}

func tarOf(t *testing.T, entries []tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Typeflag: tar.TypeReg, Size: int64(len(e.body))}
		switch {
		case e.dir:
			h.Typeflag, h.Size = tar.TypeDir, 0
		case e.link != "":
			h.Typeflag, h.Linkname, h.Size, h.Mode = tar.TypeSymlink, e.link, 0, 0o777
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readTar lists an archive as "name type mode content" or "name symlink
// target".
func readTar(t *testing.T, data []byte) []string {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(data))
	var out []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			out = append(out, fmt.Sprintf("%s dir %o", h.Name, h.Mode))
		case tar.TypeSymlink:
			out = append(out, fmt.Sprintf("%s symlink %s", h.Name, h.Linkname))
		default:
			body, _ := io.ReadAll(tr)
			out = append(out, fmt.Sprintf("%s file %o %s", h.Name, h.Mode, body))
		}
	}
}
