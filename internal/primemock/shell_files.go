package primemock

// The shell's redirections, its option parsing, and the commands that
// change or list the sandbox's file tree (mkdir, mv, cp, chmod, rm, touch,
// ln, ls), with coreutils' messages and exit codes (C locale: ASCII
// quotes). Reading contents: shell_contents.go; test and [: shell_cond.go;
// tar: shell_tar.go.

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
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
		return fdEntry{}, errNoEnt
	}
	p := in.abs(target)
	if p == "/dev/null" {
		return fdEntry{kind: fdNull}, nil
	}
	if fd, ok := deviceFD(p); ok {
		if in.fds[fd].kind == fdClosed {
			return fdEntry{}, errNoEnt
		}
		return in.fds.dupOf(fd), nil
	}
	f, err := in.m.fs.openWrite(p, appendMode)
	if err != nil {
		return fdEntry{}, err
	}
	return fdEntry{kind: fdFile, file: f}, nil
}

func (in *interp) openInput(target string) (fdEntry, error) {
	if target == "" {
		return fdEntry{}, errNoEnt
	}
	p := in.abs(target)
	if fd, ok := deviceFD(p); ok {
		return in.fds.dupOf(fd), nil
	}
	data, err := in.m.fs.readFile(p)
	if err != nil {
		return fdEntry{}, err
	}
	return fdEntry{kind: fdInput, data: data}, nil
}

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

// options is the result of getopt.
type options struct {
	set      map[byte]bool
	value    map[byte]string
	operands []string
}

func (o options) has(f byte) bool { return o.set[f] }

// getopt parses GNU-style short options (grouped, anywhere before "--");
// withArg lists those that take a value (attached or the next word); long
// maps long options to short ones (a long option with "=" carries its
// value). It returns the first bad option, if any.
func getopt(args []string, flags, withArg string, long map[string]byte) (options, string) {
	o := options{set: map[byte]bool{}, value: map[byte]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			o.operands = append(o.operands, args[i+1:]...)
			return o, ""
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			f, ok := long[name]
			if !ok {
				return o, a
			}
			o.set[f] = true
			if strings.IndexByte(withArg, f) >= 0 {
				if !hasVal {
					if i+1 >= len(args) {
						return o, a
					}
					i++
					val = args[i]
				}
				o.value[f] = val
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				f := a[j]
				switch {
				case strings.IndexByte(withArg, f) >= 0:
					o.set[f] = true
					switch {
					case j+1 < len(a): // attached: -c5
						o.value[f] = a[j+1:]
					case i+1 < len(args):
						i++
						o.value[f] = args[i]
					default:
						return o, "-" + string(f)
					}
					j = len(a)
				case strings.IndexByte(flags, f) >= 0:
					o.set[f] = true
				default:
					return o, "-" + string(f)
				}
			}
		default:
			o.operands = append(o.operands, a)
		}
	}
	return o, ""
}

