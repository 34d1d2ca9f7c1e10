package hardening

import (
	"context"
	"encoding/json"

	"fmt"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// storeTimeout is the server's per-request store deadline in these tests;
// a request must be answered within it plus this slack.
const (
	storeTimeout = 1 * time.Second
	answerSlack  = 2 * time.Second
)

// TestRedisKilledAndRestarted streams updates while redis-server (append-
// only file, fsync always) is killed with SIGKILL and started again. During
// the outage only 200 or 503 with Retry-After may come back, each within
// the deadline; afterwards the same process serves again, and every update
// acknowledged with 200 before the crash is still in Redis.
func TestRedisKilledAndRestarted(t *testing.T) {
	for _, fw := range frameworks {
		t.Run(fw, func(t *testing.T) {
			r := startRedis(t, "--appendonly", "yes", "--appendfsync", "always")
			s := startServer(t, fw, r.url(), "INVENTORY_STORE_TIMEOUT="+storeTimeout.String())
			pets := listIDs(t, s)
			if len(pets) < 4 {
				t.Fatalf("the demo inventory has %d pets, want at least 4", len(pets))
			}
			pets = pets[:4]

			// One writer per pet, each writing 1, 2, 3, … so that the value
			// in Redis tells which acknowledged writes it holds.
			var (
				stopWriting = make(chan struct{})
				wg          sync.WaitGroup
				acked       = make([]int, len(pets))   // last value answered 200
				ackedVals   = make([][]int, len(pets)) // every value answered 200
				ackCount    atomic.Int64
				statuses    sync.Map // status → *atomic.Int64
			)
			count := func(status int) {
				v, _ := statuses.LoadOrStore(status, new(atomic.Int64))
				v.(*atomic.Int64).Add(1)
			}
			client := &http.Client{Timeout: storeTimeout + answerSlack}
			for i, id := range pets {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for v := 1; ; v++ {
						select {
						case <-stopWriting:
							return
						default:
						}
						start := time.Now()
						got, err := do(context.Background(), client, "PATCH", s.Base+"/v1/inventory/"+strconv.FormatInt(id, 10), fmt.Sprintf(`{"quantity":%d}`, v))
						took := time.Since(start)
						switch {
						case err != nil:
							t.Errorf("pet %d: update %d: no answer within %v: %v", id, v, storeTimeout+answerSlack, err)
							return
						case got.Status == 200:
							acked[i] = v
							ackedVals[i] = append(ackedVals[i], v)
							ackCount.Add(1)
						case got.Status == 503 && got.Code() == "unavailable" && got.Header.Get("Retry-After") != "":
							time.Sleep(20 * time.Millisecond)
						default:
							t.Errorf("pet %d: update %d: %d %s (Retry-After %q) after %v; only 200 or 503 unavailable with Retry-After may be answered",
								id, v, got.Status, got.Body, got.Header.Get("Retry-After"), took)
							return
						}
						count(got.Status)
					}
				}()
			}

			time.Sleep(1 * time.Second)
			ackedBeforeCrash := ackCount.Load()
			r.kill() // SIGKILL: no clean shutdown
			time.Sleep(1500 * time.Millisecond)
			r.start() // same port, same directory: it replays the append-only file
			waitServing(t, s)
			time.Sleep(500 * time.Millisecond)
			close(stopWriting)
			wg.Wait()

			final := map[int64]int{}
			for _, it := range list(t, s) {
				final[it.PetID] = it.Quantity
			}
			lost, present := 0, 0
			for i, id := range pets {
				// Writes replace: the value held is the last write applied, so
				// every acknowledged write up to it is present. A write after the
				// last 200 may also have been applied (its answer lost with the
				// connection): that is not a loss.
				if final[id] < acked[i] {
					lost += acked[i] - final[id]
					t.Errorf("pet %d: last acknowledged quantity %d, Redis holds %d after the restart", id, acked[i], final[id])
				}
				for _, v := range ackedVals[i] {
					if v <= final[id] {
						present++
					}
				}
			}
			var by []string
			statuses.Range(func(k, v any) bool {
				by = append(by, fmt.Sprintf("%v=%d", k, v.(*atomic.Int64).Load()))
				return true
			})
			summary(t, "durability %s: updates acknowledged %d (%d before the crash), present after restart %d, lost %d; answers %v",
				fw, ackCount.Load(), ackedBeforeCrash, present, lost, by)
			if v, ok := statuses.Load(503); !ok || v.(*atomic.Int64).Load() == 0 {
				t.Errorf("no 503 was answered while Redis was down: the outage was not observed")
			}
		})
	}
}

