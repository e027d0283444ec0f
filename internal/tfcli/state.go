package tfcli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// StateResource is one resource instance of `terraform show -json`.
type StateResource struct {
	Address string         `json:"address"`
	Type    string         `json:"type"`
	Name    string         `json:"name"`
	Tainted bool           `json:"tainted"`
	Values  map[string]any `json:"values"`
}

// ID is the instance's id attribute.
func (s StateResource) ID() string { v, _ := s.Values["id"].(string); return v }

// State reads the root module's resources with `terraform show -json`
// (empty when there is no state).
func (w *Workspace) State(ctx context.Context) ([]StateResource, error) {
	res := w.Run(ctx, "show", "-json")
	if !res.OK() {
		return nil, fmt.Errorf("%s\n%s", res.Describe(), res.Tail(2000))
	}
	// The JSON is the first line that starts with {.
	out := res.Output
	if i := strings.Index(out, "{"); i > 0 {
		out = out[i:]
	}
	var doc struct {
		Values *struct {
			RootModule struct {
				Resources []StateResource `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("parsing terraform show -json: %w", err)
	}
	if doc.Values == nil {
		return nil, nil
	}
	return doc.Values.RootModule.Resources, nil
}

// IDsOfType returns the ids of the state's resources of type typ.
func IDsOfType(rs []StateResource, typ string) []string {
	var out []string
	for _, r := range rs {
		if r.Type == typ {
			out = append(out, r.ID())
		}
	}
	return out
}
