package prime

import (
	"slices"
	"testing"
)

func TestSecretsProbe(t *testing.T) {
	const b = "prime-secret-b0"
	if got := secretsProbeCommand([]string{"A", "B_2"}, b); got != ": prime-secrets-probe; printenv A; echo "+b+"; printenv B_2; echo "+b {
		t.Errorf("probe command %q", got)
	}
	for _, c := range []struct {
		out   string
		count int
		want  []string
		ok    bool
	}{
		{"tok-1\n" + b + "\nline one\nline two\n" + b + "\n", 2, []string{"tok-1", "line one\nline two"}, true},
		{b + "\n" + "v\n" + b + "\n", 2, []string{"v"}, true},        // the first is unset
		{"\n" + b + "\n", 1, []string{""}, true},                     // set and empty
		{"trailing\n\n" + b + "\n", 1, []string{"trailing\n"}, true}, // a value that ends with a newline
		{"v\n" + b + "\n", 2, nil, false},                            // a section missing
		{"v\n" + b + "\nextra", 1, nil, false},                       // something after
		{"v" + b + "\n", 1, nil, false},                              // no newline after the value
	} {
		got, ok := parseSecretsProbe(c.out, b, c.count)
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("parseSecretsProbe(%q) = %q, %t; want %q, %t", c.out, got, ok, c.want, c.ok)
		}
	}
}
