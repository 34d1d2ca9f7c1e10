package inventoryfiber

import (
	"bufio"
	"io"
	"net"
	"time"

	"github.com/petinventory/petinventory/inventory/adapter"
	"github.com/valyala/fasthttp"
)

// maxDrainBytes is what is read of a refused streamed body in the
// handler, with the connection kept usable (net/http's bound). Past it the
// connection is closed, but only after the answer has been sent and the
// rest of the body read within adapter.DrainMaxBytes and DrainMaxTime.
const maxDrainBytes = 256 << 10

// countingReader records how much of its reader was read, and whether to
// the end.
type countingReader struct {
	r   io.Reader
	n   int64
	eof bool
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err == io.EOF {
		c.eof = true
	}
	return n, err
}

// drainRefused deals with what is left of a streamed body the API refused
// without reading it all (413, 401, …): it reads up to maxDrainBytes, and
// if the body goes on, closes the connection after the answer as
// lingerClose does. declared is the body's Content-Length, -1 if unknown.
func drainRefused(ctx *fasthttp.RequestCtx, body *countingReader, declared int64) {
	_, _ = io.CopyN(io.Discard, body, maxDrainBytes)
	if body.eof {
		return
	}
	rest := int64(-1)
	if declared >= 0 {
		rest = max(declared-body.n, 0)
	}
	lingerClose(ctx, rest)
}

// lingerClose makes fasthttp hand over the connection instead of writing
// the response: the response is written with Connection: close, the
// writing side is shut (the client reads the end of the answer), the rest
// of the body (rest bytes, -1 if unknown) is read and discarded within the
// bounds, and then the connection is closed, with nothing left unread when
// the client sent no more than it declared.
func lingerClose(ctx *fasthttp.RequestCtx, rest int64) {
	ctx.Response.SetConnectionClose()
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(c net.Conn) {
		raw := c
		if u, ok := c.(interface{ UnsafeConn() net.Conn }); ok {
			raw = u.UnsafeConn()
		}
		deadline := time.Now().Add(adapter.DrainMaxTime)
		_ = raw.SetDeadline(deadline)
		bw := bufio.NewWriter(raw)
		if ctx.Response.Write(bw) == nil && bw.Flush() == nil {
			if cw, ok := raw.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
			limit := int64(adapter.DrainMaxBytes)
			if rest >= 0 {
				limit = min(rest, limit)
			}
			// Read through c: fasthttp may hold the next bytes in its
			// buffer.
			_, _ = io.CopyN(io.Discard, c, limit)
		}
		_ = c.Close() // fasthttp closes it too, unless KeepHijackedConns
		_ = raw.Close()
	})
}
