package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// writeOnlyNotAllowed is the summary of the framework's refusal of a
// write-only value in a configuration whose client cannot take one.
const writeOnlyNotAllowed = "WriteOnly Attribute Not Allowed"

// ValidateActionConfig is the framework's, without its refusal of every
// write-only value in an action's configuration.
//
// Why: terraform-plugin-framework v1.19 validates action schemas as if the
// client could never take write-only values (fwserver's
// ValidateActionConfig passes WriteOnlyAttributesAllowed: false), so an
// action's env_wo could not be set at all. Actions need Terraform 1.14,
// which takes write-only (and ephemeral) values in action configuration,
// keeps them out of the plan (lang/ephemeral) and passes them to
// InvokeAction only. Every other diagnostic is kept. Drop this once the
// framework lets action schemas have write-only attributes.
func (s *jsonReadStateServer) ValidateActionConfig(ctx context.Context, req *tfprotov6.ValidateActionConfigRequest) (*tfprotov6.ValidateActionConfigResponse, error) {
	resp, err := s.frameworkServer.ValidateActionConfig(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	kept := resp.Diagnostics[:0]
	for _, d := range resp.Diagnostics {
		if d != nil && d.Summary == writeOnlyNotAllowed {
			continue
		}
		kept = append(kept, d)
	}
	resp.Diagnostics = kept
	return resp, nil
}
