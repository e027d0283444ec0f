package shell

// tr: character sets, ranges and classes, -d, -s and -c, as GNU tr in the C locale.

import (
	"strings"
)

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
