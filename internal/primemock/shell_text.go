package primemock

// Text filters, for pipes: tr, grep, sort, uniq, cut, tee, and printf,
// basename and dirname, with the common options of their coreutils/grep/
// bash versions (C locale). An option they do not implement is refused
// rather than ignored.

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// textCommand finds a text command by name (nil if there is none).
func textCommand(name string) func(in *interp, args []string) int {
	switch name {
	case "tr":
		return (*interp).tr
	case "grep":
		return (*interp).grep
	case "sort":
		return (*interp).sort
	case "uniq":
		return (*interp).uniq
	case "cut":
		return (*interp).cut
	case "tee":
		return (*interp).tee
	case "printf":
		return (*interp).printf
	case "basename":
		return (*interp).basename
	case "dirname":
		return (*interp).dirname
	}
	return nil
}

// getoptOrRefuse parses options as getopt does; an option the command has
// in its real version but not here is refused (known lists them), any
// other is the usual "invalid option".
func (in *interp) getoptOrRefuse(cmd string, args []string, flags, withArg string, long map[string]byte, known string) (options, bool) {
	o, bad := getopt(args, flags, withArg, long)
	if bad == "" {
		return o, true
	}
	if len(bad) == 2 && strings.IndexByte(known, bad[1]) >= 0 {
		in.refuse(fmt.Sprintf("the option %s of %s", bad, cmd))
	}
	in.badOption(cmd, bad)
	return o, false
}

// lines splits text into lines without their newlines; a last line
// without one counts.
func lines(data []byte) []string {
	s := string(data)
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// trSet expands a tr set: ranges "a-z", escapes "\n" "\t" "\\", and the
// classes [:lower:] [:upper:] [:digit:] [:alpha:] [:alnum:] [:space:]
// [:blank:] [:punct:].
func trSet(spec string) []byte {
	classes := map[string]string{
		"[:lower:]": "abcdefghijklmnopqrstuvwxyz", "[:upper:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
		"[:digit:]": "0123456789", "[:space:]": " \t\n\r\v\f", "[:blank:]": " \t",
		"[:punct:]": "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
	}
	classes["[:alpha:]"] = classes["[:lower:]"] + classes["[:upper:]"]
	classes["[:alnum:]"] = classes["[:alpha:]"] + classes["[:digit:]"]
	var raw []byte
	for i := 0; i < len(spec); i++ {
		if spec[i] == '[' {
			if end := strings.Index(spec[i:], ":]"); end > 0 {
				if cls, ok := classes[spec[i:i+end+2]]; ok {
					raw = append(raw, cls...)
					i += end + 1
					continue
				}
			}
		}
		c := spec[i]
		if c == '\\' && i+1 < len(spec) {
			i++
			switch spec[i] {
			case 'n':
				c = '\n'
			case 't':
				c = '\t'
			case 'r':
				c = '\r'
			default:
				c = spec[i]
			}
		}
		if i+2 < len(spec) && spec[i+1] == '-' && spec[i+2] >= c {
			for x := int(c); x <= int(spec[i+2]); x++ {
				raw = append(raw, byte(x))
			}
			i += 2
			continue
		}
		raw = append(raw, c)
	}
	return raw
}

// tr [-d] [-s] SET1 [SET2]: translate (SET2's last character repeats),
// delete, squeeze repeats of the last set given.
func (in *interp) tr(args []string) int {
	o, ok := in.getoptOrRefuse("tr", args, "ds", "", map[string]byte{"delete": 'd', "squeeze-repeats": 's'}, "cCt")
	if !ok {
		return 1
	}
	ops := o.operands
	var fits bool
	switch {
	case o.has('d') && !o.has('s'):
		fits = len(ops) == 1
	case o.has('s') && !o.has('d'):
		fits = len(ops) == 1 || len(ops) == 2
	default:
		fits = len(ops) == 2
	}
	if !fits {
		in.errorf("tr: missing operand\nTry 'tr --help' for more information.\n")
		return 1
	}
	set1 := trSet(ops[0])
	var set2 []byte
	if len(ops) > 1 {
		set2 = trSet(ops[1])
	}
	var mapping [256]int
	for i := range mapping {
		mapping[i] = i
	}
	inSet := func(set []byte, c byte) bool { return strings.IndexByte(string(set), c) >= 0 }
	if !o.has('d') && set2 != nil {
		for i, c := range set1 {
			mapping[c] = int(set2[min(i, len(set2)-1)])
		}
	}
	squeeze := set1
	if set2 != nil {
		squeeze = set2
	}
	var out []byte
	for _, c := range in.stdin() {
		if o.has('d') && inSet(set1, c) {
			continue
		}
		m := byte(mapping[c]) //nolint:gosec // G115: mapping holds byte values
		if o.has('s') && len(out) > 0 && out[len(out)-1] == m && inSet(squeeze, m) {
			continue
		}
		out = append(out, m)
	}
	in.writeBytes(1, out)
	return 0
}

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
		} else if data, err = in.m.fs.readFile(in.abs(name)); err != nil {
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

// sort [-r] [-n] [-u] [FILE...]: lines in byte order (C locale), or by
// their leading number.
func (in *interp) sort(args []string) int {
	o, ok := in.getoptOrRefuse("sort", args, "rnu", "", map[string]byte{"reverse": 'r', "numeric-sort": 'n', "unique": 'u'}, "kthfbdgiMRVcCmosSTz")
	if !ok {
		return 2
	}
	var all []string
	code := in.inputs("sort", o.operands, func(_ string, data []byte) { all = append(all, lines(data)...) })
	number := func(s string) float64 {
		f, _ := strconv.ParseFloat(strings.Fields(s + " x")[0], 64)
		return f
	}
	less := func(a, b string) bool {
		if o.has('n') {
			if na, nb := number(a), number(b); na != nb {
				return na < nb
			}
		}
		return a < b
	}
	sort.SliceStable(all, func(i, j int) bool {
		if o.has('r') {
			return less(all[j], all[i])
		}
		return less(all[i], all[j])
	})
	var b strings.Builder
	for i, l := range all {
		if o.has('u') && i > 0 && !less(all[i-1], l) && !less(l, all[i-1]) {
			continue
		}
		b.WriteString(l + "\n")
	}
	in.write(1, b.String())
	if code != 0 {
		return 2
	}
	return 0
}

// uniq [-c] [-d] [-u] [FILE]: adjacent repeated lines once.
func (in *interp) uniq(args []string) int {
	o, ok := in.getoptOrRefuse("uniq", args, "cdu", "", map[string]byte{"count": 'c', "repeated": 'd', "unique": 'u'}, "fsiwzD")
	if !ok {
		return 1
	}
	if len(o.operands) > 1 {
		in.refuse("an output file operand of uniq")
	}
	var all []string
	if code := in.inputs("uniq", o.operands, func(_ string, data []byte) { all = lines(data) }); code != 0 {
		return code
	}
	var b strings.Builder
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j] == all[i] {
			j++
		}
		n := j - i
		if (!o.has('d') || n > 1) && (!o.has('u') || n == 1) {
			if o.has('c') {
				fmt.Fprintf(&b, "%7d ", n)
			}
			b.WriteString(all[i] + "\n")
		}
		i = j
	}
	in.write(1, b.String())
	return 0
}

