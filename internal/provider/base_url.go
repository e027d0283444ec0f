package provider

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// checkBaseURL returns why raw cannot be the API origin, or "". The API key
// travels in every request's Authorization header, so the origin must be an
// absolute https:// URL; plain http:// is accepted only on a loopback host
// (prime-mock on this machine) unless insecureHTTP is set.
func checkBaseURL(raw string, insecureHTTP bool) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not a valid URL: %v", raw, err)
	case u.Scheme == "" || u.Host == "":
		return fmt.Sprintf("%q is not an absolute URL: write it with its scheme, e.g. \"https://%s\"",
			raw, strings.TrimPrefix(strings.TrimSpace(raw), "//"))
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Sprintf("%q has the scheme %q; the API is reached over https:// (or http:// for a local prime-mock)", raw, u.Scheme)
	case u.User != nil:
		return fmt.Sprintf("%q carries credentials in the URL; set api_key instead", redactUserinfo(u))
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Sprintf("%q has a query or fragment; the base URL is an origin such as \"https://api.primeintellect.ai\"", raw)
	case u.Scheme == "http" && !isLoopbackHost(u.Hostname()) && !insecureHTTP:
		return fmt.Sprintf("%q is plain http:// to a remote host: the API key would travel in cleartext. "+
			"Use https://, or set insecure_http = true if you really mean it (for example a mock on another test host)", raw)
	}
	return ""
}

// isLoopbackHost reports localhost names and loopback addresses.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func redactUserinfo(u *url.URL) string {
	c := *u
	c.User = url.User("***")
	return c.String()
}
