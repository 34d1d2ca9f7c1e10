package release

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRelease tries the release as a new user would, before anything is
// tagged: it builds a file-system module proxy from the tree at the versions
// of versions.yaml, then, in a fresh module outside the repository, with no
// workspace and a module cache of its own (so that no zip of an earlier run
// is reused), it `go get`s every released module, compiles every snippet
// of the documents (SnippetFiles), installs inventory-conformance at the
// version and at @latest, runs every app snippet (AppSnippets: Gin, Fiber,
// the standard mux, chi, echo, gorilla/mux) and checks each with the
// installed command, then installs inventory-server at the version and
// checks it the same way on the Redis of REDIS_URL. It takes a minute or two (most of it
// compiling Gin, Fiber and go-redis), so it runs only when asked:
//
//	PETINVENTORY_RELEASE_TEST=1 go test -run TestRelease -v ./internal/release
func TestRelease(t *testing.T) {
	if os.Getenv("PETINVENTORY_RELEASE_TEST") == "" {
		t.Skip("set PETINVENTORY_RELEASE_TEST=1 to try the release from a module proxy built from the tree (.ci/run does)")
	}
	start := time.Now()
	var phases []string
	phase := func(name string) {
		phases = append(phases, fmt.Sprintf("%s %s", name, time.Since(start).Round(time.Second)))
		start = time.Now()
	}
	total := start
	repo, err := Load(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	snippets, err := ReadSnippets(repo.Root)
	if err != nil {
		t.Fatal(err)
	}

	tmp := t.TempDir()
	if rel, err := filepath.Rel(repo.Root, tmp); err == nil && !strings.HasPrefix(rel, "..") {
		t.Fatalf("the temporary directory %s is inside the repository; set TMPDIR elsewhere, the user module must be outside it", tmp)
	}
	proxy := filepath.Join(tmp, "proxy")
	if err := WriteProxy(repo, proxy); err != nil {
		t.Fatal(err)
	}
	env := userEnv(t, tmp, proxy)
	phase("proxy")

	// Each module alone in a new module, as `go mod init` makes it: a module
	// fetched after another would hide a bad requirement of its own on it
	// (the higher version already selected wins).
	// In parallel, to save time: they share only the module cache, which
	// the go command locks.
	t.Run("go get alone", func(t *testing.T) {
		for i, m := range repo.Released() {
			t.Run(m.Path, func(t *testing.T) {
				t.Parallel()
				dir := filepath.Join(tmp, fmt.Sprintf("get%d", i))
				newModule(t, dir, env)
				goCmd(t, dir, env, "get", m.Path+"@"+m.Version)
				checkVersion(t, dir, env, m)
			})
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	// Then all of them in the module that builds the snippets.
	user := filepath.Join(tmp, "user")
	newModule(t, user, env)
	for _, m := range repo.Released() {
		goCmd(t, user, env, "get", m.Path+"@"+m.Version)
	}
	for _, m := range repo.Released() {
		checkVersion(t, user, env, m)
	}
	// The routers the chi, echo and gorillamux snippets use, from the usual
	// proxy, after our modules so that none of ours is checked against them.
	goCmd(t, user, env, append([]string{"get"}, SnippetModules...)...)

	phase("go get")

	// Every README snippet, compiled in that module.
	for _, name := range SnippetNames {
		src, err := Program(snippets[name])
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(user, "cmd", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	apps := filepath.Join(tmp, "apps")
	goCmd(t, user, env, "build", "-o", apps+string(filepath.Separator), "./cmd/...")
	phase("build snippets")

	// The conformance command, installed as the README says, at the version
	// and at @latest (which the proxy must resolve to the same version).
	conf := repo.Module(repo.Modules[0].Path + "/conformancetest")
	if conf == nil || !conf.Released() {
		t.Fatal("versions.yaml does not release the conformancetest module")
	}
	cmdPath := conf.Path + "/cmd/inventory-conformance"
	bins := map[string]string{}
	for _, query := range []string{conf.Version, "latest"} {
		gobin := filepath.Join(tmp, "bin-"+query)
		goCmd(t, tmp, append(env, "GOBIN="+gobin), "install", cmdPath+"@"+query)
		bin := filepath.Join(gobin, "inventory-conformance")
		info := goCmd(t, tmp, env, "version", "-m", bin)
		if want := regexp.MustCompile(`(?m)^\s+mod\s+` + regexp.QuoteMeta(conf.Path) + `\s+` + regexp.QuoteMeta(conf.Version) + `\s`); !want.MatchString(info) {
			t.Fatalf("go install %s@%s did not install %s %s:\n%s", cmdPath, query, conf.Path, conf.Version, info)
		}
		bins[query] = bin
	}
	phase("go install")

	// The app snippets running, each checked by one of the installed
	// commands in turn.
	summary := []string{fmt.Sprintf("%d modules from the proxy, %d documents' snippets built", len(repo.Released()), len(SnippetNames))}
	for i, app := range AppSnippets {
		bin := bins[conf.Version]
		if i%2 == 1 {
			bin = bins["latest"]
		}
		key := randomKey(t)
		addr := startApp(t, filepath.Join(apps, app), key)
		line := conformance(t, bin, "http://"+addr+"/v1", key)
		summary = append(summary, app+" app: "+line)
	}
	phase("apps and conformance")

	// The server, installed as an operator does, run against the Redis
	// CI provides, and checked by the installed suite.
	summary = append(summary, "inventory-server: "+installedServer(t, repo, tmp, env, bins[conf.Version]))
	phase("inventory-server")
	t.Logf("release test: %s; took %s (%s)", strings.Join(summary, "; "), time.Since(total).Round(time.Second), strings.Join(phases, ", "))
}

func newModule(t *testing.T, dir string, env []string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	goCmd(t, dir, env, "mod", "init", "example.com/newuser")
}

// checkVersion fails unless the module in dir selects m at its release
// version, from the proxy.
func checkVersion(t *testing.T, dir string, env []string, m *Module) {
	t.Helper()
	got := strings.TrimSpace(goCmd(t, dir, env, "list", "-m", "-f", "{{.Version}}{{with .Replace}} replaced by {{.Path}}{{end}}", m.Path))
	if got != m.Version {
		t.Fatalf("after go get %s@%s, go list -m says %q", m.Path, m.Version, got)
	}
}

// userEnv is the environment of a new user's go command: no workspace, the
// test's own module cache and GOBIN, our proxy first, then the modules
// already downloaded on this machine, then the usual proxy; no checksum
// database for our modules (they are not published), and the toolchain that
// runs the test (a go line it cannot satisfy is a failure, not a download).
func userEnv(t *testing.T, tmp, proxy string) []string {
	goenv := strings.Fields(goCmd(t, "", os.Environ(), "env", "GOMODCACHE", "GOPROXY"))
	if len(goenv) != 2 {
		t.Fatalf("go env GOMODCACHE GOPROXY: %q", goenv)
	}
	proxies := []string{"file://" + filepath.ToSlash(proxy), "file://" + filepath.ToSlash(filepath.Join(goenv[0], "cache", "download"))}
	if goenv[1] != "off" {
		proxies = append(proxies, goenv[1])
	}
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GOWORK", "GOFLAGS", "GOPROXY", "GOMODCACHE", "GOBIN", "GONOSUMDB", "GOPRIVATE", "GONOPROXY", "GOTOOLCHAIN":
		default:
			env = append(env, kv)
		}
	}
	return append(env,
		"GOWORK=off",
		// -modcacherw: t.TempDir can remove the cache. -trimpath: packages
		// compiled from this cache are found in the shared build cache on
		// the next run (without it their directory is part of the key).
		"GOFLAGS=-mod=mod -modcacherw -trimpath",
		"GOPROXY="+strings.Join(proxies, ","),
		"GONOSUMDB=github.com/petinventory",
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		"GOBIN="+filepath.Join(tmp, "bin"),
		"GOTOOLCHAIN=local",
	)
}

// goCmd runs the go command in dir and returns its standard output; a
// failure ends the test with everything it printed.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s (in %s): %v\n%s%s", strings.Join(args, " "), dir, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func randomKey(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// startApp starts a snippet app, waits for the address it prints, and stops
// it when the test ends.
func startApp(t *testing.T, bin, key string) string {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "INVENTORY_API_KEYS="+key, "INVENTORY_API_KEY="+key)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("%s stderr:\n%s", filepath.Base(bin), stderr.String())
		}
	})
	addrc := make(chan string, 1)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				select {
				case addrc <- a:
				default: // only the first address counts
				}
			}
		}
		io.Copy(io.Discard, stdout)
		cmd.Wait()
	}()
	select {
	case addr := <-addrc:
		return addr
	case <-done:
		t.Fatalf("%s exited before listening: %v\n%s", filepath.Base(bin), cmd.ProcessState, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s printed no \"listening on\" line within 30s\n%s", filepath.Base(bin), stderr.String())
	}
	return ""
}

var summaryRE = regexp.MustCompile(`(?m)^.*?\b(\d+) passed, (\d+) failed, (\d+) skipped.*$`)

// conformance runs the installed inventory-conformance against baseURL; it
// must exit 0 (no check failed) having passed at least one check. It returns
// the command's summary line.
func conformance(t *testing.T, bin, baseURL, key string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-base-url", baseURL)
	cmd.Env = append(os.Environ(), "INVENTORY_API_KEY="+key)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("inventory-conformance -base-url %s: %v\n%s", baseURL, err, out)
	}
	m := summaryRE.FindSubmatch(out)
	if m == nil {
		t.Fatalf("inventory-conformance printed no summary line:\n%s", out)
	}
	if string(m[1]) == "0" {
		t.Fatalf("inventory-conformance passed no check:\n%s", out)
	}
	return strings.TrimSpace(string(m[0]))
}

// lockedBuffer is a bytes.Buffer that a process writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
