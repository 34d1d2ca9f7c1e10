package cut

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
	redisstore "github.com/petinventory/petinventory/storage/redis"
)

const (
	apiKey = "cut-test-key-3b9e41"
	prefix = "cut"
	// The consistency check plays with the first pets of the list (ids 1
	// to 3); the load updates others (ids 100 to 199), so that its writes
	// never enter the checker's model.
	firstLoadPet = 100
	loadPets     = 100
	rate         = 500 // requests a second the load sends, lists and updates alike
	loadFor      = 20 * time.Second
	// minRequests is 400 requests a second over loadFor: on a machine
	// too busy to send them in loadFor (go test -race of the whole tree
	// on 2 cores), the load, and the kills, go on until it has, so that
	// the run covers as many requests as it promises; the rate reached is
	// printed, not asserted.
	minRequests = 400 * 20
	maxLoadFor  = 3 * time.Minute
	summaryEnv  = "CUT_SUMMARY"
)

var serverBin, conformanceBin string // built once by TestMain

func TestMain(m *testing.M) {
	proctest.Main(m, "cut",
		proctest.Binary{Pkg: proctest.ServerPkg, Name: "inventory-server", Path: &serverBin},
		proctest.Binary{Pkg: proctest.ConformancePkg, Name: "inventory-conformance", Path: &conformanceBin})
}

// seedFile writes the inventory the servers seed an empty store with:
// pets 1 to 3 for the consistency check, and the load's.
func seedFile(t *testing.T) string {
	t.Helper()
	type item struct {
		PetID    int64  `json:"petId"`
		Quantity int    `json:"quantity"`
		Status   string `json:"status"`
	}
	items := []item{{1, 5, "available"}, {2, 5, "available"}, {3, 5, "available"}}
	for i := range loadPets {
		items = append(items, item{int64(firstLoadPet + i), 1, "available"})
	}
	b, _ := json.Marshal(items)
	path := filepath.Join(t.TempDir(), "seed.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startServers starts two inventory-server processes on one Redis (env
// names it) and waits until each is ready and lists every pet.
func startServers(t *testing.T, env []string) []*proctest.Server {
	t.Helper()
	seed := seedFile(t)
	var out []*proctest.Server
	for _, fw := range []string{"gin", "fiber"} {
		s := proctest.Start(t, serverBin, apiKey, append([]string{"INVENTORY_API_KEYS=" + apiKey}, env...),
			[]string{"-framework", fw, "-redis-prefix", prefix, "-seed", seed})
		err := redistest.Poll(30*time.Second, func() error {
			got, err := proctest.Do(context.Background(), http.DefaultClient, apiKey, "GET", s.Base+"/v1/inventory", "")
			if err != nil {
				return err
			}
			if n := strings.Count(string(got.Body), `"petId"`); got.Status != 200 || n != 3+loadPets {
				return fmt.Errorf("GET /v1/inventory: %d, %d pets", got.Status, n)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("inventory-server -framework %s: not serving the seeded inventory: %v", fw, err)
		}
		out = append(out, s)
	}
	return out
}

// load sends lists and updates through the servers at rate for d, and
// counts the answers.
type load struct {
	lists, lists200, updates, updates200, updates503 atomic.Int64
	mu                                               sync.Mutex
	other                                            []string // answers neither counted as expected nor allowed
	elapsed                                          time.Duration
}

func (l *load) unexpected(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.other) < 20 {
		l.other = append(l.other, fmt.Sprintf(format, args...))
	}
}

// run sends the load for at least d and at least minRequests requests
// (at most maxLoadFor).
func (l *load) run(servers []*proctest.Server, d time.Duration) {
	const workers = 20
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	interval := time.Second * workers / rate
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			next := start.Add(interval * time.Duration(w) / workers)
			for i := 0; ; i++ {
				time.Sleep(time.Until(next))
				if el := time.Since(start); el >= d && l.lists.Load()+l.updates.Load() >= minRequests || el >= maxLoadFor {
					return
				}
				next = next.Add(interval)
				base := servers[(w+i)%len(servers)].Base
				if i%2 == 0 {
					l.list(client, base)
				} else {
					l.update(client, base, int64(firstLoadPet+rng.IntN(loadPets)), 1+rng.IntN(1000))
				}
			}
		})
	}
	wg.Wait()
	l.elapsed = time.Since(start)
}

