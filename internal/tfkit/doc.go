// Package tfkit holds the provider's generic Terraform helpers: code that
// knows the plugin framework but nothing of sandboxes, egress, commands or
// files.
//
// It owns:
//
//   - the model codec (model_codec.go): GetState, GetPlan, GetConfig,
//     SetState, SetPlan and SetStateAny, the framework's Get and Set
//     without its per-call reflection;
//   - the import marker and the plan modifiers built on it
//     (plan_modifiers.go): ImportedKey, MarkImported, ReadAfterImport,
//     WasImported, ClearImported, the ReplaceUnlessImported* modifiers, and
//     the SDKDefault* modifiers for Optional+Computed arguments;
//   - `timeouts` blocks with keys of their own (timeouts.go);
//   - conversions of collections and object attributes without reflection
//     (collections.go, attrs.go), and the wording helpers errors share
//     (QuoteKeys, PluralVerb);
//   - diagnostics helpers (diagnostics.go): DiagSummary, RequireClient;
//     and ClientFrom, which reads the client from the provider's configured
//     data by the Configured capability, so no domain package needs
//     internal/provider's types;
//   - IDs (import_id.go): ImportIDOf, the ID an import names, from its
//     `id` or its identity; HeldID, the id of a resource Terraform already
//     holds (when a crash journal's entry for it can go);
//   - what every action shares (actions.go): ProgressTo, an action's
//     progress events, and ActionsKeepNothing, the sentence its description
//     ends with.
//
// Its subpackage tfkittest holds test helpers (CheckCodec: a model's codec
// against the framework's reflection; MockAPI and MockClient: an
// in-process prime-mock for unit tests that call the API); only tests import it.
//
// It may import: the standard library, github.com/hashicorp/terraform-plugin-*/..., internal/prime.
//
// It imports internal/prime for the client type RequireClient checks.
// internal/memberkit, every domain package and internal/provider import it,
// never the reverse. Helpers that know a domain (a sandbox, a policy, a
// command) do not belong here.
package tfkit
