package primemock

// The shell's parser: a tokenizer and a small recursive-descent parser for
// the part of bash's grammar the mock interprets (see the package
// documentation, "Shell language").

import (
	"fmt"
	"strings"
)

// wordPart is a piece of a word: literal text, or a parameter expansion.
type wordPart struct {
	text string
	// varName is non-empty for "$NAME", "${NAME}", "$?", "$$" and "$!".
	varName string
	quoted  bool // from inside quotes: never split into fields
}

type word []wordPart

type redirKind uint8

const (
	redirOut    redirKind = iota + 1 // [n]>FILE
	redirAppend                      // [n]>>FILE
	redirIn                          // [n]<FILE
	redirDup                         // [n]>&WORD, [n]<&WORD: a descriptor, or "-" to close
	redirBoth                        // &>FILE (append: &>>FILE)
)

// redirect is one redirection; they apply left to right.
type redirect struct {
	fd       int // 0-9; ignored for redirBoth
	explicit bool
	kind     redirKind
	append   bool // redirBoth only
	target   word
}

// command is a simple command, or a subshell "( list )" with its
// redirections.
type command struct {
	words  []word
	redirs []redirect
	// sub is the subshell's list when isSub.
	sub   []andOr
	isSub bool
	// op joins it to the previous command of its and-or list: "", "&&" or
	// "||".
	op   string
	line int // the script line it starts on (1-based)
	// negate: "! command" inverts its status.
	negate bool
}

// andOr is commands joined by "&&" and "||" (equal precedence, left to
// right), run in the background when it ends with "&".
type andOr struct {
	cmds  []command
	async bool
	// logical is the line its top-level list began on: a syntax error
	// stops the script from that list on, as bash reads a line at a time.
	logical int
	src     string // its source text (for background process events)
}

// syntaxError is bash's refusal of a line: nothing from that line on runs.
type syntaxError struct {
	logical int
	msg     string
}

type tokKind uint8

const (
	tWord tokKind = iota + 1
	tNewline
	tSemi
	tAnd  // &&
	tOr   // ||
	tAmp  // &
	tOpen // (
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
// start of a word comments out the rest of the line. "|" is an ordinary
// character (pipes are not interpreted).
type lexer struct {
	rs   []rune
	i    int
	line int
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
	case c == '(':
		return lx.op(tOpen, "(")
	case c == ')':
		return lx.op(tClose, ")")
	case c == '>' || c == '<':
		return lx.redir(lx.i, 0, false)
	}
	return lx.word()
}

