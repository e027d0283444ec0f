package shell

// Text filters, for pipes: sort, uniq and tee here; tr, grep, cut, printf,
// basename and dirname in shell_tr.go, shell_grep.go, shell_cut.go,
// shell_printf.go and shell_paths.go. Each takes the common options of its
// coreutils/grep/bash version (C locale); an option it does not implement
// is refused rather than ignored.

import (
	"fmt"
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
			_ = e.file.Write(data)
			e.file.Close()
		}
	}
	in.writeBytes(1, data)
	return code
}
