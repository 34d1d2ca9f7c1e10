package benchfix

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// StallTimeout is the body timeout of StallAPI: short, so that the tests
// wait little, and long enough that a loaded machine's scheduling does not
// pass it for a body that is on its way.
const StallTimeout = 400 * time.Millisecond

// StallAPI returns an API (key "k") over a memstore holding pet 1, with a
// body timeout of StallTimeout, for StalledBody.
func StallAPI(t *testing.T) *inventory.API {
	t.Helper()
	store, err := memstore.New(inventory.Item{PetID: 1, Quantity: 2, Status: inventory.StatusSold})
	if err != nil {
		t.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys("k"), inventory.WithBodyTimeout(StallTimeout))
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// StalledBody checks, over a raw socket, the answer to an update whose
// body stalls: itemURL is an item route of an API with key "k" built with
// inventory.WithBodyTimeout(timeout), whose pet exists. A PATCH that
// declares 20 bytes and sends 6 must be answered 408 request_timeout with
// the contract's Error body and headers, after about timeout (never
// before it, and within a bound), with the connection closed after it. A
// body that comes slowly but whole within the timeout, on a kept-alive
// connection, is answered 200, and so is a second request on it: the
// deadline is the body's, not the connection's.
func StalledBody(t *testing.T, itemURL string, timeout time.Duration) {
	t.Helper()
	u, err := url.Parse(itemURL)
	if err != nil {
		t.Fatal(err)
	}
	head := "PATCH " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\n"
	conn := dial(t, u.Host, timeout)
	start := time.Now()
	write(t, conn, head+"Content-Length: 20\r\n\r\n{\"quan")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("stalled body: no answer: %v", err)
	}
	took := time.Since(start)
	body, _ := io.ReadAll(resp.Body)
	var e struct {
		Code   string `json:"code"`
		Status int    `json:"status"`
	}
	if resp.StatusCode != http.StatusRequestTimeout || json.Unmarshal(body, &e) != nil || e.Code != "request_timeout" || e.Status != 408 {
		t.Errorf("stalled body: %d %s; want 408 with code request_timeout", resp.StatusCode, body)
	}
	for h, want := range map[string]string{"Content-Type": "application/json", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("stalled body: %s %q; want %q", h, got, want)
		}
	}
	if took < timeout || took > timeout+5*time.Second {
		t.Errorf("stalled body answered after %v; want after the body timeout of %v, soon", took, timeout)
	}
	// The server closes the connection at once: it reads no more of a
	// body that stalled.
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("after the 408: read %d bytes, %v; want the connection closed (EOF) at once", n, err)
	}
	conn.Close()

	// The checks before the body come first: without a key, 401 (at
	// once, or once the framework gives up on the body it reads first).
	conn = dial(t, u.Host, timeout)
	write(t, conn, strings.Replace(head, "Authorization: Bearer k\r\n", "", 1)+"Content-Length: 20\r\n\r\n{\"quan")
	if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("stalled body without a key: %v, %v; want 401", resp, err)
	}
	conn.Close()

	// A body that comes in two parts within the timeout, then a second
	// request on the same connection.
	conn = dial(t, u.Host, timeout)
	defer conn.Close()
	br = bufio.NewReader(conn)
	for i := range 2 {
		write(t, conn, head+"Content-Length: 14\r\n\r\n{\"quan")
		time.Sleep(timeout / 4) // the client's pause, well within the timeout: what is tested, not a wait for state
		write(t, conn, "tity\":3}")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("slow body %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("slow body %d, within the timeout: %d %s; want 200", i, resp.StatusCode, b)
		}
	}
}

func dial(t *testing.T, host string, timeout time.Duration) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(timeout + 10*time.Second))
	return conn
}

func write(t *testing.T, conn net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(conn, s); err != nil {
		t.Fatal(err)
	}
}
