package redisurl

import (
	"errors"
	"net/url"
	"strings"
)

// parseSyntax parses raw as a URL of one of the three schemes, with a
// user part that parses whole; its errors quote no secret.
func parseSyntax(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("the URL is empty; want redis://host:port/db, rediss://…, unix:///path/to/socket, or a Cluster or Sentinel form")
	}
	scheme, _, ok := strings.Cut(raw, "://")
	if !ok || scheme != "redis" && scheme != "rediss" && scheme != "unix" {
		return nil, errors.New("the URL must start with redis://, rediss:// or unix://")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse errors quote the whole URL: report the error of the
		// same URL with its secrets replaced instead.
		if _, err := url.Parse(Redact(raw)); err != nil {
			return nil, errors.New(Redact(err.Error()))
		}
		return nil, errors.New(reservedInUserinfo)
	}
	// A password with a reserved character that is not percent-encoded
	// can parse as a URL that ends its user part early: the rest of the
	// password lands in the path, query or fragment, where an error would
	// quote it. A Redis URL has no fragment, and no "@" after its host.
	if strings.Contains(raw, "#") || strings.Contains(u.Path, "@") {
		return nil, errors.New(reservedInUserinfo)
	}
	for k := range u.Query() {
		if strings.Contains(k, "@") {
			return nil, errors.New(reservedInUserinfo)
		}
	}
	return u, nil
}

// reservedInUserinfo is the error of a URL whose user or password part
// does not parse, or parses short; it quotes nothing of the URL.
const reservedInUserinfo = "its user or password part does not parse: percent-encode a reserved character in it " +
	"(/ as %2F, ? as %3F, # as %23, @ as %40, : in the user as %3A), e.g. with url.UserPassword(user, password).String()"

// Redact returns s (a URL, or an error quoting one) with the user
// information of the URL and the values of password= parameters replaced.
// The user information ends at the last "@" of the URL (before a quote or
// a space, which end a URL an error quotes), since a password that is not
// percent-encoded may hold "/", "?" or "#": more than the user information
// may be hidden, never less.
func Redact(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		end := len(rest)
		if j := strings.IndexAny(rest, "\" "); j >= 0 {
			end = j
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			s = s[:i+3] + "xxxxx" + rest[at:]
		}
	}
	for _, p := range []string{"password=", "sentinel_password="} {
		for from := 0; ; {
			i := strings.Index(s[from:], p)
			if i < 0 {
				break
			}
			start := from + i + len(p)
			end := start
			for end < len(s) && !strings.ContainsRune("&#\" ", rune(s[end])) {
				end++
			}
			s = s[:start] + "xxxxx" + s[end:]
			from = start + len("xxxxx")
		}
	}
	return s
}
