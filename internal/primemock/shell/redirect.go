package shell

// The shell's redirections: <, >, >>, 2>&1, &> and /dev/null, onto the sandbox's files.

import (
	"strconv"
	"strings"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
)

// redirect applies one redirection to the descriptors; it reports false,
// after bash's message, when it cannot (the command then does not run and
// its status is 1).
func (in *interp) redirect(line int, r redirect) bool {
	if r.kind == redirHeredoc {
		body := r.doc.body
		if !r.doc.quoted {
			var what string
			if body, what = in.heredocBody(body); what != "" {
				in.refuse(what)
			}
		}
		in.fds.set(r.fd, fdEntry{kind: fdInput, data: []byte(body)})
		return true
	}
	target := in.expandOne(r.target)
	fail := func(err error) bool {
		in.errorf("bash: line %d: %s: %v\n", line, target, err)
		return false
	}
	switch r.kind {
	case redirDup:
		if target == "-" {
			in.fds.set(r.fd, fdEntry{})
			return true
		}
		n, err := strconv.Atoi(target)
		if err != nil || n < 0 || n >= maxFD {
			if !r.explicit && r.fd == 1 { // ">&FILE" is "&>FILE"
				return in.redirectBoth(target, false, fail)
			}
			in.errorf("bash: line %d: %s: ambiguous redirect\n", line, target)
			return false
		}
		if in.fds[n].kind == fdClosed {
			in.errorf("bash: line %d: %d: Bad file descriptor\n", line, n)
			return false
		}
		in.fds.set(r.fd, in.fds.dupOf(n))
	case redirHereString:
		in.fds.set(r.fd, fdEntry{kind: fdInput, data: []byte(target + "\n")})
	case redirIn:
		e, err := in.openInput(target)
		if err != nil {
			return fail(err)
		}
		in.fds.set(r.fd, e)
	case redirOut, redirAppend:
		e, err := in.openOutput(target, r.kind == redirAppend)
		if err != nil {
			return fail(err)
		}
		in.fds.set(r.fd, e)
	case redirBoth:
		return in.redirectBoth(target, r.append, fail)
	}
	return true
}

func (in *interp) redirectBoth(target string, appendMode bool, fail func(error) bool) bool {
	e, err := in.openOutput(target, appendMode)
	if err != nil {
		return fail(err)
	}
	in.fds.set(1, e)
	in.fds.set(2, in.fds.dupOf(1))
	return true
}

// deviceFD maps /dev/stdout, /dev/stderr, /dev/stdin and /dev/fd/N to the
// descriptor they name.
func deviceFD(p string) (int, bool) {
	switch p {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	if n, found := strings.CutPrefix(p, "/dev/fd/"); found {
		if fd, err := strconv.Atoi(n); err == nil && fd >= 0 && fd < maxFD {
			return fd, true
		}
	}
	return 0, false
}

func (in *interp) openOutput(target string, appendMode bool) (fdEntry, error) {
	if target == "" {
		return fdEntry{}, sandboxfs.ErrNoEnt
	}
	p := in.abs(target)
	if p == "/dev/null" {
		return fdEntry{kind: fdNull}, nil
	}
	if fd, ok := deviceFD(p); ok {
		if in.fds[fd].kind == fdClosed {
			return fdEntry{}, sandboxfs.ErrNoEnt
		}
		return in.fds.dupOf(fd), nil
	}
	f, err := in.m.fs.OpenWrite(p, appendMode)
	if err != nil {
		return fdEntry{}, err
	}
	return fdEntry{kind: fdFile, file: f}, nil
}

func (in *interp) openInput(target string) (fdEntry, error) {
	if target == "" {
		return fdEntry{}, sandboxfs.ErrNoEnt
	}
	p := in.abs(target)
	if fd, ok := deviceFD(p); ok {
		return in.fds.dupOf(fd), nil
	}
	data, err := in.m.fs.ReadFile(p)
	if err != nil {
		return fdEntry{}, err
	}
	return fdEntry{kind: fdInput, data: data}, nil
}
