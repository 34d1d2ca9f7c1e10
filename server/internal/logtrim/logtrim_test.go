package logtrim

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petinventory/petinventory/internal/proctest"
	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/redis/go-redis/v9"
)

const (
	apiKey  = "logtrim-test-key-8d21c7"
	prefix  = "logtrim"
	logKey  = "{" + prefix + "}:log"
	itemKey = "{" + prefix + "}:items"
	pets    = 240 // seeded, quantity 0
	writers = 8   // writer g owns the pets whose id is g modulo writers
)

var serverBin string // inventory-server, built once by TestMain

func TestMain(m *testing.M) {
	proctest.Main(m, "logtrim", proctest.Binary{Pkg: proctest.ServerPkg, Name: "inventory-server", Path: &serverBin})
}

type item struct {
	PetID    int64  `json:"petId"`
	Quantity int    `json:"quantity"`
	Status   string `json:"status"`
}

// world is what the test knows: the last quantity each pet's owner wrote
// and was answered 200 for (writes of one pet are sequential, each larger
// than the last), and how the lists went.
type world struct {
	t      *testing.T
	client *http.Client
	acked  [pets]atomic.Int64
	writes atomic.Int64
	lists  atomic.Int64
	stale  atomic.Int64 // lists that showed a pet older than a write answered before them
	first  sync.Once
}

func (w *world) do(method, url, body string) (proctest.Reply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return proctest.Do(ctx, w.client, apiKey, method, url, body)
}

// write sets pet's quantity to the next value through base and records it
// once answered 200 with that value.
func (w *world) write(base string, pet int64) error {
	q := w.acked[pet].Load() + 1
	got, err := w.do("PATCH", base+"/v1/inventory/"+strconv.FormatInt(pet, 10), fmt.Sprintf(`{"quantity":%d}`, q))
	if err != nil {
		return err
	}
	var it item
	if got.Status != 200 || json.Unmarshal(got.Body, &it) != nil || it.PetID != pet || int64(it.Quantity) != q {
		return fmt.Errorf("PATCH pet %d to %d via %s: %d %s", pet, q, base, got.Status, got.Body)
	}
	w.acked[pet].Store(q)
	w.writes.Add(1)
	return nil
}

// list lists through base and checks that no pet is older than a write
// answered 200 before the list was sent; it returns the list.
func (w *world) list(base string) ([]item, error) {
	var before [pets]int64
	for i := range before {
		before[i] = w.acked[i].Load()
	}
	got, err := w.do("GET", base+"/v1/inventory", "")
	if err != nil {
		return nil, err
	}
	var items []item
	if got.Status != 200 || json.Unmarshal(got.Body, &items) != nil {
		return nil, fmt.Errorf("GET /v1/inventory via %s: %d %.200s", base, got.Status, got.Body)
	}
	w.lists.Add(1)
	stale := 0
	var example string
	for _, it := range items {
		if it.PetID >= 0 && it.PetID < pets && int64(it.Quantity) < before[it.PetID] {
			if stale++; stale == 1 {
				example = fmt.Sprintf("pet %d listed with quantity %d, after a write of %d was answered 200", it.PetID, it.Quantity, before[it.PetID])
			}
		}
	}
	if len(items) != pets {
		return items, fmt.Errorf("a list via %s has %d pets, want %d", base, len(items), pets)
	}
	if stale > 0 {
		w.stale.Add(1)
		w.first.Do(func() {
			w.t.Errorf("a list via %s showed %d pets older than writes answered before it was sent: %s", base, stale, example)
		})
	}
	return items, nil
}

