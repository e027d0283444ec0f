package shell

// The commands that change the sandbox's file tree (mkdir, mv, cp, rm,
// touch, ln), with coreutils' messages and exit codes (C locale: ASCII
// quotes). chmod: shell_chmod.go; ls: shell_ls.go; their option parsing:
// shell_getopt.go; redirections: shell_redirect.go; reading contents:
// shell_contents.go; test and [: shell_cond.go; tar: shell_tar.go.

import (
	"errors"
	"io/fs"
	"path"
	"strconv"

	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
)

// fileCommand finds a file command by name (nil if there is none).
func fileCommand(name string) func(in *interp, line int, args []string) int {
	switch name {
	case "cat":
		return (*interp).cat
	case "ls":
		return (*interp).ls
	case "mkdir":
		return (*interp).mkdir
	case "mv":
		return (*interp).mv
	case "cp":
		return (*interp).cp
	case "chmod":
		return (*interp).chmod
	case "rm":
		return (*interp).rm
	case "test":
		return func(in *interp, line int, args []string) int { return in.test(line, "test", args) }
	case "[":
		return func(in *interp, line int, args []string) int {
			if len(args) == 0 || args[len(args)-1] != "]" {
				in.errorf("bash: line %d: [: missing `]'\n", line)
				return 2
			}
			return in.test(line, "[", args[:len(args)-1])
		}
	case "wc":
		return (*interp).wc
	case "sha256sum":
		return (*interp).sha256sum
	case "tail":
		return func(in *interp, _ int, args []string) int { return in.headTail("tail", args) }
	case "head":
		return func(in *interp, _ int, args []string) int { return in.headTail("head", args) }
	case "ln":
		return (*interp).ln
	case "touch":
		return (*interp).touch
	case "tar":
		return (*interp).tar
	}
	return nil
}

func (in *interp) mkdir(_ int, args []string) int {
	o, bad := getopt(args, "pv", "m", map[string]byte{"parents": 'p', "mode": 'm', "verbose": 'v'})
	if bad != "" {
		in.badOption("mkdir", bad)
		return 1
	}
	if len(o.operands) == 0 {
		in.errorf("mkdir: missing operand\nTry 'mkdir --help' for more information.\n")
		return 1
	}
	perm := fs.FileMode(0o755)
	if v, ok := o.value['m']; ok {
		n, err := strconv.ParseUint(v, 8, 32)
		if err != nil || n > 0o7777 {
			in.errorf("mkdir: invalid mode '%s'\n", v)
			return 1
		}
		perm = fs.FileMode(n).Perm()
	}
	code := 0
	for _, d := range o.operands {
		if err := in.m.fs.Mkdir(in.abs(d), perm, o.has('p')); err != nil {
			in.errorf("mkdir: cannot create directory '%s': %v\n", d, err)
			code = 1
		}
	}
	return code
}

func (in *interp) mv(_ int, args []string) int {
	o, bad := getopt(args, "finvT", "", map[string]byte{"force": 'f', "no-clobber": 'n', "verbose": 'v', "no-target-directory": 'T'})
	if bad != "" {
		in.badOption("mv", bad)
		return 1
	}
	ops := o.operands
	switch len(ops) {
	case 0:
		in.errorf("mv: missing file operand\nTry 'mv --help' for more information.\n")
		return 1
	case 1:
		in.errorf("mv: missing destination file operand after '%s'\nTry 'mv --help' for more information.\n", ops[0])
		return 1
	}
	dst := ops[len(ops)-1]
	if len(ops) > 2 {
		if fi, err := in.m.fs.Stat(in.abs(dst), true); err != nil || !fi.IsDir() {
			in.errorf("mv: target '%s' is not a directory\n", dst)
			return 1
		}
	}
	code := 0
	for _, src := range ops[:len(ops)-1] {
		if _, err := in.m.fs.Stat(in.abs(src), false); err != nil {
			in.errorf("mv: cannot stat '%s': %v\n", src, err)
			code = 1
			continue
		}
		err := in.m.fs.Rename(in.abs(src), in.abs(dst), !o.has('T'))
		switch {
		case errors.Is(err, sandboxfs.ErrInval):
			to := dst
			if fi, err := in.m.fs.Stat(in.abs(dst), true); err == nil && fi.IsDir() && !o.has('T') {
				to = path.Join(dst, path.Base(src))
			}
			in.errorf("mv: cannot move '%s' to a subdirectory of itself, '%s'\n", src, to)
			code = 1
		case err != nil:
			in.errorf("mv: cannot move '%s' to '%s': %v\n", src, dst, err)
			code = 1
		}
	}
	return code
}

