package prime

import (
	"encoding/json"
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
