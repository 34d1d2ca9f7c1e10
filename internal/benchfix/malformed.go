package benchfix

import (
	"io"
	"net"
	"testing"
	"time"
)

// MalformedHeads are request heads no HTTP parser accepts, each carrying
// key as a bearer key, by what is wrong with them: fasthttp's answer to
// such a head once quoted it raw, key included. The server's hardening
// tests, the demo's recipes and the Fiber adapter's tests send them.
func MalformedHeads(key string) map[string]string {
	return map[string]string{
		"control byte in a value":       "GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\nX-Probe: a\x01b\r\n\r\n",
		"NUL in a value":                "GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\nX-Probe: a\x00b\r\n\r\n",
		"control byte in Authorization": "GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\x01\r\n\r\n",
		"invalid header name":           "GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\nX Pro(be): x\r\n\r\n",
		"bad request line":              "GET /v1/inventory HTTP/1.1 extra\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\n\r\n",
		"bad version":                   "GET /v1/inventory HTTP/x.y\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\n\r\n",
		"body after a bad head":         "PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\nContent-Length: 14\r\nX-Probe: a\x01b\r\n\r\n{\"quantity\":1}",
	}
}

// RawAnswer writes head on a connection of its own and returns all that
// comes back until the server closes (5 s at most).
func RawAnswer(t testing.TB, addr, head string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(conn)
	return string(b)
}
