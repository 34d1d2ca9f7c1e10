package conformancetest

import (
	"context"
	"io"
	"net/http"
	"testing"
)

// TestGateRetryBody: a gated body, and the body of a retry on another
// connection (GetBody), wait for the gate; the request counts once in
// ready.
func TestGateRetryBody(t *testing.T) {
	rn, err := newRunner(Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: refKey})
	if err != nil {
		t.Fatal(err)
	}
	const body = `{"quantity":1}`
	g := newGate(2)
	req, err := rn.newRequest(context.Background(), request{method: http.MethodPatch, path: "/inventory/1", body: []byte(body), gate: g}, "http://127.0.0.1:1/v1/inventory/1")
	if err != nil {
		t.Fatal(err)
	}
	if req.ContentLength != int64(len(body)) || req.GetBody == nil {
		t.Fatalf("ContentLength %d, GetBody set %t", req.ContentLength, req.GetBody != nil)
	}
	retry, err := req.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	read := func(r io.Reader) <-chan string {
		c := make(chan string, 1)
		go func() { b, _ := io.ReadAll(r); c <- string(b) }()
		return c
	}
	first, second := read(req.Body), read(retry)
	<-g.ready
	select {
	case b := <-first:
		t.Fatalf("the body was read before the gate opened: %q", b)
	case b := <-second:
		t.Fatalf("the retry's body was read before the gate opened: %q", b)
	default:
	}
	close(g.release)
	if a, b := <-first, <-second; a != body || b != body {
		t.Fatalf("bodies %q and %q", a, b)
	}
	if n := len(g.ready); n != 0 {
		t.Errorf("the request counted %d more times in ready", n)
	}
}
