package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeBackend records a backend in wd's data directory as `terraform
// init` does.
func writeBackend(t *testing.T, wd, json string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(wd, ".terraform"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wd, ".terraform", "terraform.tfstate"), []byte(json), 0o600); err != nil {
		t.Fatal(err)
	}
}

// The scope is what two runners of one state derive alike and two states
// never share: a remote state by where it is stored (never by the
// credentials, which differ between runners), a local one by its working
// directory, each with its workspace; an explicit value wins.
func TestDetectScope(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	s3 := func(key, accessKey, profile string) string {
		return `{"version":3,"backend":{"type":"s3","config":{"bucket":"evals","key":"` + key +
			`","region":"us-east-1","access_key":"` + accessKey + `","profile":"` + profile + `","dynamodb_table":"locks"},"hash":1}}`
	}

	runner1, runner2, other := t.TempDir(), t.TempDir(), t.TempDir()
	local1, local2 := DetectScope(getenv, runner1), DetectScope(getenv, runner2)
	if local1.ID == local2.ID {
		t.Error("two working directories with local state share a scope")
	}
	if DetectScope(getenv, runner1) != local1 || len(local1.ID) != 16 {
		t.Errorf("the local scope is not stable or not 16 hex characters: %+v", local1)
	}

	writeBackend(t, runner1, s3("pr-1/terraform.tfstate", "AKIA1", "ci"))
	writeBackend(t, runner2, s3("pr-1/terraform.tfstate", "AKIA2", "laptop"))
	writeBackend(t, other, s3("pr-2/terraform.tfstate", "AKIA1", "ci"))
	a, b, c := DetectScope(getenv, runner1), DetectScope(getenv, runner2), DetectScope(getenv, other)
	if a.ID != b.ID {
		t.Errorf("two runners of one S3 state (other credentials, another directory) derive %s and %s", a.ID, b.ID)
	}
	if a.ID == c.ID {
		t.Error("two S3 state keys share a scope")
	}
	for _, secret := range []string{"AKIA1", "laptop"} {
		if strings.Contains(a.Source, secret) || strings.Contains(b.Source, secret) {
			t.Errorf("the scope's source names a credential: %q", a.Source)
		}
	}

	env["TF_WORKSPACE"] = "staging"
	if staging := DetectScope(getenv, runner1); staging.ID == a.ID {
		t.Error("two workspaces of one backend share a scope")
	}
	delete(env, "TF_WORKSPACE")

	writeBackend(t, other, `{"backend":{"type":"cloud","config":{"hostname":"app.terraform.io","organization":"acme",`+
		`"workspaces":{"name":"evals-a"},"token":"secret-token"}}}`)
	cloudA := DetectScope(getenv, other)
	writeBackend(t, other, `{"backend":{"type":"cloud","config":{"hostname":"app.terraform.io","organization":"acme",`+
		`"workspaces":{"name":"evals-b"},"token":"secret-token"}}}`)
	if DetectScope(getenv, other).ID == cloudA.ID {
		t.Error("two HCP Terraform workspaces share a scope")
	}
	if strings.Contains(cloudA.Source, "secret-token") {
		t.Errorf("the scope's source names the token: %q", cloudA.Source)
	}

	env["PRIME_WORKSPACE_SCOPE"] = "team-a/evals"
	if e1, e2 := DetectScope(getenv, runner1), DetectScope(getenv, other); e1.ID != e2.ID || e1.ID != ExplicitScope("team-a/evals").ID {
		t.Errorf("an explicit scope must win everywhere: %+v, %+v", e1, e2)
	}
}

// An unknown backend keeps its location fields and drops what looks like
// a credential or a per-runner setting.
func TestStateLocationOfAnUnknownBackend(t *testing.T) {
	got := stateLocation("custom", map[string]any{"url": "https://state", "api_token": "x", "skip_tls": true, "name": "n", "nothing": nil})
	if len(got) != 2 || got["url"] != "https://state" || got["name"] != "n" {
		t.Errorf("stateLocation = %v, want url and name only", got)
	}
	pg := stateLocation("pg", map[string]any{"conn_str": "postgres://user:pw@db.example:5432/tf", "schema_name": "evals"})
	if pg["conn_str"] != "db.example:5432/tf" || pg["schema_name"] != "evals" {
		t.Errorf("pg location = %v", pg)
	}
}
