package shell

import (
	"testing"
)

// TestShellPipes: stdout of each stage is the stdin of the next; every
// stage runs in a child process (cd and variables do not leak, as in bash
// without lastpipe); the status is the last stage's.
func TestShellPipes(t *testing.T) {
	b := newShellBox(t)
	if _, stderr, code := b.run("mkdir -p /tmp/p && echo 'b\nx' > /dev/null; " +
		"echo two > /tmp/p/lines; echo one >> /tmp/p/lines; echo three >> /tmp/p/lines; echo one >> /tmp/p/lines"); code != 0 {
		t.Fatalf("setup: %s", stderr)
	}
	for _, tc := range []struct {
		script, stdout, stderr string
		exit                   int
	}{
		{"echo hi | tr a-z A-Z", "HI\n", "", 0},
		{"echo hello world | tr -d lo", "he wrd\n", "", 0},
		{"echo aaabbb | tr -s ab", "ab\n", "", 0},
		{"echo Hello | tr '[:lower:]' '[:upper:]'", "HELLO\n", "", 0},
		{"echo a-b | tr - _", "a_b\n", "", 0},
		{"echo a b | tr ' ' '\\n'", "a\nb\n", "", 0},
		{"cat /tmp/p/lines | sort", "one\none\nthree\ntwo\n", "", 0},
		{"sort -r /tmp/p/lines | head -n 1", "two\n", "", 0},
		{"sort -u /tmp/p/lines | wc -l", "3\n", "", 0},
		{"printf '10\\n9\\n100\\n' | sort -n", "9\n10\n100\n", "", 0},
		{"sort /tmp/p/lines | uniq", "one\nthree\ntwo\n", "", 0},
		{"sort /tmp/p/lines | uniq -c", "      2 one\n      1 three\n      1 two\n", "", 0},
		{"cat /tmp/p/lines | grep o", "two\none\none\n", "", 0},
		{"cat /tmp/p/lines | grep -c one", "2\n", "", 0},
		{"cat /tmp/p/lines | grep -v o", "three\n", "", 0},
		{"cat /tmp/p/lines | grep -n thr", "3:three\n", "", 0},
		{"cat /tmp/p/lines | grep -E '^(one|two)$' | wc -l", "3\n", "", 0},
		{"echo 'a.b' | grep -F .", "a.b\n", "", 0},
		{"echo 'a(b' | grep 'a(b'", "a(b\n", "", 0},
		{"echo 'aab' | grep 'a\\{2\\}b'", "aab\n", "", 0},
		{"echo Hello | grep -i hello", "Hello\n", "", 0},
		{"echo hello | grep -q x; echo $?", "1\n", "", 0},
		{"echo hello | grep -o l", "l\nl\n", "", 0},
		{"grep -x one /tmp/p/lines /tmp/p/lines", "/tmp/p/lines:one\n/tmp/p/lines:one\n/tmp/p/lines:one\n/tmp/p/lines:one\n", "", 0},
		{"grep x /tmp/p/nope", "", "grep: /tmp/p/nope: No such file or directory\n", 2},
		{"echo a:b:c | cut -d: -f2", "b\n", "", 0},
		{"echo a:b:c | cut -d: -f2-", "b:c\n", "", 0},
		{"echo abcdef | cut -c2-4", "bcd\n", "", 0},
		{"echo a b c | wc -w", "3\n", "", 0},
		{"echo hi | tee /tmp/p/t | tr a-z A-Z; cat /tmp/p/t", "HI\nhi\n", "", 0},
		{"echo more | tee -a /tmp/p/t > /dev/null; cat /tmp/p/t", "hi\nmore\n", "", 0},
		{"cat /tmp/p/lines | tail -n 1 | sha256sum", "2c8b08da5ce60398e1f19af0e5dccc744df274b826abe585eaba68c525434806  -\n", "", 0},
		{"echo x | cat - /tmp/p/t", "x\nhi\nmore\n", "", 0},
		{"ls /nope 2>&1 | grep -c 'No such'", "1\n", "", 0},
		{"ls /nope |& grep -c 'No such'", "1\n", "", 0},
		{"ls /nope | grep -c 'No such'", "0\n", "ls: cannot access '/nope': No such file or directory\n", 1},
		{"echo hi | sh -c 'tr a-z A-Z'", "HI\n", "", 0},
		{"echo hi | (cat; echo there)", "hi\nthere\n", "", 0},
		{"echo 'echo from stdin' | sh", "from stdin\n", "", 0},
		{"cd /tmp | true; pwd", "/root\n", "", 0},
		{"X=1 | true; echo \"[$X]\"", "[]\n", "", 0},
		{"echo a |\n tr a b", "b\n", "", 0},
		{"echo a | tr a b > /tmp/p/out; cat /tmp/p/out", "b\n", "", 0},
		{"printf '%s-%d\\n' a 3 b 4", "a-3\nb-4\n", "", 0},
		{"printf '%5s|%-3s|%03d|%x|%%\\n' ab c 7 255", "   ab|c  |007|ff|%\n", "", 0},
		{"printf 'no newline'", "no newline", "", 0},
		{"basename /a/b/c.txt .txt; dirname /a/b/c.txt", "c\n/a/b\n", "", 0},
	} {
		stdout, stderr, code := b.run(tc.script)
		if stdout != tc.stdout || stderr != tc.stderr || code != tc.exit {
			t.Errorf("%q:\n got %q %q %d\nwant %q %q %d", tc.script, stdout, stderr, code, tc.stdout, tc.stderr, tc.exit)
		}
	}
}

