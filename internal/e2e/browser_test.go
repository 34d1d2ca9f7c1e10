package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The browser test drives Debian's chromium through chromedriver, which
// speaks W3C WebDriver: plain HTTP and JSON, so net/http is the client.

// requireBrowser, set by .ci/run, turns a missing chromium into a failure
// instead of a skip: CI installs it, so there it must run.
const requireBrowser = "E2E_REQUIRE_BROWSER"

// webElement is the key under which WebDriver returns an element's id.
const webElement = "element-6066-11e4-a52e-4f735466cecf"

type webDriver struct {
	t       *testing.T
	base    string // http://127.0.0.1:port/session/<id>
	client  *http.Client
	browser string
}

// startBrowser starts chromedriver on a free loopback port and a headless
// chromium session with a profile in its own temporary directory; both
// are stopped when the test ends.
func startBrowser(t *testing.T) *webDriver {
	t.Helper()
	driver, err1 := exec.LookPath("chromedriver")
	chromium, err2 := exec.LookPath("chromium")
	if err1 != nil || err2 != nil {
		msg := "chromium or chromedriver is not installed (Debian: apt-get install chromium chromium-driver)"
		if os.Getenv(requireBrowser) != "" {
			t.Fatalf("%s, and %s is set", msg, requireBrowser)
		}
		t.Skip(msg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var log bytes.Buffer
	cmd := exec.Command(driver, "--port="+strconv.Itoa(port), "--allowed-ips=127.0.0.1")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("chromedriver output:\n%s", log.String())
		}
	})
	wd := &webDriver{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port), client: &http.Client{Timeout: 60 * time.Second}}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var status struct {
			Ready bool `json:"ready"`
		}
		if err := wd.call(http.MethodGet, "/status", nil, &status); err == nil && status.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver did not become ready on port %d:\n%s", port, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	profile := t.TempDir()
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{
			"binary": chromium,
			"args": []string{
				"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
				"--disable-background-networking", "--disable-component-update", "--disable-sync",
				"--disable-dev-shm-usage", "--window-size=1280,1400", "--user-data-dir=" + profile,
			},
		},
	}}}
	var session struct {
		SessionID    string `json:"sessionId"`
		Capabilities struct {
			BrowserVersion string `json:"browserVersion"`
		} `json:"capabilities"`
	}
	if err := wd.call(http.MethodPost, "/session", caps, &session); err != nil {
		t.Fatalf("new session: %v\n%s", err, log.String())
	}
	wd.base += "/session/" + session.SessionID
	wd.browser = session.Capabilities.BrowserVersion
	t.Cleanup(func() { _ = wd.call(http.MethodDelete, "", nil, nil) })
	return wd
}

// call sends one WebDriver command and decodes its "value" into out.
func (wd *webDriver) call(method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, wd.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := wd.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, env.Value)
	}
	if out != nil {
		return json.Unmarshal(env.Value, out)
	}
	return nil
}

// on returns the driver for use in test t (a subtest).
func (wd *webDriver) on(t *testing.T) *webDriver {
	cp := *wd
	cp.t = t
	return &cp
}

func (wd *webDriver) must(method, path string, in, out any) {
	wd.t.Helper()
	if err := wd.call(method, path, in, out); err != nil {
		wd.t.Fatal(err)
	}
}

func (wd *webDriver) open(path string) {
	wd.t.Helper()
	wd.must(http.MethodPost, "/url", map[string]string{"url": (&url.URL{Scheme: "file", Path: path}).String()}, nil)
}

// find returns the ids of the elements that match the CSS selector.
func (wd *webDriver) find(selector string) []string {
	wd.t.Helper()
	var found []map[string]string
	wd.must(http.MethodPost, "/elements", map[string]string{"using": "css selector", "value": selector}, &found)
	ids := make([]string, len(found))
	for i, f := range found {
		ids[i] = f[webElement]
		if ids[i] == "" {
			wd.t.Fatalf("%s: an element without %q: %v", selector, webElement, f)
		}
	}
	return ids
}