// cut -f LIST [-d DELIM] | -c LIST [FILE...]: fields (tab-separated by
// default; a line without the delimiter is printed whole) or characters.
func (in *interp) cut(args []string) int {
	o, ok := in.getoptOrRefuse("cut", args, "s", "dfcb", map[string]byte{"delimiter": 'd', "fields": 'f', "characters": 'c', "bytes": 'b', "only-delimited": 's'}, "nz")
	if !ok {
		return 1
	}
	list, byField := o.value['f'], true
	switch {
	case o.has('f') && !o.has('c') && !o.has('b'):
	case !o.has('f') && (o.has('c') != o.has('b')):
		list, byField = o.value['c']+o.value['b'], false
	default:
		in.errorf("cut: you must specify a list of bytes, characters, or fields\nTry 'cut --help' for more information.\n")
		return 1
	}
	want, okList := cutList(list)
	if !okList {
		in.errorf("cut: invalid field range\nTry 'cut --help' for more information.\n")
		return 1
	}
	delim := "\t"
	if d, set := o.value['d']; set {
		if len(d) != 1 {
			in.errorf("cut: the delimiter must be a single character\nTry 'cut --help' for more information.\n")
			return 1
		}
		delim = d
	}
	return in.inputs("cut", o.operands, func(_ string, data []byte) {
		var b strings.Builder
		for _, l := range lines(data) {
			if byField && !strings.Contains(l, delim) {
				if !o.has('s') {
					b.WriteString(l + "\n")
				}
				continue
			}
			var parts []string
			if byField {
				parts = strings.Split(l, delim)
			} else {
				parts = strings.Split(l, "")
				delim = ""
			}
			var kept []string
			for i, p := range parts {
				if want(i + 1) {
					kept = append(kept, p)
				}
			}
			b.WriteString(strings.Join(kept, delim) + "\n")
		}
		in.write(1, b.String())
	})
}

