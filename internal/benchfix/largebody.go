package benchfix

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// RefusedLargeBodies checks that a Go client sending an update body far
// past the API's limit reads its 413 payload_too_large every time, over
// real sockets: 1 MiB and 4 MiB, on keep-alive connections and on
// connections the client asks to close, tries times each. A server that
// closes a connection with the body's rest unread makes the kernel reset
// it, and the client, still sending, loses the answer; every adapter's
// tests run this against an app mounting the API under /v1 that accepts
// key.
func RefusedLargeBodies(t *testing.T, baseURL, key string, tries int) {
	t.Helper()
	for _, keepAlive := range []bool{true, false} {
		client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: !keepAlive}}
		for _, size := range []int{1 << 20, 4 << 20} {
			body := bytes.Repeat([]byte(" "), size)
			failed := 0
			for try := range tries {
				req, _ := http.NewRequest(http.MethodPatch, baseURL+"/v1/inventory/1", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					if failed++; failed <= 3 {
						t.Errorf("%d bytes, keep-alive %v, try %d: no answer: %v", size, keepAlive, try, err)
					}
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), `"payload_too_large"`) {
					if failed++; failed <= 3 {
						t.Errorf("%d bytes, keep-alive %v, try %d: %d %s; want 413 payload_too_large", size, keepAlive, try, resp.StatusCode, b)
					}
				}
			}
			if failed > 0 {
				t.Errorf("%d bytes, keep-alive %v: %d of %d tries did not read the 413", size, keepAlive, failed, tries)
			}
		}
		client.CloseIdleConnections()
	}
}
