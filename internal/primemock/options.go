package primemock

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"
)

// Defaults for zero (or negative) Options durations. They are small so tests
// and demos are fast, but never zero: a sandbox always goes through PENDING
// and PROVISIONING, and a policy is never applied inside the PUT itself.
const (
	DefaultBootDelay       = 100 * time.Millisecond
	DefaultApplyDelay      = 50 * time.Millisecond
	DefaultImageBuildDelay = 200 * time.Millisecond
	DefaultTokenTTL        = 10 * time.Minute
	DefaultRetryAfter      = time.Second
	// DefaultGatewayLag is how long the gateway keeps not knowing a sandbox
	// after it became RUNNING (the SDK: "a RUNNING control-plane status can
	// briefly lead gateway registration").
	DefaultGatewayLag = 300 * time.Millisecond
	// DefaultKeepaliveInterval is the period of keepalive events on a
	// command-session stream.
	DefaultKeepaliveInterval = 2 * time.Second
	// DefaultReadFileLimit is the most bytes read-file returns (a VM's
	// whole file, a container's window) before it answers 413: the
	// platform's 10 MiB read limit [G: the 2026 files guide].
	DefaultReadFileLimit = 10 << 20
)

// Options are the mock's knobs. The zero value is a fast, fault-free mock
// that refuses what the platform refuses: the published rate limits,
// lifetimes and idle timeouts, owners and input rules are on (see the
// conformance table, docs/guides/prime-mock.md).
type Options struct {
	// BootDelay is PENDING + PROVISIONING time, split evenly.
	BootDelay time.Duration
	// ApplyDelay is how long the data plane takes to apply a policy, counted
	// from the later of its acceptance and RUNNING.
	ApplyDelay time.Duration
	// ImageBuildDelay is how long a "prime-mock/build" image stays PENDING
	// with pendingImageBuildId before booting.
	ImageBuildDelay time.Duration
	// Latency is added to every /api/v1 and gateway request, plus a uniform
	// random extra in [0, LatencyJitter).
	Latency       time.Duration
	LatencyJitter time.Duration
	// NeverApply accepts egress policies but never applies them.
	NeverApply bool
	// FailRate is the probability of an injected 503 on /api/v1 requests.
	FailRate float64
	// ThrottleRate is the probability of an injected 429 on /api/v1 requests.
	ThrottleRate float64
	// RetryAfter is the 429's Retry-After (rounded up to whole seconds, at
	// least 1 s).
	RetryAfter time.Duration
	// APIKey, when set, is the only key accepted; otherwise any non-empty
	// bearer token is.
	APIKey string
	// Seed seeds the one random source (faults, jitter, ids); 0 picks a
	// time-based seed, which Server.Options then reports.
	Seed int64
	// TokenTTL is the lifetime of gateway tokens.
	TokenTTL time.Duration
	// GatewayLag is how long after RUNNING the gateway still answers as if
	// the sandbox did not exist (REST 502 sandbox_not_found, Connect
	// not_found). 0 means DefaultGatewayLag; a negative value means none.
	GatewayLag time.Duration
	// KeepaliveInterval is the period of keepalive events on a Start
	// stream (0: DefaultKeepaliveInterval).
	KeepaliveInterval time.Duration
	// SleepScale multiplies the wall time of every "sleep" the shell runs,
	// in the foreground and the background (0: 1). 0.001 makes "sleep 1800"
	// take 1.8 s, so a test can run a job for "30 minutes" quickly.
	SleepScale float64
	// ReadFileLimit is the most bytes read-file returns before it answers
	// 413: a VM's whole file, a container's window (0:
	// DefaultReadFileLimit).
	ReadFileLimit int64
	// UploadFailRate is the probability of an injected 503 on a gateway
	// upload; half of them come after the file was written.
	UploadFailRate float64
	// DownloadFailRate is the probability of an injected 503 on a gateway
	// download or read-file.
	DownloadFailRate float64
	// GatewayOutageUntil, while in the future (real clock), fails every
	// gateway request (REST 503 as an edge proxy sends it, Connect
	// unavailable) and the background-job batch endpoint; an outage that
	// begins also cuts the Connect streams and REST exec exchanges in
	// flight (the processes they started keep running).
	GatewayOutageUntil time.Time
	// JobBatchUnsupported makes POST /sandbox/background-jobs/status:batchGet
	// answer 404, as a platform without the endpoint does.
	JobBatchUnsupported bool
	// EgressPutAnswer is the body of an egress PUT's 202: EgressPutStatus
	// (the default: the policy status, as GET answers it), EgressPutMinimal
	// ({"generation": N}) or EgressPutEmpty (no body). [I: egress-put-answer] The 2026
	// contract shows the 202 but not its schema; a client must cope with
	// all three.
	EgressPutAnswer string
	// NoRateLimits stops enforcing the platform's published rate limits
	// (ratelimit.go: per sandbox and 60 s, egress PUT 120, SSH 20, ...; per
	// API key, create 15,000, list 1,000, delete 500), which are enforced by
	// default with 429 and a Retry-After. Load tests that measure the
	// provider rather than its pacing turn them off; the peaks are measured
	// either way (Stats.RatePeaks).
	NoRateLimits bool
	// RateLimitScale multiplies every limit (0: 1; at least 1 request per
	// window), so a test reaches a limit with a few requests.
	RateLimitScale float64
	// ClockRate is how fast the mock clock runs: mock seconds per real
	// second (0: 1). The mock clock is the reported time and the time
	// lifetimes and idle timeouts run on; 3600 ends a 60-minute lifetime in
	// a second. POST /_mock/clock moves it forward at once.
	ClockRate float64
	// ValidationErrors is the shape of 422 answers: ValidationList (the
	// default, FastAPI's {"detail": [{"loc", "msg", "type"}]}),
	// ValidationErrorsForm ({"errors": [{"param", "details"}]}) or
	// ValidationString ({"detail": "<message>"}).
	ValidationErrors string
	// TeamMembers maps a team id to the API keys that belong to it. A team
	// it does not name is open: [I: team-membership] every key belongs to
	// it, since the mock knows no accounts. A key acts on a team's sandboxes,
	// checkpoints, networks, volumes and images only when it belongs.
	TeamMembers map[string][]string
	// RequestEvents logs every /api/v1 request the rate limits count as an
	// api_request event, for tests that count requests per window (off by
	// default: a fleet's apply is thousands of them).
	RequestEvents bool
	// Now is the real clock the mock clock runs from (optional; time.Now),
	// for tests that move time themselves. Timers run on the real clock.
	Now func() time.Time
	// ResourceOptions are the checkpoint, pause, network and image knobs.
	ResourceOptions
}