// redir reads a redirection operator at lx.i (fd is an explicit descriptor
// written before it).
func (lx *lexer) redir(start, fd int, explicit bool) (token, *syntaxError) {
	c := lx.rs[lx.i]
	r := redirect{fd: fd, explicit: explicit}
	text := string(c)
	lx.i++
	switch {
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

// isWordEnd reports whether r ends an unquoted word.
func isWordEnd(r rune) bool {
	return strings.ContainsRune(" \t\r\n;&()<>", r)
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
	for lx.i < len(lx.rs) {
		c := lx.rs[lx.i]
		switch {
		case c == '>' || c == '<':
			// "2>" and "1>": a lone digit right before the operator is the
			// descriptor it redirects.
			if len(w) == 0 && lit.Len() == 1 && lit.String()[0] >= '0' && lit.String()[0] <= '9' {
				return lx.redir(start, int(lit.String()[0]-'0'), true)
			}
			flush()
			return token{kind: tWord, w: w, line: line, start: start, end: lx.i}, nil
		case isWordEnd(c):
			flush()
			return token{kind: tWord, w: w, line: line, start: start, end: lx.i}, nil
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
					lit.WriteRune(lx.rs[lx.i+1])
				}
				lx.i += 2
				continue
			}
			lx.i++
		case c == '$':
			if p, n, ok := expansion(lx.rs[lx.i:], false); ok {
				flush()
				w = append(w, p)
				lx.i += n
				continue
			}
			lit.WriteRune('$')
			lx.i++
		default:
			lit.WriteRune(c)
			lx.i++
		}
	}
	flush()
	return token{kind: tWord, w: w, line: line, start: start, end: lx.i}, nil
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
		case lx.rs[j] == '$':
			if p, n, ok := expansion(lx.rs[j:], true); ok {
				*w = append(*w, wordPart{text: q.String(), quoted: true}, p)
				q.Reset()
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

// expansion parses a "$..." at rs[0]; it returns the part and how many
// runes it took, or ok false for a literal "$".
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

// parser builds the and-or lists of a script.
type parser struct {
	lx      *lexer
	tok     token
	src     []rune
	logical int
	lastEnd int // where the last word or ")" of the command ended
}

// parseScript parses a script into its top-level and-or lists. On a
// syntax error it returns what was parsed and the error, whose logical
// line tells the interpreter where to stop.
func parseScript(src string) ([]andOr, *syntaxError) {
	p := &parser{lx: &lexer{rs: []rune(src), line: 1}, src: []rune(src), logical: 1}
	list, err := p.parse()
	if err != nil && err.logical == 0 {
		err.logical = p.logical
	}
	return list, err
}

func (p *parser) parse() ([]andOr, *syntaxError) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	list, err := p.list(true)
	if err != nil {
		return list, err
	}
	if p.tok.kind != tEOF { // a stray ")"
		return list, p.unexpected()
	}
	return list, nil
}

func (p *parser) advance() *syntaxError {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) unexpected() *syntaxError {
	switch p.tok.kind {
	case tEOF:
		return &syntaxError{msg: fmt.Sprintf("bash: -c: line %d: syntax error: unexpected end of file", p.tok.line)}
	case tWord:
		return &syntaxError{msg: fmt.Sprintf("bash: -c: line %d: syntax error near unexpected token `%s'", p.tok.line, string(p.src[p.tok.start:p.tok.end]))}
	}
	return &syntaxError{msg: fmt.Sprintf("bash: -c: line %d: syntax error near unexpected token `%s'", p.tok.line, p.tok.text)}
}

// list parses and-or lists separated by ";", "&" and newlines, up to the
// end of the script (top) or a ")".
func (p *parser) list(top bool) ([]andOr, *syntaxError) {
	var out []andOr
	for {
		switch p.tok.kind {
		case tEOF:
			return out, nil
		case tClose:
			if top {
				return out, p.unexpected()
			}
			return out, nil
		case tNewline:
			if top {
				p.logical = p.tok.line + 1
			}
			if err := p.advance(); err != nil {
				return out, err
			}
			continue
		case tSemi:
			// [guess] A stray ";" is an empty command (bash refuses it).
			if err := p.advance(); err != nil {
				return out, err
			}
			continue
		}
		ao, err := p.andOr()
		if err != nil {
			return out, err
		}
		switch p.tok.kind {
		case tAmp:
			ao.async = true
			if err := p.advance(); err != nil {
				return out, err
			}
		case tSemi:
			if err := p.advance(); err != nil {
				return out, err
			}
		case tNewline, tEOF, tClose:
		default:
			return out, p.unexpected()
		}
		out = append(out, ao)
	}
}

func (p *parser) andOr() (andOr, *syntaxError) {
	ao := andOr{logical: p.logical}
	start := p.tok.start
	end := start
	op := ""
	for {
		c, err := p.command()
		if err != nil {
			return ao, err
		}
		c.op = op
		ao.cmds = append(ao.cmds, c)
		end = p.lastEnd
		if p.tok.kind != tAnd && p.tok.kind != tOr {
			break
		}
		op = p.tok.text
		if err := p.advance(); err != nil {
			return ao, err
		}
		for p.tok.kind == tNewline { // the list goes on after "&&" or "||"
			if err := p.advance(); err != nil {
				return ao, err
			}
		}
	}
	ao.src = strings.TrimSpace(string(p.src[start:end]))
	return ao, nil
}

func (p *parser) command() (command, *syntaxError) {
	c := command{line: p.tok.line}
	if p.tok.kind == tWord && len(p.tok.w) == 1 && p.tok.w[0].text == "!" && !p.tok.w[0].quoted {
		c.negate = true
		if err := p.advance(); err != nil {
			return c, err
		}
	}
	if p.tok.kind == tOpen {
		if err := p.advance(); err != nil {
			return c, err
		}
		if p.tok.kind == tClose {
			return c, p.unexpected()
		}
		sub, err := p.list(false)
		if err != nil {
			return c, err
		}
		if p.tok.kind != tClose {
			return c, p.unexpected()
		}
		c.sub, c.isSub = sub, true
		p.lastEnd = p.tok.end
		if err := p.advance(); err != nil {
			return c, err
		}
		for p.tok.kind == tRedir {
			if err := p.redirect(&c); err != nil {
				return c, err
			}
		}
		if p.tok.kind == tWord || p.tok.kind == tOpen {
			return c, p.unexpected()
		}
		return c, nil
	}
	for {
		switch p.tok.kind {
		case tWord:
			c.words = append(c.words, p.tok.w)
			p.lastEnd = p.tok.end
			if err := p.advance(); err != nil {
				return c, err
			}
			continue
		case tRedir:
			if err := p.redirect(&c); err != nil {
				return c, err
			}
			continue
		}
		break
	}
	if len(c.words) == 0 && len(c.redirs) == 0 {
		return c, p.unexpected()
	}
	if p.tok.kind == tOpen {
		return c, p.unexpected()
	}
	return c, nil
}

func (p *parser) redirect(c *command) *syntaxError {
	r := p.tok.r
	if err := p.advance(); err != nil {
		return err
	}
	switch p.tok.kind {
	case tWord:
	case tEOF:
		return &syntaxError{msg: fmt.Sprintf("bash: -c: line %d: syntax error near unexpected token `newline'", p.tok.line)}
	default:
		return p.unexpected()
	}
	r.target = p.tok.w
	p.lastEnd = p.tok.end
	c.redirs = append(c.redirs, r)
	return p.advance()
}
