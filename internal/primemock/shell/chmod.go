package shell

// chmod and the modes it takes (octal and symbolic), as coreutils does.

import (
	"io/fs"
	"path"
	"strconv"
	"strings"
)

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
		if err := in.m.fs.Chmod(p, set); err != nil {
			in.errorf("chmod: cannot access '%s': %v\n", name, err)
			code = 1
			return
		}
		if !o.has('R') {
			return
		}
		if fi, err := in.m.fs.Stat(p, false); err == nil && fi.IsDir() {
			entries, _ := in.m.fs.ReadDir(p)
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
