package shell

// basename and dirname.

import (
	"path"
	"strings"
)

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
