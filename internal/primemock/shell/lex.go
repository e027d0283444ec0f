package shell

// The shell's lexer: words with their quoting and expansions, operators,
// redirections and here-documents. Constructs the mock does not interpret
// ($(…), `…`, $((…)), ${X:-y}, $1, $'…', <(…), brace expansion) are lexed
// whole into a word part that names them, so that the command holding them
// is refused when it runs instead of running with a literal.

import (
	"fmt"
	"regexp"
	"strings"
)

// wordPart is a piece of a word: literal text, or a parameter expansion.
type wordPart struct {
	text string
	// varName is non-empty for "$NAME", "${NAME}", "$?", "$$" and "$!".
	varName string
	quoted  bool // from inside quotes or escaped: never split, never a glob
	// unsupported names a construct the mock does not interpret (text is
	// its source, for messages); running a command that holds it is
	// refused.
	unsupported string
}

type word []wordPart

type tokKind uint8

const (
	tWord tokKind = iota + 1
	tNewline
	tSemi
	tAnd     // &&
	tOr      // ||
	tAmp     // &
	tPipe    // |
	tPipeAmp // |&
	tOpen    // (
	tClose
	tRedir
	tEOF
)

type token struct {
	kind       tokKind
	w          word
	r          redirect // tRedir, target not yet set
	text       string   // as written, for messages
	line       int
	start, end int // rune offsets in the script
}

// lexer splits a script into tokens. Single quotes keep everything literal;
// double quotes keep everything literal except "$" expansions and the
// backslash before \ " $ ` and newline; an unquoted backslash escapes the
// next character (a backslash-newline is dropped); an unquoted "#" at the
// start of a word comments out the rest of the line. Here-document bodies
// are read at the newline that ends the line of their operator.
type lexer struct {
	rs   []rune
	i    int
	line int
	// docs are here-documents whose operator was read and whose body
	// starts after the next newline.
	docs []*hereDoc
	// warnings are bash's parse-time warnings (an unterminated
	// here-document), printed before the script runs.
	warnings []string
}

func (lx *lexer) errorf(format string, args ...any) *syntaxError {
	return &syntaxError{msg: fmt.Sprintf("bash: -c: line %d: ", lx.line) + fmt.Sprintf(format, args...)}
}

func (lx *lexer) peek(k int) rune {
	if lx.i+k < len(lx.rs) {
		return lx.rs[lx.i+k]
	}
	return 0
}

// next returns the next token.
func (lx *lexer) next() (token, *syntaxError) {
	for lx.i < len(lx.rs) {
		c := lx.rs[lx.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			lx.i++
		case c == '\\' && lx.peek(1) == '\n':
			lx.i += 2
			lx.line++
		case c == '#':
			for lx.i < len(lx.rs) && lx.rs[lx.i] != '\n' {
				lx.i++
			}
		default:
			return lx.token()
		}
	}
	lx.readDocs()
	return token{kind: tEOF, line: lx.line, start: lx.i, end: lx.i}, nil
}

func (lx *lexer) op(kind tokKind, text string) (token, *syntaxError) {
	t := token{kind: kind, text: text, line: lx.line, start: lx.i}
	if kind == tNewline {
		lx.i++
	} else {
		lx.i += len(text)
	}
	t.end = lx.i
	if kind == tNewline {
		lx.line++
		lx.readDocs()
	}
	return t, nil
}

func (lx *lexer) token() (token, *syntaxError) {
	c, c1 := lx.rs[lx.i], lx.peek(1)
	switch {
	case c == '\n':
		return lx.op(tNewline, "newline")
	case c == ';':
		return lx.op(tSemi, ";")
	case c == '&' && c1 == '&':
		return lx.op(tAnd, "&&")
	case c == '|' && c1 == '|':
		return lx.op(tOr, "||")
	case c == '|' && c1 == '&':
		return lx.op(tPipeAmp, "|&")
	case c == '|':
		return lx.op(tPipe, "|")
	case c == '&' && c1 == '>':
		start := lx.i
		lx.i += 2
		r := redirect{kind: redirBoth}
		text := "&>"
		if lx.peek(0) == '>' {
			lx.i++
			r.append, text = true, "&>>"
		}
		return token{kind: tRedir, r: r, text: text, line: lx.line, start: start, end: lx.i}, nil
	case c == '&':
		return lx.op(tAmp, "&")
	case c == '(' && c1 == '(':
		return lx.whole(lx.i, "arithmetic commands")
	case c == '(':
		return lx.op(tOpen, "(")
	case c == ')':
		return lx.op(tClose, ")")
	case (c == '<' || c == '>') && c1 == '(':
		return lx.whole(lx.i+1, "process substitution")
	case c == '>' || c == '<':
		return lx.redir(lx.i, 0, false)
	}
	return lx.word()
}

