package shell

// Word expansion: parameters ($NAME, ${NAME}, $?, $$, $!), field
// splitting, tildes, pathname expansion (globs) against the sandbox's file
// system, and the bodies of unquoted here-documents.

import (
	"path"
	"sort"
	"strconv"
	"strings"
)

// lookup is a parameter's value ("$?", "$$" and "$!" included); unset is
// empty.
func (in *interp) lookup(name string) string {
	switch name {
	case "?":
		return strconv.Itoa(in.lastExit)
	case "$":
		return strconv.FormatUint(uint64(in.shellPID), 10)
	case "!":
		if in.lastBg == 0 {
			return ""
		}
		return strconv.FormatUint(uint64(in.lastBg), 10)
	}
	return in.vars[name]
}

// param is a parameter's value in an expansion: with nounset ("set -u")
// an unset one stops the shell with bash's message and status (127, as
// bash 5.2 exits).
func (in *interp) param(name string) string {
	if in.opts.nounset {
		_, set := in.vars[name]
		switch name {
		case "?", "$":
			set = true
		case "!":
			set = in.lastBg != 0
		}
		if !set {
			in.errorf("bash: line %d: %s: unbound variable\n", in.line, name)
			panic(stopScript{out: Outcome{Exit: 127}})
		}
	}
	return in.lookup(name)
}

// tilde expands a leading unquoted "~" or "~/…" to $HOME and "~root" to
// /root; other "~user" forms are left alone (no such user).
func (in *interp) tilde(w word) word {
	if len(w) == 0 || w[0].quoted || w[0].varName != "" || !strings.HasPrefix(w[0].text, "~") {
		return w
	}
	head, rest, _ := strings.Cut(w[0].text, "/")
	if len(w) > 1 && !strings.Contains(w[0].text, "/") && !w[1].quoted && w[1].varName == "" {
		return w // "~" glued to more unquoted text is a user name we cannot tell
	}
	var home string
	switch head {
	case "~":
		home = in.vars["HOME"]
	case "~root":
		home = "/root"
	default:
		return w
	}
	text := home
	if strings.Contains(w[0].text, "/") {
		text += "/" + rest
	}
	out := append(word{{text: text, quoted: true}}, w[1:]...)
	return out
}

// expand turns a word into fields: quoted parts stay whole, unquoted
// expansions are split on blanks, a word made only of unquoted expansions
// that are empty disappears, and a field with an unquoted glob character
// is replaced by the paths it matches, sorted (itself when none does, as
// bash does without nullglob).
func (in *interp) expand(w word) []string {
	var (
		fields   []string
		cur, pat strings.Builder
		have     bool
		glob     bool
	)
	finish := func() {
		if have {
			matches := []string(nil)
			if glob {
				matches = in.glob(pat.String())
			}
			if len(matches) > 0 {
				fields = append(fields, matches...)
			} else {
				fields = append(fields, cur.String())
			}
		}
		cur.Reset()
		pat.Reset()
		have, glob = false, false
	}
	addText := func(s string, quoted bool) {
		cur.WriteString(s)
		if quoted {
			pat.WriteString(escapeGlob(s))
			return
		}
		pat.WriteString(s)
		glob = glob || strings.ContainsAny(s, "*?[")
	}
	for _, p := range in.tilde(w) {
		if p.varName == "" {
			addText(p.text, p.quoted)
			have = have || p.quoted || p.text != ""
			continue
		}
		val := in.param(p.varName)
		if p.quoted {
			addText(val, true)
			have = true
			continue
		}
		pieces := strings.Fields(val)
		if len(pieces) > 0 && strings.IndexAny(val[:1], " \t\n") == 0 {
			finish()
		}
		for i, piece := range pieces {
			if i > 0 {
				finish()
			}
			addText(piece, false)
			have = true
		}
		if len(pieces) > 0 && strings.ContainsAny(val[len(val)-1:], " \t\n") {
			finish()
		}
	}
	finish()
	return fields
}