// cutList reads "N", "N-M", "N-", "-M", comma-separated, 1-based.
func cutList(list string) (func(int) bool, bool) {
	type span struct{ lo, hi int }
	var spans []span
	for _, item := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(item, "-")
		var s span
		var err error
		if s.lo = 1; lo != "" {
			if s.lo, err = strconv.Atoi(lo); err != nil || s.lo < 1 {
				return nil, false
			}
		}
		switch {
		case !isRange:
			s.hi = s.lo
		case hi == "":
			s.hi = int(^uint(0) >> 1)
		default:
			if s.hi, err = strconv.Atoi(hi); err != nil || s.hi < s.lo {
				return nil, false
			}
		}
		spans = append(spans, s)
	}
	return func(n int) bool {
		for _, s := range spans {
			if n >= s.lo && n <= s.hi {
				return true
			}
		}
		return false
	}, true
}

// tee [-a] FILE...: stdin to stdout and to each file.
func (in *interp) tee(args []string) int {
	o, ok := in.getoptOrRefuse("tee", args, "a", "", map[string]byte{"append": 'a'}, "ip")
	if !ok {
		return 1
	}
	data := in.stdin()
	code := 0
	for _, name := range o.operands {
		e, err := in.openOutput(name, o.has('a'))
		if err != nil {
			in.errorf("tee: %s: %v\n", name, err)
			code = 1
			continue
		}
		if e.kind == fdFile {
			_ = e.file.write(data)
			e.file.close()
		}
	}
	in.writeBytes(1, data)
	return code
}

// printfVerb matches one conversion of printf's format.
var printfVerb = regexp.MustCompile(`%[-+ #0]*[0-9]*(\.[0-9]*)?[sdiuxXocfeEgGb%]`)

// printf FORMAT [ARGUMENT...]: bash's builtin for %s %d %i %u %x %X %o %c
// %f %e %g %b and %% with flags, width and precision, and the escapes
// \n \t \r \\ \a \0NNN in the format; the format is reused while
// arguments remain.
func (in *interp) printf(args []string) int {
	if len(args) > 0 && args[0] == "-v" {
		in.refuse(`"printf -v"`)
	}
	if len(args) == 0 {
		in.errorf("bash: printf: usage: printf [-v var] format [arguments]\n")
		return 2
	}
	format, rest := printfEscapes(args[0]), args[1:]
	code := 0
	var b strings.Builder
	for {
		used := 0
		out := printfVerb.ReplaceAllStringFunc(format, func(verb string) string {
			conv := verb[len(verb)-1]
			if conv == '%' {
				return "%"
			}
			arg := ""
			if used < len(rest) {
				arg = rest[used]
			}
			used++
			spec := verb[:len(verb)-1]
			switch conv {
			case 's':
				return fmt.Sprintf(spec+"s", arg)
			case 'b':
				return fmt.Sprintf(spec+"s", printfEscapes(arg))
			case 'c':
				if arg == "" {
					return ""
				}
				return arg[:1]
			case 'f', 'e', 'E', 'g', 'G':
				f, err := strconv.ParseFloat(orString(arg, "0"), 64)
				if err != nil {
					in.errorf("bash: printf: %s: invalid number\n", arg)
					code = 1
				}
				return fmt.Sprintf(spec+string(conv), f)
			}
			n, err := strconv.ParseInt(orString(arg, "0"), 0, 64)
			if err != nil {
				in.errorf("bash: printf: %s: invalid number\n", arg)
				code = 1
			}
			switch conv {
			case 'd', 'i', 'u':
				return fmt.Sprintf(spec+"d", n)
			}
			return fmt.Sprintf(spec+string(conv), n)
		})
		b.WriteString(out)
		rest = rest[min(used, len(rest)):]
		if used == 0 || len(rest) == 0 {
			break
		}
	}
	in.write(1, b.String())
	return code
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// printfEscapes interprets printf's backslash escapes.
func printfEscapes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case '\\':
			b.WriteByte('\\')
		case '0':
			j := i + 1
			for j < len(s) && j < i+4 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint("0"+s[i+1:j], 8, 8)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// basename NAME [SUFFIX].
func (in *interp) basename(args []string) int {
	if len(args) == 0 || len(args) > 2 {
		in.errorf("basename: missing operand\nTry 'basename --help' for more information.\n")
		return 1
	}
	base := path.Base(args[0])
	if len(args) == 2 && base != args[1] {
		base = strings.TrimSuffix(base, args[1])
	}
	in.write(1, base+"\n")
	return 0
}

// dirname NAME...
func (in *interp) dirname(args []string) int {
	if len(args) == 0 {
		in.errorf("dirname: missing operand\nTry 'dirname --help' for more information.\n")
		return 1
	}
	for _, a := range args {
		d := strings.TrimRight(a, "/")
		if d == "" {
			d = "/"
		}
		in.write(1, path.Dir(d)+"\n")
	}
	return 0
}
