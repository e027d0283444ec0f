package files

// A fleet file's sources: which source each member takes (shared, or its
// own from `members`), resolved and fingerprinted once per distinct source,
// and the per-member source errors reported as one.

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/primeintellect/terraform-provider-prime/internal/memberkit"
	"github.com/primeintellect/terraform-provider-prime/internal/tfkit"
)

// memberSources are the per-member sources of `members`, nil when unset.
func memberSources(m fleetFileModel, diags *diag.Diagnostics) map[string]sourceArgs {
	if m.Members.IsNull() || m.Members.IsUnknown() {
		return nil
	}
	out := map[string]sourceArgs{}
	for k, v := range m.Members.Elements() {
		a, ok := memberkit.MemberAttrs(k, v, diags)
		if !ok {
			continue
		}
		out[k] = sourceArgs{Content: tfkit.StringAttr(a, "content").ValueStringPointer(),
			ContentBase64: tfkit.StringAttr(a, "content_base64").ValueStringPointer(),
			Source:        tfkit.StringAttr(a, "source").ValueStringPointer(), SourceDir: tfkit.StringAttr(a, "source_dir").ValueStringPointer()}
	}
	return out
}

// membersUnknown reports whether a `members` value holds anything unknown.
func membersUnknown(v types.Map) bool {
	if v.IsUnknown() {
		return true
	}
	for _, e := range v.Elements() {
		obj, ok := e.(types.Object)
		if !ok || obj.IsUnknown() {
			return true
		}
		for _, a := range obj.Attributes() {
			if a.IsUnknown() {
				return true
			}
		}
	}
	return false
}

func sharedSourceArgs(m fleetFileModel) (sourceArgs, bool) {
	a := sourceArgs{Content: m.Content.ValueStringPointer(), ContentBase64: m.ContentBase64.ValueStringPointer(),
		Source: m.Source.ValueStringPointer(), SourceDir: m.SourceDir.ValueStringPointer()}
	set := a.Content != nil || a.ContentBase64 != nil || a.Source != nil || a.SourceDir != nil
	return a, set
}

// fleetSources resolves which source each member takes.
type fleetSources struct {
	shared    *fileSource
	perMember map[string]fileSource
}

// resolveFleetSources reads the configuration's sources. Errors name the
// attribute; the members whose own source is invalid are named together,
// in one error.
func resolveFleetSources(m fleetFileModel, diags *diag.Diagnostics) fleetSources {
	var fs fleetSources
	if args, set := sharedSourceArgs(m); set {
		src, err := sourceOf(args)
		if err != nil {
			diags.AddAttributeError(path.Root("content"), "Invalid file source", "shared source: "+err.Error())
		} else {
			fs.shared = &src
		}
	}
	per := memberSources(m, diags)
	fs.perMember = make(map[string]fileSource, len(per))
	invalid := memberSourceErrors{}
	for _, k := range tfkit.SortedKeys(per) {
		src, err := sourceOf(per[k])
		if err != nil {
			invalid.add(k, "", err)
			continue
		}
		fs.perMember[k] = src
	}
	invalid.report(diags)
	return fs
}

// of is the source member key takes; ok false when it has none.
func (fs fleetSources) of(key string) (fileSource, bool) {
	if s, ok := fs.perMember[key]; ok {
		return s, true
	}
	if fs.shared != nil {
		return *fs.shared, true
	}
	return fileSource{}, false
}

// checkCoverage reports members without a source and `members` entries
// for keys that are not members.
func (fs fleetSources) checkCoverage(keys []string, diags *diag.Diagnostics) {
	var missing []string
	for _, k := range keys {
		if _, ok := fs.of(k); !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		diags.AddAttributeError(path.Root("members"), "Members without a source",
			fmt.Sprintf("members: %s %s no entry and there is no shared source (content, content_base64, source or source_dir); "+
				"give every member a source, or set a shared one.", tfkit.QuoteKeys(missing), tfkit.PluralVerb(len(missing), "has", "have")))
	}
	if strays := memberkit.StrayKeysOf(fs.perMember, tfkit.SetOf(keys)); len(strays) > 0 {
		diags.AddAttributeError(path.Root("members"), "Unknown member keys",
			fmt.Sprintf("members: %s %s not a key of sandbox_ids.", tfkit.QuoteKeys(strays), tfkit.PluralVerb(len(strays), "is", "are")))
	}
}

// fingerprints reads every configured source once (a source several
// members take is read once), reporting the members whose source cannot
// be read together, in one error.
func (fs fleetSources) fingerprints(diags *diag.Diagnostics) sourcePrints {
	out := sourcePrints{perMember: make(map[string]fingerprint, len(fs.perMember))}
	type result struct {
		fp  fingerprint
		err error
	}
	seen := map[string]result{}
	once := func(src fileSource) (fingerprint, error) {
		sk := sourceKey(src)
		r, done := seen[sk]
		if !done {
			r.fp, r.err = src.fingerprint()
			seen[sk] = r
		}
		return r.fp, r.err
	}
	if fs.shared != nil {
		fp, err := once(*fs.shared)
		if err != nil {
			diags.AddAttributeError(path.Root(fs.shared.attribute()), "Invalid file source", err.Error())
		} else {
			out.shared = &fp
		}
	}
	unreadable := memberSourceErrors{}
	for _, k := range tfkit.SortedKeys(fs.perMember) {
		src := fs.perMember[k]
		fp, err := once(src)
		if err != nil {
			unreadable.add(k, src.attribute(), err)
			continue
		}
		out.perMember[k] = fp
	}
	unreadable.report(diags)
	return out
}

// sourceKey identifies a distinct source, so it is fingerprinted and
// opened once however many members take it.
func sourceKey(s fileSource) string { return fmt.Sprintf("%d\x00%s", s.kind, s.value) }

// sourcePrints are a fleet file's fingerprints: of the shared source (nil
// without one) and of each member's own.
type sourcePrints struct {
	shared    *fingerprint
	perMember map[string]fingerprint
}

// of is the fingerprint of what member key takes.
func (p sourcePrints) of(key string) (fingerprint, bool) {
	if fp, ok := p.perMember[key]; ok {
		return fp, true
	}
	if p.shared != nil {
		return *p.shared, true
	}
	return fingerprint{}, false
}

// memberSourceErrors are the members whose own source is invalid: member
// key → the attribute at fault ("" for the member's entry) and why.
type memberSourceErrors map[string]struct {
	attribute string
	err       error
}

func (e memberSourceErrors) add(key, attribute string, err error) {
	e[key] = struct {
		attribute string
		err       error
	}{attribute, err}
}

// report adds one error naming every member: on the member's attribute
// when there is one, on members when there are several (Terraform shows an
// error per diagnostic, and a fleet of a thousand tasks should not print a
// thousand).
func (e memberSourceErrors) report(diags *diag.Diagnostics) {
	if len(e) == 0 {
		return
	}
	if len(e) == 1 {
		for k, v := range e {
			at := path.Root("members").AtMapKey(k)
			if v.attribute != "" {
				at = at.AtName(v.attribute)
			}
			diags.AddAttributeError(at, "Invalid file source", fmt.Sprintf("members[%q]: %v", k, v.err))
		}
		return
	}
	var problems memberkit.Problems
	for k, v := range e {
		problems.Add(k, "%v", v.err)
	}
	diags.AddAttributeError(path.Root("members"), "Invalid file source",
		fmt.Sprintf("The sources of %d members are invalid:\n\n%s", len(e), problems.String()))
}