// The EgressPutAnswer values.
const (
	EgressPutStatus  = "status"
	EgressPutMinimal = "minimal"
	EgressPutEmpty   = "empty"
)

func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func (o Options) bootDelay() time.Duration  { return orDuration(o.BootDelay, DefaultBootDelay) }
func (o Options) applyDelay() time.Duration { return orDuration(o.ApplyDelay, DefaultApplyDelay) }
func (o Options) buildDelay() time.Duration {
	return orDuration(o.ImageBuildDelay, DefaultImageBuildDelay)
}
func (o Options) tokenTTL() time.Duration { return orDuration(o.TokenTTL, DefaultTokenTTL) }
func (o Options) keepaliveInterval() time.Duration {
	return orDuration(o.KeepaliveInterval, DefaultKeepaliveInterval)
}

func (o Options) sleepScale() float64 {
	if o.SleepScale <= 0 {
		return 1
	}
	return o.SleepScale
}

func (o Options) readFileLimit() int64 {
	if o.ReadFileLimit <= 0 {
		return DefaultReadFileLimit
	}
	return o.ReadFileLimit
}

// inOutage reports whether the gateway is out at now (real clock).
func (o Options) inOutage(now time.Time) bool { return now.Before(o.GatewayOutageUntil) }

// gatewayLag resolves GatewayLag: 0 is the default, negative is none.
func (o Options) gatewayLag() time.Duration {
	switch {
	case o.GatewayLag < 0:
		return 0
	case o.GatewayLag == 0:
		return DefaultGatewayLag
	}
	return o.GatewayLag
}

// retryAfterSeconds is the Retry-After header value: whole seconds, rounded
// up, at least 1 (a 0 would invite an immediate retry storm).
func (o Options) retryAfterSeconds() int {
	d := orDuration(o.RetryAfter, DefaultRetryAfter)
	secs := int((d + time.Second - 1) / time.Second)
	return max(secs, 1)
}