// expandOne expands a word without field splitting or globs (assignment
// values, redirection targets).
func (in *interp) expandOne(w word) string {
	var b strings.Builder
	for _, p := range in.tilde(w) {
		if p.varName != "" {
			b.WriteString(in.param(p.varName))
		} else {
			b.WriteString(p.text)
		}
	}
	return b.String()
}

// escapeGlob makes quoted text match itself in a pattern.
func escapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?[\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hasGlobMeta reports an unescaped glob character in a pattern.
func hasGlobMeta(pat string) bool {
	for i := 0; i < len(pat); i++ {
		switch pat[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// unescapeGlob is a pattern without glob characters, as the text it
// matches.
func unescapeGlob(pat string) string {
	var b strings.Builder
	for i := 0; i < len(pat); i++ {
		if pat[i] == '\\' && i+1 < len(pat) {
			i++
		}
		b.WriteByte(pat[i])
	}
	return b.String()
}

// glob matches a pattern against the file system, one path segment at a
// time: "*" and "?" never match a leading "." unless the segment starts
// with one, "[!…]" is a negated class. It returns the matching paths,
// spelled as the pattern spells them (relative ones relative to the
// working directory), sorted.
func (in *interp) glob(pattern string) []string {
	type candidate struct{ shown, real string }
	abs := strings.HasPrefix(pattern, "/")
	segs := strings.Split(pattern, "/")
	cands := []candidate{{"", in.cwd}}
	if abs {
		cands, segs = []candidate{{"", "/"}}, segs[1:]
	}
	join := func(shown, name string) string {
		if shown == "" && !abs {
			return name
		}
		return shown + "/" + name
	}
	for _, seg := range segs {
		var next []candidate
		switch {
		case seg == "":
			for _, c := range cands {
				next = append(next, candidate{c.shown + "/", c.real})
			}
		case !hasGlobMeta(seg):
			lit := unescapeGlob(seg)
			for _, c := range cands {
				n := candidate{join(c.shown, lit), path.Join(c.real, lit)}
				if _, err := in.m.fs.Stat(n.real, false); err == nil {
					next = append(next, n)
				}
			}
		default:
			goPat := seg
			if strings.Contains(goPat, "[!") {
				goPat = strings.ReplaceAll(goPat, "[!", "[^")
			}
			for _, c := range cands {
				entries, err := in.m.fs.ReadDir(c.real)
				if err != nil {
					continue
				}
				for _, e := range entries {
					if strings.HasPrefix(e.Name, ".") && !strings.HasPrefix(seg, ".") {
						continue
					}
					if ok, err := path.Match(goPat, e.Name); err == nil && ok {
						next = append(next, candidate{join(c.shown, e.Name), path.Join(c.real, e.Name)})
					}
				}
			}
		}
		cands = next
		if len(cands) == 0 {
			return nil
		}
	}
	out := make([]string, 0, len(cands))
	for _, c := range cands {
		out = append(out, c.shown)
	}
	sort.Strings(out)
	return out
}

// heredocBody is an unquoted here-document's body after expansion:
// parameters, and the backslash before \ $ ` and newline. A construct the
// mock does not interpret in it ($(…), `…`, ${X:-y}, …) is returned as
// unsupported instead.
func (in *interp) heredocBody(body string) (string, string) {
	rs := []rune(body)
	var b strings.Builder
	lx := &lexer{rs: rs}
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; {
		case c == '\\' && i+1 < len(rs) && strings.ContainsRune("\\$`\n", rs[i+1]):
			i++
			if rs[i] != '\n' {
				b.WriteRune(rs[i])
			}
		case c == '$' || c == '`':
			p, n, err := lx.dollar(i, true)
			switch {
			case err != nil:
				return "", "an unterminated expansion in a here-document"
			case n == 0:
				b.WriteRune('$')
			case p.unsupported != "":
				return "", p.unsupported
			default:
				b.WriteString(in.param(p.varName))
				i += n - 1
			}
		default:
			b.WriteRune(c)
		}
	}
	return b.String(), ""
}
