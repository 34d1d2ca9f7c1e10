package redisstore

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
)

// The fixes name the Go API, or, with WithSettingNames, what the hook
// calls it for the fault's kind; a hook that returns "" keeps the Go API's
// name.
func TestFixesUseSettingNames(t *testing.T) {
	_, c := miniClient(t)
	hooked, err := New(c, WithSettingNames(func(option, kind string) string {
		if option == OptionURL && kind == FaultTLSToPlainPort {
			return ""
		}
		return "<" + option + "|" + kind + ">"
	}))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	fixes := func(s *Store) []string {
		return []string{
			tlsVerifyRule(s, x509.UnknownAuthorityError{}).Fix,
			clientCertRule(s, errors.New("remote error: tls: certificate required")).Fix,
			tlsToPlainRule(s, tls.RecordHeaderError{}).Fix,
			s.plainToTLSFix("r:6380"),
			evictionRule(s, &evictionFault{policy: "allkeys-lru"}).Fix,
			credentialsFault(s, "", errors.New("WRONGPASS")).Fix,
			s.uninitialized("list").Error(),
		}
	}
	wantHooked := [][]string{
		{"give the CA that signed it to <Config.LoadTLSFiles|tls-verify>"},
		{"give the certificate and its key to <Config.LoadTLSFiles|tls-client-certificate>"},
		{"or <Config.LoadTLSFiles|tls-to-plain-port>, which turns TLS on", "use a redis:// URL without <Config.LoadTLSFiles|tls-to-plain-port>"},
		{"use a rediss:// <URL|plain-to-tls-port>, and <Config.LoadTLSFiles|plain-to-tls-port> for a private CA"},
		{"accept the risk with the option <WithEvictionAllowed|eviction-policy>"},
		{"or the file given to <Config.UsePasswordFile|credentials>"},
		{"initialize it once with <Store.Initialize|not-initialized>"},
	}
	wantPlain := [][]string{
		{"give the CA that signed it to Config.LoadTLSFiles"},
		{"give the certificate and its key to Config.LoadTLSFiles"},
		{"or Config.LoadTLSFiles, which turns TLS on", "use a redis:// URL without Config.LoadTLSFiles"},
		{"use a rediss:// URL, and Config.LoadTLSFiles for a private CA"},
		{"accept the risk with the option WithEvictionAllowed"},
		{"or the file given to Config.UsePasswordFile"},
		{"initialize it once with Store.Initialize"},
	}
	for _, tc := range []struct {
		name string
		s    *Store
		want [][]string
	}{{"WithSettingNames", hooked, wantHooked}, {"without", plain, wantPlain}} {
		for i, fix := range fixes(tc.s) {
			for _, w := range tc.want[i] {
				if !strings.Contains(fix, w) {
					t.Errorf("%s: fix %d %q does not say %q", tc.name, i, fix, w)
				}
			}
		}
	}
}
