package provider

import "testing"

func TestClientLogIsOffOnlyWhenProviderLogsAre(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{env: map[string]string{"TF_LOG_PROVIDER": "OFF"}, want: false},
		{env: map[string]string{"TF_LOG_PROVIDER": " off "}, want: false},
		{env: map[string]string{"TF_LOG_PROVIDER": "DEBUG"}, want: true},
		{env: map[string]string{"TF_LOG_PROVIDER": "TRACE", "TF_LOG": "OFF"}, want: true},
		{env: map[string]string{"TF_LOG": "TRACE"}, want: true},
		// Unset (in-process tests, a debugger): the logger decides.
		{env: map[string]string{}, want: true},
	} {
		got := clientLog(func(k string) string { return tc.env[k] }) != nil
		if got != tc.want {
			t.Errorf("env %v: client logs on = %t, want %t", tc.env, got, tc.want)
		}
	}
}