// badOption prints coreutils' complaint about an option.
func (in *interp) badOption(cmd, opt string) {
	if strings.HasPrefix(opt, "--") {
		in.errorf("%s: unrecognized option '%s'\nTry '%s --help' for more information.\n", cmd, opt, cmd)
		return
	}
	in.errorf("%s: invalid option -- '%s'\nTry '%s --help' for more information.\n", cmd, strings.TrimPrefix(opt, "-"), cmd)
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
		if err := in.m.fs.mkdir(in.abs(d), perm, o.has('p')); err != nil {
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
		if fi, err := in.m.fs.stat(in.abs(dst), true); err != nil || !fi.IsDir() {
			in.errorf("mv: target '%s' is not a directory\n", dst)
			return 1
		}
	}
	code := 0
	for _, src := range ops[:len(ops)-1] {
		if _, err := in.m.fs.stat(in.abs(src), false); err != nil {
			in.errorf("mv: cannot stat '%s': %v\n", src, err)
			code = 1
			continue
		}
		err := in.m.fs.rename(in.abs(src), in.abs(dst), !o.has('T'))
		switch {
		case errors.Is(err, errInval):
			to := dst
			if fi, err := in.m.fs.stat(in.abs(dst), true); err == nil && fi.IsDir() && !o.has('T') {
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
	dstInfo, dstErr := in.m.fs.stat(in.abs(dst), true)
	intoDir := dstErr == nil && dstInfo.IsDir() && !o.has('T')
	if len(ops) > 2 && !intoDir {
		in.errorf("cp: target '%s' is not a directory\n", dst)
		return 1
	}
	code := 0
	for _, src := range ops[:len(ops)-1] {
		fi, err := in.m.fs.stat(in.abs(src), true)
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
		switch err := in.m.fs.copyTree(in.abs(src), in.abs(to), recursive); {
		case errors.Is(err, errInval):
			in.errorf("cp: cannot copy a directory, '%s', into itself, '%s'\n", src, to)
			code = 1
		case err != nil:
			in.errorf("cp: cannot create regular file '%s': %v\n", to, err)
			code = 1
		}
	}
	return code
}

// parseMode reads chmod's MODE: octal, or symbolic clauses such as u+x,go-w.
func parseMode(spec string) (func(fs.FileMode) fs.FileMode, bool) {
	if spec == "" {
		return nil, false
	}
	if n, err := strconv.ParseUint(spec, 8, 32); err == nil {
		if n > 0o7777 {
			return nil, false
		}
		m := fs.FileMode(n).Perm()
		if n&0o1000 != 0 {
			m |= fs.ModeSticky
		}
		if n&0o2000 != 0 {
			m |= fs.ModeSetgid
		}
		if n&0o4000 != 0 {
			m |= fs.ModeSetuid
		}
		return func(fs.FileMode) fs.FileMode { return m }, true
	}
	type clause struct {
		who   fs.FileMode
		op    byte
		perms string
	}
	var clauses []clause
	for _, c := range strings.Split(spec, ",") {
		i := 0
		var who fs.FileMode
		for ; i < len(c) && strings.IndexByte("ugoa", c[i]) >= 0; i++ {
			who |= map[byte]fs.FileMode{'u': 0o700, 'g': 0o070, 'o': 0o007, 'a': 0o777}[c[i]]
		}
		if who == 0 {
			who = 0o777
		}
		if i >= len(c) || strings.IndexByte("+-=", c[i]) < 0 {
			return nil, false
		}
		op := c[i]
		perms := c[i+1:]
		if strings.Trim(perms, "rwxX") != "" {
			return nil, false
		}
		clauses = append(clauses, clause{who, op, perms})
	}
	return func(m fs.FileMode) fs.FileMode {
		for _, c := range clauses {
			var bits fs.FileMode
			for _, p := range c.perms {
				switch p {
				case 'r':
					bits |= 0o444
				case 'w':
					bits |= 0o222
				case 'x', 'X':
					bits |= 0o111
				}
			}
			bits &= c.who
			switch c.op {
			case '+':
				m |= bits
			case '-':
				m &^= bits
			case '=':
				m = m&^c.who | bits
			}
		}
		return m
	}, true
}

func (in *interp) chmod(_ int, args []string) int {
	// A mode such as "-w" looks like an option: take the first operand
	// that parses as a mode before getopt sees it.
	var mode string
	rest := args[:0:0]
	for i, a := range args {
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if mode == "" && a != "-R" && a != "--recursive" && !strings.HasPrefix(a, "--") {
			if _, ok := parseMode(a); ok || !strings.HasPrefix(a, "-") {
				mode = a
				continue
			}
		}
		rest = append(rest, a)
	}
	o, bad := getopt(rest, "Rfv", "", map[string]byte{"recursive": 'R', "verbose": 'v'})
	if bad != "" {
		in.badOption("chmod", bad)
		return 1
	}
	if mode == "" && len(o.operands) > 0 {
		mode, o.operands = o.operands[0], o.operands[1:]
	}
	if mode == "" {
		in.errorf("chmod: missing operand\nTry 'chmod --help' for more information.\n")
		return 1
	}
	set, ok := parseMode(mode)
	if !ok {
		in.errorf("chmod: invalid mode: '%s'\nTry 'chmod --help' for more information.\n", mode)
		return 1
	}
	if len(o.operands) == 0 {
		in.errorf("chmod: missing operand after '%s'\nTry 'chmod --help' for more information.\n", mode)
		return 1
	}
	code := 0
	var apply func(name, p string)
	apply = func(name, p string) {
		if err := in.m.fs.chmod(p, set); err != nil {
			in.errorf("chmod: cannot access '%s': %v\n", name, err)
			code = 1
			return
		}
		if !o.has('R') {
			return
		}
		if fi, err := in.m.fs.stat(p, false); err == nil && fi.IsDir() {
			entries, _ := in.m.fs.readDir(p)
			for _, e := range entries {
				if e.Type != "symlink" {
					apply(path.Join(name, e.Name), path.Join(p, e.Name))
				}
			}
		}
	}
	for _, name := range o.operands {
		apply(name, in.abs(name))
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
			entries, _ := in.m.fs.readDir("/")
			for _, e := range entries {
				_ = in.m.fs.remove("/"+e.Name, true, true)
			}
			continue
		}
		err := in.m.fs.remove(p, recursive, o.has('d'))
		if err == nil || (o.has('f') && errors.Is(err, errNoEnt)) {
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
		if _, err := in.m.fs.stat(p, true); err != nil && o.has('c') {
			continue
		}
		if err := in.m.fs.touch(p); err != nil {
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
	fi, err := in.m.fs.stat(in.abs(dst), !o.has('n'))
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
			if st, err := in.m.fs.stat(p, false); err == nil && !st.IsDir() {
				_ = in.m.fs.remove(p, false, false)
			}
		}
		if err := in.m.fs.symlink(t, p); err != nil {
			in.errorf("ln: failed to create symbolic link '%s': %v\n", name, err)
			code = 1
		}
	}
	return code
}

// modeString is ls -l's mode column.
func modeString(fi FileInfo) string {
	b := []byte("----------")
	switch fi.Type {
	case "dir":
		b[0] = 'd'
	case "symlink":
		b[0] = 'l'
	case "device":
		b[0] = 'c'
	}
	const rwx = "rwxrwxrwx"
	for i := range len(rwx) {
		if fi.Mode&(1<<(8-i)) != 0 {
			b[i+1] = rwx[i]
		}
	}
	if fi.Mode&fs.ModeSticky != 0 {
		if b[9] == 'x' {
			b[9] = 't'
		} else {
			b[9] = 'T'
		}
	}
	return string(b)
}

func (in *interp) ls(_ int, args []string) int {
	o, bad := getopt(args, "alAd1hF", "", map[string]byte{"all": 'a', "almost-all": 'A', "directory": 'd'})
	if bad != "" {
		in.badOption("ls", bad)
		return 2
	}
	ops := o.operands
	if len(ops) == 0 {
		ops = []string{"."}
	}
	code := 0
	line := func(name string, fi FileInfo) {
		if !o.has('l') {
			in.write(1, name+"\n")
			return
		}
		size := fi.Size
		if fi.IsDir() {
			size = 4096
		}
		s := fmt.Sprintf("%s 1 root root %d %s %s", modeString(fi), size, fi.ModTime.Format("Jan _2 15:04"), name)
		if fi.Type == "symlink" {
			s += " -> " + fi.Target
		}
		in.write(1, s+"\n")
	}
	var files []string
	var dirs []string
	infos := map[string]FileInfo{}
	for _, name := range ops {
		fi, err := in.m.fs.stat(in.abs(name), !o.has('l') && !o.has('d'))
		if err == nil && fi.Type == "symlink" && !o.has('d') {
			if t, terr := in.m.fs.stat(in.abs(name), true); terr == nil && t.IsDir() {
				fi = t // ls -l DIRLINK lists the directory it names
			}
		}
		if err != nil {
			in.errorf("ls: cannot access '%s': %v\n", name, err)
			code = 2
			continue
		}
		infos[name] = fi
		if fi.IsDir() && !o.has('d') {
			dirs = append(dirs, name)
		} else {
			files = append(files, name)
		}
	}
	for _, name := range files {
		line(name, infos[name])
	}
	for i, d := range dirs {
		if len(ops) > 1 {
			if i > 0 || len(files) > 0 {
				in.write(1, "\n")
			}
			in.write(1, d+":\n")
		}
		entries, err := in.m.fs.readDir(in.abs(d))
		if err != nil {
			in.errorf("ls: cannot open directory '%s': %v\n", d, err)
			code = 2
			continue
		}
		if o.has('a') {
			self := infos[d]
			self.Name = "."
			entries = append([]FileInfo{self, {Name: "..", Type: "dir", Mode: 0o755, ModTime: self.ModTime}}, entries...)
		} else if !o.has('A') {
			kept := entries[:0]
			for _, e := range entries {
				if !strings.HasPrefix(e.Name, ".") {
					kept = append(kept, e)
				}
			}
			entries = kept
		}
		if o.has('l') {
			var blocks int64
			for _, e := range entries {
				blocks += (e.Size + 4095) / 4096 * 4
				if e.IsDir() {
					blocks += 4
				}
			}
			in.write(1, fmt.Sprintf("total %d\n", blocks))
		}
		for _, e := range entries {
			line(e.Name, e)
		}
	}
	return code
}
