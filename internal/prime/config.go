package prime

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// DefaultBaseURL is the platform's API origin; the client appends /api/v1.
const DefaultBaseURL = "https://api.primeintellect.ai"

// ConfigSource names where a resolved value came from, for diagnostics.
type ConfigSource string

const (
	SourceExplicit ConfigSource = "provider configuration"
	SourceEnv      ConfigSource = "environment"
	SourceFile     ConfigSource = "~/.prime/config.json"
	SourceDefault  ConfigSource = "default"
	SourceNone     ConfigSource = "unset"
)

// Config is the resolved connection configuration.
type Config struct {
	APIKey       string
	APIKeySource ConfigSource
	BaseURL      string
	// TeamID is nil when no team is configured. An empty string is a set
	// team: PRIME_TEAM_ID="" wins over the file, as in the SDK's Config.
	TeamID       *string
	TeamIDSource ConfigSource
}

// ConfigInput holds explicit values (nil = not given).
type ConfigInput struct {
	APIKey  *string
	BaseURL *string
	TeamID  *string
	// LookupEnv and HomeDir are seams for tests; nil/empty mean
	// os.LookupEnv and the user's home directory.
	LookupEnv func(string) (string, bool)
	HomeDir   string
}

type configFile struct {
	APIKey  string `json:"api_key"`
	TeamID  any    `json:"team_id"`
	BaseURL string `json:"base_url"`
}

// ResolveConfig applies the precedence of the SDK's Config (prime-sandboxes):
// API key: explicit > PRIME_API_KEY (non-empty) > file.
// Base URL: explicit > PRIME_API_BASE_URL > PRIME_BASE_URL (first non-empty)
// > file > default, then trailing slashes and a trailing /api/v1 removed.
// Team: explicit > PRIME_TEAM_ID (set wins, even empty) > file (falsy = none).
// An unreadable or invalid config file counts as empty, as in the SDK.
func ResolveConfig(in ConfigInput) Config {
	lookEnv := in.LookupEnv
	if lookEnv == nil {
		lookEnv = os.LookupEnv
	}
	getenv := func(k string) string { v, _ := lookEnv(k); return v }

	file := readConfigFile(in.HomeDir)
	var c Config

	switch {
	case in.APIKey != nil && *in.APIKey != "":
		c.APIKey, c.APIKeySource = *in.APIKey, SourceExplicit
	case getenv("PRIME_API_KEY") != "":
		c.APIKey, c.APIKeySource = getenv("PRIME_API_KEY"), SourceEnv
	case file.APIKey != "":
		c.APIKey, c.APIKeySource = file.APIKey, SourceFile
	default:
		c.APIKeySource = SourceNone
	}

	switch {
	case in.BaseURL != nil && *in.BaseURL != "":
		c.BaseURL = *in.BaseURL
	case getenv("PRIME_API_BASE_URL") != "":
		c.BaseURL = getenv("PRIME_API_BASE_URL")
	case getenv("PRIME_BASE_URL") != "":
		c.BaseURL = getenv("PRIME_BASE_URL")
	case file.BaseURL != "":
		c.BaseURL = file.BaseURL
	default:
		c.BaseURL = DefaultBaseURL
	}
	c.BaseURL = NormalizeBaseURL(c.BaseURL)

	if in.TeamID != nil {
		t := *in.TeamID
		c.TeamID, c.TeamIDSource = &t, SourceExplicit
	} else if v, ok := lookEnv("PRIME_TEAM_ID"); ok {
		c.TeamID, c.TeamIDSource = &v, SourceEnv
	} else if s := teamFromFile(file.TeamID); s != "" {
		c.TeamID, c.TeamIDSource = &s, SourceFile
	} else {
		c.TeamIDSource = SourceNone
	}
	return c
}

// NormalizeBaseURL strips trailing slashes and then a trailing /api/v1, so
// "https://host/api/v1/" and "https://host" are the same origin.
func NormalizeBaseURL(u string) string {
	u = strings.TrimRight(strings.TrimSpace(u), "/")
	u = strings.TrimSuffix(u, "/api/v1")
	return strings.TrimRight(u, "/")
}

func readConfigFile(home string) configFile {
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return configFile{}
		}
		home = h
	}
	data, err := os.ReadFile(filepath.Join(home, ".prime", "config.json")) //nolint:gosec // G304: the user's own Prime CLI config, as the SDK reads it
	if err != nil {
		return configFile{}
	}
	var f configFile
	if json.Unmarshal(data, &f) != nil {
		return configFile{}
	}
	return f
}

// teamFromFile treats falsy JSON values (null, "", false, 0) as no team.
func teamFromFile(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}
