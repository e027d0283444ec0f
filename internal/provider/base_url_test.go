package provider

import (
	"strings"
	"testing"
)

func TestCheckBaseURL(t *testing.T) {
	for _, tc := range []struct {
		raw      string
		insecure bool
		want     string // substring of the problem; "" = accepted
	}{
		{"https://api.primeintellect.ai", false, ""},
		{"https://api.primeintellect.ai/api/v1/", false, ""},
		{"https://proxy.example.com:8443/prime", false, ""},
		{"http://127.0.0.1:8080", false, ""},
		{"http://localhost:8080", false, ""},
		{"http://[::1]:8080", false, ""},
		{"http://mock.localhost", false, ""},
		{"api.primeintellect.ai", false, "not an absolute URL"},
		{"//api.primeintellect.ai", false, "not an absolute URL"},
		{"ftp://api.primeintellect.ai", false, `scheme "ftp"`},
		{"http://api.primeintellect.ai", false, "cleartext"},
		{"http://api.primeintellect.ai", true, ""},
		{"http://10.0.0.5:8080", false, "cleartext"},
		{"https://user:secret@api.primeintellect.ai", false, "credentials"},
		{"https://api.primeintellect.ai/?x=1", false, "query"},
		{"https://exa mple.com", false, "not a valid URL"},
	} {
		got := checkBaseURL(tc.raw, tc.insecure)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("checkBaseURL(%q, insecure=%t) = %q, want %q", tc.raw, tc.insecure, got, tc.want)
		}
		if strings.Contains(got, "secret") {
			t.Errorf("checkBaseURL(%q) leaks the password: %q", tc.raw, got)
		}
	}
}
