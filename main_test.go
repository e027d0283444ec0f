package main

import (
	"os"
	"testing"
)

func TestQuietLogsUnlessAsked(t *testing.T) {
	vars := []string{"TF_LOG", "TF_LOG_PATH", "TF_LOG_PROVIDER", "TF_LOG_PROVIDER_PRIME", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"}
	unsetAll := func() {
		for _, v := range vars {
			t.Setenv(v, "")
			_ = os.Unsetenv(v)
		}
	}

	unsetAll()
	quietLogsUnlessAsked()
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER"} {
		if got := os.Getenv(v); got != "OFF" {
			t.Errorf("with no logging asked for, %s = %q, want OFF", v, got)
		}
	}

	for _, asked := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PROVIDER_PRIME", "TF_LOG_SDK_PROTO"} {
		unsetAll()
		t.Setenv(asked, "DEBUG")
		quietLogsUnlessAsked()
		if got := os.Getenv("TF_LOG_SDK"); got != "" {
			t.Errorf("with %s set, TF_LOG_SDK = %q, want it left alone", asked, got)
		}
	}
}

func TestVersionString(t *testing.T) {
	old := version
	t.Cleanup(func() { version = old })
	version = "1.2.3"
	for _, tc := range []struct{ commit, stamped, want string }{
		{"abc123", "def456", "terraform-provider-prime 1.2.3 (commit abc123)"},
		{"", "def456-dirty", "terraform-provider-prime 1.2.3 (commit def456-dirty)"},
		{"", "", "terraform-provider-prime 1.2.3"},
	} {
		if got := versionString(tc.commit, tc.stamped); got != tc.want {
			t.Errorf("versionString(%q, %q) = %q, want %q", tc.commit, tc.stamped, got, tc.want)
		}
	}
}
