package shell

// The commands that read file contents: cat, wc, sha256sum, head and tail,
// with coreutils' output formats and messages.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// inputs yields each operand's content ("-" or none: stdin), reporting
// errors as "CMD: NAME: ERROR".
func (in *interp) inputs(cmd string, operands []string, each func(name string, data []byte)) int {
	if len(operands) == 0 {
		operands = []string{"-"}
	}
	code := 0
	for _, name := range operands {
		if name == "-" {
			each(name, in.stdin())
			continue
		}
		data, err := in.m.fs.ReadFile(in.abs(name))
		if err != nil {
			in.errorf("%s: %s: %v\n", cmd, name, err)
			code = 1
			continue
		}
		each(name, data)
	}
	return code
}

func (in *interp) cat(_ int, args []string) int {
	o, bad := getopt(args, "u", "", nil)
	if bad != "" {
		in.badOption("cat", bad)
		return 1
	}
	return in.inputs("cat", o.operands, func(_ string, data []byte) { in.writeBytes(1, data) })
}

func (in *interp) wc(_ int, args []string) int {
	o, bad := getopt(args, "clwm", "", map[string]byte{"bytes": 'c', "lines": 'l', "words": 'w', "chars": 'm'})
	if bad != "" {
		in.badOption("wc", bad)
		return 1
	}
	show := []byte{}
	for _, f := range []byte("lwmc") {
		if o.has(f) {
			show = append(show, f)
		}
	}
	if len(show) == 0 {
		show = []byte("lwc")
	}
	type row struct {
		name   string
		counts []int
	}
	var rows []row
	total := make([]int, len(show))
	stdin, regular := false, 0
	code := in.inputs("wc", o.operands, func(name string, data []byte) {
		stdin = stdin || name == "-"
		regular += len(data)
		r := row{name: name}
		for i, f := range show {
			var n int
			switch f {
			case 'c':
				n = len(data)
			case 'm':
				n = len([]rune(string(data)))
			case 'l':
				n = strings.Count(string(data), "\n")
			case 'w':
				n = len(strings.Fields(string(data)))
			}
			r.counts = append(r.counts, n)
			total[i] += n
		}
		rows = append(rows, r)
	})
	if len(rows) > 1 {
		rows = append(rows, row{name: "total", counts: total})
	}
	// coreutils pads to the digits of the inputs' total size (at least 7
	// when one is stdin), but not one count of one input.
	width := 0
	if len(show) > 1 || len(rows) > 1 {
		width = len(strconv.Itoa(regular))
		if stdin {
			width = max(width, 7)
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, n := range r.counts {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%*d", width, n)
		}
		if len(o.operands) > 0 {
			b.WriteString(" " + r.name)
		}
		in.write(1, b.String()+"\n")
	}
	return code
}

func (in *interp) sha256sum(_ int, args []string) int {
	o, bad := getopt(args, "bt", "", map[string]byte{"binary": 'b', "text": 't'})
	if bad != "" {
		in.badOption("sha256sum", bad)
		return 1
	}
	ops := o.operands
	if len(ops) == 0 {
		ops = []string{"-"}
	}
	code := 0
	for _, name := range ops {
		var sum [32]byte
		if name == "-" {
			sum = sha256.Sum256(in.stdin())
		} else {
			var err error
			if sum, err = in.m.fs.Sum(in.abs(name)); err != nil {
				in.errorf("sha256sum: %s: %v\n", name, err)
				code = 1
				continue
			}
		}
		in.write(1, hex.EncodeToString(sum[:])+"  "+name+"\n")
	}
	return code
}

// parseCount reads head's and tail's N: digits with an optional K, M or G
// (powers of 1024) suffix, and a leading "+" (from) or "-" (all but).
func parseCount(v string) (n int, sign byte, ok bool) {
	if v != "" && (v[0] == '+' || v[0] == '-') {
		sign, v = v[0], v[1:]
	}
	mult := 1
	switch {
	case strings.HasSuffix(v, "K"):
		mult, v = 1<<10, strings.TrimSuffix(v, "K")
	case strings.HasSuffix(v, "M"):
		mult, v = 1<<20, strings.TrimSuffix(v, "M")
	case strings.HasSuffix(v, "G"):
		mult, v = 1<<30, strings.TrimSuffix(v, "G")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, 0, false
	}
	return n * mult, sign, true
}

// headTail is head and tail with -c N and -n N (default -n 10).
func (in *interp) headTail(cmd string, args []string) int {
	o, bad := getopt(args, "qvf", "cn", map[string]byte{"bytes": 'c', "lines": 'n', "quiet": 'q', "silent": 'q', "verbose": 'v'})
	if bad != "" {
		in.badOption(cmd, bad)
		return 1
	}
	bytesMode := o.has('c')
	spec := "10"
	if v, ok := o.value['n']; ok {
		spec = v
	}
	if v, ok := o.value['c']; ok {
		spec = v
	}
	n, sign, ok := parseCount(spec)
	if !ok {
		what := "lines"
		if bytesMode {
			what = "bytes"
		}
		in.errorf("%s: invalid number of %s: '%s'\n", cmd, what, spec)
		return 1
	}
	ops := o.operands
	if len(ops) == 0 {
		ops = []string{"-"}
	}
	code := 0
	for i, name := range ops {
		var data []byte
		if name == "-" {
			data = in.stdin()
		} else {
			var err error
			if data, err = in.m.fs.ReadFile(in.abs(name)); err != nil {
				in.errorf("%s: cannot open '%s' for reading: %v\n", cmd, name, err)
				code = 1
				continue
			}
		}
		if (len(ops) > 1 && !o.has('q')) || o.has('v') {
			if i > 0 {
				in.write(1, "\n")
			}
			in.write(1, "==> "+name+" <==\n")
		}
		in.writeBytes(1, cut(data, cmd == "head", bytesMode, n, sign))
	}
	return code
}

// cut is the part of data head (or tail) prints.
func cut(data []byte, head, bytesMode bool, n int, sign byte) []byte {
	// start and end as byte offsets of the first and last n units.
	unitStart := func(k int) int { // offset where unit k (0-based) begins
		if bytesMode {
			return min(k, len(data))
		}
		off := 0
		for ; k > 0 && off < len(data); k-- {
			j := strings.IndexByte(string(data[off:]), '\n')
			if j < 0 {
				return len(data)
			}
			off += j + 1
		}
		return off
	}
	units := len(data)
	if !bytesMode {
		units = strings.Count(string(data), "\n")
		if len(data) > 0 && data[len(data)-1] != '\n' {
			units++
		}
	}
	switch {
	case head && sign == '-':
		return data[:unitStart(max(units-n, 0))]
	case head:
		return data[:unitStart(n)]
	case sign == '+':
		return data[unitStart(max(n-1, 0)):]
	default:
		return data[unitStart(max(units-n, 0)):]
	}
}