// whole lexes an unsupported construct that runs from lx.i to the ")"
// matching the "(" at open as one word.
func (lx *lexer) whole(open int, what string) (token, *syntaxError) {
	start, line := lx.i, lx.line
	end := matchClose(lx.rs, open)
	if end < 0 {
		return token{}, lx.errorf("unexpected EOF while looking for matching `)'")
	}
	src := string(lx.rs[start : end+1])
	lx.countLines(start, end+1)
	lx.i = end + 1
	w := word{{text: src, unsupported: what + ` "` + clipSource(src) + `"`}}
	return token{kind: tWord, w: w, line: line, start: start, end: lx.i}, nil
}

func (lx *lexer) countLines(from, to int) {
	for _, r := range lx.rs[from:to] {
		if r == '\n' {
			lx.line++
		}
	}
}

// clipSource shortens a construct's source for a message.
func clipSource(s string) string {
	const maxRunes = 60
	if rs := []rune(s); len(rs) > maxRunes {
		return string(rs[:maxRunes]) + "…"
	}
	return s
}

// matchClose finds the ")" (or "}" for a "{") matching the opener at
// rs[open], skipping quoted text and escapes; -1 when there is none.
func matchClose(rs []rune, open int) int {
	opener := rs[open]
	closer := ')'
	if opener == '{' {
		closer = '}'
	}
	depth := 0
	for j := open; j < len(rs); j++ {
		switch rs[j] {
		case '\\':
			j++
		case '\'':
			j++
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
		case '"':
			for j++; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' {
					j++
				}
			}
		case opener:
			depth++
		case closer:
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// redir reads a redirection operator at lx.i (fd is an explicit descriptor
// written before it).
func (lx *lexer) redir(start, fd int, explicit bool) (token, *syntaxError) {
	c := lx.rs[lx.i]
	r := redirect{fd: fd, explicit: explicit}
	text := string(c)
	lx.i++
	switch {
	case c == '<' && lx.peek(0) == '<' && lx.peek(1) == '<':
		r.kind, text = redirHereString, "<<<"
		lx.i += 2
	case c == '<' && lx.peek(0) == '<':
		r.kind, text = redirHeredoc, "<<"
		lx.i++
		r.doc = &hereDoc{line: lx.line}
		if lx.peek(0) == '-' {
			r.doc.stripTabs, text = true, "<<-"
			lx.i++
		}
	case c == '>' && lx.peek(0) == '>':
		r.kind, text = redirAppend, ">>"
		lx.i++
	case lx.peek(0) == '&':
		r.kind, text = redirDup, text+"&"
		lx.i++
	case c == '>':
		r.kind = redirOut
		if lx.peek(0) == '|' { // ">|": no noclobber here, the same as ">"
			lx.i++
		}
	default:
		r.kind = redirIn
	}
	if !explicit {
		r.fd = 1
		if c == '<' {
			r.fd = 0
		}
	}
	return token{kind: tRedir, r: r, text: text, line: lx.line, start: start, end: lx.i}, nil
}

// hereDoc is a here-document: its delimiter (set by the parser from the
// word after the operator) and its body (read by the lexer).
type hereDoc struct {
	delim     string
	quoted    bool // a quoted delimiter: the body is literal
	stripTabs bool // "<<-"
	line      int  // where the operator is
	body      string
}

// readDocs reads the bodies of the pending here-documents, which start at
// lx.i (just after a newline): each runs to a line that is its delimiter.
func (lx *lexer) readDocs() {
	for _, d := range lx.docs {
		var body strings.Builder
		found := false
		for lx.i < len(lx.rs) {
			end := lx.i
			for end < len(lx.rs) && lx.rs[end] != '\n' {
				end++
			}
			line := string(lx.rs[lx.i:end])
			if end < len(lx.rs) {
				lx.line++
			}
			lx.i = min(end+1, len(lx.rs))
			if d.stripTabs {
				line = strings.TrimLeft(line, "\t")
			}
			if line == d.delim {
				found = true
				break
			}
			body.WriteString(line + "\n")
		}
		if !found {
			lx.warnings = append(lx.warnings, fmt.Sprintf("bash: line %d: warning: here-document at line %d delimited by end-of-file (wanted `%s')",
				lx.line, d.line, d.delim))
		}
		d.body = body.String()
	}
	lx.docs = nil
}

// isWordEnd reports whether r ends an unquoted word.
func isWordEnd(r rune) bool {
	return strings.ContainsRune(" \t\r\n;&|()<>", r)
}

func (lx *lexer) word() (token, *syntaxError) {
	start, line := lx.i, lx.line
	var (
		w   word
		lit strings.Builder
	)
	flush := func() {
		if lit.Len() > 0 {
			w = append(w, wordPart{text: lit.String()})
			lit.Reset()
		}
	}
	done := func() (token, *syntaxError) {
		flush()
		return token{kind: tWord, w: markBraceExpansion(w), line: line, start: start, end: lx.i}, nil
	}
	for lx.i < len(lx.rs) {
		c := lx.rs[lx.i]
		switch {
		case c == '>' || c == '<':
			// "2>" and "1>": a lone digit right before the operator is the
			// descriptor it redirects.
			if len(w) == 0 && lit.Len() == 1 && lit.String()[0] >= '0' && lit.String()[0] <= '9' {
				return lx.redir(start, int(lit.String()[0]-'0'), true)
			}
			return done()
		case isWordEnd(c):
			return done()
		case c == '\'':
			flush()
			j := lx.i + 1
			for j < len(lx.rs) && lx.rs[j] != '\'' {
				if lx.rs[j] == '\n' {
					lx.line++
				}
				j++
			}
			if j == len(lx.rs) {
				return token{}, lx.errorf("unexpected EOF while looking for matching `''")
			}
			w = append(w, wordPart{text: string(lx.rs[lx.i+1 : j]), quoted: true})
			lx.i = j + 1
		case c == '"':
			flush()
			if err := lx.doubleQuoted(&w); err != nil {
				return token{}, err
			}
		case c == '\\':
			if lx.i+1 < len(lx.rs) {
				if lx.rs[lx.i+1] == '\n' { // a line continuation
					lx.line++
				} else {
					flush()
					w = append(w, wordPart{text: string(lx.rs[lx.i+1]), quoted: true})
				}
				lx.i += 2
				continue
			}
			lx.i++
		case c == '$' || c == '`':
			p, n, err := lx.dollar(lx.i, false)
			if err != nil {
				return token{}, err
			}
			if n == 0 {
				lit.WriteRune('$')
				lx.i++
				continue
			}
			flush()
			w = append(w, p)
			lx.countLines(lx.i, lx.i+n)
			lx.i += n
		default:
			lit.WriteRune(c)
			lx.i++
		}
	}
	return done()
}

// doubleQuoted reads "..." at lx.i into w.
func (lx *lexer) doubleQuoted(w *word) *syntaxError {
	var q strings.Builder
	j := lx.i + 1
	for ; j < len(lx.rs) && lx.rs[j] != '"'; j++ {
		switch {
		case lx.rs[j] == '\\' && j+1 < len(lx.rs) && strings.ContainsRune("\\\"$`\n", lx.rs[j+1]):
			j++
			if lx.rs[j] != '\n' {
				q.WriteRune(lx.rs[j])
			} else {
				lx.line++
			}
		case lx.rs[j] == '$' || lx.rs[j] == '`':
			p, n, err := lx.dollar(j, true)
			if err != nil {
				return err
			}
			if n > 0 {
				*w = append(*w, wordPart{text: q.String(), quoted: true}, p)
				q.Reset()
				lx.countLines(j, j+n)
				j += n - 1
				continue
			}
			q.WriteRune('$')
		default:
			if lx.rs[j] == '\n' {
				lx.line++
			}
			q.WriteRune(lx.rs[j])
		}
	}
	if j == len(lx.rs) {
		return lx.errorf("unexpected EOF while looking for matching `\"'")
	}
	*w = append(*w, wordPart{text: q.String(), quoted: true})
	lx.i = j + 1
	return nil
}

// dollar lexes the "$…" or "`…`" at rs[at]: a parameter expansion, an
// unsupported construct (its whole source), or n == 0 for a literal "$".
func (lx *lexer) dollar(at int, quoted bool) (wordPart, int, *syntaxError) {
	rs := lx.rs[at:]
	unsupported := func(what string, n int) (wordPart, int, *syntaxError) {
		src := string(rs[:n])
		return wordPart{text: src, quoted: true, unsupported: what + ` "` + clipSource(src) + `"`}, n, nil
	}
	if rs[0] == '`' {
		for j := 1; j < len(rs); j++ {
			switch rs[j] {
			case '\\':
				j++
			case '`':
				return unsupported("command substitution", j+1)
			}
		}
		return wordPart{}, 0, lx.errorf("unexpected EOF while looking for matching ``'")
	}
	if p, n, ok := expansion(rs, quoted); ok {
		return p, n, nil
	}
	if len(rs) < 2 {
		return wordPart{}, 0, nil
	}
	switch c := rs[1]; {
	case c == '(':
		end := matchClose(rs, 1)
		if end < 0 {
			return wordPart{}, 0, lx.errorf("unexpected EOF while looking for matching `)'")
		}
		if len(rs) > 2 && rs[2] == '(' {
			return unsupported("arithmetic expansion", end+1)
		}
		return unsupported("command substitution", end+1)
	case c == '{':
		end := matchClose(rs, 1)
		if end < 0 {
			return wordPart{}, 0, lx.errorf("unexpected EOF while looking for matching `}'")
		}
		return unsupported("parameter expansion", end+1)
	case strings.ContainsRune("@*#-0123456789", c):
		return unsupported("the special parameter", 2)
	case c == '\'' && !quoted:
		for j := 2; j < len(rs); j++ {
			switch rs[j] {
			case '\\':
				j++
			case '\'':
				return unsupported("ANSI-C quoting", j+1)
			}
		}
		return wordPart{}, 0, lx.errorf("unexpected EOF while looking for matching `''")
	case c == '"' && !quoted:
		for j := 2; j < len(rs); j++ {
			switch rs[j] {
			case '\\':
				j++
			case '"':
				return unsupported("locale translation", j+1)
			}
		}
		return wordPart{}, 0, lx.errorf("unexpected EOF while looking for matching `\"'")
	}
	return wordPart{}, 0, nil
}

// expansion parses a plain "$..." at rs[0] ($NAME, ${NAME}, $?, $$, $!);
// it returns the part and how many runes it took, or ok false.
func expansion(rs []rune, quoted bool) (wordPart, int, bool) {
	if len(rs) < 2 {
		return wordPart{}, 0, false
	}
	switch c := rs[1]; {
	case c == '?' || c == '$' || c == '!':
		return wordPart{varName: string(c), quoted: quoted}, 2, true
	case c == '{':
		j := 2
		for j < len(rs) && isNameRune(rs[j], j == 2) {
			j++
		}
		if j < len(rs) && rs[j] == '}' && j > 2 {
			return wordPart{varName: string(rs[2:j]), quoted: quoted}, j + 1, true
		}
	case isNameRune(c, true):
		j := 1
		for j < len(rs) && isNameRune(rs[j], j == 1) {
			j++
		}
		return wordPart{varName: string(rs[1:j]), quoted: quoted}, j, true
	}
	return wordPart{}, 0, false
}

// braceExpansion finds what bash would brace-expand in unquoted text:
// "{a,b}" or "{1..3}".
var braceExpansion = regexp.MustCompile(`\{[^{}\s]*(,|\.\.)[^{}\s]*\}`)

// markBraceExpansion adds an unsupported part to a word whose unquoted
// text bash would brace-expand.
func markBraceExpansion(w word) word {
	for _, p := range w {
		if p.quoted || p.varName != "" || p.unsupported != "" {
			continue
		}
		if m := braceExpansion.FindString(p.text); m != "" {
			return append(w, wordPart{unsupported: `brace expansion "` + m + `"`, quoted: true})
		}
	}
	return w
}

func isNameRune(r rune, first bool) bool {
	return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (!first && r >= '0' && r <= '9')
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !isNameRune(r, i == 0) {
			return false
		}
	}
	return true
}