func (l *load) list(client *http.Client, base string) {
	l.lists.Add(1)
	got, err := proctest.Do(context.Background(), client, apiKey, "GET", base+"/v1/inventory", "")
	switch {
	case err != nil:
		l.unexpected("GET via %s: %v", base, err)
	case got.Status != 200:
		l.unexpected("GET via %s: %d %.200s", base, got.Status, got.Body)
	case strings.Count(string(got.Body), `"petId"`) != 3+loadPets:
		l.unexpected("GET via %s: 200 with %d pets, want %d", base, strings.Count(string(got.Body), `"petId"`), 3+loadPets)
	default:
		l.lists200.Add(1)
	}
}

func (l *load) update(client *http.Client, base string, pet int64, q int) {
	l.updates.Add(1)
	got, err := proctest.Do(context.Background(), client, apiKey, "PATCH", base+"/v1/inventory/"+strconv.FormatInt(pet, 10), fmt.Sprintf(`{"quantity":%d}`, q))
	switch {
	case err != nil:
		l.unexpected("PATCH pet %d via %s: %v", pet, base, err)
	case got.Status == 200:
		l.updates200.Add(1)
	case got.Status == 503 && got.Code() == "unavailable" && got.Header.Get("Retry-After") != "":
		l.updates503.Add(1)
	default:
		l.unexpected("PATCH pet %d via %s: %d %.200s", pet, base, got.Status, got.Body)
	}
}

func (l *load) rate() float64 {
	return float64(l.lists.Load()+l.updates.Load()) / l.elapsed.Seconds()
}

// check fails the test for every answer the load did not expect, and
// when the load sent fewer than minRequests requests in maxLoadFor.
func (l *load) check(t *testing.T) {
	t.Helper()
	for _, o := range l.other {
		t.Error(o)
	}
	if l.lists200.Load() != l.lists.Load() {
		t.Errorf("%d of %d lists answered other than 200", l.lists.Load()-l.lists200.Load(), l.lists.Load())
	}
	if n := l.lists.Load() + l.updates.Load(); n < minRequests {
		t.Errorf("the load sent %d requests in %v, fewer than the %d the test promises", n, l.elapsed, minRequests)
	}
}

// cutAfterExec is the sum over servers of the updates answered 503
// because their connection was cut with their EXEC in flight (their
// /metrics).
func cutAfterExec(t *testing.T, servers []*proctest.Server) int64 {
	t.Helper()
	var sum int64
	for _, s := range servers {
		resp, err := http.Get(s.Base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		found := false
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "inventory_store_updates_cut_after_exec_total "); ok {
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("%s/metrics: %q", s.Base, sc.Text())
				}
				sum += int64(n)
				found = true
			}
		}
		resp.Body.Close()
		if !found {
			t.Fatalf("%s/metrics has no inventory_store_updates_cut_after_exec_total", s.Base)
		}
	}
	return sum
}

