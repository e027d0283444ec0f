package prime

import (
	"encoding/json"
	"strings"
	"testing"
)

// A secret is scrubbed however a text carries it: raw, or escaped inside a
// JSON string by Go (with or without HTML escaping) or by Python.
func TestScrubTextEscapedForms(t *testing.T) {
	for _, secret := range []string{`Zq7pass&word<1>`, `quote"back\slash`, "naïve-sécret-€", "emoji-🔑-key", "plain-secret"} {
		goJSON, _ := json.Marshal(map[string]string{"v": "TOKEN=" + secret})
		python := pythonJSONString(secret)
		for _, text := range []string{
			"raw: TOKEN=" + secret,
			"go: " + string(goJSON),
			"python: {\"detail\": \"failed: TOKEN=" + python + "\"}",
		} {
			got := ScrubText(text, []string{secret})
			if strings.Contains(got, secret) || !strings.Contains(got, "***") {
				t.Errorf("secret %q in %q: scrubbed to %q", secret, text, got)
			}
		}
	}
	if got := ScrubText("abc and abc", []string{"abc"}); got != "abc and abc" {
		t.Errorf("a 3-byte value was scrubbed: %q", got)
	}
}

// pythonJSONString is json.dumps(s)[1:-1] with Python's defaults
// (ensure_ascii: every non-ASCII character as a lowercase \uXXXX escape).
func pythonJSONString(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x80:
			b.WriteRune(r)
		case r <= 0xFFFF:
			b.WriteString(`\u` + hex4(int(r)))
		default:
			r -= 0x10000
			b.WriteString(`\u` + hex4(0xD800+int(r>>10)) + `\u` + hex4(0xDC00+int(r&0x3FF)))
		}
	}
	return b.String()
}

func hex4(v int) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[v>>12&0xF], digits[v>>8&0xF], digits[v>>4&0xF], digits[v&0xF]})
}
