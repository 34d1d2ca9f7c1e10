package inventoryfiber_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
)

// A Go client sending an update body far past the API's limit reads the
// 413 every time, over real sockets: 1 MiB (at the app's BodyLimit) and
// 4 MiB (past it), 100 tries each. The connection is closed after the
// answer, but only once the rest of the body has been read, so the kernel
// never resets it under a client that has not read its answer yet.
func TestLargeBodyAlwaysReadsItsAnswer(t *testing.T) {
	app := fiber.New(fiber.Config{StreamRequestBody: true, BodyLimit: 1 << 20, DisableStartupMessage: true})
	if err := inventoryfiber.Register(app.Group("/v1"), newAPI(t)); err != nil {
		t.Fatal(err)
	}
	addr := serveApp(t, app)

	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for _, size := range []int{1 << 20, 4 << 20} {
		body := bytes.Repeat([]byte(" "), size)
		failed := 0
		for try := 0; try < 100; try++ {
			req, _ := http.NewRequest(http.MethodPatch, "http://"+addr+"/v1/inventory/1", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer k")
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				if failed++; failed <= 3 {
					t.Errorf("%d bytes, try %d: no answer: %v", size, try, err)
				}
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), `"payload_too_large"`) {
				if failed++; failed <= 3 {
					t.Errorf("%d bytes, try %d: %d %s; want 413 payload_too_large", size, try, resp.StatusCode, b)
				}
			}
		}
		if failed > 0 {
			t.Errorf("%d bytes: %d of 100 tries did not read the 413", size, failed)
		}
	}
}