func (wd *webDriver) displayed(id string) bool {
	wd.t.Helper()
	var shown bool
	wd.must(http.MethodGet, "/element/"+id+"/displayed", nil, &shown)
	return shown
}

// countDisplayed is how many elements that match selector are shown.
func (wd *webDriver) countDisplayed(selector string) (shown, all int) {
	wd.t.Helper()
	ids := wd.find(selector)
	for _, id := range ids {
		if wd.displayed(id) {
			shown++
		}
	}
	return shown, len(ids)
}

func (wd *webDriver) click(selector string) {
	wd.t.Helper()
	ids := wd.find(selector)
	if len(ids) != 1 {
		wd.t.Fatalf("%d elements match %s, want 1", len(ids), selector)
	}
	wd.must(http.MethodPost, "/element/"+ids[0]+"/click", map[string]any{}, nil)
}

func (wd *webDriver) script(js string, out any) {
	wd.t.Helper()
	wd.must(http.MethodPost, "/execute/sync", map[string]any{"script": js, "args": []any{}}, out)
}

// screenshot saves the viewport as a PNG in dir and returns its path.
func (wd *webDriver) screenshot(dir, name string) string {
	wd.t.Helper()
	var b64 string
	wd.must(http.MethodGet, "/screenshot", nil, &b64)
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		wd.t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		wd.t.Fatal("the screenshot is not a PNG")
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		wd.t.Fatal(err)
	}
	return path
}

