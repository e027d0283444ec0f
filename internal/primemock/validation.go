package primemock

// Validation errors (422) in the platform's shapes. Every current
// operation declares 422 as FastAPI's HTTPValidationError, {"detail":
// [{"loc", "msg", "type"}]} [OA]; the API overview describes {"errors":
// [{"param", "details"}]} instead [OA overview]. The mock answers the first
// by default; Options.ValidationErrors selects the second, or the plain
// {"detail": "..."} string older mocks answered, for clients that must read
// all three.

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// The ValidationErrors values.
const (
	// ValidationList is FastAPI's {"detail": [{"loc", "msg", "type"}]}.
	ValidationList = "list"
	// ValidationErrorsForm is the overview's {"errors": [{"param", "details"}]}.
	ValidationErrorsForm = "errors"
	// ValidationString is {"detail": "<message>"}.
	ValidationString = "string"
)

func validValidationForm(v string) bool {
	switch v {
	case "", ValidationList, ValidationErrorsForm, ValidationString:
		return true
	}
	return false
}

// issue is one validation error: where (loc, FastAPI's path into the
// request: "body" or "query", then keys and indexes), what and its
// pydantic error type.
type issue struct {
	loc []any
	msg string
	typ string
}

// fieldPrefix reads the "field: message" the mock's refusals start with:
// a key path such as "name", "rules[0].ports" or "jobs[2].sandbox_id".
var fieldPrefix = regexp.MustCompile(`^([a-z_][a-z0-9_]*(?:\[\d+\])?(?:\.[a-z_][a-z0-9_]*(?:\[\d+\])?)*): (.+)$`)

var indexPart = regexp.MustCompile(`^([a-z_][a-z0-9_]*)\[(\d+)\]$`)

// issueOf turns a refusal's message into a validation error. root is
// "body" or "query". [I: validation-loc] The platform's loc and type for a
// rule only the SDK or a guide states are not published: the mock derives
// loc from the field the message names (the body or query alone when it
// names none) and the type from pydantic's wording.
func issueOf(root, msg string) issue {
	loc := []any{root}
	if m := fieldPrefix.FindStringSubmatch(msg); m != nil && !strings.Contains(m[1], " ") {
		for _, part := range strings.Split(m[1], ".") {
			if im := indexPart.FindStringSubmatch(part); im != nil {
				n, _ := strconv.Atoi(im[2])
				loc = append(loc, im[1], n)
				continue
			}
			loc = append(loc, part)
		}
		msg = m[2]
	}
	return issue{loc: loc, msg: msg, typ: pydanticType(msg)}
}

// pydanticType is the error type pydantic gives a message of this wording.
func pydanticType(msg string) string {
	for _, t := range []struct{ words, typ string }{
		{"Field required", "missing"},
		{"String should have at least", "string_too_short"},
		{"String should have at most", "string_too_long"},
		{"String should match pattern", "string_pattern_mismatch"},
		{"Input should be a valid integer", "int_parsing"},
		{"Input should be less than or equal to", "less_than_equal"},
		{"Input should be greater than or equal to", "greater_than_equal"},
		{"Input should be greater than", "greater_than"},
		{"Input should be a valid list", "list_type"},
		{"Input should be a valid dictionary", "dict_type"},
		{"Input should be '", "enum"},
		{"invalid JSON", "json_invalid"},
		{"JSON body is required", "missing"},
	} {
		if strings.Contains(msg, t.words) {
			return t.typ
		}
	}
	return "value_error"
}

// validationBody renders issues in form.
func validationBody(form string, issues []issue) any {
	switch form {
	case ValidationString:
		msgs := make([]string, len(issues))
		for i, is := range issues {
			msgs[i] = paramOf(is.loc) + ": " + is.msg
			if len(is.loc) == 1 {
				msgs[i] = is.msg
			}
		}
		return detail(strings.Join(msgs, "; "))
	case ValidationErrorsForm:
		errs := make([]map[string]any, len(issues))
		for i, is := range issues {
			errs[i] = map[string]any{"param": paramOf(is.loc), "details": is.msg}
		}
		return map[string]any{"errors": errs}
	}
	items := make([]map[string]any, len(issues))
	for i, is := range issues {
		items[i] = map[string]any{"loc": is.loc, "msg": is.msg, "type": is.typ}
	}
	return map[string]any{"detail": items}
}

// paramOf is a loc without its root, dotted ("rules.0.ports").
func paramOf(loc []any) string {
	parts := make([]string, 0, len(loc))
	for _, l := range loc[min(1, len(loc)):] {
		switch v := l.(type) {
		case string:
			parts = append(parts, v)
		case int:
			parts = append(parts, strconv.Itoa(v))
		}
	}
	return strings.Join(parts, ".")
}

// asValidation rewrites a 422 reply whose body is the mock's {"detail":
// "<message>"} into the configured form; a request that carries no body
// (GET) was refused for its query.
func (s *Server) asValidation(r *http.Request, rep reply) reply {
	if rep.status != http.StatusUnprocessableEntity || rep.plain {
		return rep
	}
	m, ok := rep.body.(map[string]any)
	if !ok {
		return rep
	}
	msg, ok := m["detail"].(string)
	if !ok || len(m) != 1 {
		return rep
	}
	root := "body"
	if r.Method == http.MethodGet || (r.Method == http.MethodDelete && r.ContentLength <= 0) {
		root = "query"
	}
	s.mu.Lock()
	form := s.opts.ValidationErrors
	s.mu.Unlock()
	rep.body = validationBody(form, []issue{issueOf(root, msg)})
	return rep
}