// ConfigPatch is the body of POST /_mock/config and the answer of both
// /_mock/config verbs: knob values with durations as Go duration strings
// ("250ms"). Absent keys keep their current value.
type ConfigPatch struct {
	BootDelay       *Duration `json:"boot_delay,omitempty"`
	ApplyDelay      *Duration `json:"apply_delay,omitempty"`
	ImageBuildDelay *Duration `json:"image_build_delay,omitempty"`
	Latency         *Duration `json:"latency,omitempty"`
	LatencyJitter   *Duration `json:"latency_jitter,omitempty"`
	NeverApply      *bool     `json:"never_apply,omitempty"`
	FailRate        *float64  `json:"fail_rate,omitempty"`
	ThrottleRate    *float64  `json:"throttle_rate,omitempty"`
	RetryAfter      *Duration `json:"retry_after,omitempty"`
	TokenTTL        *Duration `json:"token_ttl,omitempty"`
	Seed            *int64    `json:"seed,omitempty"`
	// GatewayLag is the effective lag: "0s" means none (unlike
	// Options.GatewayLag, where 0 selects the default).
	GatewayLag        *Duration `json:"gateway_lag,omitempty"`
	KeepaliveInterval *Duration `json:"keepalive_interval,omitempty"`
	SleepScale        *float64  `json:"sleep_scale,omitempty"`
	// ReadFileLimit is in bytes.
	ReadFileLimit    *int64   `json:"read_file_limit,omitempty"`
	UploadFailRate   *float64 `json:"upload_fail_rate,omitempty"`
	DownloadFailRate *float64 `json:"download_fail_rate,omitempty"`
	// GatewayOutage is how long from now the gateway is out ("0s" ends an
	// outage); answers report what is left of it.
	GatewayOutage       *Duration `json:"gateway_outage,omitempty"`
	JobBatchUnsupported *bool     `json:"job_batch_unsupported,omitempty"`
	// EgressPutAnswer is "status", "minimal" or "empty".
	EgressPutAnswer *string `json:"egress_put_answer,omitempty"`
	// RateLimits is true while the published limits are enforced.
	RateLimits     *bool    `json:"rate_limits,omitempty"`
	RateLimitScale *float64 `json:"rate_limit_scale,omitempty"`
	// ClockRate is mock seconds per real second.
	ClockRate *float64 `json:"clock_rate,omitempty"`
	// ValidationErrors is "list", "errors" or "string".
	ValidationErrors *string `json:"validation_errors,omitempty"`
	// TeamMembers replaces the whole map.
	TeamMembers *map[string][]string `json:"team_members,omitempty"`

	// ResourcePatch holds the resource knobs' keys.
	ResourcePatch
}

// Duration is a time.Duration written as a Go duration string in JSON; a
// bare number is read as seconds.
type Duration time.Duration

// MarshalJSON writes "1.5s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "1.5s" or 1.5.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("a duration is a string such as \"250ms\" or a number of seconds")
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// patchOf reports the effective knob values (defaults resolved); now is
// the real clock, for what is left of an outage (in milliseconds).
func patchOf(o Options, now time.Time) ConfigPatch {
	dur := func(d time.Duration) *Duration { v := Duration(d); return &v }
	scale, limit := o.sleepScale(), o.readFileLimit()
	outage := max(o.GatewayOutageUntil.Sub(now), 0).Round(time.Millisecond)
	scaleLimits := o.RateLimitScale
	if scaleLimits <= 0 {
		scaleLimits = 1
	}
	putAnswer := o.EgressPutAnswer
	if putAnswer == "" {
		putAnswer = EgressPutStatus
	}
	limitsOn, rate, form := !o.NoRateLimits, clockRate(o.ClockRate), o.ValidationErrors
	if form == "" {
		form = ValidationList
	}
	teams := maps.Clone(o.TeamMembers)
	if teams == nil {
		teams = map[string][]string{}
	}
	return ConfigPatch{
		SleepScale:          &scale,
		ReadFileLimit:       &limit,
		UploadFailRate:      &o.UploadFailRate,
		DownloadFailRate:    &o.DownloadFailRate,
		GatewayOutage:       dur(outage),
		JobBatchUnsupported: &o.JobBatchUnsupported,
		EgressPutAnswer:     &putAnswer,
		RateLimits:          &limitsOn,
		RateLimitScale:      &scaleLimits,
		ClockRate:           &rate,
		ValidationErrors:    &form,
		TeamMembers:         &teams,
		BootDelay:           dur(o.bootDelay()),
		ApplyDelay:          dur(o.applyDelay()),
		ImageBuildDelay:     dur(o.buildDelay()),
		Latency:             dur(o.Latency),
		LatencyJitter:       dur(o.LatencyJitter),
		NeverApply:          &o.NeverApply,
		FailRate:            &o.FailRate,
		ThrottleRate:        &o.ThrottleRate,
		RetryAfter:          dur(orDuration(o.RetryAfter, DefaultRetryAfter)),
		TokenTTL:            dur(o.tokenTTL()),
		Seed:                &o.Seed,
		GatewayLag:          dur(o.gatewayLag()),
		KeepaliveInterval:   dur(o.keepaliveInterval()),
		ResourcePatch:       resourcePatchOf(o.ResourceOptions),
	}
}