// writeBacklog makes n writes through bases, writers at once, each writer
// to its own pets, while listers list through listBases; it returns the
// first error.
func (w *world) writeBacklog(n int, bases, listBases []string) error {
	var (
		wg   sync.WaitGroup
		errs = make(chan error, writers+len(listBases))
		done = make(chan struct{})
	)
	for g := range writers {
		wg.Go(func() {
			for i := 0; i < n/writers; i++ {
				pet := int64(g + writers*(i%(pets/writers)))
				if err := w.write(bases[(g+i)%len(bases)], pet); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var lw sync.WaitGroup
	for _, base := range listBases {
		lw.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := w.list(base); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	lw.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// proxy forwards a process's connections to Redis and, when armed, runs a
// fault just before the second XRANGE of the change log it forwards: the
// second page of that process's read.
type proxy struct {
	ln       net.Listener
	upstream string

	mu      sync.Mutex
	fault   func()
	xranges int
	fired   int
}

func startProxy(t *testing.T, upstream string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, upstream: upstream}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

// arm makes the next read's second page run fault first.
func (p *proxy) arm(fault func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault, p.xranges = fault, 0
}

// firedCount is how many faults ran.
func (p *proxy) firedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fired
}

func (p *proxy) serve(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer up.Close()
	go func() { _, _ = io.Copy(c, up); c.Close() }()
	r := bufio.NewReader(c)
	for {
		raw, args, err := readCommand(r)
		if err != nil {
			return
		}
		if len(args) >= 2 && strings.EqualFold(args[0], "xrange") && args[1] == logKey {
			if f := p.due(); f != nil {
				f()
			}
		}
		if _, err := up.Write(raw); err != nil {
			return
		}
	}
}

func (p *proxy) due() func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fault == nil {
		return nil
	}
	if p.xranges++; p.xranges < 2 {
		return nil
	}
	f := p.fault
	p.fault = nil
	p.fired++
	return f
}

// readCommand reads one RESP command (an array of bulk strings, as
// go-redis sends them): its bytes and its arguments.
func readCommand(r *bufio.Reader) (raw []byte, args []string, err error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, nil, err
	}
	raw = append(raw, line...)
	if !strings.HasPrefix(line, "*") {
		return raw, nil, nil // an inline command: forwarded as is
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return nil, nil, err
	}
	for range n {
		hdr, err := r.ReadString('\n')
		if err != nil {
			return nil, nil, err
		}
		raw = append(raw, hdr...)
		size, err := strconv.Atoi(strings.TrimSpace(hdr[1:]))
		if err != nil || !strings.HasPrefix(hdr, "$") {
			return nil, nil, errors.New("not a bulk string: " + hdr)
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, nil, err
		}
		raw = append(raw, buf...)
		args = append(args, string(buf[:size]))
	}
	return raw, args, nil
}

// TestListsThroughThreeProcessesWhileTheLogMoves: processes A (Gin) and
// B (Fiber) take writes and list; C (Gin) lists only at the end of each
// round, so each of its lists reads a backlog of 500 to 2 000 log entries
// in pages, and the log is trimmed, deleted or replaced just before the
// second page. Every list, through every process, must show every write
// answered 200 before it was sent; C then keeps up with more writes; at
// the end all three list what Redis holds.
func TestListsThroughThreeProcessesWhileTheLogMoves(t *testing.T) {
	start := time.Now()
	node := redistest.StartNode(t, "logtrim")
	rdb := redis.NewClient(&redis.Options{Addr: node.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := t.Context()

	seed := make([]item, pets)
	for i := range seed {
		seed[i] = item{PetID: int64(i), Quantity: 0, Status: "available"}
	}
	raw, _ := json.Marshal(seed)
	seedFile := filepath.Join(t.TempDir(), "seed.json")
	if err := os.WriteFile(seedFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	px := startProxy(t, node.Addr())
	env := func(url string) []string {
		return []string{"REDIS_URL=" + url, "INVENTORY_API_KEYS=" + apiKey, "INVENTORY_REDIS_PREFIX=" + prefix, "INVENTORY_STORE_TIMEOUT=10s"}
	}
	start1 := func(framework, url string) *proctest.Server {
		return proctest.Start(t, serverBin, apiKey, env(url), []string{"-framework", framework, "-seed", seedFile})
	}
	a := start1("gin", "redis://"+node.Addr()+"/0")
	b := start1("fiber", "redis://"+node.Addr()+"/0")
	c := start1("gin", "redis://"+px.addr()+"/0")
	w := &world{t: t, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	for _, s := range []*proctest.Server{a, b, c} {
		if err := redistest.Poll(20*time.Second, func() error {
			got, err := w.do("GET", s.Base+"/readyz", "")
			if err == nil && got.Status != 200 {
				err = fmt.Errorf("/readyz answered %d", got.Status)
			}
			return err
		}); err != nil {
			t.Fatalf("%s: %v", s.Base, err)
		}
	}
	writeBases := []string{a.Base, b.Base}

	faults := []struct {
		name string
		do   func() error
	}{
		{"trimmed (XTRIM MAXLEN 5)", func() error { return rdb.XTrimMaxLen(ctx, logKey, 5).Err() }},
		{"deleted (DEL)", func() error { return rdb.Del(ctx, logKey).Err() }},
		{"replaced (DEL, then a write through A)", func() error {
			if err := rdb.Del(ctx, logKey).Err(); err != nil {
				return err
			}
			return w.write(a.Base, 0)
		}},
	}
	backlogs := []int{504, 1000, 2000}
	rounds := 0
	for _, f := range faults {
		for _, n := range backlogs[:2] {
			if f.name == faults[len(faults)-1].name && n == backlogs[1] {
				n = backlogs[2]
			}
			rounds++
			if _, err := w.list(c.Base); err != nil {
				t.Fatal(err)
			}
			if err := w.writeBacklog(n, writeBases, writeBases); err != nil {
				t.Fatal(err)
			}
			var ferr error
			fired := px.firedCount()
			px.arm(func() { ferr = f.do() })
			if _, err := w.list(c.Base); err != nil {
				t.Fatal(err)
			}
			if ferr != nil {
				t.Fatalf("the log %s: %v", f.name, ferr)
			}
			if px.firedCount() != fired+1 {
				t.Fatalf("round %d: C read a backlog of %d writes without a second page: the fault never ran", rounds, n)
			}
			// The log grows again; C must follow it from where it is.
			if err := w.writeBacklog(64, writeBases, []string{c.Base}); err != nil {
				t.Fatal(err)
			}
			if _, err := w.list(c.Base); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Every process ends with what Redis holds.
	hash, err := rdb.HGetAll(ctx, itemKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	differ := 0
	for _, s := range []*proctest.Server{a, b, c} {
		items, err := w.list(s.Base)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if want := fmt.Sprintf("%d:%s", it.Quantity, it.Status); hash[strconv.FormatInt(it.PetID, 10)] != want {
				if differ++; differ <= 5 {
					t.Errorf("%s lists pet %d as %s; Redis holds %s", s.Base, it.PetID, want, hash[strconv.FormatInt(it.PetID, 10)])
				}
			}
		}
	}
	proctest.Summary(t, "LOGTRIM_SUMMARY",
		"three processes on one Redis, the log trimmed, deleted or replaced between two pages of a backlog read (%d rounds, backlogs of %d to %d writes): %d writes answered 200, %d lists, %d showed a pet older than a write answered before them, %d final entries differ from Redis; %v",
		rounds, backlogs[0], backlogs[2], w.writes.Load(), w.lists.Load(), w.stale.Load(), differ, time.Since(start).Round(time.Millisecond))
}
