package shell

// printf: bash's builtin, its verbs and escapes.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

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
