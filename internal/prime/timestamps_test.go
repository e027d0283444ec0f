package prime

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Zone-less ISO timestamps (Python's isoformat of a naive datetime) read as
// UTC, as the SDK reads them; a zone, when present, is kept.
func TestISOTimestamps(t *testing.T) {
	utc := func(nsec int) time.Time { return time.Date(2026, 7, 17, 1, 2, 3, nsec, time.UTC) }
	plus2 := time.FixedZone("", 2*3600)
	tests := []struct {
		in         string
		want       time.Time
		wantOffset int // seconds east of UTC
	}{
		{"2026-07-17T01:02:03", utc(0), 0},
		{"2026-07-17T01:02:03.123456", utc(123456000), 0},
		{"2026-07-17T01:02:03Z", utc(0), 0},
		{"2026-07-17T01:02:03.5Z", utc(500000000), 0},
		{"2026-07-17T01:02:03+00:00", utc(0), 0},
		{"2026-07-17T01:02:03.123456+00:00", utc(123456000), 0},
		{"2026-07-17T03:02:03+02:00", time.Date(2026, 7, 17, 3, 2, 3, 0, plus2), 7200},
		{"2026-07-17 01:02:03", utc(0), 0},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseISOTime(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tt.want) {
				t.Fatalf("ParseISOTime(%q) = %s, want %s", tt.in, got, tt.want)
			}
			if _, off := got.Zone(); off != tt.wantOffset {
				t.Fatalf("ParseISOTime(%q) offset %d, want %d (a zone is kept, none means UTC)", tt.in, off, tt.wantOffset)
			}

			// Every timestamp field decodes through the types' UnmarshalJSON.
			q, _ := json.Marshal(tt.in)
			var sb Sandbox
			body := `{"id":"a","createdAt":` + string(q) + `,"updatedAt":` + string(q) +
				`,"startedAt":` + string(q) + `,"terminatedAt":` + string(q) + `}`
			if err := json.Unmarshal([]byte(body), &sb); err != nil {
				t.Fatalf("Sandbox: %v", err)
			}
			for name, v := range map[string]*time.Time{"createdAt": &sb.CreatedAt, "updatedAt": &sb.UpdatedAt, "startedAt": sb.StartedAt, "terminatedAt": sb.TerminatedAt} {
				if v == nil || !v.Equal(tt.want) {
					t.Errorf("Sandbox.%s = %v, want %s", name, v, tt.want)
				}
			}
			var ga GatewayAuth
			if err := json.Unmarshal([]byte(`{"gateway_url":"g","token":"t","user_ns":"u","job_id":"j","expires_at":`+string(q)+`}`), &ga); err != nil {
				t.Fatalf("GatewayAuth: %v", err)
			}
			if !ga.ExpiresAt.Equal(tt.want) || ga.Token != "t" || ga.GatewayURL != "g" {
				t.Errorf("GatewayAuth = %+v, want expires_at %s", ga, tt.want)
			}
		})
	}
}

func TestISOTimestampsRejectAndNull(t *testing.T) {
	for _, bad := range []string{"", "yesterday", "2026-07-17", "17/07/2026 01:02:03"} {
		if _, err := ParseISOTime(bad); err == nil {
			t.Errorf("ParseISOTime(%q) accepted", bad)
		}
	}
	var sb Sandbox
	if err := json.Unmarshal([]byte(`{"id":"a","createdAt":"2026-07-17T00:00:00","startedAt":null,"labels":null}`), &sb); err != nil {
		t.Fatal(err)
	}
	if sb.StartedAt != nil || sb.TerminatedAt != nil {
		t.Errorf("null or absent times must stay nil: %+v %+v", sb.StartedAt, sb.TerminatedAt)
	}
	if err := json.Unmarshal([]byte(`{"id":"a","createdAt":"not a time"}`), &sb); err == nil {
		t.Error("an invalid createdAt was accepted")
	}
}

// TestEveryTimestampDecodesZoneless: every type the client decodes that
// holds a timestamp reads it with the one codec (decodeWithISOTimes), so a
// zone-less value is UTC everywhere and a null pointer stays nil.
func TestEveryTimestampDecodesZoneless(t *testing.T) {
	const zoneless = `"2026-07-17T01:02:03.5"`
	want := time.Date(2026, 7, 17, 1, 2, 3, 5e8, time.UTC)
	for _, tc := range []struct {
		name  string
		body  string
		into  any
		times func(v any) []*time.Time
	}{
		{"Sandbox", `{"id":"a","createdAt":T,"updatedAt":T,"startedAt":T,"terminatedAt":T}`, &Sandbox{},
			func(v any) []*time.Time {
				s := v.(*Sandbox)
				return []*time.Time{&s.CreatedAt, &s.UpdatedAt, s.StartedAt, s.TerminatedAt}
			}},
		{"GatewayAuth", `{"token":"t","expires_at":T}`, &GatewayAuth{},
			func(v any) []*time.Time { return []*time.Time{&v.(*GatewayAuth).ExpiresAt} }},
		{"SSHSession", `{"session_id":"s","expires_at":T}`, &SSHSession{},
			func(v any) []*time.Time { return []*time.Time{&v.(*SSHSession).ExpiresAt} }},
		{"Checkpoint", `{"id":"c","created_at":T,"updated_at":T}`, &Checkpoint{},
			func(v any) []*time.Time { c := v.(*Checkpoint); return []*time.Time{&c.CreatedAt, &c.UpdatedAt} }},
		{"Volume", `{"name":"v","created_at":T,"updated_at":T}`, &Volume{},
			func(v any) []*time.Time { x := v.(*Volume); return []*time.Time{&x.CreatedAt, &x.UpdatedAt} }},
		{"Network", `{"id":"n","created_at":T,"updated_at":T}`, &Network{},
			func(v any) []*time.Time { n := v.(*Network); return []*time.Time{&n.CreatedAt, &n.UpdatedAt} }},
		{"ImageListItem", `{"id":"i","createdAt":T,"startedAt":T,"completedAt":T,"pushedAt":T}`, &ImageListItem{},
			func(v any) []*time.Time {
				i := v.(*ImageListItem)
				return []*time.Time{&i.CreatedAt, i.StartedAt, i.CompletedAt, i.PushedAt}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := json.Unmarshal([]byte(strings.ReplaceAll(tc.body, "T", zoneless)), tc.into); err != nil {
				t.Fatal(err)
			}
			for i, got := range tc.times(tc.into) {
				if got == nil || !got.Equal(want) || got.Location() != time.UTC {
					t.Errorf("timestamp %d = %v, want %s", i, got, want)
				}
			}
		})
	}
	var img ImageListItem
	if err := json.Unmarshal([]byte(`{"id":"i","createdAt":`+zoneless+`,"startedAt":null}`), &img); err != nil {
		t.Fatal(err)
	}
	if img.StartedAt != nil || img.CompletedAt != nil || img.ID != "i" {
		t.Errorf("null or absent pointers must stay nil, other keys decode: %+v", img)
	}
}
