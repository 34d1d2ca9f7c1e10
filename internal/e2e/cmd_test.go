package e2e

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/inventory"
)

// buildCommand builds cmd/inventory-conformance as a user would install it.
func buildCommand(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "inventory-conformance")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/petinventory/petinventory/conformancetest/cmd/inventory-conformance").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type cmdResult struct {
	stdout, stderr string
	code           int
}

// start starts the command with the key in its environment.
func start(t *testing.T, bin string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	return startEnv(t, bin, []string{"INVENTORY_API_KEY=" + testKey}, args...)
}

// startEnv starts the command with env added to its environment, whose
// key variables are cleared first.
func startEnv(t *testing.T, bin string, env []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "INVENTORY_API_KEY=") || strings.HasPrefix(kv, "INVENTORY_API_KEYS=")
	})
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stdout, &stderr
}

func runCmd(t *testing.T, bin string, args ...string) cmdResult {
	t.Helper()
	cmd, stdout, stderr := start(t, bin, args...)
	return wait(t, cmd, stdout, stderr)
}

func wait(t *testing.T, cmd *exec.Cmd, stdout, stderr *bytes.Buffer) cmdResult {
	t.Helper()
	err := cmd.Wait()
	res := cmdResult{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	if strings.Contains(res.stdout+res.stderr, testKey) {
		t.Errorf("the command printed the API key")
	}
	return res
}

var summaryRE = regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed, (\d+) skipped$`)

// countingPatches counts the updates the API accepted.
func countingPatches(n *atomic.Int64) wrapper {
	return func(_ *inventory.API, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sw := &statusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r)
			if r.Method == http.MethodPatch && sw.status == http.StatusOK {
				n.Add(1)
			}
		})
	}
}

// statusWriter notes the status an answer goes out with and passes the
// answer through as it is: unlike a recorder it keeps what the API sends
// to the connection itself (a HEAD's Content-Length, the read deadline of
// a body that stalls, which http.ResponseController reaches through
// Unwrap).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func TestCommand(t *testing.T) {
	t.Parallel() // it waits on servers and processes more than it computes
	bin := buildCommand(t)

	t.Run("passes against the real API, with a JUnit report", func(t *testing.T) {
		base, store := serveBroken(t, brokenCase{})
		junit := filepath.Join(t.TempDir(), "junit.xml")
		r := runCmd(t, bin, "-base-url", base, "-junit", junit)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		// The seed's list is below any compression threshold: the gzip
		// comparison has nothing to compare (TestGzipListDecodes runs it
		// on a list that is compressed).
		// The consistency check runs only when asked (-consistency).
		m := summaryRE.FindStringSubmatch(r.stdout)
		skips := 0
		for _, known := range []string{"--- SKIP: gzip/decodes-to-identity: not compressed", "--- SKIP: consistency/linearizable: opt-in"} {
			if strings.Contains(r.stdout, known) {
				skips++
			}
		}
		if m == nil || m[2] != "0" || m[3] != strconv.Itoa(skips) {
			t.Fatalf("no summary line with 0 failed, 0 skipped (but the gzip comparison of a list too small to compress, and the opt-in consistency check):\n%s", r.stdout)
		}
		for _, want := range []string{"RESULT", "PASS", "auth/missing-header", "CONTRACT.md §Authentication"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the table lacks %q:\n%s", want, r.stdout)
			}
		}
		var doc struct {
			Suites []struct {
				Tests    int `xml:"tests,attr"`
				Failures int `xml:"failures,attr"`
				Cases    []struct {
					Name string `xml:"name,attr"`
				} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		b, err := os.ReadFile(junit)
		if err != nil {
			t.Fatal(err)
		}
		if err := xml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("the JUnit report is not XML: %v", err)
		}
		want := len(conformancetest.Checks(conformancetest.LevelContract))
		if len(doc.Suites) != 1 || doc.Suites[0].Tests != want || doc.Suites[0].Failures != 0 || len(doc.Suites[0].Cases) != want {
			t.Errorf("JUnit report: %+v, want one suite of %d tests, 0 failures", doc.Suites, want)
		}
		if got := listStore(t, store); !slices.Equal(got, seed) {
			t.Errorf("the store changed: %v", got)
		}
	})

	t.Run("-read-only changes nothing", func(t *testing.T) {
		var accepted atomic.Int64
		base, store := serveBroken(t, brokenCase{wrap: countingPatches(&accepted)})
		r := runCmd(t, bin, "-base-url", base, "-read-only")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if n := accepted.Load(); n != 0 {
			t.Errorf("a read-only run had %d updates accepted", n)
		}
		if got := listStore(t, store); !slices.Equal(got, seed) {
			t.Errorf("the store changed: %v", got)
		}
		m := summaryRE.FindStringSubmatch(r.stdout)
		if m == nil || m[3] == "0" || !strings.Contains(r.stdout, "read-only run") {
			t.Errorf("the writing checks are not reported skipped as read-only:\n%s", r.stdout)
		}
	})

	t.Run("the key also comes from the server's INVENTORY_API_KEYS", func(t *testing.T) {
		base, _ := serveBroken(t, brokenCase{})
		cmd, stdout, stderr := startEnv(t, bin, []string{"INVENTORY_API_KEYS=" + testKey + ",another-key"}, "-base-url", base, "-run", "^list/ok$")
		if r := wait(t, cmd, stdout, stderr); r.code != 0 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("a refused key is said first, with what it failed and skipped", func(t *testing.T) {
		base, _ := serveBroken(t, brokenCase{})
		cmd, stdout, stderr := startEnv(t, bin, []string{"INVENTORY_API_KEY=not-a-key-of-this-server"}, "-base-url", base)
		r := wait(t, cmd, stdout, stderr)
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
		}
		lines := strings.Split(r.stdout, "\n")
		if len(lines) < 3 || !strings.HasPrefix(lines[2], "READ FIRST: The API key was refused: GET "+base+"/inventory with it answered 401") ||
			!strings.Contains(lines[2], "skipped (") || !strings.Contains(lines[2], "INVENTORY_API_KEYS") {
			t.Errorf("the output does not start with the refused key:\n%s", r.stdout)
		}
		if strings.Contains(r.stdout, "not-a-key-of-this-server") {
			t.Errorf("the output holds the key")
		}
	})

	t.Run("a broken rule exits 1 and names it", func(t *testing.T) {
		bc := brokenCases[slices.IndexFunc(brokenCases, func(b brokenCase) bool { return b.name == "drops Allow on 405" })]
		base, _ := serveBroken(t, bc)
		r := runCmd(t, bin, "-base-url", base)
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
		}
		for _, want := range []string{
			"FAIL    routes/list-other-methods", "--- FAIL: routes/list-other-methods (CONTRACT.md §Routes)",
			"no Allow header", "curl -sS -i -X POST", `-H "Authorization: Bearer $INVENTORY_API_KEY"`,
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the output lacks %q:\n%s", want, r.stdout)
			}
		}
		if m := summaryRE.FindStringSubmatch(r.stdout); m == nil || m[2] == "0" {
			t.Errorf("the summary does not count the failure:\n%s", r.stdout)
		}
	})

	t.Run("an echoed key is never printed", func(t *testing.T) {
		bc := brokenCases[slices.IndexFunc(brokenCases, func(b brokenCase) bool { return b.name == "echoes the key in a message" })]
		base, _ := serveBroken(t, bc)
		for _, format := range []string{"-v", "-json"} {
			r := runCmd(t, bin, "-base-url", base, "-run", "^errors/key-never-echoed$", format)
			if r.code != 1 {
				t.Fatalf("%s: exit %d, want 1\n%s%s", format, r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "$INVENTORY_API_KEY") {
				t.Errorf("%s: the output does not show where the key was:\n%s", format, r.stdout)
			}
		}
		r := runCmd(t, bin, "-base-url", base, "-run", "^errors/key-never-echoed$", "-json")
		var rep conformancetest.Report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("-json output is not a Report: %v", err)
		}
		if res, _ := rep.Result("errors/key-never-echoed"); res.Outcome != conformancetest.Fail {
			t.Errorf("-json: outcome %s", res.Outcome)
		}
	})

	t.Run("an unreachable target exits 3", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		r := runCmd(t, bin, "-base-url", "http://"+addr+"/v1", "-timeout", "2s")
		if r.code != 3 || !strings.Contains(r.stderr, "cannot be reached") {
			t.Errorf("exit %d, want 3, and a message\n%s", r.code, r.stderr)
		}
	})

	t.Run("usage errors exit 2", func(t *testing.T) {
		for _, args := range [][]string{
			{},
			{"-base-url", "http://127.0.0.1:1/v1", "-level", "strict"},
			{"-base-url", "http://127.0.0.1:1/v1", "-run", "("},
			{"-base-url", "http://127.0.0.1:1/v1", "-run", "no-such-check"},
			{"-base-url", "not a url"},
			{"-base-url", "http://127.0.0.1:1/v1", "extra"},
			{"-no-such-flag"},
		} {
			if r := runCmd(t, bin, args...); r.code != 2 {
				t.Errorf("%q: exit %d, want 2\n%s", args, r.code, r.stderr)
			}
		}
		r := runCmd(t, bin, "-list", "-level", "spec")
		if r.code != 0 || !strings.Contains(r.stdout, "body/missing-quantity") || strings.Contains(r.stdout, "headers/nosniff") {
			t.Errorf("-list -level spec: exit %d\n%s", r.code, r.stdout)
		}
	})

	t.Run("Ctrl-C restores what the running check changed", func(t *testing.T) {
		// The first accepted update is held until the client goes away:
		// the command is interrupted while it holds a changed quantity.
		written := make(chan struct{})
		var once sync.Once
		hold := func(_ *inventory.API, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := serveRecorded(next, r)
				first := false
				if r.Method == http.MethodPatch && rec.status == http.StatusOK {
					once.Do(func() { first = true; close(written) })
				}
				if first {
					select {
					case <-r.Context().Done():
						return
					case <-time.After(20 * time.Second):
					}
				}
				writeRecorded(w, rec)
			})
		}
		base, store := serveBroken(t, brokenCase{wrap: hold})
		cmd, stdout, stderr := start(t, bin, "-base-url", base, "-run", "^(update/ok|update/replaces)$")
		select {
		case <-written:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatal("the command sent no update")
		}
		if got := listStore(t, store); slices.Equal(got, seed) {
			t.Fatal("the held update did not change the store; the test proves nothing")
		}
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		r := wait(t, cmd, stdout, stderr)
		if r.code != 130 {
			t.Errorf("exit %d, want 130\n%s%s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "interrupted") {
			t.Errorf("the output does not say it was interrupted:\n%s", r.stdout)
		}
		if got := listStore(t, store); !slices.Equal(got, seed) {
			t.Errorf("after Ctrl-C the store was not restored:\n got  %v\n want %v", got, seed)
		}
	})
}
