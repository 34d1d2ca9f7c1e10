package e2e

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
)

// nginxHTTP is the start of an nginx configuration that runs in the
// foreground with every file in the run directory (%[1]s), up to the
// http block's own settings.
const nginxHTTP = `daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;`

// nginxConf is a misconfigured nginx in front of the API: it passes on
// only the list and numeric pet ids, and keeps its default body limit
// below the API's, so that nginx itself answers some requests with its
// own pages.
const nginxConf = nginxHTTP + `
	client_max_body_size 1k;
	server {
		listen 127.0.0.1:%[2]d;
		location = /v1/inventory { proxy_pass http://%[3]s; }
		location ~ ^/v1/inventory/[0-9]+$ { proxy_pass http://%[3]s; }
	}
}
`

// startNginx runs nginx with conf (a format of the run directory, the
// port and the upstream host:port) in front of the API at api, and
// returns nginx's base URL, once nginx answers.
func startNginx(t *testing.T, conf, api string) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		t.Skip("nginx is not installed (.ci/run installs nginx-light)")
	}
	upstream := strings.TrimPrefix(strings.TrimSuffix(api, "/v1"), "http://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(file, fmt.Appendf(nil, conf, dir, port, upstream), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "-p", dir, "-c", file)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := fmt.Sprintf("http://127.0.0.1:%d/v1", port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := http.Get(base + "/inventory")
		if err == nil {
			resp.Body.Close()
			if resp.Header.Get("Server") != "" {
				break
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not answer: %v\n%s%s", err, out.String(), b)
		}
		time.Sleep(20 * time.Millisecond) // polling for nginx to listen: a state, with a deadline
	}
	return base
}

// TestMisconfiguredNginx: behind a real nginx that answers some requests
// itself, the failures and the report's headline say that nginx, not the
// API, answered, with its evidence.
func TestMisconfiguredNginx(t *testing.T) {
	api, _ := serveBroken(t, brokenCase{})
	base := startNginx(t, nginxConf, api)

	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: testKey, Run: `^(routes|petid|size)/`})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Headlines) != 1 || !strings.Contains(rep.Headlines[0], "did not come from the API but from something in front of it") || !strings.Contains(rep.Headlines[0], "Server: nginx") {
		t.Fatalf("headlines %q", rep.Headlines)
	}
	t.Log(rep.Headlines[0])
	for _, name := range []string{"routes/trailing-slash", "petid/not-an-integer", "size/over-limit"} {
		res, _ := rep.Result(name)
		if res.Outcome != conformancetest.Fail {
			t.Errorf("%s: %s, want a failure", name, res.Outcome)
			continue
		}
		found := false
		for _, f := range res.Failures {
			if strings.Contains(f.Problem, "came from something in front of the API (router or proxy): the body is `<html>") && strings.Contains(f.Problem, "Server: nginx") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no failure names nginx's answer:\n%v", name, res.Failures)
		}
	}
	if res, _ := rep.Result("routes/list-other-methods"); res.Outcome != conformancetest.Pass {
		t.Errorf("routes/list-other-methods, passed on by nginx: %s %v", res.Outcome, res.Failures)
	}
}

// nginxGoodConf is nginx configured correctly in front of the API: every
// request under /v1/ passed on as it came, a body limit above the API's.
const nginxGoodConf = nginxHTTP + `
	client_max_body_size 1m;
	server {
		listen 127.0.0.1:%[2]d;
		location /v1/ { proxy_pass http://%[3]s; proxy_http_version 1.1; proxy_set_header Connection ""; }
	}
}
`

// TestCorrectNginx: through a correctly configured nginx every check
// passes but two, each not judged through nginx and saying so, naming it:
// routes/unknown-methods, whose lowercase methods nginx refuses with its
// own 400 whatever its settings, and body/stalled, whose body nginx holds
// until it has all arrived (proxy_request_buffering, on by default), so
// that the API never sees the request.
func TestCorrectNginx(t *testing.T) {
	t.Parallel() // it waits on servers and processes more than it computes
	base := startNginx(t, nginxGoodConf, serveNetHTTP(t, nil, newAPI(t, openMemory(t, seed...))))
	// The stalled body waits out the run's request timeout (nginx holds
	// it): past the API's body timeout, with room for a loaded machine,
	// and no longer.
	rep, err := conformancetest.RunChecks(t.Context(), conformancetest.Config{BaseURL: base, APIKey: testKey, RequestTimeout: testBodyTimeout + 3*time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Results {
		switch {
		case res.Name == "routes/unknown-methods" || res.Name == "body/stalled":
			if res.Outcome != conformancetest.Skip || !strings.Contains(res.Reason, "not judged through the intermediary") || !strings.Contains(res.Reason, "nginx/") {
				t.Errorf("%s: %s %q %v", res.Name, res.Outcome, res.Reason, res.Failures)
			}
			t.Logf("%s: %s", res.Name, res.Reason)
		case res.Outcome == conformancetest.Fail:
			t.Errorf("%s failed through a correct nginx: %v", res.Name, res.Failures)
		}
	}
	t.Log(rep.Summary())
}
