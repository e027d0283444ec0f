package prime

// The one time codec: the platform's timestamps, with or without a zone, as
// the SDK reads them, for every type the client decodes.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// isoTimeLayouts are the ISO 8601 forms Python's datetime.isoformat writes,
// with and without a zone; fractional seconds are accepted by time.Parse
// after the seconds field whatever the layout says.
var isoTimeLayouts = []struct {
	layout string
	zoned  bool
}{
	{"2006-01-02T15:04:05Z07:00", true},
	{"2006-01-02T15:04:05", false},
	{"2006-01-02 15:04:05Z07:00", true},
	{"2006-01-02 15:04:05", false},
}

// ParseISOTime reads an RFC 3339 / ISO 8601 timestamp with or without a
// zone and with or without fractional seconds. A value without a zone is
// UTC, as the SDK reads it (datetime.fromisoformat, then tzinfo=UTC when
// none); a value with a zone keeps its offset.
func ParseISOTime(s string) (time.Time, error) {
	for _, l := range isoTimeLayouts {
		t, err := time.Parse(l.layout, s)
		if err == nil {
			if !l.zoned {
				t = t.UTC()
			}
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp %q is not an ISO 8601 date-time", s)
}

// isoTime decodes a JSON string with ParseISOTime. A JSON null leaves the
// pointer that holds it nil.
type isoTime struct{ t time.Time }

func (it *isoTime) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("timestamp: %w", err)
	}
	t, err := ParseISOTime(s)
	if err != nil {
		return err
	}
	it.t = t
	return nil
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	timePtrType = reflect.TypeFor[*time.Time]()
	isoTimeType = reflect.TypeFor[*isoTime]()
)

// isoShadow decodes one struct type: the type itself embedded (so every
// other key decodes as usual) beside an *isoTime for each of its tagged
// time.Time and *time.Time fields, under the same JSON key one level
// shallower, which encoding/json prefers.
type isoShadow struct {
	typ   reflect.Type
	paths [][]int // each shadowed field's index path in the decoded type
}

var isoShadows sync.Map // reflect.Type → *isoShadow

func isoShadowOf(t reflect.Type) *isoShadow {
	if sh, ok := isoShadows.Load(t); ok {
		return sh.(*isoShadow)
	}
	sh := &isoShadow{}
	fields := []reflect.StructField{{Name: "Decoded", Type: t, Anonymous: true}}
	var walk func(t reflect.Type, path []int)
	walk = func(t reflect.Type, path []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			p := append(slices.Clone(path), i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(f.Type, p)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if (f.Type != timeType && f.Type != timePtrType) || name == "" || name == "-" {
				continue
			}
			fields = append(fields, reflect.StructField{
				Name: fmt.Sprintf("T%d", len(sh.paths)), Type: isoTimeType, Tag: reflect.StructTag(`json:"` + name + `"`),
			})
			sh.paths = append(sh.paths, p)
		}
	}
	walk(t, nil)
	sh.typ = reflect.StructOf(fields)
	actual, _ := isoShadows.LoadOrStore(t, sh)
	return actual.(*isoShadow)
}

// decodeWithISOTimes decodes data into dst, a pointer to a struct type
// without an UnmarshalJSON of its own (the caller's plain copy of its
// type), reading every tagged time.Time and *time.Time field, its embedded
// structs' included, with ParseISOTime: a present value is set, an absent
// one leaves a time.Time zero and a null or absent one a *time.Time nil.
// Every type the client decodes that holds a timestamp uses it.
func decodeWithISOTimes(data []byte, dst any) error {
	out := reflect.ValueOf(dst).Elem()
	sh := isoShadowOf(out.Type())
	v := reflect.New(sh.typ).Elem()
	if err := json.Unmarshal(data, v.Addr().Interface()); err != nil {
		return err
	}
	out.Set(v.Field(0))
	for k, p := range sh.paths {
		it, _ := v.Field(k + 1).Interface().(*isoTime)
		f := out.FieldByIndex(p)
		switch {
		case f.Type() == timePtrType && it == nil:
			f.SetZero()
		case f.Type() == timePtrType:
			t := it.t
			f.Set(reflect.ValueOf(&t))
		case it != nil:
			f.Set(reflect.ValueOf(it.t))
		}
	}
	return nil
}
