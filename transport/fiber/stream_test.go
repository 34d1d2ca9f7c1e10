package inventoryfiber_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
)

// With StreamRequestBody, a body far over fiber's BodyLimit reaches the API
// as a stream and gets the contract's 413, declared or chunked; a small
// body is served as usual.
func TestStreamedBodies(t *testing.T) {
	app := fiber.New(fiber.Config{StreamRequestBody: true, BodyLimit: 64 << 10, DisableStartupMessage: true})
	if err := inventoryfiber.Register(app.Group("/v1"), newAPI(t)); err != nil {
		t.Fatal(err)
	}
	addr := serveApp(t, app)

	big := bytes.Repeat([]byte(" "), 4<<20)
	cases := []struct {
		name     string
		body     io.Reader
		length   int64
		status   int
		contains string
	}{
		{"declared 4 MiB", bytes.NewReader(big), int64(len(big)), 413, `"payload_too_large"`},
		{"chunked 4 MiB", io.MultiReader(bytes.NewReader(big)), -1, 413, `"payload_too_large"`},
		{"small", strings.NewReader(`{"quantity":9}`), 14, 200, `"quantity":9`},
		{"small chunked", io.MultiReader(strings.NewReader(`{"quantity":8}`)), -1, 200, `"quantity":8`},
	}
	for _, tc := range cases {
		status, b, err := rawPatch(addr, "/v1/inventory/1", tc.body, tc.length)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if status != tc.status || !strings.Contains(b, tc.contains) {
			t.Errorf("%s: got %d %s, want %d with %s", tc.name, status, b, tc.status, tc.contains)
		}
	}
}

// rawPatch sends a PATCH on its own connection, writing the body while it
// reads the answer, as curl does: a server that answers 413 and closes
// before the body is sent whole is then seen answering, not as a failed
// write. length -1 sends the body chunked.
func rawPatch(addr, path string, body io.Reader, length int64) (int, string, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, "", err
	}
	defer conn.Close()
	req, _ := http.NewRequest(http.MethodPatch, "http://"+addr+path, body)
	req.ContentLength = length
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Content-Type", "application/json")
	go func() { _ = req.Write(conn) }() // fails once the server closes: expected
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// A body the API refuses without reading it whole must never be read by
// fasthttp as the next request on the same keep-alive connection: a small
// rest is drained (the connection stays usable), a large one closes the
// connection after the answer.
func TestRefusedStreamedBodyIsNotANextRequest(t *testing.T) {
	app := fiber.New(fiber.Config{StreamRequestBody: true, DisableStartupMessage: true})
	app.Post("/healthz", func(c *fiber.Ctx) error { return c.SendString("ok") }) // a host route that reads no body
	if err := inventoryfiber.Register(app.Group("/v1"), newAPI(t)); err != nil {
		t.Fatal(err)
	}
	addr := serveApp(t, app)

	// No key: 401 before the body is looked at. The body is itself shaped
	// like a request, as a smuggling attempt would be.
	smuggled := "GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\n"
	refused := func(body string) string {
		return fmt.Sprintf("PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
	valid := "PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Length: 14\r\n\r\n{\"quantity\":5}"

	t.Run("small rest: drained, connection kept", func(t *testing.T) {
		conn, br := dial(t, addr)
		send(t, conn, refused(smuggled)+valid)
		if got := readStatus(t, conn, br); got != 401 {
			t.Fatalf("first answer %d, want 401", got)
		}
		// The next answer must be the valid PATCH's, not the smuggled GET's.
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("no answer to the request after the drained body: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"quantity":5`) {
			t.Fatalf("second answer %d %s; want the PATCH's 200 (the smuggled GET was served?)", resp.StatusCode, b)
		}
	})
	// Routes that read no body at all (the list, a 405, the host's own)
	// leave all of it unread; fasthttp before v1.76.0 read it as the next
	// request.
	for _, first := range []string{
		"GET /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n",
		"PATCH /v1/inventory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n",
		"POST /healthz HTTP/1.1\r\nHost: x\r\n",
	} {
		for _, pad := range []int{0, 10000, 300 << 10} {
			name := fmt.Sprintf("%s with %d bytes before the smuggled request", first[:strings.Index(first, " HTTP")], pad)
			t.Run(name, func(t *testing.T) {
				conn, br := dial(t, addr)
				body := strings.Repeat("\r\n", pad/2) + smuggled
				go func() {
					_, _ = io.WriteString(conn, fmt.Sprintf("%sContent-Length: %d\r\n\r\n%s", first, len(body), body)+valid)
				}()
				if got := readStatus(t, conn, br); got == 0 {
					t.Fatal("no first answer")
				}
				_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
				next, err := http.ReadResponse(br, nil)
				if err != nil {
					return // the connection was closed after the answer: nothing smuggled
				}
				b, _ := io.ReadAll(next.Body)
				if next.StatusCode != 200 || !strings.Contains(string(b), `"quantity":5`) || strings.HasPrefix(string(b), "[") {
					t.Fatalf("second answer %d %.60s; want the PATCH's 200 or a closed connection (the body was read as a request)", next.StatusCode, b)
				}
			})
		}
	}
	t.Run("large rest: connection closed", func(t *testing.T) {
		conn, br := dial(t, addr)
		pad := strings.Repeat(" ", 300<<10) // over the drain bound
		go func() { _, _ = io.WriteString(conn, refused(pad+smuggled)) }()
		if got := readStatus(t, conn, br); got != 401 {
			t.Fatalf("first answer %d, want 401", got)
		}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		next, err := http.ReadResponse(br, nil)
		switch {
		case err == nil:
			b, _ := io.ReadAll(next.Body)
			t.Fatalf("the unread body was served as a next request: %d %s", next.StatusCode, b)
		case errors.Is(err, os.ErrDeadlineExceeded):
			t.Fatal("the connection stayed open with the unread body in it")
		}
	})
}

func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, bufio.NewReader(conn)
}

func send(t *testing.T, conn net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(conn, s); err != nil {
		t.Fatal(err)
	}
}

func readStatus(t *testing.T, conn net.Conn, br *bufio.Reader) int {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