// apply copies the set fields of p into o; now is the real clock, from
// which an outage is counted.
func (p ConfigPatch) apply(o *Options, now time.Time) error {
	if err := p.ResourcePatch.apply(&o.ResourceOptions); err != nil {
		return err
	}
	for _, r := range []*float64{p.FailRate, p.ThrottleRate, p.UploadFailRate, p.DownloadFailRate} {
		if r != nil && (*r < 0 || *r > 1) {
			return fmt.Errorf("rates must be between 0 and 1, got %g", *r)
		}
	}
	switch {
	case p.KeepaliveInterval != nil && *p.KeepaliveInterval < 0:
		return fmt.Errorf("keepalive_interval must not be negative")
	case p.SleepScale != nil && !(*p.SleepScale > 0 && *p.SleepScale <= 1e6):
		return fmt.Errorf("sleep_scale must be a factor above 0 (at most 1e6), got %g", *p.SleepScale)
	case p.ReadFileLimit != nil && *p.ReadFileLimit <= 0:
		return fmt.Errorf("read_file_limit must be a positive number of bytes, got %d", *p.ReadFileLimit)
	case p.GatewayOutage != nil && *p.GatewayOutage < 0:
		return fmt.Errorf("gateway_outage must not be negative")
	case p.RateLimitScale != nil && !(*p.RateLimitScale > 0 && *p.RateLimitScale <= 1e6):
		return fmt.Errorf("rate_limit_scale must be a factor above 0, got %g", *p.RateLimitScale)
	case p.EgressPutAnswer != nil && !validPutAnswer(*p.EgressPutAnswer):
		return fmt.Errorf("egress_put_answer must be status, minimal or empty, got %q", *p.EgressPutAnswer)
	case p.ClockRate != nil && !(*p.ClockRate > 0 && *p.ClockRate <= maxClockRate):
		return fmt.Errorf("clock_rate must be above 0 and at most %d, got %g", maxClockRate, *p.ClockRate)
	case p.ValidationErrors != nil && !validValidationForm(*p.ValidationErrors):
		return fmt.Errorf("validation_errors must be list, errors or string, got %q", *p.ValidationErrors)
	}
	set := func(dst *time.Duration, src *Duration) {
		if src != nil {
			*dst = time.Duration(*src)
		}
	}
	set(&o.BootDelay, p.BootDelay)
	set(&o.ApplyDelay, p.ApplyDelay)
	set(&o.ImageBuildDelay, p.ImageBuildDelay)
	set(&o.Latency, p.Latency)
	set(&o.LatencyJitter, p.LatencyJitter)
	set(&o.RetryAfter, p.RetryAfter)
	set(&o.TokenTTL, p.TokenTTL)
	if p.NeverApply != nil {
		o.NeverApply = *p.NeverApply
	}
	if p.FailRate != nil {
		o.FailRate = *p.FailRate
	}
	if p.ThrottleRate != nil {
		o.ThrottleRate = *p.ThrottleRate
	}
	if p.Seed != nil {
		o.Seed = *p.Seed
	}
	if p.GatewayLag != nil {
		o.GatewayLag = time.Duration(*p.GatewayLag)
		if o.GatewayLag <= 0 {
			o.GatewayLag = -1 // "0s" in a patch means no lag
		}
	}
	set(&o.KeepaliveInterval, p.KeepaliveInterval)
	if p.SleepScale != nil {
		o.SleepScale = *p.SleepScale
	}
	if p.ReadFileLimit != nil {
		o.ReadFileLimit = *p.ReadFileLimit
	}
	if p.UploadFailRate != nil {
		o.UploadFailRate = *p.UploadFailRate
	}
	if p.DownloadFailRate != nil {
		o.DownloadFailRate = *p.DownloadFailRate
	}
	if p.GatewayOutage != nil {
		o.GatewayOutageUntil = time.Time{}
		if *p.GatewayOutage > 0 {
			o.GatewayOutageUntil = now.Add(time.Duration(*p.GatewayOutage))
		}
	}
	if p.JobBatchUnsupported != nil {
		o.JobBatchUnsupported = *p.JobBatchUnsupported
	}
	if p.EgressPutAnswer != nil {
		o.EgressPutAnswer = *p.EgressPutAnswer
	}
	if p.RateLimits != nil {
		o.NoRateLimits = !*p.RateLimits
	}
	if p.ClockRate != nil {
		o.ClockRate = *p.ClockRate
	}
	if p.ValidationErrors != nil {
		o.ValidationErrors = *p.ValidationErrors
	}
	if p.TeamMembers != nil {
		o.TeamMembers = maps.Clone(*p.TeamMembers)
	}
	if p.RateLimitScale != nil {
		o.RateLimitScale = *p.RateLimitScale
	}
	return nil
}

// validPutAnswer reports an EgressPutAnswer value ("" is the default).
func validPutAnswer(v string) bool {
	switch v {
	case "", EgressPutStatus, EgressPutMinimal, EgressPutEmpty:
		return true
	}
	return false
}
