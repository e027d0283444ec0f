package tfkit

import "github.com/hashicorp/terraform-plugin-framework/action"

// ActionsKeepNothing ends every action's description (the exec actions and
// the sweep), so they say it in one wording.
const ActionsKeepNothing = "Actions keep nothing in state: a result that matters belongs to a resource " +
	"(`prime_sandbox_command`, `prime_fleet_command`), which records it and runs again only when told to."

// ProgressTo sends messages as an action's progress, one event each.
func ProgressTo(resp *action.InvokeResponse) func(messages ...string) {
	return func(messages ...string) {
		for _, msg := range messages {
			resp.SendProgress(action.InvokeProgressEvent{Message: msg})
		}
	}
}