// TestHTMLReportInBrowser loads the reports of a passing, a failing and
// a hostile target in headless chromium from file URLs, as a person
// opening a CI artifact would: the failed checks are visible, the passed
// ones collapsed, the filters hide what they should, no script of the
// target ran, and the failing report's screenshot is saved.
func TestHTMLReportInBrowser(t *testing.T) {
	t.Parallel() // it waits on servers and processes more than it computes
	start := time.Now()
	wd := startBrowser(t)
	dir := t.TempDir()
	failPath, failRep := htmlReport(t, brokenCaseNamed(t, "drops Allow on 405"), dir, "fail")
	passPath, _ := htmlReport(t, brokenCase{}, dir, "pass")
	hostilePath, _ := htmlReport(t, brokenCase{wrap: hostile}, dir, "hostile")
	_, failed, _ := failRep.Counts()
	// The screenshot is an artifact of the test: kept with
	// go test -artifacts -outputdir DIR, else removed with the test.
	shots := t.ArtifactDir()

	// injected reports what ran or appeared that the report did not put
	// there; the copy script must have run (it marks the root element).
	const injected = `return {
		global: typeof window.__injected === "undefined" ? "" : String(window.__injected),
		element: document.getElementById("injected") !== null,
		scripts: document.scripts.length,
		images: document.images.length,
		copyScript: document.documentElement.classList.contains("js"),
		text: document.body.innerText.indexOf("window.__injected") >= 0
	};`
	type injection struct {
		Global     string `json:"global"`
		Element    bool   `json:"element"`
		Scripts    int    `json:"scripts"`
		Images     int    `json:"images"`
		CopyScript bool   `json:"copyScript"`
		Text       bool   `json:"text"`
	}

	t.Run("failing report", func(t *testing.T) {
		wd := wd.on(t)
		wd.open(failPath)
		if shown, all := wd.countDisplayed("details.status-fail .problem"); shown == 0 || shown != all {
			t.Errorf("%d of %d problems of failed checks are visible, want all", shown, all)
		}
		if shown, _ := wd.countDisplayed("details.status-fail pre.curl-line"); shown == 0 {
			t.Error("no curl line is visible")
		}
		if shown, all := wd.countDisplayed("details.status-pass .rule"); shown != 0 || all == 0 {
			t.Errorf("%d of %d rules of passed checks are visible, want them collapsed", shown, all)
		}
		if shown, all := wd.countDisplayed("details.status-pass > summary"); shown != all || all == 0 {
			t.Errorf("%d of %d passed checks are listed, want all", shown, all)
		}
		var copyShown bool
		wd.script(`var b = document.querySelector("button.copy"); return !!b && b.offsetParent !== null;`, &copyShown)
		if !copyShown {
			t.Error("the copy button is hidden although the page's script ran")
		}
		path := wd.screenshot(shots, "report-fail.png")
		t.Logf("screenshot of the failing report: %s", path)

		// Status filter: only the failed checks.
		wd.click(`label[for="status-fail"]`)
		if shown, _ := wd.countDisplayed("details.check"); shown != failed {
			t.Errorf("status filter 'failed': %d checks shown, want %d", shown, failed)
		}
		// Area filter (with every status): only the auth checks.
		wd.click(`label[for="status-all"]`)
		wd.click(`label[for="area-auth"]`)
		shown, all := wd.countDisplayed("details.check")
		authShown, authAll := wd.countDisplayed("details.area-auth")
		if shown != authAll || authShown != authAll || authAll == 0 || all <= authAll {
			t.Errorf("area filter 'auth': %d of %d checks shown, want the %d auth checks", shown, all, authAll)
		}
		// Both: the failed routes checks only; then no filter at all.
		wd.click(`label[for="area-routes"]`)
		wd.click(`label[for="status-fail"]`)
		_, want := wd.countDisplayed("details.status-fail.area-routes")
		if shown, _ := wd.countDisplayed("details.check"); shown != want || want == 0 || want == failed {
			t.Errorf("filters 'failed' and 'routes': %d checks shown, want %d (of %d failed)", shown, want, failed)
		}
		wd.click(`label[for="area-all"]`)
		wd.click(`label[for="status-all"]`)
		if shown, all := wd.countDisplayed("details.check"); shown != all {
			t.Errorf("no filter: %d of %d checks shown", shown, all)
		}
		// A passed check opens on a click on its summary.
		wd.click(`details.check[data-name="list/ok"] > summary`)
		if shown, _ := wd.countDisplayed(`details.check[data-name="list/ok"] .rule`); shown != 1 {
			t.Error("a passed check does not open on a click")
		}
	})

	t.Run("passing report", func(t *testing.T) {
		wd := wd.on(t)
		wd.open(passPath)
		var verdict string
		wd.script(`return document.getElementById("verdict").innerText;`, &verdict)
		if !strings.HasPrefix(verdict, "PASS") {
			t.Errorf("verdict %q", verdict)
		}
		if shown, all := wd.countDisplayed("details.check .rule"); shown != 0 || all == 0 {
			t.Errorf("%d of %d rules visible, want every check collapsed", shown, all)
		}
	})

	t.Run("hostile report", func(t *testing.T) {
		wd := wd.on(t)
		wd.open(hostilePath)
		var got injection
		wd.script(injected, &got)
		if got.Global != "" || got.Element || got.Scripts != 1 || got.Images != 0 {
			t.Errorf("the target's markup became part of the page: %+v", got)
		}
		if !got.CopyScript {
			t.Error("the report's own script did not run, so the check above proves little")
		}
		if !got.Text {
			t.Error("the target's markup is not shown as text")
		}
		// A click on a copy button (the page's script at work) brings
		// nothing of the target to life either.
		buttons := wd.find("details.status-fail button.copy")
		if len(buttons) == 0 {
			t.Fatal("no copy button")
		}
		wd.must(http.MethodPost, "/element/"+buttons[0]+"/click", map[string]any{}, nil)
		wd.script(injected, &got)
		if got.Global != "" || got.Element || got.Scripts != 1 || got.Images != 0 {
			t.Errorf("after a copy: %+v", got)
		}
	})

	t.Logf("browser test: chromium %s, 3 reports, %v", wd.browser, time.Since(start).Round(time.Millisecond))
}
