package shell

// Pipelines, the shell's "set" options, and the refusal of what the mock
// does not interpret.

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
)

// ExitUnsupported is the status of an execution that met a construct the
// mock's shell does not interpret (a loop, command substitution, a bash
// builtin it lacks, ...): the shell that met it stops with this status and
// "prime-mock does not support …" on stderr, and the execution ends with it
// whatever its other shells did. It is bash's status for a script it
// cannot parse.
const ExitUnsupported = 2

// refuse stops this shell: the construct named by what is not interpreted.
func (in *interp) refuse(what string) {
	in.refused.Store(true)
	in.errorf("bash: line %d: prime-mock does not support %s (the mock runs a subset of bash; prime-mock -h lists it)\n", in.line, what)
	panic(stopScript{out: Outcome{Exit: ExitUnsupported}})
}

// unsupportedConstruct names the first construct of the command the mock
// does not interpret ("" when it has none): the command itself (a loop, a
// function definition), or a part of one of its words or redirections.
func (c command) unsupportedConstruct() string {
	if c.unsupported != "" {
		return c.unsupported
	}
	for _, w := range c.words {
		if what := w.unsupportedPart(); what != "" {
			return what
		}
	}
	for _, r := range c.redirs {
		if what := r.target.unsupportedPart(); what != "" {
			return what
		}
	}
	return ""
}

func (w word) unsupportedPart() string {
	for _, p := range w {
		if p.unsupported != "" {
			return p.unsupported
		}
	}
	return ""
}

// listUnsupported is the first construct the mock does not interpret in
// an and-or list's own commands (not in the scripts they may start).
func listUnsupported(ao andOr) (string, int) {
	var walk func(cs []command) (string, int)
	walk = func(cs []command) (string, int) {
		for _, c := range cs {
			if what, line := walk(c.stages); what != "" {
				return what, line
			}
			if what := c.unsupportedConstruct(); what != "" {
				return what, c.line
			}
			for _, sub := range c.sub {
				if what, line := listUnsupported(sub); what != "" {
					return what, line
				}
			}
		}
		return "", 0
	}
	return walk(ao.cmds)
}

// pipeBuffer carries one stage's stdout to the next stage's stdin. Stages
// run one after the other, so a pipe holds a stage's whole output, up to
// MaxFileBytes.
type pipeBuffer struct {
	buf      bytes.Buffer
	overflow bool
}

func (p *pipeBuffer) write(b []byte) {
	if room := sandboxfs.MaxFileBytes - p.buf.Len(); len(b) > room {
		b, p.overflow = b[:max(room, 0)], true
	}
	p.buf.Write(b)
}

func (p *pipeBuffer) full() bool { return p.buf.Len() >= sandboxfs.MaxFileBytes }

// pipeline runs "a | b | c": each stage in a child process of its own (so
// cd and assignments in a stage do not leak, as in bash without lastpipe),
// with the previous stage's stdout as its stdin. The stages run one after
// the other, each to its end [I: pipe-order: a stage never waits for its reader,
// so the order of output and side effects between stages may differ from
// a real pipe's; what each stage reads and writes does not]. The status is
// the last stage's, or with pipefail the last non-zero one.
func (in *interp) pipeline(ctx context.Context, c command) int {
	var input []byte
	status := 0
	for i, stage := range c.stages {
		last := i == len(c.stages)-1
		child := in.fork(in.m.spawn(in.proc.pgid, false))
		if i > 0 {
			child.fds.set(0, fdEntry{kind: fdInput, data: input})
		}
		var pipe *pipeBuffer
		if !last {
			pipe = &pipeBuffer{}
			child.fds.set(1, fdEntry{kind: fdPipe, pipe: pipe})
		}
		code := in.waitFor(ctx, func() (Outcome, error) {
			return child.program(ctx, func() { child.lastExit = child.command(ctx, stage, true) })
		})
		if pipe != nil {
			if pipe.overflow {
				in.errorf("[prime-mock: a pipe carried more than %d bytes; the rest was dropped]\n", sandboxfs.MaxFileBytes)
			}
			input = pipe.buf.Bytes()
		}
		if (in.opts.pipefail && code != 0) || (!in.opts.pipefail && last) {
			status = code
		}
	}
	return status
}

// shellOptions are the "set" options the mock interprets.
type shellOptions struct {
	errexit, nounset, xtrace, pipefail bool
}

// set is bash's set builtin for -e, -u, -x and -o errexit|nounset|xtrace|
// pipefail (and their + forms); anything else is refused.
func (in *interp) set(args []string) int {
	if len(args) == 0 {
		in.refuse(`"set" without arguments (listing variables)`)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') || a == "--" {
			in.refuse(`"set" with positional parameters`)
		}
		on := a[0] == '-'
		for _, f := range a[1:] {
			name := ""
			switch f {
			case 'e':
				name = "errexit"
			case 'u':
				name = "nounset"
			case 'x':
				name = "xtrace"
			case 'o':
				if i+1 >= len(args) {
					in.refuse(fmt.Sprintf(`the "set %co" option without a name (listing options)`, a[0]))
				}
				i++
				name = args[i]
			default:
				in.refuse(fmt.Sprintf(`the "set %c%c" option`, a[0], f))
			}
			if !in.setOption(name, on) {
				in.refuse(fmt.Sprintf(`the "set %co %s" option`, a[0], name))
			}
		}
	}
	return 0
}

func (in *interp) setOption(name string, on bool) bool {
	switch name {
	case "errexit":
		in.opts.errexit = on
	case "nounset":
		in.opts.nounset = on
	case "xtrace":
		in.opts.xtrace = on
	case "pipefail":
		in.opts.pipefail = on
	default:
		return false
	}
	return true
}

// trace writes bash's xtrace line for a simple command: "+ " and the
// assignments and words, quoted where they need it.
func (in *interp) trace(assigns [][2]string, argv []string) {
	if !in.opts.xtrace {
		return
	}
	parts := make([]string, 0, len(assigns)+len(argv))
	for _, a := range assigns {
		parts = append(parts, a[0]+"="+traceQuote(a[1]))
	}
	for _, a := range argv {
		parts = append(parts, traceQuote(a))
	}
	in.write(2, "+ "+strings.Join(parts, " ")+"\n")
}

// traceQuote quotes a word as bash's xtrace does: as it is when it holds
// nothing special, else in single quotes.
func traceQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`|&;()<>*?[]{}~#!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// unsupportedBuiltins are bash builtins the mock does not interpret:
// calling one is refused rather than reported as a missing command.
var unsupportedBuiltins = map[string]bool{
	"read": true, "eval": true, "exec": true, "shift": true, "local": true, "return": true,
	"break": true, "continue": true, "declare": true, "typeset": true, "readonly": true, "let": true,
	"alias": true, "unalias": true, "command": true, "type": true, "hash": true, "umask": true,
	"getopts": true, "mapfile": true, "readarray": true, "shopt": true, "pushd": true, "popd": true,
	"dirs": true, "jobs": true, "fg": true, "bg": true, "disown": true, "suspend": true,
	"ulimit": true, "times": true, "builtin": true, "enable": true, "help": true, "history": true,
	"logout": true, "caller": true, "compgen": true, "complete": true, "wait": true,
}