// waitServing waits until the server answers a list with 200 again.
func waitServing(t *testing.T, s *server) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		got, err := do(context.Background(), http.DefaultClient, "GET", s.Base+"/v1/inventory", "")
		if err == nil && got.Status == 200 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the server did not serve again within 20s of Redis coming back")
}

type item struct {
	PetID    int64  `json:"petId"`
	Quantity int    `json:"quantity"`
	Status   string `json:"status"`
}

func list(t *testing.T, s *server) []item {
	t.Helper()
	got, err := do(context.Background(), http.DefaultClient, "GET", s.Base+"/v1/inventory", "")
	if err != nil || got.Status != 200 {
		t.Fatalf("GET /v1/inventory: %v %d %s", err, got.Status, got.Body)
	}
	var items []item
	if err := json.Unmarshal(got.Body, &items); err != nil {
		t.Fatal(err)
	}
	return items
}

func listIDs(t *testing.T, s *server) []int64 {
	var ids []int64
	for _, it := range list(t, s) {
		ids = append(ids, it.PetID)
	}
	return ids
}

// TestSIGTERMFinishesInFlightRequests holds requests inside the handler
// (Redis paused with CLIENT PAUSE), sends SIGTERM, and checks that every
// one of them still gets its whole 200 answer and that the server then
// exits cleanly.
func TestSIGTERMFinishesInFlightRequests(t *testing.T) {
	for _, fw := range frameworks {
		t.Run(fw, func(t *testing.T) {
			r := startRedis(t)
			s := startServer(t, fw, r.url(), "INVENTORY_STORE_TIMEOUT=5s")
			pets := listIDs(t, s)
			const inFlight = 40
			r.cli("CLIENT", "PAUSE", "1500", "ALL")

			var (
				wg      sync.WaitGroup
				written sync.WaitGroup
				failed  atomic.Int64
			)
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 15 * time.Second}
			for i := 0; i < inFlight; i++ {
				wg.Add(1)
				written.Add(1)
				go func() {
					defer wg.Done()
					id := pets[i%len(pets)]
					once := sync.OnceFunc(written.Done)
					defer once()
					ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
						WroteRequest: func(httptrace.WroteRequestInfo) { once() },
					})
					got, err := do(ctx, client, "PATCH", s.Base+"/v1/inventory/"+strconv.FormatInt(id, 10), fmt.Sprintf(`{"quantity":%d}`, 100+i))
					if err != nil || got.Status != 200 || len(got.Body) == 0 {
						failed.Add(1)
						t.Errorf("in-flight update %d: %v %d %q; it was accepted before SIGTERM and must complete", i, err, got.Status, got.Body)
					}
				}()
			}
			written.Wait()
			time.Sleep(200 * time.Millisecond) // let the server read them all
			if err := s.Signal(sigterm); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			if exited, err := s.Wait(15 * time.Second); !exited {
				t.Error("the server did not exit within 15s of SIGTERM")
			} else if err != nil {
				t.Errorf("after SIGTERM the server exited with %v, want a clean exit", err)
			}
			summary(t, "shutdown %s: %d requests in flight at SIGTERM, %d failed", fw, inFlight, failed.Load())
		})
	}
}

var sigterm = syscall.SIGTERM
