package wire

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestGateRetryBody: a gated body, and the body of a retry on another
// connection (GetBody), wait for the gate; the request counts once in
// ready.
func TestGateRetryBody(t *testing.T) {
	cl := &Client{BaseURL: "http://127.0.0.1:1/v1", APIKey: "key-0123456789", HTTP: &http.Client{}, Timeout: time.Second}
	const body = `{"quantity":1}`
	g := NewGate(2)
	req, err := cl.NewRequest(context.Background(), Request{Method: http.MethodPatch, Path: "/inventory/1", Body: []byte(body), Gate: g}, "http://127.0.0.1:1/v1/inventory/1")
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
	<-g.Ready
	select {
	case b := <-first:
		t.Fatalf("the body was read before the gate opened: %q", b)
	case b := <-second:
		t.Fatalf("the retry's body was read before the gate opened: %q", b)
	default:
	}
	close(g.Release)
	if a, b := <-first, <-second; a != body || b != body {
		t.Fatalf("bodies %q and %q", a, b)
	}
	if n := len(g.Ready); n != 0 {
		t.Errorf("the request counted %d more times in ready", n)
	}
}
