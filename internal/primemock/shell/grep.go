package shell

// grep: basic and extended regular expressions, with grep's common options.

import (
	"regexp"
	"strconv"
	"strings"
)

// bre turns a POSIX basic regular expression into Go's syntax: \( \) \{ \}
// \| \+ \? are the operators, ( ) { } | + ? are literal.
func bre(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p) && strings.IndexByte("(){}|+?", p[i+1]) >= 0:
			i++
			b.WriteByte(p[i])
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteByte('\\')
			b.WriteByte(p[i])
		case strings.IndexByte("(){}|+?", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// grep [-vicqnoxwFEsHh] [-e PATTERN] PATTERN [FILE...]: exit 0 when a line
// matched, 1 when none did, 2 on an error.
func (in *interp) grep(args []string) int {
	o, ok := in.getoptOrRefuse("grep", args, "vicqnoxwFEsHh", "e", map[string]byte{
		"invert-match": 'v', "ignore-case": 'i', "count": 'c', "quiet": 'q', "silent": 'q', "line-number": 'n',
		"only-matching": 'o', "line-regexp": 'x', "word-regexp": 'w', "fixed-strings": 'F',
		"extended-regexp": 'E', "no-messages": 's', "with-filename": 'H', "no-filename": 'h', "regexp": 'e',
	}, "rRlLABCPzZabfm")
	if !ok {
		return 2
	}
	ops := o.operands
	pattern, hasE := o.value['e']
	if !hasE {
		if len(ops) == 0 {
			in.errorf("Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n")
			return 2
		}
		pattern, ops = ops[0], ops[1:]
	}
	expr := pattern
	switch {
	case o.has('F'):
		expr = regexp.QuoteMeta(pattern)
	case !o.has('E'):
		expr = bre(pattern)
	}
	if o.has('w') {
		expr = `(?:^|\W)(` + expr + `)(?:\W|$)`
	}
	if o.has('x') {
		expr = `^(?:` + expr + `)$`
	}
	if o.has('i') {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		in.errorf("grep: %v\n", err)
		return 2
	}
	named := (len(ops) > 1 || o.has('H')) && !o.has('h')
	matched, failed := false, false
	if len(ops) == 0 {
		ops = []string{"-"}
	}
	for _, name := range ops {
		var data []byte
		if name == "-" {
			data = in.stdin()
		} else if data, err = in.m.fs.ReadFile(in.abs(name)); err != nil {
			if !o.has('s') {
				in.errorf("grep: %s: %v\n", name, err)
			}
			failed = true
			continue
		}
		prefix := ""
		if named {
			prefix = name + ":"
			if name == "-" {
				prefix = "(standard input):"
			}
		}
		count := 0
		for i, l := range lines(data) {
			if re.MatchString(l) == o.has('v') {
				continue
			}
			count++
			matched = true
			if o.has('q') || o.has('c') {
				continue
			}
			lineNo := ""
			if o.has('n') {
				lineNo = strconv.Itoa(i+1) + ":"
			}
			if o.has('o') && !o.has('v') {
				for _, m := range re.FindAllString(l, -1) {
					in.write(1, prefix+lineNo+m+"\n")
				}
				continue
			}
			in.write(1, prefix+lineNo+l+"\n")
		}
		if o.has('c') && !o.has('q') {
			in.write(1, prefix+strconv.Itoa(count)+"\n")
		}
	}
	switch {
	case failed && !(o.has('q') && matched):
		return 2
	case matched:
		return 0
	}
	return 1
}
