package prime

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolveConfig(t *testing.T) {
	str := func(s string) *string { return &s }
	fileJSON := `{"api_key":"file-key","team_id":"file-team","base_url":"https://file.example/api/v1/"}`
	tests := []struct {
		name     string
		in       ConfigInput
		env      map[string]string
		file     string
		wantKey  string
		wantSrc  ConfigSource
		wantBase string
		wantTeam *string
	}{
		{name: "nothing set", wantBase: DefaultBaseURL, wantSrc: SourceNone},
		{name: "file only", file: fileJSON, wantKey: "file-key", wantSrc: SourceFile,
			wantBase: "https://file.example", wantTeam: str("file-team")},
		{name: "env beats file", file: fileJSON,
			env:     map[string]string{"PRIME_API_KEY": "env-key", "PRIME_BASE_URL": "https://b.example", "PRIME_TEAM_ID": "env-team"},
			wantKey: "env-key", wantSrc: SourceEnv, wantBase: "https://b.example", wantTeam: str("env-team")},
		{name: "PRIME_API_BASE_URL beats PRIME_BASE_URL",
			env:      map[string]string{"PRIME_API_BASE_URL": "https://a.example/", "PRIME_BASE_URL": "https://b.example"},
			wantBase: "https://a.example", wantSrc: SourceNone},
		{name: "empty env key falls through to file", file: fileJSON, env: map[string]string{"PRIME_API_KEY": ""},
			wantKey: "file-key", wantSrc: SourceFile, wantBase: "https://file.example", wantTeam: str("file-team")},
		{name: "empty PRIME_TEAM_ID still wins over the file", file: fileJSON, env: map[string]string{"PRIME_TEAM_ID": ""},
			wantKey: "file-key", wantSrc: SourceFile, wantBase: "https://file.example", wantTeam: str("")},
		{name: "explicit beats everything", file: fileJSON,
			env:     map[string]string{"PRIME_API_KEY": "env-key", "PRIME_API_BASE_URL": "https://a.example"},
			in:      ConfigInput{APIKey: str("explicit"), BaseURL: str("http://127.0.0.1:9/api/v1"), TeamID: str("t")},
			wantKey: "explicit", wantSrc: SourceExplicit, wantBase: "http://127.0.0.1:9", wantTeam: str("t")},
		{name: "invalid file is empty", file: `{not json`, wantBase: DefaultBaseURL, wantSrc: SourceNone},
		{name: "falsy file team is none", file: `{"team_id": null, "api_key": "k"}`, wantKey: "k", wantSrc: SourceFile, wantBase: DefaultBaseURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.file != "" {
				if err := os.MkdirAll(filepath.Join(home, ".prime"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(home, ".prime", "config.json"), []byte(tt.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			in := tt.in
			in.HomeDir = home
			in.LookupEnv = func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			got := ResolveConfig(in)
			if got.APIKey != tt.wantKey || got.APIKeySource != tt.wantSrc {
				t.Errorf("key = %q from %s, want %q from %s", got.APIKey, got.APIKeySource, tt.wantKey, tt.wantSrc)
			}
			if got.BaseURL != tt.wantBase {
				t.Errorf("base URL = %q, want %q", got.BaseURL, tt.wantBase)
			}
			switch {
			case (got.TeamID == nil) != (tt.wantTeam == nil):
				t.Errorf("team = %v, want %v", got.TeamID, tt.wantTeam)
			case got.TeamID != nil && *got.TeamID != *tt.wantTeam:
				t.Errorf("team = %q, want %q", *got.TeamID, *tt.wantTeam)
			}
		})
	}
}

func TestNormalizeBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://h":           "https://h",
		"https://h/":          "https://h",
		"https://h/api/v1":    "https://h",
		"https://h/api/v1/":   "https://h",
		"https://h/x/api/v1/": "https://h/x",
	} {
		if got := NormalizeBaseURL(in); got != want {
			t.Errorf("NormalizeBaseURL(%q) = %q, want %q", in, got, want)
		}
	}
}
