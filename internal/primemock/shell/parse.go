package shell

// The shell's parser: a small recursive-descent parser for the part of
// bash's grammar the mock interprets (see the package documentation,
// "Shell language"; the lexer is shell_lex.go). Compound commands,
// function definitions and array assignments are parsed over, to their
// end, into a command that is refused when it runs.

import (
	"fmt"
	"strings"
)

type redirKind uint8

const (
	redirOut        redirKind = iota + 1 // [n]>FILE
	redirAppend                          // [n]>>FILE
	redirIn                              // [n]<FILE
	redirDup                             // [n]>&WORD, [n]<&WORD: a descriptor, or "-" to close
	redirBoth                            // &>FILE (append: &>>FILE)
	redirHeredoc                         // [n]<<WORD, [n]<<-WORD
	redirHereString                      // [n]<<<WORD
)

// redirect is one redirection; they apply left to right.
type redirect struct {
	fd       int // 0-9; ignored for redirBoth
	explicit bool
	kind     redirKind
	append   bool // redirBoth only
	target   word
	doc      *hereDoc // redirHeredoc only
}

// command is a simple command, a subshell "( list )" with its
// redirections, or a pipeline of such commands.
type command struct {
	words  []word
	redirs []redirect
	// sub is the subshell's list when isSub.
	sub   []andOr
	isSub bool
	// stages are a pipeline's commands, when there are two or more.
	stages []command
	// unsupported names the construct the mock does not interpret that
	// this command is (a loop, a function definition, ...).
	unsupported string
	// op joins it to the previous command of its and-or list: "", "&&" or
	// "||".
	op   string
	line int // the script line it starts on (1-based)
	// negate: "! pipeline" inverts its status.
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
	list, err, _ := parseWithWarnings(src)
	return list, err
}

