package memberkit

import (
	"sort"

	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// DefaultConcurrency is max_concurrency's default in every fleet resource
// and data source that works on members at once.
const DefaultConcurrency = 32

// SandboxIDsAttribute is the `sandbox_ids` argument of a resource that
// works on a fleet's members: member key → sandbox ID, required. doc says
// where the IDs usually come from and what a change does, which differs by
// resource.
func SandboxIDsAttribute(doc string) schema.MapAttribute {
	return schema.MapAttribute{Required: true, ElementType: types.StringType, MarkdownDescription: doc}
}

// SandboxIDsDataSourceAttribute is SandboxIDsAttribute in a data source.
func SandboxIDsDataSourceAttribute(doc string) dsschema.MapAttribute {
	a := SandboxIDsAttribute(doc)
	return dsschema.MapAttribute{Required: a.Required, ElementType: a.ElementType, MarkdownDescription: a.MarkdownDescription}
}

// SandboxIDsOutputAttribute is `sandbox_ids` as a fleet reports it (the
// same map, computed), the value the other fleet resources take.
func SandboxIDsOutputAttribute(doc string) schema.MapAttribute {
	a := SandboxIDsAttribute(doc)
	a.Required, a.Computed = false, true
	return a
}

// StrayKeys are the keys of a per-member map (member_env, member_triggers,
// members) that are not member keys, sorted; none while either map is null
// or unknown (there is nothing to check yet). The callers word the
// diagnostic: a typo in a key would otherwise do nothing, silently.
func StrayKeys(perMember, members types.Map) []string {
	if perMember.IsNull() || perMember.IsUnknown() || members.IsNull() || members.IsUnknown() {
		return nil
	}
	return StrayKeysOf(perMember.Elements(), members.Elements())
}

// StrayKeysOf is StrayKeys for maps already read.
func StrayKeysOf[P, M any](perMember map[string]P, members map[string]M) []string {
	var strays []string
	for k := range perMember {
		if _, ok := members[k]; !ok {
			strays = append(strays, k)
		}
	}
	sort.Strings(strays)
	return strays
}

// TriggerOf is member key's entry of a member_triggers map: null when it
// has none (or the map is null), unknown while the map is unknown. An
// unknown map must not read as "no trigger": a member whose trigger is
// not known yet may change, so it cannot keep its recorded result.
func TriggerOf(triggers types.Map, key string) types.String {
	if triggers.IsUnknown() {
		return types.StringUnknown()
	}
	if v, ok := triggers.Elements()[key].(types.String); ok {
		return v
	}
	return types.StringNull()
}
