// Over 600 lines on purpose: this file is the package's one long doc comment (no code), read whole in godoc.

// Package primemock is an in-memory Prime Intellect Sandboxes API and
// gateway: an http.Handler that speaks the REST contract the Python SDK
// prime-sandboxes 0.2.39 uses, and the gateway's two command transports
// (REST exec for containers, the Connect RPC service
// command_session.CommandSession for VMs), closely enough that the provider,
// its acceptance tests, benchmarks, demos and users' own Terraform modules
// can run against it instead of the real platform. It never runs anything
// on the host: commands go to a small interpreted shell.
//
// The mock must not agree with the provider by construction. It imports
// internal/prime for wire types only; what the platform is known to enforce
// (the SDK's create validators, its egress entry and list rules) is the
// mock's own port of the SDK's code, and differential tests compare the two
// readings. Where the SDK's behaviour and the mock's disagree, the SDK wins.
// Behaviour no source supports is marked [I] here and [I: key] at the code;
// [C] marks what only an SDK comment or docstring says. Every rule the mock
// enforces, its source and the flag that changes it, and every [I: key],
// are in the conformance table: docs/guides/prime-mock.md (from
// templates/guides/prime-mock.md.tmpl; a test keeps the two in step). By
// default the mock refuses what the platform refuses: lifetimes end,
// owners are checked, inputs are validated and the published rate limits
// are enforced.
//
// It may import: the standard library, connectrpc.com/connect, google.golang.org/protobuf/..., golang.org/x/net/idna, internal/commandsession/..., internal/prime, internal/primemock/sandboxfs, internal/primemock/shell.
//
// It imports internal/prime for wire types only, the generated gateway
// protocol, and its own file system and shell; never internal/provider or a
// domain package. The provider's tests, soak, prime-bench, the demo and
// cmd/prime-mock import it.
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
//	DELETE /sandbox/{id}                         delete ([I] a repeat delete succeeds; a verifiers comment [C] says the platform answers 404, so clients must take both)
//	GET    /sandbox/{id}/egress-policy           egress policy status (VM only)
//	PUT    /sandbox/{id}/egress-policy           replace the egress policy (VM only)
//	GET    /sandbox/{id}/logs                    {"logs": "..."}
//	GET    /sandbox/{id}/error-context           {status, errorType, errorMessage}
//	POST   /sandbox/{id}/auth                    gateway token
//	POST   /sandbox/background-jobs/status:batchGet  background jobs' status (VMs; see Background jobs)
//
// and the newer APIs (see Checkpoints, pause, networks, volumes, images and
// SSH below):
//
//	POST   /sandbox/{id}/checkpoints             checkpoint a running VM (optional {"ttl_seconds"}) → 202
//	GET    /sandbox/{id}/checkpoints[?checkpoint_id=]  {"checkpoints"}, oldest first
//	DELETE /sandbox/{id}/checkpoints             {"deleted", "errors"} (pending ones and the active tip CONFLICT, kept)
//	GET    /sandbox/checkpoints[?team_id&sandbox_id&cursor]  a page of 50, {"checkpoints", "next_cursor"}
//	DELETE /sandbox/checkpoints[?team_id&sandbox_id&cursor]  a page of 50, {"deleted", "errors", "next_cursor"}
//	GET    /sandbox/checkpoints/{checkpoint_id}  one checkpoint
//	DELETE /sandbox/checkpoints/{checkpoint_id}  204, no body (409 while PENDING or FROZEN)
//	POST   /sandbox/checkpoints:batchGet         {"checkpoint_ids"} → {"checkpoints", "errors"}
//	POST   /sandbox/{id}/pause, /resume          202 with the sandbox; PAUSED / RUNNING later
//	POST   /sandbox/networks                     201; GET /sandbox/networks[?team_id], GET|DELETE (204) /sandbox/networks/{id}
//	PUT    /sandbox/networks/{id}/rules          replace the rules
//	PUT    /sandbox/networks/{id}/members/{sandbox_id}   add a member or replace its tags; DELETE: 204
//	POST   /sandbox/volumes                      201; GET /sandbox/volumes[?team_id], GET|DELETE /sandbox/volumes/{name}
//	PATCH  /sandbox/volumes/{name or owner/name} grow and/or set visibility
//	POST   /sandbox/{id}/volumes/{name}/publish  → 202 with the publish's checkpoint
//	GET    /images[?limit&offset]                artifacts, paged by logical image
//	POST   /images/{name}/{tag}/vm-build         201 {success, message, buildId, artifactBuildId}
//	GET    /images/build/{build_id}              {id, status, imageName, imageTag, ...}
//	POST   /sandbox/{id}/ssh-session             {session_id, sandbox_id, host, port, expires_at, ttl_seconds}
//	DELETE /sandbox/{id}/ssh-session/{session_id}  close
//
// The gateway (what the auth answer's gateway_url points at, derived from
// the request's Host so it works behind httptest and -addr), authenticated
// with the gateway token as "Authorization: Bearer <token>":
//
//	POST   /gateway/{user_ns}/{job_id}/exec                                 REST exec (containers)
//	POST   /gateway/{user_ns}/{job_id}/command_session.CommandSession/{Method}  Connect RPC (VMs)
//	POST   /gateway/{user_ns}/{job_id}/upload?path=P&sandbox_id=ID          multipart field "file" (both kinds)
//	GET    /gateway/{user_ns}/{job_id}/download?path=P&sandbox_id=ID        raw bytes (both kinds)
//	GET    /gateway/{user_ns}/{job_id}/read-file?path=P[&offset=N&length=N] {content, size, ...} (both kinds)
//
// Introspection, no authentication, never subject to latency or faults:
//
//	GET    /_mock/stats                          request counts per route template and counters
//	GET    /_mock/events[?sandbox_id=ID][&since=SEQ|RFC3339]
//	POST   /_mock/reset                          forget every sandbox, token, process, event and counter
//	GET    /_mock/sandbox/{id}/reachable?host=H  {"reachable": bool} under the APPLIED policy
//	GET    /_mock/sandbox/{id}/file?path=P       a file's raw bytes (404 when it or the sandbox is missing)
//	GET    /_mock/sandbox/{id}/files?path=DIR    {"path", "files": [FileInfo...]}
//	POST   /_mock/sandbox/{id}/terminate         Server.TerminateSandbox: {"reason": "timeout"|"oom"|"cancel"}
//	                                             or {"status", "error_type", "error_message"}
//
//	GET    /_mock/sandbox/{id}/peer?to=ID&port=N {"reachable", "network_id", "reason"} over private networks
//	GET    /_mock/checkpoints/{id}/files?path=DIR a checkpoint's stored files
//	GET    /_mock/config                         the current knobs
//	POST   /_mock/config                         change knobs at runtime (partial JSON, see ConfigPatch)
//	GET    /_mock/clock                          {now, rate, ahead}: the mock clock
//	POST   /_mock/clock                          {"advance": "61m"} and/or {"rate": 60} (see Lifecycle)
//
// Stats count requests under their route template, e.g. "GET
// /api/v1/sandbox/{id}", "POST /gateway/{user_ns}/{job_id}/exec", "POST
// /gateway/{user_ns}/{job_id}/upload" and "POST
// /gateway/{user_ns}/{job_id}/command_session.CommandSession/Start" (one key
// per procedure; unknown procedure names count under ".../{method}").
// Stats also report injected_gateway_503 and the file store's file_blobs and
// file_blob_bytes (distinct contents shared by every sandbox).
//
// # Knobs
//
// Options (Go), ConfigPatch keys (POST /_mock/config, durations as Go
// duration strings) and cmd/prime-mock flags:
//
//	BootDelay          boot_delay          -boot-delay          PENDING + PROVISIONING time (default 100ms)
//	ApplyDelay         apply_delay         -apply-delay         time to apply an egress policy (default 50ms)
//	ImageBuildDelay    image_build_delay   -image-build-delay   PENDING time of a "prime-mock/build" image (default 200ms)
//	Latency            latency             -latency             added to every API and gateway request
//	LatencyJitter      latency_jitter      -latency-jitter      plus a uniform draw in [0, jitter)
//	NeverApply         never_apply         -never-apply         accept policies, never apply them
//	FailRate           fail_rate           -fail-rate           probability of an injected 503 (API only)
//	ThrottleRate       throttle_rate       -throttle-rate       probability of an injected 429 (API only)
//	RetryAfter         retry_after         -retry-after         Retry-After of injected 429s (default 1s)
//	TokenTTL           token_ttl           -token-ttl           gateway token lifetime (default 10m)
//	Seed               seed                -seed                the one random source (0: time-based)
//	GatewayLag         gateway_lag         -gateway-lag         gateway registration after RUNNING (default 300ms)
//	KeepaliveInterval  keepalive_interval  -keepalive-interval  keepalive period of Start streams (default 2s)
//	SleepScale         sleep_scale         -sleep-scale         factor on the wall time of every shell sleep (default 1)
//	ReadFileLimit      read_file_limit     -read-file-limit     bytes read-file answers before 413 (default 10 MiB [I])
//	UploadFailRate     upload_fail_rate    -upload-fail-rate    probability of an injected 503 per upload (half after the write)
//	DownloadFailRate   download_fail_rate  -download-fail-rate  probability of an injected 503 per download or read-file
//	GatewayOutageUntil gateway_outage      -gateway-outage      the gateway is out until then (patch and flag: a duration from now)
//	JobBatchUnsupported job_batch_unsupported -job-batch-unsupported  the job batch endpoint answers 404
//	EgressPutAnswer    egress_put_answer   -egress-put-answer   the 202's body: status (default), minimal ({"generation"}), empty
//	NoRateLimits       rate_limits (false) -rate-limits=false   stop enforcing the published rate limits (on by default; see Rate limits)
//	ClockRate          clock_rate          -clock-rate          mock seconds per real second on the mock clock (default 1)
//	ValidationErrors   validation_errors   -validation-errors   the 422 shape: list (default), errors or string
//	TeamMembers        team_members        -team-member T=KEY   the keys a team admits (a team never named admits every key)
//	RateLimitScale     rate_limit_scale    -rate-limit-scale    factor on every limit (default 1)
//	RequestEvents      (not exposed)       (none)               log every counted /api/v1 request as an api_request event
//	APIKey             (not exposed)       -api-key             the only API key accepted
//	CheckpointFreezeDelay  checkpoint_freeze_delay  -checkpoint-freeze-delay  PENDING → FROZEN (default 50ms)
//	CheckpointDurableDelay checkpoint_durable_delay -checkpoint-durable-delay FROZEN → DURABLE, and a publish's merge (default 100ms)
//	CheckpointFailRate     checkpoint_fail_rate     -checkpoint-fail-rate     probability a checkpoint goes FAILED
//	RestoreDelay       restore_delay       -restore-delay       boot time of a restore (default 100ms)
//	PauseDelay         pause_delay         -pause-delay         accepted pause → PAUSED (default 50ms)
//	ResumeDelay        resume_delay        -resume-delay        accepted resume → RUNNING (default 50ms)
//	ResumeLimit        resume_limit        -resume-limit        refuse resumes at this many active sandboxes (0: none)
//	ImagesWithoutVM    images_without_vm   -image-without-vm    images whose VM creates fail until a vm-build
//	VMBuildDelay       vm_build_delay      -vm-build-delay      how long a vm-build takes (default 200ms)
//	NetworkDefaultAllow network_default_allow -network-default-allow  a network created without rules allows all
//
// GatewayLag 0 in Options selects the default and a negative value means no
// lag; gateway_lag "0s" and -gateway-lag 0 mean no lag. gateway_outage reads
// back as what is left of the outage ("0s" ends one); GatewayOutageUntil is
// on the real clock. Changing a knob re-plans pending policy applications and
// gateway registrations; a new sleep_scale applies to sleeps that start
// after it; an outage that begins cuts what is in flight (Faults).
//
// # Lifecycle
//
// A sandbox is PENDING for half of BootDelay, PROVISIONING for the other
// half, then RUNNING (startedAt set). DELETE makes it TERMINATED at once
// (terminatedAt set), ends its running commands and background processes
// and forgets its files; records stay readable until Reset. A sandbox that
// goes to ERROR loses its files too.
//
// Lifetimes and idle timeouts run on the mock clock, which is also the time
// the mock reports: timeout_minutes (default 60, negative: none) from the
// create, paused time included, and idle_timeout_minutes while RUNNING and
// no gateway command runs (commands, uploads, downloads and file reads
// restart it; status reads do not). Either ends the sandbox TIMEOUT
// (errorType TIMEOUT; event sandbox_ended). ClockRate speeds the clock up
// (3600: a 60-minute lifetime in a second) and POST /_mock/clock (or
// Server.AdvanceClock) moves it forward at once.
//
// The platform can also end a live sandbox on its own (its lifetime
// timeout, an OOM kill, a cancellation): Server.TerminateSandbox and POST
// /_mock/sandbox/{id}/terminate do that at a moment a test picks, e.g. in
// the middle of a background job. The sandbox goes to the given final
// status (Terminations: timeout is TIMEOUT with errorType TIMEOUT, oom is
// ERROR with OOM_KILLED, cancel is TERMINATED without an error type
// [I: the statuses and messages; the SDK names the error types]), its
// processes stop and its files go; GET /sandbox/{id}/error-context, the
// batch status and the sandbox object (terminationReason) carry the reason,
// and the job batch answers NOT_RUNNING for its jobs. Event sandbox_ended.
//
// Server.Pause and Server.Resume pause and resume at once, without the
// API's PauseDelay and ResumeDelay (see Checkpoints, pause, ... below), for
// tests that need a PAUSED sandbox now.
//
// The gateway learns of a RUNNING sandbox GatewayLag later (the SDK: "a
// RUNNING control-plane status can briefly lead gateway registration"; its
// reachability wait retries the miss). Until then both transports answer as
// if the sandbox did not exist: REST 502 {"error":"sandbox_not_found",...},
// Connect not_found. The gateway_ready event marks the end of the lag.
//
// Magic images, matched as substrings of docker_image:
//
//	prime-mock/error   boots, then goes to ERROR instead of RUNNING
//	                   (errorType IMAGE_PULL_FAILED, an errorMessage naming
//	                   the image, terminationReason IMAGE_PULL_FAILED)
//	prime-mock/build   stays PENDING with pendingImageBuildId set for
//	                   ImageBuildDelay before the normal boot starts
//
// and a magic name, matched as a substring of the sandbox's name, so one
// member of a fleet (all created from one template) can fail alone:
//
//	prime-mock-oom     boots, then goes to ERROR (errorType OOM_KILLED)
//
// These are test knobs, not platform behaviour.
//
// # Create
//
// The body is checked as the SDK's CreateSandboxRequest validators check it,
// in their order, and the first broken rule is a 422 {"detail": <the SDK's
// message>}: name and docker_image are required; an argv start command needs
// an executable and no NUL bytes; gpu_count > 0 needs a gpu_type and not
// vm false, a gpu_type needs gpu_count > 0; guaranteed and a non-empty
// registry_credentials_id need vm false; egress lists need a VM and pass
// validate_egress_lists; idle_timeout_minutes >= 1 and <= timeout_minutes
// when that is > 0. [C] A container with an idle timeout needs
// timeout_minutes > 0. [C] A legacy string start command on the VM path (vm
// true or absent) is dropped, not refused: the SDK's default create sends
// "tail -f /dev/null" without a vm key. Absent keys take the SDK's defaults
// [I: the SDK always sends them]; an absent vm is a VM (the platform
// default). Beside the SDK's rules (see createfields.go): name 1-100
// characters and docker_image at least 1 [OA-r]; cpu_cores 1-16, memory_gb
// above 0 and at most 64, disk_size_gb above 0 and at most 1,000, gpu_count
// 0-8 (the maxima only from the older reference [OLD]); variable and secret
// names valid, values without NUL bytes, a name not both a variable and a
// secret [PR #805]. Request validation errors are FastAPI's list
// {"detail": [{"loc", "msg", "type"}]} (ValidationErrors); the lifetime of
// 0 is a plain detail, as the live platform answered it.
//
// [I] An idempotency_key seen before from the same API key returns the
// original sandbox in its current state, whatever the body. [I]
// "labels": null is a 422 (the SDK never sends it), and unknown keys are
// ignored, as pydantic models do by default.
//
// # List and bulk delete
//
// A list shows the caller's own sandboxes, or with team_id the team's;
// per_page is 1 to 1,000 [OLD] (a 422 beyond, never cut). [I] A bulk delete
// needs sandbox_ids or labels (a 422 otherwise), deletes by label only the
// caller's sandboxes, and reports an unknown or another owner's ID in failed
// as "Sandbox not found".
//
// # Egress policy
//
// VM sandboxes only ([I] a container, or a sandbox in a terminal status,
// answers 409 {"detail"}; the evidence only infers a 4xx). A PUT is taken
// only by a RUNNING or PAUSED sandbox [OA]: a booting one is 409 [I]. A fresh VM
// reports policy {allowlist: null, denylist: []}, generation 0,
// applied_generation -1, applied false (the SDK's fixture), also while
// RUNNING: there is nothing to apply, its egress is open. [I]
// Create-time lists are the first policy, generation 0; [C] the first PUT is
// generation 1; [I] each later one adds 1, even an unchanged policy.
// Every generation but an untouched VM's (create-time lists included) is
// applied ApplyDelay after the later of its acceptance and RUNNING. [I] The
// sandbox object's networkAllowlist/networkDenylist and
// advancedConfigs.vmEgressPolicy mirror the desired policy: the create-time
// lists, then every accepted PUT (null on a VM never given lists).
// applied_generation never goes backwards and applied = applied_generation
// >= generation. With NeverApply, policies are accepted but nothing is ever
// applied (the upstream platform gap in which applied_generation stays -1).
//
// A PUT is answered 202 once the desired generation is persisted [OA]; the
// data plane applies it asynchronously, ApplyDelay later (on a paused
// sandbox, after the resume). [I] The 202's body is the policy status,
// as GET answers it; EgressPutAnswer "minimal" answers {"generation": N}
// and "empty" no body at all, for clients that must cope with either.
// [I] Connections are not modelled (curl and probe are instantaneous),
// so "established flows are not revoked" has nothing to act on.
//
// A PUT body must carry both keys [I: 422 otherwise], exactly one of
// them a list [I: 422 otherwise], at most 256 entries, each valid by the
// SDK's entry rule (which the SDK calls a mirror of the API's contract).
// Entries are checked exactly as the SDK's _validate_egress_entry checks
// them: Python str.strip() whitespace, Python ipaddress strictness (strict
// IPv4; CIDRs with host bits, netmasks and hostmasks; IPv6 refused), then
// the forbidden substrings "://", "@", ":", "?", the "*." wildcard and empty
// labels. The mock accepts what the SDK accepts, which includes much a
// hostname grammar would refuse ("a b.com", "256.1.1.1", "a_b.com").
//
// Stored entries are canonical [C: "lowercase, IDNA, /32"; the rest is a
// inferred]: a bare IPv4 address becomes its /32; a CIDR loses its host bits and
// is written with a prefix length; names are lowercased, or IDNA-mapped to
// A-labels when not ASCII, and lose their trailing dots; a name that is then
// a strict IPv4 address becomes its /32; a canonical form that would not be
// an entry of the same kind is refused (422); later duplicates of a
// canonical form are dropped.
//
// # Reachability
//
// Only the APPLIED policy counts; a desired-but-unapplied policy changes
// nothing (a PUT is fail-open until applied). Before anything is applied a
// VM is open, except a VM created with create-time lists, which is blocked
// entirely until generation 0 is applied: the asymmetry the upstream pull
// request observed [C, for network_allowlist=["example.com"]; inferred for
// other lists, an empty denylist included]. An allowlist reaches a host
// iff some entry matches it (so [] reaches nothing); a denylist reaches a
// host iff no entry matches. A sandbox that is not RUNNING reaches nothing;
// a RUNNING container reaches everything (it has no egress control). The
// mock's matcher: a name entry matches that name (case, IDNA and one
// trailing dot of the host ignored); "*.x" matches names under x at any
// depth but not x itself; CIDR entries match IPv4 hosts in the network.
// Names never match address entries or the reverse (no DNS).
//
// # Command transports
//
// Both transports authenticate the gateway token first: missing, unknown or
// expired is 401 (REST) or unauthenticated (Connect); [I] a token of
// another sandbox is 403 or permission_denied. [I] Tokens are issued
// whatever the sandbox's status.
//
// REST exec (containers): the SDK's body {command, working_dir, env,
// sandbox_id, timeout, user}; 200 {stdout, stderr, exit_code} for any exit
// code; [I] 409 while PENDING or PROVISIONING; 502 sandbox_not_found when the
// sandbox is gone or terminal or during the gateway lag; 408 command_timeout
// when the script outlives the request's timeout (the script stops); a
// client that goes away stops it too. The user field is accepted and
// ignored. [I] An exchange cut by an outage leaves its script running
// until it ends or its timeout passes. [I] A VM's REST exec is refused
// with 400 {"error":"exec_not_supported",...}: the SDK never sends it.
//
// Connect (VMs): Start (server streaming), SendSignal and List; Connect,
// Update, StreamInput and SendInput answer unimplemented. Status mapping: a
// sandbox that is gone or terminal is not_found; [I] a container is
// unimplemented (the SDK says containers do not expose the transport, and a
// Connect client reads a missing route as unimplemented); [I] PENDING or
// PROVISIONING is unavailable; RUNNING during the gateway lag is not_found.
//
// Start takes what the SDK sends: cmd "/bin/bash", args ["-c", SCRIPT],
// envs, an optional cwd, and stdin (false for a command; true from the SDK's
// open_process, accepted, but the script reads nothing). [I] Anything
// else (another program or arguments, a pty) is invalid_argument. The stream
// is a start event with the pid [I: pids count up from 1000 per sandbox],
// data events as output is produced (adjacent writes merged up to 64 KiB),
// keepalive events every KeepaliveInterval, and an end event: {exit_code,
// exited true, [I] status "exit"} or, after a signal,
// [I] {exit_code 143 or 137, exited false, status "signal: terminated" or
// "signal: killed"}. The Connect-Timeout-Ms deadline is honoured: when it
// passes, the stream ends with deadline_exceeded. [I] The process keeps
// running after its stream ends (deadline or client gone) until its script
// finishes or it is signalled; its output is then dropped. [I] A sandbox
// deleted under a running process ends the stream with not_found.
//
// SendSignal(session {pid | tag}, SIGNAL_SIGTERM | SIGNAL_SIGKILL) stops a
// running process at its next step or during a sleep: SIGTERM with 143
// unless the script ignores it (trap ” TERM) or handles it (the handler runs
// after the running command, as in bash), SIGKILL always with 137. An unknown
// or finished process is not_found; another signal is invalid_argument. List
// returns the running processes (command spec, pid, tag), by pid. [I]
// Both know only the processes Start started: background processes a script
// started ("&") are not listed and not signalled by SendSignal (kill in a
// script reaches them). [I] An outage cuts a Start stream with
// unavailable; its process keeps running.
//
// # Files
//
// Every sandbox has a file system of its own, in memory: directories,
// regular files (bytes and mode) and symlinks, resolved as the kernel
// resolves paths (symlinks in the directory part always, the last one unless
// the operation acts on the link; 40 hops at most). [I] It starts as a
// Debian-like skeleton: /, /bin, /dev (with /dev/null), /etc (hostname: the
// sandbox id, os-release), /home, /opt, /root, /sandbox-workspace (the
// sandbox object's diskMountPath), /srv, /tmp, /usr/bin, /usr/local/bin,
// /usr/sbin, /var/log and /var/tmp. Contents live in a store shared by every
// sandbox, keyed by SHA-256 and reference counted: a thousand sandboxes
// given one archive, and the files unpacked from it, hold one copy. A file is
// at most MaxFileBytes ([I] 256 MiB, the mock's bound). A sandbox's files
// vanish when it is deleted (DELETE, bulk delete), goes to ERROR, or on Reset.
//
// Go introspection: Server.ReadFile, Server.WriteFile (creates the parent
// directories), Server.ListFiles and Server.WaitForFile (waits, without
// polling, until a file's content matches).
//
// The gateway's file routes serve VMs and containers alike (files never go
// over Connect); they authenticate and map sandbox states as REST exec does
// (401/403, 502 sandbox_not_found, [I] 409 while booting), a sandbox_id
// query parameter must match the token ([I] 400), and they take absolute
// paths only ([I] 400 otherwise: [C] the upload is done by a sidecar, not
// in a command's working directory). Errors use the gateway's JSON shape
// {"error", "message", "code", "sandboxId"}.
//
// Upload reads the multipart body as a stream and stores the field "file",
// creating the missing parent directories [G: uploads create parents and
// overwrite; I: 0755], at most MaxUploadBytes (16 MiB [G]) per file
// ([I] 413 beyond it, and nothing is written):
// 200 {"success": true, "path", "size", "timestamp"}; a new file is [I]
// 0644, a replaced one keeps its mode. [I] A parent that is a file is
// 400 upload_failed (a status clients do not retry), a directory is 400, a
// body without the field 400.
//
// Download answers the raw bytes (application/octet-stream, Content-Length);
// [I] a missing file is 404 file_not_found (the SDK's test only asserts an
// error), a directory 400.
//
// Read-file answers {"content": text, "size": bytes answered}; 404 when the
// file is missing; 413 file_too_large (the message says why; the SDK's
// SandboxFileTooLargeError) past ReadFileLimit (10 MiB, the platform's read
// limit [G]). [C] VMs
// ignore offset and length: the whole file, without total_size, offset and
// truncated, and the limit applies to the file. Containers answer the window
// with total_size, offset (where the window starts) and truncated, and the
// limit applies to the window; [C] a negative offset counts from the end;
// [I] offset and length clamp to the file, truncated means the window
// does not cover the whole file, a negative length or a non-integer is 400.
// [I] Bytes that are not valid UTF-8 become U+FFFD, one per byte
// (binary files belong to download).
//
// # Background jobs
//
// The SDK's start_background_job sends one ordinary command (timeout 30 s):
//
//	nohup sh -c '<SH>' < /dev/null > /dev/null 2>&1 &
//
// with <SH> = "(<export K=V; ...; ><cd DIR && ><command>) >
// /tmp/job_<id>.stdout.log 2> /tmp/job_<id>.stderr.log; echo $? >
// /tmp/job_<id>.exit" shell-quoted, <id> 8 lowercase hex digits. The
// provider's wrapper (not the SDK's) adds a process group and a pgid file,
// keeping the canonical paths:
//
//	nohup setsid sh -c 'echo $$ > /tmp/job_<id>.pgid; (cd DIR && <command>) > ...; echo $? > /tmp/job_<id>.exit' < /dev/null > /dev/null 2>&1 &
//
// Both run as written (see Shell language): the request returns at once, the
// job runs as a background process until its script ends, it is killed or
// the sandbox stops, and "kill -TERM -- -PGID" stops the sh and its subshell
// before the exit line runs.
//
// POST /api/v1/sandbox/background-jobs/status:batchGet {"jobs":
// [{"sandbox_id", "job_id"}]} is an /api/v1 route (API key, latency, faults;
// an outage fails it too). [I] What the SDK's client refuses (not 1 to
// 100 entries, a job_id not matching [0-9A-Fa-f]{8}, repeated pairs, missing
// or mistyped keys) is 422 {"detail"}. The answer, 200 {"statuses":
// [{"sandbox_id", "job_id", "completed", "exit_code"?}], "errors":
// [{"sandbox_id", "job_id", "code", "message"}]}, holds every job in exactly
// one list: [C] the platform reads the canonical exit file; missing, empty
// or not an integer is completed false without exit_code, an integer is
// completed true with it. Errors: NOT_FOUND (unknown sandbox), FORBIDDEN
// (another API key's), NOT_VM (a container), NOT_RUNNING ([I] any status
// but RUNNING, terminated included); [I] the messages. With
// JobBatchUnsupported it answers 404 {"detail": "Not Found"}, which makes the
// SDK fall back to per-job reads for good.
//
// # Shell language
//
// Both transports run commands in the mock's own interpreted shell (package
// internal/primemock/shell, whose documentation says what it understands),
// on the sandbox's in-memory file system (internal/primemock/sandboxfs).
// What it does not interpret is refused with shell.ExitUnsupported, never
// run on the host.
//
// # Events
//
// GET /_mock/events and Server.Events list, in order (seq), with the keys
// that mean something for each type:
//
//	sandbox_created, sandbox_provisioning, sandbox_running, sandbox_deleted
//	                    status (created: policy for create-time lists)
//	sandbox_error       status, error_type
//	gateway_ready       status: the gateway lag is over
//	api_request         route, size (the sandboxes a batch names): an /api/v1
//	                    request the rate limits counted (RequestEvents only)
//	policy_put          generation, policy
//	policy_applied      generation: the data plane enforces it
//	policy_observed     generation: the first egress-policy answer that told
//	                    a client it was applied
//	command_started     command, transport ("rest", "connect" or "background":
//	                    a process started with "&", whose command is the
//	                    script of its sh -c, or the list's text), pid,
//	                    applied_generation when it started
//	command_executed    command, transport, pid, exit_code (-1 when it did
//	                    not finish: a REST timeout or the sandbox gone),
//	                    applied_generation when it started, timed_out (REST:
//	                    the request's timeout; Connect: the stream's deadline
//	                    passed first), signalled and signal
//	command_signalled   command, transport, pid, signal ("SIGTERM"/"SIGKILL"):
//	                    SendSignal, or kill in a script reaching a reported
//	                    process
//	file_uploaded       path, size (also when an injected 503 replaced the answer)
//	file_downloaded     path, size
//	file_read           path, size (the bytes answered)
//
// and the resource events, with their keys after the common ones:
//
//	checkpoint_created  sandbox_id, checkpoint_id, state PENDING, memory (a
//	                    pause checkpoint), volume (a publish)
//	checkpoint_state    sandbox_id, checkpoint_id, state FROZEN, DURABLE or
//	                    FAILED (message)
//	checkpoint_merged   a publish's merge is done (checkpoint_id, volume)
//	checkpoint_deleted, checkpoint_discarded  gone: deleted (or its ttl passed),
//	                    or discarded with its sandbox before DURABLE (message)
//	sandbox_restored    sandbox_id, checkpoint_id, memory: a create from a
//	                    checkpoint (after sandbox_created)
//	pause_requested, sandbox_paused, resume_requested, sandbox_resumed
//	resume_refused      message: a resume refused at ResumeLimit
//	network_created, network_deleted, network_rules_replaced  network_id
//	network_member_put  network_id, sandbox_id, tags
//	network_member_removed  network_id, sandbox_id (message when it ended)
//	network_connect     a shell's curl or probe of a member address:
//	                    sandbox_id, peer, port, allowed, network_id (the
//	                    network that allowed it) or message (why not)
//	volume_created, volume_updated, volume_deleted  volume
//	volume_attached     sandbox_id, volume, path, read_only, checkpoint_id
//	                    (the head copied; absent while never published)
//	volume_published    sandbox_id, volume, checkpoint_id, path
//	volume_head         volume, checkpoint_id: the publish is the new head
//	image_build         image (name:tag), build_id, state
//	ssh_session_opened, ssh_session_closed  sandbox_id, session_id (message)
//
// # Faults and latency
//
// Latency (+ uniform jitter in [0, LatencyJitter)) applies to /api/v1 and to
// the gateway. FailRate and ThrottleRate apply to /api/v1 only, after
// authentication: the gateway's commands are not retried by clients, so
// injected gateway failures would only test that errors propagate. A
// throttled request gets 429 with Retry-After in whole seconds (RetryAfter
// rounded up, at least 1). Half of the injected 503s on POST, PUT and DELETE
// are post-action: the handler runs and changes state, then its answer is
// replaced by the 503, which is what makes idempotency keys and repeat
// deletes matter. UploadFailRate and DownloadFailRate inject 503s
// {"error": "service_unavailable"} on the gateway's file routes (half of the
// upload ones after the file was written, which is why uploads must be
// idempotent). Every random decision comes from one seeded source.
//
// # Rate limits
//
// The platform publishes limits per 60 s [OA]: per sandbox, egress PUT 120,
// egress GET 300, sandbox GET 300, logs 300, gateway auth 120,
// error-context 600, pause and resume 60, and status:batchGet and the job
// batch 300 for each sandbox a request names; per API key, create 15,000,
// list 1,000, delete 500. The mock counts every request against them in a
// sliding 60-second window and reports, in Stats.RatePeaks, the most
// requests one sandbox (or key) made in any window, per limit: a client's
// margin, measured whether or not it is enforced. Unless NoRateLimits, a
// request whose window is full is answered 429 {"detail": "Rate limit
// exceeded"} with Retry-After (whole seconds until the window has room)
// [I: the contract shows neither the 429 nor any rate-limit header],
// and it counts nowhere; Stats.RateLimited429 counts them. RateLimitScale
// multiplies every limit (at least 1), so a test reaches one quickly.
//
// During a gateway outage (GatewayOutageUntil) every gateway request (REST
// exec, Connect calls, upload, download, read-file) and the job batch
// endpoint fail: REST with 503 and [I] the HTML page an edge proxy
// (nginx) sends, Connect with unavailable. When an outage begins, the
// Connect streams and REST exec exchanges in flight are cut the same way;
// the processes they started keep running. The rest of /api/v1 is up.
//
// # Checkpoints, pause, networks, volumes, images and SSH
//
// Scopes: a request's scope is its team_id (a body key on creates, a query
// parameter on lists and volume calls) or, without one, the caller's own
// account (its API key). Everything addressed by an ID belongs to a scope,
// and another scope's sandbox, checkpoint, network or volume is not found
// [I] (the status batch says FORBIDDEN, checkpoints:batchGet NOT_FOUND);
// a team the key does not belong to (TeamMembers) is 403 [I].
//
// Checkpoints. A checkpoint is taken of a RUNNING VM ([I] 409
// otherwise, also while a pause is pending). [I] The mock copies the
// root file system when the request arrives, without the sandbox's volume
// mounts (checkpoints never hold volumes); the record is PENDING, FROZEN
// after CheckpointFreezeDelay, then after CheckpointDurableDelay DURABLE, or
// FAILED with an error ("upload failed (simulated by prime-mock)") at
// CheckpointFailRate or always for a sandbox whose name contains
// MagicCheckpointFailName. Records are snake_case as the SDK parses them;
// stored_bytes is the files' size once DURABLE; [I] the create answers
// 202 with the record. ttl_seconds (a positive number, [I] no other
// bound) deletes it that long after the request. A checkpoint that is not
// DURABLE when its sandbox is deleted or fails is discarded: it reads as
// NOT_FOUND from then on; a DURABLE one outlives its sandbox. [I] A
// single DELETE of a PENDING or FROZEN checkpoint is 409 (the per-sandbox
// delete reports those as CONFLICT, as published); a deleted checkpoint is
// gone at once (no DELETING phase); depth and parent_id follow restores.
// The per-sandbox delete and the owner delete (DELETE /sandbox/checkpoints,
// one page of the owner's, {"deleted", "errors", "next_cursor"}) keep
// pending checkpoints and the active tip of a running sandbox and report
// them CONFLICT [OA]; [I] the tip is the running sandbox's newest
// checkpoint of its root disk, or the one it was restored from, and a
// single DELETE of it succeeds (its page: the data is kept while
// descendants need it). [I] The owner list and delete page by 50 with an
// opaque cursor.
//
// Restores. A create with checkpoint_id must omit docker_image and
// disk_size_gb (422, the SDK's "omit docker_image" rule) and takes the
// checkpoint's; restore_memory without checkpoint_id is 422, and with a
// checkpoint that has no memory 409 (as published); with a pause
// checkpoint it takes the paused sandbox's CPU and memory (the paused
// shape, as published), whatever the create sends. [I] An unknown
// checkpoint, or one of another scope, is 404; one that is not DURABLE, or a
// volume publish, 409. The new sandbox boots in RestoreDelay from a private
// copy of the checkpoint's file system ([I] /etc/hostname then names the
// new sandbox), so every file the checkpointed sandbox had exists in every
// restored one; processes do not survive ([I] also with restore_memory:
// the shell cannot carry memory). [I] A restore may carry create-time
// egress lists and volumes like any create.
//
// Pause and resume (VMs only; [I] 409 for a container, a booting or a
// terminal sandbox). [I] Both answer 202 with the sandbox, and a repeat
// while pending or done is accepted again. A pause leaves the sandbox
// RUNNING for PauseDelay, then PAUSED: the gateway forgets it (commands and
// file transfers fail as for a sandbox that is not running), its command
// streams, [I] background processes and SSH sessions end, new
// connections to it are refused, and a pause checkpoint with memory starts
// uploading. An egress PUT while paused is accepted and applied ApplyDelay
// after the resume. A resume is refused with [I] 409 (synchronously; the
// sandbox stays PAUSED) while the caller has ResumeLimit active sandboxes
// (booting or running; paused ones do not count); otherwise the sandbox is
// RUNNING after ResumeDelay and the gateway knows it GatewayLag later.
// Paused time counts toward timeout_minutes [G]; a paused sandbox does not
// idle out [I].
//
// Networks. A network is created with rules (validated: selectors "*" or
// "tag:<name>" with [I] the tag grammar [A-Za-z0-9][A-Za-z0-9_.-]{0,62},
// and [I] at least one port per rule, each 1-65535). The published
// default for a network created without a rules key is contradictory:
// NetworkDefaultAllow false (the API text, the default) allows nothing,
// true (the guide's example) lets every member reach every other ([I]
// shown as "allow_all": true beside empty rules) until rules are PUT.
// [I] Members are RUNNING VMs of the network's scope (another scope's
// sandbox is 404, one not running 409); a member that ends leaves its
// networks. A member reaches another at <id>.sandbox.internal when both are
// RUNNING members of one network and a rule matches the source's tags, the
// peer's tags and the port. [I] The egress policy does not govern this
// traffic. The shell's curl checks the URL's port (80 for http, 443
// otherwise) and probe takes HOST[:PORT] (443 by default); each attempt is a
// network_connect event. [I] The answers of PUT rules and PUT member are
// the network; DELETE of a network or member is 204.
//
// Volumes. [I] The record is {name, owner, team_id, size_gb,
// visibility PRIVATE|PUBLIC, head_checkpoint_id, created_at, updated_at};
// names follow the published pattern; size_gb is 1-100 and only grows
// (422); a name is unique in its scope (409); PATCH takes name or
// owner/name, and another owner's volume is 404; DELETE answers 200
// {success, message}; a PUBLIC volume of another owner attaches by
// owner/name. The create request's volumes are [I]
// [{name, mount_path, read_only}] (at most 8, absolute mount paths, none
// twice; 422 otherwise, 404 for a volume the caller cannot see). A new
// sandbox gets a private copy of each volume's head at its mount path (an
// empty directory before the first publish). A publish (a RUNNING VM, a
// read-write attachment: read-only is 409) copies the mount path into a
// checkpoint with merge "pending"; once DURABLE and CheckpointDurableDelay
// later its merge is [I] "merged" and it is the volume's head, for
// sandboxes created from then on. [I] Read-only mounts and sizes are not
// enforced on writes.
//
// Images. [I] A caller sees the images its own (or its team's) creates
// used (a CONTAINER and a VM_SANDBOX artifact, COMPLETED) and, everyone,
// those of ImagesWithoutVM (a CONTAINER artifact only), one logical image
// per name:tag. A VM create from an image without a VM artifact fails with
// [I] 400 "VM image not found: ..." (restores and containers are not
// checked). vm-build of a known name:tag starts a build ([I] 201):
// PENDING, BUILDING from half of VMBuildDelay, COMPLETED after it (or, for
// an image whose name contains MagicVMBuildFailName, FAILED with an
// errorMessage [I]); the list then shows a VM_SANDBOX row with the
// build's status. [I] A second
// request during the build returns it again (200); one for an image that
// already has a VM artifact is 409, an unknown image 404.
//
// SSH sessions (a RUNNING VM; [I] 409 otherwise): public_key must be an
// OpenSSH public key line, ttl_seconds 1-3600, default 900 [OLD reference].
// [I] The answer's host is the API's own and the port counts up from
// 2200; the mock serves no SSH. A session ends when closed (200 {success,
// message}; then 404), when it expires, or when its sandbox pauses or ends.
package primemock
