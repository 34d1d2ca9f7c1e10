package checks

import (
	"context"
	"errors"
	"net/http"

	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

const srcTimeout = "CONTRACT.md §Update stock level › Body size (a body that stalls)"

// Timeout are the checks of a body that never comes.
var Timeout = []*suite.Check{
	{
		Name:   "body/stalled",
		Source: srcTimeout,
		Rule: "An update whose body stalls (a Content-Length that promises bytes that never come) is 408 request_timeout with an Error body " +
			"once the deployment's body timeout passes (5 s by default). The check sends the headers and holds the body back; it waits for the answer " +
			"as long as the server takes, up to the run's request timeout (-timeout, 10 s by default).",
		Run: run(bodyStalled),
	},
}

// bodyStalled judges body/stalled.
func bodyStalled(c checker) {
	p, reason := c.TargetPath()
	if p == "" {
		c.Skipf("%s", reason)
	}
	// A gate that never opens: the headers go out, the body
	// never does. send's deadline (RequestTimeout) bounds it.
	ex := c.Try(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "application/json", Body: wire.QtyBody(1), Gate: wire.NewGate(1)})
	if ex.Err != nil {
		if c.Ctx().Err() != nil {
			c.Abort()
		}
		if errors.Is(ex.Err, context.DeadlineExceeded) {
			if who := c.intermediary(); who != "" {
				c.NoteNotJudged("%s %s (a body that never comes) got no answer: %s in front of the API may hold a body until it has all arrived "+
					"(nginx's proxy_request_buffering), so the API never saw the wire.Request, and the intermediary's own timeout (nginx's client_body_timeout) decides",
					ex.Req.Method, c.Scrub(ex.URL), who)
				return
			}
			c.Failf(ex, "408 request_timeout within the run's request timeout", "no answer within %v: the server waits longer for the body than the run waits for the answer "+
				"(raise -timeout if the deployment's body timeout is longer than 5 s)", c.Settings().RequestTimeout)
			return
		}
		c.Fatalf(ex, "an HTTP answer", "no answer: %v", ex.Err)
	}
	if ex.Resp.Status == http.StatusRequestTimeout && wire.NotFromAPI(ex) != "" {
		if who := c.intermediary(); who != "" {
			c.NoteNotJudged("%s %s (a body that never comes) got %s's own 408 before the API could answer it", ex.Req.Method, c.Scrub(ex.URL), who)
			return
		}
	}
	c.expectError(ex, http.StatusRequestTimeout, "request_timeout")
}
