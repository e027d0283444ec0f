package shell

// test and [: bash's conditional builtin, on the sandbox's file system.

import (
	"io/fs"
	"strconv"
	"strings"
)

// test is test and [: file, string and integer tests, "!", -a, -o and
// parentheses.
func (in *interp) test(line int, name string, args []string) int {
	t := &testEval{in: in, args: args}
	if len(args) == 0 {
		return 1
	}
	v, err := t.or()
	if err == "" && t.i < len(args) {
		err = "too many arguments"
	}
	if err != "" {
		in.errorf("bash: line %d: %s: %s\n", line, name, err)
		return 2
	}
	if v {
		return 0
	}
	return 1
}

type testEval struct {
	in   *interp
	args []string
	i    int
}

func (t *testEval) more() bool   { return t.i < len(t.args) }
func (t *testEval) peek() string { return t.args[t.i] }

func (t *testEval) or() (bool, string) {
	v, err := t.and()
	for err == "" && t.more() && t.peek() == "-o" {
		t.i++
		var w bool
		w, err = t.and()
		v = v || w
	}
	return v, err
}

func (t *testEval) and() (bool, string) {
	v, err := t.not()
	for err == "" && t.more() && t.peek() == "-a" {
		t.i++
		var w bool
		w, err = t.not()
		v = v && w
	}
	return v, err
}

func (t *testEval) not() (bool, string) {
	if t.more() && t.peek() == "!" && len(t.args)-t.i > 1 {
		t.i++
		v, err := t.not()
		return !v, err
	}
	return t.primary()
}

var testBinary = map[string]bool{
	"=": true, "==": true, "!=": true, "<": true, ">": true,
	"-eq": true, "-ne": true, "-lt": true, "-le": true, "-gt": true, "-ge": true,
}

func (t *testEval) primary() (bool, string) {
	if !t.more() {
		return false, "argument expected"
	}
	a := t.peek()
	rest := len(t.args) - t.i
	if a == "(" && rest >= 3 {
		t.i++
		v, err := t.or()
		if err != "" {
			return false, err
		}
		if !t.more() || t.peek() != ")" {
			return false, "`)' expected"
		}
		t.i++
		return v, ""
	}
	if rest >= 3 && testBinary[t.args[t.i+1]] {
		l, op, r := a, t.args[t.i+1], t.args[t.i+2]
		t.i += 3
		return t.binary(l, op, r)
	}
	if len(a) == 2 && a[0] == '-' && rest >= 2 {
		t.i += 2
		return t.unary(a, t.args[t.i-1])
	}
	t.i++
	return a != "", ""
}

func (t *testEval) binary(l, op, r string) (bool, string) {
	switch op {
	case "=", "==":
		return l == r, ""
	case "!=":
		return l != r, ""
	case "<":
		return l < r, ""
	case ">":
		return l > r, ""
	}
	a, err := strconv.ParseInt(strings.TrimSpace(l), 10, 64)
	if err != nil {
		return false, l + ": integer expression expected"
	}
	b, err := strconv.ParseInt(strings.TrimSpace(r), 10, 64)
	if err != nil {
		return false, r + ": integer expression expected"
	}
	switch op {
	case "-eq":
		return a == b, ""
	case "-ne":
		return a != b, ""
	case "-lt":
		return a < b, ""
	case "-le":
		return a <= b, ""
	case "-gt":
		return a > b, ""
	}
	return a >= b, ""
}

func (t *testEval) unary(op, arg string) (bool, string) {
	switch op {
	case "-z":
		return arg == "", ""
	case "-n":
		return arg != "", ""
	case "-t":
		return false, "" // no terminals here
	}
	follow := op != "-L" && op != "-h"
	fi, err := t.in.m.fs.Stat(t.in.abs(arg), follow)
	exists := err == nil && arg != ""
	switch op {
	case "-e", "-r", "-w":
		// The shell is root: it may read and write whatever exists.
		return exists, ""
	case "-f":
		return exists && fi.Type == "file", ""
	case "-d":
		return exists && fi.IsDir(), ""
	case "-s":
		return exists && fi.Size > 0 && fi.Type != "dir", ""
	case "-L", "-h":
		return exists && fi.Type == "symlink", ""
	case "-x":
		return exists && (fi.IsDir() || fi.Mode&0o111 != 0), ""
	case "-c":
		return exists && fi.Type == "device", ""
	case "-b", "-p", "-S":
		return false, ""
	case "-u":
		return exists && fi.Mode&fs.ModeSetuid != 0, ""
	case "-g":
		return exists && fi.Mode&fs.ModeSetgid != 0, ""
	case "-k":
		return exists && fi.Mode&fs.ModeSticky != 0, ""
	case "-O", "-G":
		return exists, "" // root owns everything
	}
	return false, op + ": unary operator expected"
}
