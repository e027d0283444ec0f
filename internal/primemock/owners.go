package primemock

// Owners. Every sandbox, checkpoint, network, volume and image belongs to
// a scope: a team (created with its team_id) or the account of the API
// key that created it. Routes addressed by an ID take the owner from the
// resource [OA overview]; lists show the caller's own or, with team_id,
// a team's. A caller acts only within its scopes: its own account and the
// teams it belongs to (Options.TeamMembers).

import (
	"net/http"
	"slices"
	"strings"
)

// inTeam reports whether the caller's key belongs to team: listed in
// TeamMembers, or any key for a team TeamMembers does not name
// [I: team-membership].
func (s *Server) inTeam(caller, team string) bool {
	keys, listed := s.opts.TeamMembers[team]
	return !listed || slices.Contains(keys, caller)
}

// inScope reports whether the caller may see and act on what belongs to
// scope ("team:T" or "user:U").
func (s *Server) inScope(caller, scope string) bool {
	if team, ok := strings.CutPrefix(scope, "team:"); ok {
		return s.inTeam(caller, team)
	}
	return scope == "user:"+userIDOf(caller)
}

// mayAct reports whether the caller may act on the sandbox.
func (s *Server) mayAct(caller string, sb *sandbox) bool { return s.inScope(caller, sandboxScope(sb)) }

// scopeFor is the scope a request names (team_id in a create's body or a
// list's query; none: the caller's account), or a 403 when the caller does
// not belong to the team [I: foreign-team-403].
func (s *Server) scopeFor(team *string, caller string) (string, reply, bool) {
	scope := scopeOf(team, caller)
	if !s.inScope(caller, scope) {
		return "", errorReply(http.StatusForbidden, "You are not a member of team %s", *team), false
	}
	return scope, reply{}, true
}