// consistency runs inventory-conformance's consistency check through the
// servers for d, and returns its outcome, its detail line and how many
// of its updates were of unknown outcome (each a 503 here), read from its
// JSON report (its counts, not its words).
func consistency(t *testing.T, servers []*proctest.Server, d time.Duration) (outcome, detail string, unknown int64, out string) {
	args := []string{"-json", "-run", "^consistency/", "-consistency", d.String()}
	for _, s := range servers {
		args = append(args, "-base-url", s.Base+"/v1")
	}
	cmd := exec.Command(conformanceBin, args...)
	cmd.Env = append(os.Environ(), "INVENTORY_API_KEY="+apiKey)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run() // its exit status is its outcome's
	out = stdout.String() + stderr.String()
	var rep struct {
		Results []struct {
			Name, Outcome, Detail string
			Consistency           *struct {
				UnknownUpdates int64 `json:"unknownUpdates"`
			}
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return "", "", 0, out
	}
	for _, r := range rep.Results {
		if r.Name == "consistency/linearizable" {
			outcome, detail = strings.ToUpper(r.Outcome), r.Detail
			if r.Consistency != nil {
				unknown = r.Consistency.UnknownUpdates
			}
		}
	}
	return outcome, detail, unknown, out
}

// TestClientsKilled: every client connection of Redis killed every
// 500 ms for 20 s under load through two servers while the consistency
// check runs through both: no list answered other than 200, an update
// answered 503 only when its EXEC was in flight (the servers count
// those), and the check passes.
func TestClientsKilled(t *testing.T) {
	node := redistest.StartNode(t, "cut")
	servers := startServers(t, []string{"REDIS_URL=redis://" + node.Addr() + "/0"})

	stop := make(chan struct{})
	var (
		wg            sync.WaitGroup
		kills, killed int64
		outcome       string
		detail, out   string
		unknown       int64
	)
	wg.Go(func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			// CLIENT KILL skips the connection that sends it.
			if v, err := node.Do("CLIENT", "KILL", "TYPE", "normal"); err == nil {
				if n, ok := v.(int64); ok {
					killed += n
					kills++
				}
			}
		}
	})
	wg.Go(func() { outcome, detail, unknown, out = consistency(t, servers, loadFor) })
	var l load
	l.run(servers, loadFor)
	close(stop)
	wg.Wait()

	inFlight := cutAfterExec(t, servers)
	proctest.Summary(t, summaryEnv, "cut: CLIENT KILL TYPE normal every 500ms for %v (%d kills, %d connections) through 2 servers at %.0f req/s: lists %d/%d answered 200; updates %d/%d answered 200, %d answered 503; consistency check %s with %d updates of unknown outcome; updates cut with EXEC in flight (servers' count) %d",
		l.elapsed.Round(100*time.Millisecond), kills, killed, l.rate(), l.lists200.Load(), l.lists.Load(), l.updates200.Load(), l.updates.Load(), l.updates503.Load(), outcome, unknown, inFlight)
	if killed == 0 {
		t.Fatal("no client connection was killed: the test proves nothing")
	}
	l.check(t)
	// Every 503 is an update whose EXEC was in flight: the servers counted
	// as many as the load and the checker were answered (the checker's
	// updates of unknown outcome are its 503s).
	if got := l.updates503.Load() + unknown; got > inFlight {
		t.Errorf("%d updates answered 503 (%d of the load, %d of the checker), but the servers counted %d cut with EXEC in flight: some 503s had another cause",
			got, l.updates503.Load(), unknown, inFlight)
	}
	if outcome != "PASS" {
		t.Errorf("consistency/linearizable: %s %s\n%s", outcome, detail, out)
	}
	rawWarnings(t, servers)
}

// rawWarnings fails the test for each of go-redis's own lines about a
// broken connection the servers logged as they came: they are counted
// as one, in the store's words (redisstore.GoRedisLogger).
func rawWarnings(t *testing.T, servers []*proctest.Server) {
	t.Helper()
	for _, s := range servers {
		counted := 0
		for line := range strings.Lines(s.Logs.String()) {
			if strings.Contains(line, "connections to Redis were closed under it") {
				counted++
			}
			for _, raw := range []string{"pre-command drain failed", "desynchronized", "connection reset by peer", "bad state"} {
				if strings.Contains(line, raw) {
					t.Errorf("%s logged go-redis's raw line: %s", s.Base, strings.TrimSpace(line))
				}
			}
		}
		t.Logf("%s: %d warnings of connections closed under go-redis (once a minute, with the count held back)", s.Base, counted)
	}
}

