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