// TestShellExpansions: heredocs, here-strings, globs and tildes, the
// expansions the mock interprets rather than refuses.
func TestShellExpansions(t *testing.T) {
	b := newShellBox(t)
	if _, stderr, code := b.run("mkdir -p /tmp/g && touch /tmp/g/a.txt /tmp/g/b.txt /tmp/g/c.log /tmp/g/.h.txt"); code != 0 {
		t.Fatalf("setup: %s", stderr)
	}
	for _, tc := range []struct {
		script, stdout, stderr string
		exit                   int
	}{
		{"X=world; cat <<EOF\nhello $X ${X}\n\\$X \\\\ done\nEOF", "hello world world\n$X \\ done\n", "", 0},
		{"X=world; cat <<'EOF'\nhello $X\nEOF", "hello $X\n", "", 0},
		{"cat <<\"EOF\"\n$X `x`\nEOF", "$X `x`\n", "", 0},
		{"cat <<-EOF\n\t\tindented\n\tEOF\necho next", "indented\nnext\n", "", 0},
		{"cat <<EOF > /tmp/g/doc\nline\nEOF\ncat /tmp/g/doc", "line\n", "", 0},
		{"cat <<A; cat <<B\na\nA\nb\nB", "a\nb\n", "", 0},
		{"cat <<EOF | tr a-z A-Z\nshout\nEOF", "SHOUT\n", "", 0},
		{"tr a-z A-Z <<< 'here string'", "HERE STRING\n", "", 0},
		{"cat <<EOF\nunterminated", "unterminated\n", "bash: line 2: warning: here-document at line 1 delimited by end-of-file (wanted `EOF')\n", 0},
		{"echo /tmp/g/*.txt", "/tmp/g/a.txt /tmp/g/b.txt\n", "", 0},
		{"echo /tmp/g/.*.txt", "/tmp/g/.h.txt\n", "", 0},
		{"echo /tmp/g/?.log /tmp/g/[ab].txt", "/tmp/g/c.log /tmp/g/a.txt /tmp/g/b.txt\n", "", 0},
		{"echo /tmp/g/[!a].txt", "/tmp/g/b.txt\n", "", 0},
		{"echo /tmp/g/*.none", "/tmp/g/*.none\n", "", 0},
		{"echo '/tmp/g/*.txt' \"/tmp/g/*\" /tmp/g/\\*.txt", "/tmp/g/*.txt /tmp/g/* /tmp/g/*.txt\n", "", 0},
		{"cd /tmp/g && echo *.log", "c.log\n", "", 0},
		{"P='/tmp/g/*.log'; echo $P \"$P\"", "/tmp/g/c.log /tmp/g/*.log\n", "", 0},
		{"rm /tmp/g/*.log && ls /tmp/g", "a.txt\nb.txt\ndoc\n", "", 0},
		{"echo ~ ~/x '~' a~ ~root", "/root /root/x ~ a~ /root\n", "", 0},
		{"X=~/d; echo $X", "/root/d\n", "", 0},
		{"echo '{a,b}' {} {x}", "{a,b} {} {x}\n", "", 0},
		{"echo x > /tmp/g/s.sh; echo 'Y=sourced' > /tmp/g/s.sh; . /tmp/g/s.sh; echo $Y; source /tmp/g/s.sh && echo again", "sourced\nagain\n", "", 0},
		{"Z=1; unset Z; echo \"[$Z]\"", "[]\n", "", 0},
	} {
		stdout, stderr, code := b.run(tc.script)
		if stdout != tc.stdout || stderr != tc.stderr || code != tc.exit {
			t.Errorf("%q:\n got %q %q %d\nwant %q %q %d", tc.script, stdout, stderr, code, tc.stdout, tc.stderr, tc.exit)
		}
	}
}
