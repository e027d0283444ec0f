package journal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The workspace scope names the Terraform state a provider process works
// for, in a form that another machine derives again from the same
// configuration and environment: what recovery from the platform keys on
// (the labels a sandbox is created with), where the journals above key on
// this machine's cache directory.
//
// Terraform tells a provider neither its backend nor its workspace, so the
// scope is read from what the provider process can see, in this order:
//
//  1. an explicit value (the provider's workspace_scope, else
//     PRIME_WORKSPACE_SCOPE): the user's word, for whatever the rules below
//     cannot tell apart;
//  2. the backend Terraform initialised (TF_DATA_DIR, default .terraform,
//     holds its type and configuration in terraform.tfstate) with the
//     current workspace: a remote state is named by where it is stored (an
//     S3 bucket and key, a GCS bucket and prefix, an HCP Terraform
//     organization and workspace, ...), never by credentials, which
//     differ between runners;
//  3. without a backend, the local state: the working directory and the
//     workspace (the journals' own key).
//
// Two states never share a scope unless they share all of that: two
// workspaces, two state keys, two working directories each get their own.
// The converse is the limit: two states that only differ in something
// the provider cannot see (two machines each with a local state at the same
// path, say) share a scope, and must set workspace_scope.

// Scope is a workspace scope.
type Scope struct {
	// ID is 16 lowercase hex characters ("" for no scope: recovery from
	// the platform is off).
	ID string
	// Source says, for logs and errors, where the scope came from (never
	// a secret: names of backends and attributes, paths).
	Source string
}

// ExplicitScope is the scope a user named.
func ExplicitScope(value string) Scope {
	return Scope{ID: scopeID("explicit", value), Source: "workspace_scope"}
}

// DetectScope derives the scope of working directory wd: the explicit
// PRIME_WORKSPACE_SCOPE, else the initialised backend and workspace, else
// the local state (see above).
func DetectScope(getenv func(string) string, wd string) Scope {
	if v := strings.TrimSpace(getenv("PRIME_WORKSPACE_SCOPE")); v != "" {
		s := ExplicitScope(v)
		s.Source = "PRIME_WORKSPACE_SCOPE"
		return s
	}
	workspace := currentWorkspace(getenv, wd)
	if typ, identity, ok := backendIdentity(dataDir(getenv, wd)); ok {
		return Scope{ID: scopeID("backend", typ, identity, workspace),
			Source: "backend " + typ + " " + identity + ", workspace " + workspace}
	}
	return Scope{ID: scopeID("local", wd, workspace), Source: "local state in " + wd + ", workspace " + workspace}
}

// scopeID hashes the parts that name a state.
func scopeID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// dataDir is Terraform's data directory for wd (TF_DATA_DIR, default
// .terraform).
func dataDir(getenv func(string) string, wd string) string {
	data := getenv("TF_DATA_DIR")
	if data == "" {
		data = ".terraform"
	}
	if !filepath.IsAbs(data) {
		data = filepath.Join(wd, data)
	}
	return data
}

// backendIdentity reads the backend `terraform init` recorded in dir: its
// type and the canonical JSON of the fields that say where its state is
// stored. ok is false without a recorded backend.
func backendIdentity(dir string) (typ, identity string, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate")) //nolint:gosec // G304: Terraform's own data directory
	if err != nil {
		return "", "", false
	}
	var f struct {
		Backend *struct {
			Type   string         `json:"type"`
			Config map[string]any `json:"config"`
		} `json:"backend"`
	}
	if json.Unmarshal(b, &f) != nil || f.Backend == nil || f.Backend.Type == "" {
		return "", "", false
	}
	fields := stateLocation(f.Backend.Type, f.Backend.Config)
	out, err := json.Marshal(fields) // map keys sorted: canonical
	if err != nil {
		return "", "", false
	}
	return f.Backend.Type, string(out), true
}

// locationFields are the configuration fields that say where a backend
// stores a state, for the backends Terraform ships. Everything else
// (credentials, roles, profiles, retries, lock tables) may differ between
// two runners of one state, so it is left out.
var locationFields = map[string][]string{
	"s3":         {"bucket", "key", "workspace_key_prefix", "endpoint", "endpoints"},
	"gcs":        {"bucket", "prefix"},
	"azurerm":    {"storage_account_name", "container_name", "key", "snapshot"},
	"remote":     {"hostname", "organization", "workspaces"},
	"cloud":      {"hostname", "organization", "workspaces"},
	"http":       {"address"},
	"consul":     {"address", "path"},
	"kubernetes": {"secret_suffix", "namespace", "host"},
	"oss":        {"bucket", "prefix", "key"},
	"cos":        {"bucket", "prefix", "key"},
	"local":      {"path", "workspace_dir"},
	"pg":         {"schema_name"},
}

// secretLooking matches field names of other backends that are left out
// of their identity: credentials and per-runner settings.
var secretLooking = regexp.MustCompile(`(?i)secret|token|password|passwd|credential|access_key|private|sas|cert|session|auth|profile|role|assume|skip|retries|timeout|lock`)

// stateLocation picks the location fields of a backend's configuration
// (nulls dropped). pg's conn_str is reduced to its host and database: its
// user and password are not where the state is.
func stateLocation(typ string, config map[string]any) map[string]any {
	out := map[string]any{}
	names, known := locationFields[typ]
	if !known {
		for k := range config {
			if !secretLooking.MatchString(k) {
				names = append(names, k)
			}
		}
		sort.Strings(names)
	}
	for _, k := range names {
		if v, ok := config[k]; ok && v != nil {
			out[k] = v
		}
	}
	if typ == "pg" {
		if s, ok := config["conn_str"].(string); ok {
			if u, err := url.Parse(s); err == nil {
				out["conn_str"] = u.Host + u.Path
			}
		}
	}
	return out
}
