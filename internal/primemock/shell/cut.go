package shell

// cut: fields, bytes and characters by list.

import (
	"strconv"
	"strings"
)

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
