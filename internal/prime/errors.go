package prime

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Sentinel errors. Every *APIError wraps the one matching its status, so
// callers write errors.Is(err, prime.ErrNotFound).
var (
	ErrNotFound        = errors.New("not found")
	ErrUnauthorized    = errors.New("unauthorized: check the API key (api_key or PRIME_API_KEY)")
	ErrPaymentRequired = errors.New("payment required: check the billing of the Prime account")
	ErrValidation      = errors.New("rejected by the API")
	ErrRateLimited     = errors.New("rate limited")
	ErrConflict        = errors.New("conflict")
	ErrServer          = errors.New("server error")
	// ErrInvalidRequest wraps client-side validation failures: nothing was
	// sent.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrMissingAPIKey is returned before any request when no key resolved.
	ErrMissingAPIKey = errors.New("no Prime API key: set api_key in the provider block, PRIME_API_KEY, or api_key in ~/.prime/config.json")
)

// APIError is a non-2xx answer from the API.
type APIError struct {
	StatusCode int
	Method     string
	// Path is the request path without the base URL or query.
	Path string
	// Detail is the server's "detail" (stringified when it is a list), or the
	// raw body when there is none.
	Detail string
	// RetryAfter is the server's Retry-After on 429/503, zero when absent.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: HTTP %d", e.Method, e.Path, e.StatusCode)
	switch e.StatusCode {
	case http.StatusUnauthorized:
		b.WriteString(": " + ErrUnauthorized.Error())
	case http.StatusPaymentRequired:
		b.WriteString(": " + ErrPaymentRequired.Error())
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	return b.String()
}

// Unwrap maps the status to a sentinel.
func (e *APIError) Unwrap() error {
	switch {
	case e.StatusCode == http.StatusNotFound:
		return ErrNotFound
	case e.StatusCode == http.StatusUnauthorized:
		return ErrUnauthorized
	case e.StatusCode == http.StatusPaymentRequired:
		return ErrPaymentRequired
	case e.StatusCode == http.StatusTooManyRequests:
		return ErrRateLimited
	case e.StatusCode == http.StatusConflict:
		return ErrConflict
	case e.StatusCode == http.StatusBadRequest || e.StatusCode == http.StatusUnprocessableEntity:
		return ErrValidation
	case e.StatusCode >= 500:
		return ErrServer
	}
	return nil
}

// StatusCodeOf returns the HTTP status of an *APIError in err's chain, or 0.
func StatusCodeOf(err error) int {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode
	}
	return 0
}

// newAPIError builds an APIError from a response body.
func newAPIError(method, path string, status int, header http.Header, body []byte) *APIError {
	e := &APIError{StatusCode: status, Method: method, Path: path, Detail: detailOf(body)}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		e.RetryAfter = parseRetryAfter(header.Get("Retry-After"), time.Now())
	}
	return e
}

// detailOf reads an error body in any shape the platform documents: a plain
// {"detail": "..."}; FastAPI's {"detail": [{"loc", "msg", "type"}]} (every
// operation's 422); the overview's {"errors": [{"param", "details"}]}.
// Validation items read as "field: message" (the loc without its "body" or
// "query" root), joined by "; ". Anything else falls back to the trimmed
// raw body.
func detailOf(body []byte) string {
	var env struct {
		Detail json.RawMessage `json:"detail"`
		Errors json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(body, &env) == nil {
		if len(env.Detail) > 0 {
			return detailText(env.Detail)
		}
		if s, ok := errorsFormText(env.Errors); ok {
			return s
		}
	}
	const maxRaw = 512
	s := strings.TrimSpace(string(body))
	if s == "{}" {
		return ""
	}
	if len(s) > maxRaw {
		s = s[:maxRaw] + "…"
	}
	return s
}

// detailText is a "detail" value: a string, or a list of validation items.
func detailText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var items []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if json.Unmarshal(raw, &items) == nil && len(items) > 0 {
		parts := make([]string, 0, len(items))
		for _, it := range items {
			parts = append(parts, fieldMessage(locPath(it.Loc), it.Msg))
		}
		return strings.Join(parts, "; ")
	}
	return string(raw)
}

// errorsFormText reads {"errors": [{"param", "details"}]}.
func errorsFormText(raw json.RawMessage) (string, bool) {
	var items []struct {
		Param   string `json:"param"`
		Details string `json:"details"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &items) != nil || len(items) == 0 {
		return "", false
	}
	parts := make([]string, 0, len(items))
	for _, it := range items {
		parts = append(parts, fieldMessage(it.Param, it.Details))
	}
	return strings.Join(parts, "; "), true
}

// locPath is a validation item's loc as a dotted field path, without the
// part of the request it names first (body, query, path, header).
func locPath(loc []any) string {
	if len(loc) > 0 {
		switch loc[0] {
		case "body", "query", "path", "header":
			loc = loc[1:]
		}
	}
	parts := make([]string, 0, len(loc))
	for _, l := range loc {
		parts = append(parts, fmt.Sprint(l))
	}
	return strings.Join(parts, ".")
}

func fieldMessage(field, msg string) string {
	if field == "" {
		return msg
	}
	return field + ": " + msg
}

// parseRetryAfter reads delta-seconds or an HTTP date. Garbage reads as 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var secs float64
	if _, err := fmt.Sscanf(v, "%g", &secs); err == nil && !strings.ContainsAny(v, " ,") {
		if secs < 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