func (in *interp) cp(_ int, args []string) int {
	o, bad := getopt(args, "rRapfvPdT", "", map[string]byte{"recursive": 'r', "archive": 'a', "force": 'f', "verbose": 'v', "no-dereference": 'P'})
	if bad != "" {
		in.badOption("cp", bad)
		return 1
	}
	recursive := o.has('r') || o.has('R') || o.has('a')
	ops := o.operands
	switch len(ops) {
	case 0:
		in.errorf("cp: missing file operand\nTry 'cp --help' for more information.\n")
		return 1
	case 1:
		in.errorf("cp: missing destination file operand after '%s'\nTry 'cp --help' for more information.\n", ops[0])
		return 1
	}
	dst := ops[len(ops)-1]
	dstInfo, dstErr := in.m.fs.Stat(in.abs(dst), true)
	intoDir := dstErr == nil && dstInfo.IsDir() && !o.has('T')
	if len(ops) > 2 && !intoDir {
		in.errorf("cp: target '%s' is not a directory\n", dst)
		return 1
	}
	code := 0
	for _, src := range ops[:len(ops)-1] {
		fi, err := in.m.fs.Stat(in.abs(src), true)
		if err != nil {
			in.errorf("cp: cannot stat '%s': %v\n", src, err)
			code = 1
			continue
		}
		if fi.IsDir() && !recursive {
			in.errorf("cp: -r not specified; omitting directory '%s'\n", src)
			code = 1
			continue
		}
		to := dst
		if intoDir {
			to = path.Join(dst, path.Base(in.abs(src)))
		}
		switch err := in.m.fs.CopyTree(in.abs(src), in.abs(to), recursive); {
		case errors.Is(err, sandboxfs.ErrInval):
			in.errorf("cp: cannot copy a directory, '%s', into itself, '%s'\n", src, to)
			code = 1
		case err != nil:
			in.errorf("cp: cannot create regular file '%s': %v\n", to, err)
			code = 1
		}
	}
	return code
}

func (in *interp) rm(_ int, args []string) int {
	o, bad := getopt(args, "frRdvi", "", map[string]byte{
		"force": 'f', "recursive": 'r', "dir": 'd', "verbose": 'v',
		"no-preserve-root": 'N', "preserve-root": 'P',
	})
	if bad != "" {
		in.badOption("rm", bad)
		return 1
	}
	recursive := o.has('r') || o.has('R')
	if len(o.operands) == 0 {
		if o.has('f') {
			return 0
		}
		in.errorf("rm: missing operand\nTry 'rm --help' for more information.\n")
		return 1
	}
	code := 0
	for _, name := range o.operands {
		p := in.abs(name)
		switch base := path.Base(name); {
		case p == "/" && recursive && !o.has('N'):
			in.errorf("rm: it is dangerous to operate recursively on '/'\nrm: use --no-preserve-root to override this failsafe\n")
			code = 1
			continue
		case base == "." || base == "..":
			in.errorf("rm: refusing to remove '.' or '..' directory: skipping '%s'\n", name)
			code = 1
			continue
		case p == "/":
			entries, _ := in.m.fs.ReadDir("/")
			for _, e := range entries {
				_ = in.m.fs.Remove("/"+e.Name, true, true)
			}
			continue
		}
		err := in.m.fs.Remove(p, recursive, o.has('d'))
		if err == nil || (o.has('f') && errors.Is(err, sandboxfs.ErrNoEnt)) {
			continue
		}
		in.errorf("rm: cannot remove '%s': %v\n", name, err)
		code = 1
	}
	return code
}

func (in *interp) touch(_ int, args []string) int {
	o, bad := getopt(args, "cam", "", map[string]byte{"no-create": 'c'})
	if bad != "" {
		in.badOption("touch", bad)
		return 1
	}
	if len(o.operands) == 0 {
		in.errorf("touch: missing file operand\nTry 'touch --help' for more information.\n")
		return 1
	}
	code := 0
	for _, name := range o.operands {
		p := in.abs(name)
		if _, err := in.m.fs.Stat(p, true); err != nil && o.has('c') {
			continue
		}
		if err := in.m.fs.Touch(p); err != nil {
			in.errorf("touch: cannot touch '%s': %v\n", name, err)
			code = 1
		}
	}
	return code
}

func (in *interp) ln(_ int, args []string) int {
	o, bad := getopt(args, "sfnTv", "", map[string]byte{"symbolic": 's', "force": 'f', "no-dereference": 'n', "verbose": 'v'})
	if bad != "" {
		in.badOption("ln", bad)
		return 1
	}
	if !o.has('s') {
		in.errorf("ln: prime-mock supports only symbolic links (ln -s)\n")
		return 1
	}
	ops := o.operands
	if len(ops) == 0 {
		in.errorf("ln: missing file operand\nTry 'ln --help' for more information.\n")
		return 1
	}
	targets, dst := ops, "."
	if len(ops) > 1 {
		targets, dst = ops[:len(ops)-1], ops[len(ops)-1]
	}
	fi, err := in.m.fs.Stat(in.abs(dst), !o.has('n'))
	intoDir := err == nil && fi.IsDir() && !o.has('T') && (len(ops) == 1 || !o.has('n') || fi.Type != "symlink")
	if len(targets) > 1 && !intoDir {
		in.errorf("ln: target '%s' is not a directory\n", dst)
		return 1
	}
	code := 0
	for _, t := range targets {
		name := dst
		if intoDir {
			name = path.Join(dst, path.Base(t))
		}
		p := in.abs(name)
		if o.has('f') {
			if st, err := in.m.fs.Stat(p, false); err == nil && !st.IsDir() {
				_ = in.m.fs.Remove(p, false, false)
			}
		}
		if err := in.m.fs.Symlink(t, p); err != nil {
			in.errorf("ln: failed to create symbolic link '%s': %v\n", name, err)
			code = 1
		}
	}
	return code
}