// parseWithWarnings is parseScript with bash's parse-time warnings.
func parseWithWarnings(src string) ([]andOr, *syntaxError, []string) {
	p := &parser{lx: &lexer{rs: []rune(src), line: 1}, src: []rune(src), logical: 1}
	list, err := p.parse()
	if err != nil && err.logical == 0 {
		err.logical = p.logical
	}
	return list, err, p.lx.warnings
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
			// [I: stray-semicolon] A stray ";" is an empty command (bash refuses it).
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
		c, err := p.pipeline()
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

// pipeline parses "[!] command [| command]...": "|&" is "2>&1 |", and a
// pipeline goes on after a newline that follows "|".
func (p *parser) pipeline() (command, *syntaxError) {
	line := p.tok.line
	negate := false
	if p.tok.kind == tWord && plainWord(p.tok.w) == "!" {
		negate = true
		if err := p.advance(); err != nil {
			return command{}, err
		}
	}
	var stages []command
	for {
		c, err := p.command()
		if err != nil {
			return c, err
		}
		stages = append(stages, c)
		if p.tok.kind != tPipe && p.tok.kind != tPipeAmp {
			break
		}
		if p.tok.kind == tPipeAmp {
			last := &stages[len(stages)-1]
			last.redirs = append(last.redirs, redirect{fd: 2, explicit: true, kind: redirDup, target: word{{text: "1"}}})
		}
		if err := p.advance(); err != nil {
			return c, err
		}
		for p.tok.kind == tNewline {
			if err := p.advance(); err != nil {
				return c, err
			}
		}
	}
	c := stages[0]
	if len(stages) > 1 {
		c = command{stages: stages, line: line}
	}
	c.negate = negate
	return c, nil
}

// plainWord is a word's text when it is one unquoted literal (how
// reserved words are recognised), else "".
func plainWord(w word) string {
	if len(w) != 1 || w[0].quoted || w[0].varName != "" || w[0].unsupported != "" {
		return ""
	}
	return w[0].text
}

func (p *parser) command() (command, *syntaxError) {
	c := command{line: p.tok.line}
	if p.tok.kind == tWord {
		if what, found := reservedWords[plainWord(p.tok.w)]; found {
			return p.compound(c, what)
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
		return p.openAfterWords(c)
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
	if r.doc != nil {
		// The body starts after the newline that ends this line: the
		// lexer reads it when it gets there.
		d := *r.doc
		for _, part := range r.target {
			d.delim += part.text
			if part.varName != "" {
				d.delim += "$" + part.varName
			}
			d.quoted = d.quoted || part.quoted
		}
		r.doc = &d
		p.lx.docs = append(p.lx.docs, r.doc)
	}
	c.redirs = append(c.redirs, r)
	return p.advance()
}

// reservedWords are the words that open (or belong to) bash's compound
// commands, none of which the mock interprets: each maps to how a refusal
// names it.
var reservedWords = map[string]string{
	"if": `the "if" statement`, "then": `the "if" statement`, "elif": `the "if" statement`,
	"else": `the "if" statement`, "fi": `the "if" statement`,
	"for": `the "for" loop`, "while": `the "while" loop`, "until": `the "until" loop`,
	"select": `the "select" loop`, "do": "loops", "done": "loops",
	"case": `the "case" statement`, "esac": `the "case" statement`,
	"{": `brace groups "{ …; }"`, "}": `brace groups "{ …; }"`,
	"[[": `the "[[ … ]]" test`, "]]": `the "[[ … ]]" test`,
	"function": "function definitions",
	"time":     `the "time" keyword`, "coproc": `the "coproc" keyword`,
}

// compoundEnds maps the words that open a compound command to the word
// that closes it.
var compoundEnds = map[string]string{
	"if": "fi", "for": "done", "while": "done", "until": "done", "select": "done",
	"case": "esac", "{": "}", "[[": "]]",
}

// compound parses over a command that starts with a reserved word: a
// compound command to its closing word and the redirections after it, a
// function definition to the end of its body, "time" and "coproc" to the
// end of their pipeline's first command. The command is refused when it
// runs; parsing goes on after it, so that what precedes it runs and a
// subshell holding it still ends.
func (p *parser) compound(c command, what string) (command, *syntaxError) {
	c.unsupported = what
	opener := plainWord(p.tok.w)
	p.lastEnd = p.tok.end
	if err := p.advance(); err != nil {
		return c, err
	}
	switch {
	case opener == "function":
		return p.functionBody(c)
	case compoundEnds[opener] == "":
		// "time", "coproc" or a stray closer: the rest is ordinary words.
		for p.tok.kind == tWord || p.tok.kind == tRedir {
			if err := p.skipToken(&c); err != nil {
				return c, err
			}
		}
		return c, nil
	}
	if err := p.skipCompound(&c, compoundEnds[opener]); err != nil {
		return c, err
	}
	for p.tok.kind == tRedir {
		if err := p.redirect(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// skipCompound skips tokens up to and including the word end, counting
// nested compound commands and parentheses (a ")" without its "(", such
// as a case pattern's, is skipped).
func (p *parser) skipCompound(c *command, end string) *syntaxError {
	stack := []string{end}
	for len(stack) > 0 {
		switch p.tok.kind {
		case tEOF:
			return p.unexpected()
		case tOpen:
			stack = append(stack, ")")
		case tClose:
			if stack[len(stack)-1] == ")" {
				stack = stack[:len(stack)-1]
			}
		case tWord:
			w := plainWord(p.tok.w)
			if closer, opens := compoundEnds[w]; opens {
				stack = append(stack, closer)
			} else if w == stack[len(stack)-1] {
				stack = stack[:len(stack)-1]
			}
		}
		if err := p.skipToken(c); err != nil {
			return err
		}
	}
	return nil
}

// skipToken moves past one token; a redirection takes its target with it,
// and a here-document's body is read as a here-document.
func (p *parser) skipToken(c *command) *syntaxError {
	if p.tok.kind == tRedir {
		var ignored command
		return p.redirect(&ignored)
	}
	p.lastEnd = p.tok.end
	return p.advance()
}

// functionBody skips "NAME [()]" and the compound command (or subshell)
// that is the function's body.
func (p *parser) functionBody(c command) (command, *syntaxError) {
	c.unsupported = "function definitions"
	if p.tok.kind == tWord {
		if err := p.skipToken(&c); err != nil {
			return c, err
		}
	}
	if p.tok.kind == tOpen {
		if err := p.advance(); err != nil {
			return c, err
		}
		if p.tok.kind != tClose {
			return c, p.unexpected()
		}
		p.lastEnd = p.tok.end
		if err := p.advance(); err != nil {
			return c, err
		}
	}
	for p.tok.kind == tNewline {
		if err := p.advance(); err != nil {
			return c, err
		}
	}
	switch {
	case p.tok.kind == tOpen:
		if err := p.advance(); err != nil {
			return c, err
		}
		if err := p.skipCompound(&c, ")"); err != nil {
			return c, err
		}
	case p.tok.kind == tWord && compoundEnds[plainWord(p.tok.w)] != "":
		end := compoundEnds[plainWord(p.tok.w)]
		if err := p.skipToken(&c); err != nil {
			return c, err
		}
		if err := p.skipCompound(&c, end); err != nil {
			return c, err
		}
	default:
		return c, p.unexpected()
	}
	for p.tok.kind == tRedir {
		if err := p.redirect(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// openAfterWords handles a "(" after a command's words: "NAME ()" starts a
// function definition and "NAME=(" an array assignment, both refused when
// they run; anything else is bash's syntax error.
func (p *parser) openAfterWords(c command) (command, *syntaxError) {
	last := c.words[len(c.words)-1]
	switch {
	case len(c.words) == 1 && len(c.redirs) == 0 && plainWord(last) != "" && !strings.Contains(plainWord(last), "="):
		return p.functionBody(c)
	case strings.HasSuffix(plainWord(last), "=") && validName(strings.TrimSuffix(plainWord(last), "=")):
		c.unsupported = "array assignments"
		if err := p.advance(); err != nil {
			return c, err
		}
		if err := p.skipCompound(&c, ")"); err != nil {
			return c, err
		}
		return c, nil
	}
	return c, p.unexpected()
}
