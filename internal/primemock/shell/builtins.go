package shell

// The shell's builtins that are not about files: echo, exit, sleep,
// probe, curl, repeat, cd, export, printenv, trap (kill: shell_jobs.go;
// file commands: shell_files.go, shell_contents.go).

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/primeintellect/terraform-provider-prime/internal/prime"
	"github.com/primeintellect/terraform-provider-prime/internal/primemock/sandboxfs"
)

// builtin runs a command by name.
func (in *interp) builtin(ctx context.Context, line int, argv []string) int {
	name, args := argv[0], argv[1:]
	switch name {
	case "true", ":":
		return 0
	case "false":
		return 1
	case "exit":
		code := in.lastExit
		if len(args) > 0 {
			n, err := strconv.Atoi(args[0])
			if err != nil {
				in.errorf("bash: line %d: exit: %s: numeric argument required\n", line, args[0])
				code = 2
			} else {
				code = ((n % 256) + 256) % 256
			}
		}
		in.lastExit = code
		panic(stopScript{out: Outcome{Exit: code}})
	case "echo":
		newline := "\n"
		if len(args) > 0 && args[0] == "-n" {
			newline, args = "", args[1:]
		}
		in.write(1, strings.Join(args, " ")+newline)
		return 0
	case "sleep":
		return in.sleep(ctx, args)
	case "probe":
		if len(args) == 0 {
			in.errorf("probe: usage: probe HOST\n")
			return 2
		}
		return in.connect(args[0])
	case "curl":
		host, ok := curlHost(args)
		if !ok {
			in.errorf("curl: (2) no URL specified\n")
			return 2
		}
		if host == "" {
			in.errorf("curl: (3) URL rejected: No host part in the URL\n")
			return 3
		}
		return in.connect(host)
	case "repeat":
		if len(args) == 0 {
			in.errorf("repeat: usage: repeat N TEXT\n")
			return 2
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 0 {
			in.errorf("repeat: invalid count %q\n", args[0])
			return 2
		}
		text := strings.Join(args[1:], " ") + "\n"
		// Written in batches of about 64 KiB, and bounded by the cap, not
		// by n: a huge n costs nothing extra.
		per := max(1, (64<<10)/len(text))
		for done := 0; done < n && !in.full(1); done += per {
			in.write(1, strings.Repeat(text, min(per, n-done)))
		}
		return 0
	case "pwd":
		in.write(1, in.cwd+"\n")
		return 0
	case "cd":
		if len(args) > 1 {
			in.errorf("bash: line %d: cd: too many arguments\n", line)
			return 1
		}
		dir := in.vars["HOME"]
		if len(args) == 1 {
			dir = args[0]
		}
		if dir == "" {
			return 0
		}
		target := resolveDir(in.cwd, dir)
		if fi, err := in.m.fs.Stat(target, true); err != nil || !fi.IsDir() {
			if err == nil {
				err = sandboxfs.ErrNotDir
			}
			in.errorf("bash: line %d: cd: %s: %v\n", line, dir, err)
			return 1
		}
		in.cwd = target
		in.vars["PWD"] = in.cwd
		return 0
	case "export":
		return in.export(line, args)
	case "printenv":
		return in.printenv(args)
	case "trap":
		return in.trap(line, args)
	case "kill":
		return in.kill(line, args)
	case "set":
		return in.set(args)
	case "unset":
		for _, a := range args {
			if a != "-v" {
				delete(in.vars, a)
				delete(in.exported, a)
			}
		}
		return 0
	case ".", "source":
		return in.source(ctx, line, name, args)
	}
	if run := fileCommand(name); run != nil {
		return run(in, line, args)
	}
	if run := textCommand(name); run != nil {
		return run(in, args)
	}
	if unsupportedBuiltins[name] {
		in.refuse(fmt.Sprintf("the bash builtin %q", name))
	}
	in.errorf("bash: line %d: %s: command not found\n", line, name)
	in.errorf("prime-mock: %q is not one of the mock's commands (prime-mock -h lists them)\n", name)
	return 127
}

// source runs a file's script in this shell (". FILE" and "source FILE";
// arguments after FILE are refused: the mock has no positional
// parameters).
func (in *interp) source(ctx context.Context, line int, name string, args []string) int {
	switch {
	case len(args) == 0:
		in.errorf("bash: line %d: %s: filename argument required\n", line, name)
		return 2
	case len(args) > 1:
		in.refuse(fmt.Sprintf("arguments to %q (positional parameters)", name))
	}
	data, err := in.m.fs.ReadFile(in.abs(args[0]))
	if err != nil {
		in.errorf("bash: line %d: %s: %v\n", line, args[0], err)
		return 1
	}
	in.runScript(ctx, string(data))
	return in.lastExit
}

func (in *interp) sleep(ctx context.Context, args []string) int {
	if len(args) == 0 {
		in.errorf("sleep: missing operand\n")
		return 1
	}
	d, ok := parseSleep(args[0])
	if !ok {
		in.errorf("sleep: invalid time interval %q\n", args[0])
		return 1
	}
	var done <-chan time.Time // sleep infinity: never
	if d != sleepForever {
		t := time.NewTimer(in.m.scaleSleep(d))
		defer t.Stop()
		done = t.C
	}
	for {
		select {
		case <-done:
			return 0
		case <-ctx.Done():
			panic(stopScript{err: ctxErr(ctx)})
		case <-in.proc.sig.wakeC():
			in.takeSignals()
		}
	}
}

func (in *interp) export(line int, args []string) int {
	if len(args) == 0 {
		for _, k := range in.exportedNames() {
			in.write(1, fmt.Sprintf("declare -x %s=%q\n", k, in.vars[k]))
		}
		return 0
	}
	code := 0
	for _, a := range args {
		name, value, hasValue := strings.Cut(a, "=")
		if !validName(name) {
			in.errorf("bash: line %d: export: `%s': not a valid identifier\n", line, a)
			code = 1
			continue
		}
		if hasValue {
			in.vars[name] = value
		}
		in.exported[name] = true
	}
	return code
}

func (in *interp) exportedNames() []string {
	var names []string
	for k := range in.exported {
		if _, set := in.vars[k]; set {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return names
}

// environ is the environment a command sees: exported variables plus its
// temporary assignments.
func (in *interp) environ() map[string]string {
	env := map[string]string{}
	for _, k := range in.exportedNames() {
		env[k] = in.vars[k]
	}
	for k, v := range in.cmdEnv {
		env[k] = v
	}
	return env
}

func (in *interp) printenv(args []string) int {
	env := in.environ()
	if len(args) == 0 {
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			in.write(1, k+"="+env[k]+"\n")
		}
		return 0
	}
	code := 0
	for _, a := range args {
		v, ok := env[a]
		if !ok {
			code = 1
			continue
		}
		in.write(1, v+"\n")
	}
	return code
}

// signalSpecs maps the specs trap accepts to a canonical name.
var signalSpecs = map[string]string{
	"0": "EXIT", "EXIT": "EXIT", "1": "HUP", "HUP": "HUP", "2": "INT", "INT": "INT",
	"3": "QUIT", "QUIT": "QUIT", "9": "KILL", "KILL": "KILL", "10": "USR1", "USR1": "USR1",
	"12": "USR2", "USR2": "USR2", "13": "PIPE", "PIPE": "PIPE", "14": "ALRM", "ALRM": "ALRM",
	"15": "TERM", "TERM": "TERM", "ERR": "ERR", "DEBUG": "DEBUG", "RETURN": "RETURN",
}

// trap sets "trap ACTION SIGSPEC...": ACTION "" ignores, "-" (or a lone
// SIGSPEC) restores the default, anything else is run when the signal
// arrives. Only TERM and EXIT ever fire in the mock.
func (in *interp) trap(line int, args []string) int {
	if len(args) == 0 {
		return 0
	}
	action, specs := args[0], args[1:]
	if len(args) == 1 {
		action, specs = "-", args
	}
	code := 0
	for _, s := range specs {
		name, ok := signalSpecs[strings.TrimPrefix(strings.ToUpper(s), "SIG")]
		if !ok {
			in.errorf("bash: line %d: trap: %s: invalid signal specification\n", line, s)
			code = 1
			continue
		}
		if action == "-" {
			delete(in.traps, name)
		} else {
			in.traps[name] = action
		}
	}
	return code
}

// connect is the outcome of opening a connection to host: exit 0, or curl's
// "couldn't connect" exit 7.
func (in *interp) connect(host string) int {
	if in.m.reachable(host) {
		return 0
	}
	in.errorf("curl: (7) Failed to connect to %s port 443 after 0 ms: Couldn't connect to server\n", host)
	return 7
}

func parseSleep(v string) (time.Duration, bool) {
	if v == "infinity" || v == "inf" {
		return sleepForever, true
	}
	unit := time.Second
	switch {
	case strings.HasSuffix(v, "s"):
		v = strings.TrimSuffix(v, "s")
	case strings.HasSuffix(v, "m"):
		v, unit = strings.TrimSuffix(v, "m"), time.Minute
	case strings.HasSuffix(v, "h"):
		v, unit = strings.TrimSuffix(v, "h"), time.Hour
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1e6 {
		return 0, false
	}
	return time.Duration(f * float64(unit)), true
}

// sleepForever is GNU sleep's "infinity", the common way to keep a VM's
// start process (and so the VM) up: it sleeps until signalled or stopped.
const sleepForever = time.Duration(math.MaxInt64)

// curlArgFlags are curl options that consume the next word, so it is not
// mistaken for the URL.
var curlArgFlags = map[string]bool{
	"-o": true, "--output": true, "-H": true, "--header": true, "-X": true, "--request": true,
	"-d": true, "--data": true, "--data-raw": true, "--data-binary": true, "-m": true, "--max-time": true,
	"--connect-timeout": true, "-w": true, "--write-out": true, "-u": true, "--user": true,
	"-A": true, "--user-agent": true, "-e": true, "--referer": true, "--retry": true,
	"-x": true, "--proxy": true, "-F": true, "--form": true, "-b": true, "--cookie": true,
	"-c": true, "--cookie-jar": true, "--resolve": true, "-T": true, "--upload-file": true,
}

// curlHost finds the URL among curl's arguments and returns its host; ok is
// false when there is no URL.
func curlHost(args []string) (host string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			if curlArgFlags[a] {
				i++
			}
			continue
		}
		if !strings.Contains(a, "://") {
			a = "http://" + a // curl's default scheme
		}
		u, err := url.Parse(a)
		if err != nil {
			return "", true
		}
		return curlTarget(u), true
	}
	return "", false
}

// curlTarget is what the shell's curl connects to: the URL's host, and for
// a member address (<id>.sandbox.internal) also its port, explicit or the
// scheme's (80 for http, 443 otherwise), so network rules are checked per
// port.
func curlTarget(u *url.URL) string {
	host := u.Hostname()
	if _, _, ok := MemberAddress(host); !ok {
		return host
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return host + ":" + port
}

// MemberAddress reads a private network member's address,
// "<id>.sandbox.internal[:port]"; the port defaults to 443 (the shell's curl
// passes the URL's port, see curlTarget).
func MemberAddress(host string) (peerID string, port int, ok bool) {
	h, p := host, 443
	if i := strings.LastIndex(host, ":"); i >= 0 {
		n, err := strconv.Atoi(host[i+1:])
		if err != nil {
			return "", 0, false
		}
		h, p = host[:i], n
	}
	id, found := strings.CutSuffix(strings.TrimSuffix(strings.ToLower(h), "."), "."+prime.SandboxInternalDomain)
	if !found || id == "" || strings.Contains(id, ".") {
		return "", 0, false
	}
	return id, p, true
}
