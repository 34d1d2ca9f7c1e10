package inventoryfiber_test

import (
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/petinventory/petinventory/internal/benchfix"
	inventoryfiber "github.com/petinventory/petinventory/transport/fiber"
)

// A Go client sending an update body far past the API's limit reads the
// 413 every time: 1 MiB (at the app's BodyLimit) and 4 MiB (past it). The
// connection is closed after the answer, but only once the rest of the
// body has been read, so the kernel never resets it under a client that
// has not read its answer yet.
func TestLargeBodyAlwaysReadsItsAnswer(t *testing.T) {
	app := fiber.New(fiber.Config{StreamRequestBody: true, BodyLimit: 1 << 20, DisableStartupMessage: true})
	if err := inventoryfiber.Register(app.Group("/v1"), newAPI(t)); err != nil {
		t.Fatal(err)
	}
	benchfix.RefusedLargeBodies(t, "http://"+serveApp(t, app), "k", 50)
}
