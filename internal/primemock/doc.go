// Package primemock is an in-memory Prime Intellect Sandboxes API: an
// http.Handler that speaks the REST contract of prime-api.md (§4–§9, §13)
// closely enough that the provider, its acceptance tests, benchmarks, demos
// and users' own Terraform modules can run against it instead of the real
// platform. It never runs anything on the host.
//
// # Endpoints
//
// Under /api/v1 (Authorization: Bearer <key> required; any non-empty key
// unless Options.APIKey is set):
//
//	POST   /sandbox                              create (idempotency_key replays)
//	GET    /sandbox                              list (page, per_page, team_id, user_id, status, labels..., is_active)
//	DELETE /sandbox                              bulk delete (JSON body)
//	POST   /sandbox/status:batchGet              batch lifecycle status
//	GET    /sandbox/{id}                         get
//	DELETE /sandbox/{id}                         delete (repeat deletes succeed)
//	GET    /sandbox/{id}/egress-policy           egress policy status (VM only)
//	PUT    /sandbox/{id}/egress-policy           replace the egress policy (VM only)
//	GET    /sandbox/{id}/logs                    {"logs": "..."}
//	GET    /sandbox/{id}/error-context           {status, errorType, errorMessage}
//	POST   /sandbox/{id}/auth                    gateway token
//
// The gateway (what the auth answer's gateway_url points at, derived from
// the request's Host so it works behind httptest and -addr):
//
//	POST   /gateway/{user_ns}/{job_id}/exec      run a command (Authorization: Bearer <gateway token>)
//
// Introspection, no authentication, never subject to latency or faults:
//
//	GET    /_mock/stats                          request counts per route template and counters
//	GET    /_mock/events[?sandbox_id=ID][&since=SEQ|RFC3339]
//	POST   /_mock/reset                          forget every sandbox, token, event and counter
//	GET    /_mock/sandbox/{id}/reachable?host=H  {"reachable": bool} under the APPLIED policy
//	GET    /_mock/config                         the current knobs
//	POST   /_mock/config                         change knobs at runtime (partial JSON, see ConfigPatch)
//
// # Lifecycle
//
// A sandbox is PENDING for half of BootDelay, PROVISIONING for the other
// half, then RUNNING (startedAt set). DELETE makes it TERMINATED at once
// (terminatedAt set); records stay readable until Reset. Lifetimes
// (timeoutMinutes, idle timeouts) are not enforced.
//
// Magic images, matched as substrings of docker_image:
//
//	prime-mock/error   boots, then goes to ERROR instead of RUNNING
//	                   (errorType IMAGE_PULL_FAILED, an errorMessage naming
//	                   the image, terminationReason IMAGE_PULL_FAILED)
//	prime-mock/build   stays PENDING with pendingImageBuildId set for
//	                   ImageBuildDelay before the normal boot starts
//
// # Egress policy
//
// VM sandboxes only (a container answers 409). A fresh VM reports policy
// {allowlist: null, denylist: []}, generation 0, applied_generation -1.
// Create-time lists are stored, canonicalised, as generation 0; each
// accepted PUT adds 1, even when the policy is unchanged. With a working
// data plane the open generation 0 counts as applied as soon as the sandbox
// is RUNNING, and any other generation is applied ApplyDelay after the later
// of its acceptance and RUNNING. applied_generation never goes backwards and
// applied = applied_generation >= generation. With NeverApply, PUTs are
// accepted but nothing is ever applied (the upstream platform gap in which
// applied_generation stays -1).
//
// Entries are stored in canonical form (prime.CanonicalEgressList: lowercase
// A-labels, no trailing dot, a bare IPv4 address becomes its /32, CIDR host
// bits cleared), in the order given, with duplicates removed (the first
// occurrence wins): the platform treats the lists as sets, and so does the
// provider.
//
// # Reachability
//
// Only the APPLIED policy counts; a desired-but-unapplied policy changes
// nothing (a PUT is fail-open until applied). Before anything is applied a
// VM is open, except a VM created with create-time lists (even an empty
// denylist), which is blocked entirely until generation 0 is applied: the
// asymmetry the upstream pull request observed. An allowlist reaches a host
// iff some entry matches it (so [] reaches nothing); a denylist reaches a
// host iff no entry matches. A sandbox that is not RUNNING reaches nothing;
// a RUNNING container reaches everything (it has no egress control).
// Matching is prime.EgressEntry.MatchesHost: a hostname entry matches that
// exact name (case and one trailing dot ignored); "*.x" matches names under
// x at any depth but not x itself; IPv4 and CIDR entries match IPv4 hosts in
// the network. Names never match IP entries or the reverse (no DNS).
//
// # Exec language
//
// The gateway interprets a tiny shell-like language instead of running
// anything. Commands are separated by newlines, ";" and "&&" ("&&" skips the
// next command when the previous exit code is non-zero); words are split on
// blanks, with single quotes, double quotes and backslash escapes. The exit
// code is the last executed command's.
//
//	exit [N]              stop with exit code N (default 0; N mod 256)
//	echo [-n] TEXT        TEXT to stdout; "echo TEXT >&2" writes to stderr
//	sleep SECONDS         wait (decimal seconds, optional s/m/h suffix); a
//	                      script running past the request's timeout gets the
//	                      gateway's 408 timeout answer
//	probe HOST            exit 0 if HOST is reachable (see Reachability),
//	                      else exit 7 with a curl-like message on stderr
//	curl [flags...] URL   the same for the URL's host (scheme optional)
//	repeat N TEXT         TEXT N times, one per line (output-size tests)
//	anything else         exit 0, no output
//
// Pipes, redirections other than ">&2", variables and globs are not
// interpreted. Each stream is capped at MaxExecOutputBytes. Every execution
// is recorded as a command_executed event carrying the sandbox's applied
// generation when the command started.
//
// The gateway answers 401 for a missing, unknown or expired token, 403 for
// a token of another sandbox, 409 while the sandbox is not RUNNING yet, 502
// {"error":"sandbox_not_found",...} when the sandbox is gone or stopped, and
// 408 on a timeout. Only the REST /exec shape is served; the Connect RPC
// transport the Python SDK uses for VM sandboxes is not.
//
// # Faults and latency
//
// Latency (+ uniform jitter in [0, LatencyJitter)) applies to /api/v1 and to
// the gateway. FailRate and ThrottleRate apply to /api/v1 only, after
// authentication: the gateway's exec is never retried by clients, so
// injected gateway failures would only test that errors propagate. A
// throttled request gets 429 with Retry-After in whole seconds (RetryAfter
// rounded up, at least 1). Half of the injected 503s on POST, PUT and DELETE
// are post-action: the handler runs and changes state, then its answer is
// replaced by the 503, which is what makes idempotency keys and repeat
// deletes matter. Every random decision comes from one seeded source.
package primemock
