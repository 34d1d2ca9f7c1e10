package checks

import (
	"net/http"

	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

const srcSize = "CONTRACT.md §Update stock level › Body size"

// Size are the checks of the body limit, with and without Content-Length.
var Size = []*suite.Check{
	{
		Name:   "size/over-limit",
		Source: srcSize,
		Rule:   "A body over the limit (default 16 KiB), with Content-Length, is 413 payload_too_large.",
		Run:    run(sizeOverLimit),
	},
	{
		Name:   "size/over-limit-chunked",
		Source: srcSize,
		Rule:   "A body over the limit sent without Content-Length (chunked) is 413 payload_too_large too.",
		Run:    run(sizeOverLimitChunked),
	},
	{
		Name:   "size/at-limit-accepted",
		Source: srcSize,
		Rule:   "A body exactly at the limit, or just under it, is not 413: it is read (here: 404 for a pet that does not exist), with or without Content-Length.",
		Run:    run(sizeAtLimitAccepted),
	},
}

// sizeOverLimit judges size/over-limit.
func sizeOverLimit(c checker) {
	p := c.Target()
	for _, n := range []int64{c.Settings().MaxBodyBytes + 1, 4 * c.Settings().MaxBodyBytes} {
		ex := c.Do(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "application/json", Body: paddedBody(n, 1)})
		c.expectError(ex, http.StatusRequestEntityTooLarge, "payload_too_large")
	}
}

// sizeOverLimitChunked judges size/over-limit-chunked.
func sizeOverLimitChunked(c checker) {
	p := c.Target()
	for _, n := range []int64{c.Settings().MaxBodyBytes + 1, 4 * c.Settings().MaxBodyBytes} {
		ex := c.Do(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "application/json", Body: paddedBody(n, 1), Chunked: true})
		c.expectError(ex, http.StatusRequestEntityTooLarge, "payload_too_large")
	}
}

// sizeAtLimitAccepted judges size/at-limit-accepted.
func sizeAtLimitAccepted(c checker) {
	p := wire.ItemPath(c.UnlistedID())
	for _, n := range []int64{c.Settings().MaxBodyBytes, c.Settings().MaxBodyBytes - 1} {
		for _, chunked := range []bool{false, true} {
			ex := c.Do(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "application/json", Body: paddedBody(n, 1), Chunked: chunked})
			c.expectError(ex, http.StatusNotFound, "not_found")
		}
	}
}
