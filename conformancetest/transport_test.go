package conformancetest

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sync"
	"testing"
	"time"
)

// emptyInventory answers every request as a conforming server with no
// pets answers the list.
func emptyInventory(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = io.WriteString(w, "[]")
}

// connCounter counts a server's connections that are open.
type connCounter struct {
	mu   sync.Mutex
	open map[net.Conn]bool
}

func (c *connCounter) track(conn net.Conn, state http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch state {
	case http.StateNew:
		c.open[conn] = true
	case http.StateClosed, http.StateHijacked:
		delete(c.open, conn)
	}
}

func (c *connCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.open)
}

// TestRunLeavesDefaultTransportAlone: a run without Config.HTTPClient
// closes its own idle connections to the target when it ends, and no
// others: an idle keep-alive connection of http.DefaultTransport to
// another server is still there to be reused afterwards.
func TestRunLeavesDefaultTransportAlone(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer other.Close()
	conns := &connCounter{open: map[net.Conn]bool{}}
	target := httptest.NewUnstartedServer(http.HandlerFunc(emptyInventory))
	target.Config.ConnState = conns.track
	target.Start()
	defer target.Close()

	// getOther sends a request with http.DefaultClient and reports
	// whether it went over an idle connection kept from before.
	getOther := func() bool {
		t.Helper()
		var reused bool
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
		})
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, other.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return reused
	}
	getOther()
	if !getOther() {
		t.Fatal("http.DefaultTransport did not reuse its idle connection even without a run; this test cannot tell anything")
	}

	cfg := Config{BaseURL: target.URL + "/v1", APIKey: "key-0123456789", Level: LevelSpec, Run: "^list/ok$"}
	rep, err := RunChecks(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Results[0].Requests == 0 {
		t.Fatal("the run sent no request")
	}
	if !getOther() {
		t.Error("RunChecks closed the idle connections of http.DefaultTransport, which the rest of the process uses")
	}
	waitClosed(t, conns, "RunChecks")

	t.Run("Run", func(t *testing.T) {
		Run(t, cfg)
	})
	if !getOther() {
		t.Error("Run closed the idle connections of http.DefaultTransport")
	}
	waitClosed(t, conns, "Run")
}

// waitClosed waits until the target has no open connection: the run
// closed its own idle ones.
func waitClosed(t *testing.T, conns *connCounter, who string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for conns.count() > 0 {
		if time.Now().After(deadline) {
			t.Errorf("%s left %d connections to the target open", who, conns.count())
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
