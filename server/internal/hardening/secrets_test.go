package hardening

import (
	"errors"
	"net/http"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/internal/benchfix"
)

// looksLikeKey matches what a generated key would look like in the output:
// a long run of hex digits.
var looksLikeKey = regexp.MustCompile(`[0-9a-f]{32,}`)

// TestNoKeyNoStart: without INVENTORY_API_KEYS and INVENTORY_API_KEYS_FILE
// the released server exits 2, names both and how to make a key, and
// prints no key.
func TestNoKeyNoStart(t *testing.T) {
	cmd := exec.Command(serverBin, "-addr", "127.0.0.1:0")
	cmd.Env = append(cmd.Environ(), "REDIS_URL=redis://127.0.0.1:1/0", "INVENTORY_API_KEYS=", "INVENTORY_API_KEYS_FILE=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("inventory-server without a key: %v, want exit status 2:\n%s", err, out)
	}
	for _, want := range []string{"INVENTORY_API_KEYS ", "INVENTORY_API_KEYS_FILE", "openssl rand -hex 32"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output does not say %q:\n%s", want, out)
		}
	}
	if k := looksLikeKey.Find(out); k != nil || strings.Contains(string(out), "generated") {
		t.Errorf("the output holds what looks like a key (%q):\n%s", k, out)
	}
	if strings.Contains(string(out), "serving") {
		t.Errorf("it served:\n%s", out)
	}
	summary(t, "no API key: exit 2, INVENTORY_API_KEYS and INVENTORY_API_KEYS_FILE named with openssl rand -hex 32, no key printed")
}

// TestVersion: -version prints the version, the revision and the Go
// version, and exits 0, without REDIS_URL or a key.
func TestVersion(t *testing.T) {
	cmd := exec.Command(serverBin, "-version")
	cmd.Env = append(cmd.Environ(), "REDIS_URL=", "INVENTORY_API_KEYS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("-version: %v", err)
	}
	if !regexp.MustCompile(`^inventory-server \S+ \(revision \S+, ` + regexp.QuoteMeta(runtime.Version()) + `\)\n$`).Match(out) {
		t.Errorf("-version printed %q", out)
	}
	summary(t, "-version: exit 0, %s", strings.TrimSpace(string(out)))
}

// malformedHeads carry the server's key (benchfix.MalformedHeads).
var malformedHeads = benchfix.MalformedHeads(apiKey)

// TestMalformedHeadsNoEcho: on both frameworks, no answer to a malformed
// head repeats the key (nor does the log: startServer checks the whole
// output when the test ends), and the server still serves.
func TestMalformedHeadsNoEcho(t *testing.T) {
	for _, fw := range frameworks {
		t.Run(fw, func(t *testing.T) {
			r := startRedis(t)
			s := startServer(t, fw, r.url())
			addr := strings.TrimPrefix(s.Base, "http://")
			for what, head := range malformedHeads {
				answer := benchfix.RawAnswer(t, addr, head)
				if strings.Contains(answer, apiKey) {
					t.Errorf("%s: the answer repeats the key: %q", what, answer)
				}
				if !strings.HasPrefix(answer, "HTTP/1.1 400 ") {
					t.Errorf("%s: %q, want a 400", what, answer)
				}
			}
			if r, err := do(t.Context(), http.DefaultClient, "GET", s.Base+"/v1/inventory", ""); err != nil || r.Status != http.StatusOK {
				t.Errorf("the server does not serve after the malformed heads: %v, %d", err, r.Status)
			}
			summary(t, "%s: %d malformed heads carrying the key: 400 each, the key in no answer and no log line", fw, len(malformedHeads))
		})
	}
}
