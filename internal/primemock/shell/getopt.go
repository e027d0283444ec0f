package shell

// Option parsing of the file commands, and their messages for an unknown option.

import (
	"strings"
)

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
