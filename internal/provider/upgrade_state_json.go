package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// UpgradeResourceState hands a state that is already at its schema's
// version back to Terraform as the JSON Terraform sent, when that JSON
// holds nothing the schema lacks (stateFitsType); anything else (an older
// version, a flatmap state, an attribute an earlier release had) goes to
// the framework's server unchanged.
//
// Why: Terraform upgrades every resource's state before each plan, refresh
// and destroy, and at the current version the framework only decodes the
// JSON into a tftypes.Value (dropping attributes the schema lacks) and
// encodes it again as msgpack. For a fleet of 3,000 members that round
// trip was 7 % of the provider's CPU over an apply, refresh, plan and
// destroy, on the critical path of every one of them (the fleet is one
// resource). Terraform decodes a JSON-encoded upgraded state as it decodes
// the msgpack one (plugin6's decodeDynamicValue, Terraform 1.11 to 1.15 and
// OpenTofu), and the JSON is what it wrote to state, so numbers keep their
// precision as well.
func (s *jsonReadStateServer) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	if req != nil && req.RawState != nil && len(req.RawState.JSON) > 0 && req.RawState.Flatmap == nil {
		typ, version := s.resourceType(ctx, req.TypeName), s.schemaVersion(ctx, req.TypeName)
		if typ != nil && req.Version == version && stateFitsType(req.RawState.JSON, typ) {
			return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &tfprotov6.DynamicValue{JSON: req.RawState.JSON}}, nil
		}
	}
	return s.frameworkServer.UpgradeResourceState(ctx, req)
}

// stateFitsType reports whether js is one JSON value that decodes as typ
// exactly as it stands: every object attribute one that typ has, every
// value of the kind its type wants (or null). It says false to anything
// unusual (a dynamic type, a number written as a string, an escaped
// attribute name), which the framework then decodes in its own way.
func stateFitsType(js []byte, typ tftypes.Type) bool {
	if !json.Valid(js) {
		return false
	}
	sc := jsonScanner{b: js}
	if !sc.value(typ) {
		return false
	}
	sc.space()
	return sc.i == len(sc.b)
}

// jsonScanner walks JSON that json.Valid accepted, checking it against a
// type without building any value.
type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// next is the next byte after white space, or 0 at the end.
func (s *jsonScanner) next() byte {
	s.space()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// literal consumes lit if it comes next.
func (s *jsonScanner) literal(lit string) bool {
	if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		s.i += len(lit)
		return true
	}
	return false
}

// str consumes a string and returns its contents, raw; escaped is true
// when it holds an escape (its raw bytes are then not its value).
func (s *jsonScanner) str() (raw []byte, escaped, ok bool) {
	if s.next() != '"' {
		return nil, false, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			escaped = true
			j++ // the escaped byte (json.Valid checked the escape)
		case '"':
			s.i = j + 1
			return s.b[start:j], escaped, true
		}
	}
	return nil, false, false
}

// number consumes a number.
func (s *jsonScanner) number() bool {
	c := s.next()
	if c != '-' && (c < '0' || c > '9') {
		return false
	}
	for s.i < len(s.b) && strings.IndexByte("+-.eE0123456789", s.b[s.i]) >= 0 {
		s.i++
	}
	return true
}

// value consumes one value of type typ (or null).
func (s *jsonScanner) value(typ tftypes.Type) bool {
	if s.next() == 'n' {
		return s.literal("null")
	}
	switch t := typ.(type) {
	case tftypes.Object:
		return s.members(func(name []byte, escaped bool) (tftypes.Type, bool) {
			at, ok := t.AttributeTypes[string(name)]
			return at, ok && !escaped
		})
	case tftypes.Map:
		return s.members(func([]byte, bool) (tftypes.Type, bool) { return t.ElementType, true })
	case tftypes.List:
		_, ok := s.elements(func(int) (tftypes.Type, bool) { return t.ElementType, true })
		return ok
	case tftypes.Set:
		_, ok := s.elements(func(int) (tftypes.Type, bool) { return t.ElementType, true })
		return ok
	case tftypes.Tuple:
		n, ok := s.elements(func(i int) (tftypes.Type, bool) {
			if i >= len(t.ElementTypes) {
				return nil, false
			}
			return t.ElementTypes[i], true
		})
		return ok && n == len(t.ElementTypes)
	}
	switch {
	case typ.Is(tftypes.String):
		_, _, ok := s.str()
		return ok
	case typ.Is(tftypes.Number):
		return s.number()
	case typ.Is(tftypes.Bool):
		return s.literal("true") || s.literal("false")
	}
	return false // a dynamic type: its JSON carries its type as well
}

// members consumes an object whose members' types come from typeOf.
func (s *jsonScanner) members(typeOf func(name []byte, escaped bool) (tftypes.Type, bool)) bool {
	if s.next() != '{' {
		return false
	}
	s.i++
	if s.next() == '}' {
		s.i++
		return true
	}
	for {
		name, escaped, ok := s.str()
		if !ok {
			return false
		}
		typ, ok := typeOf(name, escaped)
		if !ok || s.next() != ':' {
			return false
		}
		s.i++
		if !s.value(typ) {
			return false
		}
		switch s.next() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// elements consumes an array whose elements' types come from typeOf and
// returns how many it held.
func (s *jsonScanner) elements(typeOf func(i int) (tftypes.Type, bool)) (int, bool) {
	if s.next() != '[' {
		return 0, false
	}
	s.i++
	if s.next() == ']' {
		s.i++
		return 0, true
	}
	for i := 0; ; i++ {
		typ, ok := typeOf(i)
		if !ok || !s.value(typ) {
			return 0, false
		}
		switch s.next() {
		case ',':
			s.i++
		case ']':
			s.i++
			return i + 1, true
		default:
			return 0, false
		}
	}
}