// TestPasswordRotated: the Redis password rotated the documented way
// (docs/OPERATING.md) under load through two servers that read it from a
// file: ACL SETUSER >new while the old one still works, the file replaced
// (as a secret mount does, a rename), the servers' connections reopened
// with it, <old, then CLIENT KILL USER. No list answered other than 200,
// an update answered 503 only when CLIENT KILL USER cut its EXEC in
// flight, and ACL LOG empty: no connection ever authenticated with a
// password Redis no longer knew.
func TestPasswordRotated(t *testing.T) {
	node := redistest.StartNodeWith(t, "cut-acl", redistest.NodeOptions{DefaultUserOff: true})
	const user, oldPW, newPW = "app", "cut-old-password-1f2e", "cut-new-password-8a7b"
	rule := append([]string{"on", ">" + oldPW}, strings.Fields(redisstore.ACLRule(prefix))...)
	if err := redistest.SetUser([]*redistest.Node{node}, user, rule...); err != nil {
		t.Fatal(err)
	}
	pwFile := filepath.Join(t.TempDir(), "redis-password")
	replace := func(content string) {
		tmp := pwFile + ".new"
		if err := os.WriteFile(tmp, []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, pwFile); err != nil {
			t.Fatal(err)
		}
	}
	replace(oldPW)
	servers := startServers(t, []string{"REDIS_URL=redis://" + user + "@" + node.Addr() + "/0", "INVENTORY_REDIS_PASSWORD_FILE=" + pwFile})

	do := func(args ...string) int64 {
		v, err := node.Do(args...)
		if re, ok := v.(redistest.ReplyError); ok && err == nil {
			err = re
		}
		if err != nil {
			t.Errorf("%s: %v", strings.Join(args, " "), err)
		}
		n, _ := v.(int64)
		return n
	}
	var l load
	done := make(chan struct{})
	go func() { defer close(done); l.run(servers, loadFor) }()
	time.Sleep(3 * time.Second)
	// 1. The new password next to the old one: both work.
	do("ACL", "SETUSER", user, ">"+newPW)
	// 2. The secret updated (a kubelet's sync, a provider's rotation):
	// new connections read the new password from the file.
	replace(newPW)
	time.Sleep(2 * time.Second)
	// 3. The servers switch: their connections, opened with the old
	// password, are closed and reopened with the new one, while the old
	// one still works, so that a connection that read the file just
	// before it changed still authenticates.
	switched := do("CLIENT", "KILL", "USER", user)
	time.Sleep(3 * time.Second)
	// 4. The old password removed, and 5. any connection still
	// authenticated with it closed.
	do("ACL", "SETUSER", user, "<"+oldPW)
	closed := do("CLIENT", "KILL", "USER", user)
	<-done

	inFlight := cutAfterExec(t, servers)
	aclLog, err := redistest.ACLLogs([]*redistest.Node{node})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := redistest.DoString(node.Addr(), redistest.Timeout, "AUTH", user, oldPW); err == nil {
		t.Error("the old password still authenticates after <old")
	}
	proctest.Summary(t, summaryEnv, "cut: Redis password rotated (>new, file replaced, CLIENT KILL USER: %d connections, <old, CLIENT KILL USER: %d) through 2 servers at %.0f req/s: lists %d/%d answered 200; updates %d/%d answered 200, %d answered 503; updates cut with EXEC in flight (servers' count) %d; ACL LOG %d entries",
		switched, closed, l.rate(), l.lists200.Load(), l.lists.Load(), l.updates200.Load(), l.updates.Load(), l.updates503.Load(), inFlight, len(strings.FieldsFunc(aclLog, func(r rune) bool { return r == '\n' })))
	if switched == 0 || closed == 0 {
		t.Errorf("CLIENT KILL USER closed %d, then %d connections: the servers' connections were not cut", switched, closed)
	}
	l.check(t)
	if l.updates503.Load() > inFlight {
		t.Errorf("%d updates answered 503, but the servers counted %d cut with EXEC in flight", l.updates503.Load(), inFlight)
	}
	if aclLog != "" {
		t.Errorf("ACL LOG after the rotation:\n%s", aclLog)
	}
	rawWarnings(t, servers)
}
