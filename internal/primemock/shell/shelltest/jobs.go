package shelltest

import (
	"regexp"
	"strings"
)

// ShQuote is Python's shlex.quote, as the SDK quotes what it sends.
func ShQuote(s string) string {
	if s == "" {
		return "''"
	}
	if !regexp.MustCompile(`[^\w@%+=:,./-]`).MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// SDKJobCommand is the command start_background_job (prime-sandboxes
// 0.2.39) sends for a job: env as exports, an optional working directory.
func SDKJobCommand(jobID, command, workingDir string, env [][2]string) string {
	prefix := ""
	if len(env) > 0 {
		var exports []string
		for _, kv := range env {
			exports = append(exports, "export "+kv[0]+"="+ShQuote(kv[1]))
		}
		prefix = strings.Join(exports, "; ") + "; "
	}
	if workingDir != "" {
		prefix += "cd " + ShQuote(workingDir) + " && "
	}
	base := "/tmp/job_" + jobID
	sh := "(" + prefix + command + ") > " + ShQuote(base+".stdout.log") + " 2> " + ShQuote(base+".stderr.log") +
		"; echo $? > " + ShQuote(base+".exit")
	return "nohup sh -c " + ShQuote(sh) + " < /dev/null > /dev/null 2>&1 &"
}

// WrapperJobCommand is the provider's wrapper of the same job: a process
// group of its own and a pgid file, the canonical paths kept.
func WrapperJobCommand(jobID, command, workingDir string) string {
	base := "/tmp/job_" + jobID
	sh := "echo $$ > " + base + ".pgid; (cd " + ShQuote(workingDir) + " && " + command + ") > " + base +
		".stdout.log 2> " + base + ".stderr.log; echo $? > " + base + ".exit"
	return "nohup setsid sh -c " + ShQuote(sh) + " < /dev/null > /dev/null 2>&1 &"
}
