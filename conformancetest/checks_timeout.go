package conformancetest

import (
	"context"
	"errors"
	"net/http"
)

const srcTimeout = "CONTRACT.md §Update stock level › Body size (a body that stalls)"

func timeoutChecks() []*check {
	return []*check{
		{
			name:   "body/stalled",
			source: srcTimeout,
			rule: "An update whose body stalls (a Content-Length that promises bytes that never come) is 408 request_timeout with an Error body " +
				"once the deployment's body timeout passes (5 s by default). The check sends the headers and holds the body back; it waits for the answer " +
				"as long as the server takes, up to the run's request timeout (-timeout, 10 s by default).",
			run: func(c *checker) {
				p, reason := c.targetPath()
				if p == "" {
					c.skipf("%s", reason)
				}
				// A gate that never opens: the headers go out, the body
				// never does. send's deadline (RequestTimeout) bounds it.
				ex := c.try(request{method: http.MethodPatch, path: p, contentType: "application/json", body: qtyBody(1), gate: newGate(1)})
				if ex.err != nil {
					if c.ctx.Err() != nil {
						panic(abort{})
					}
					if errors.Is(ex.err, context.DeadlineExceeded) {
						if who := c.intermediary(); who != "" {
							c.noteNotJudged("%s %s (a body that never comes) got no answer: %s in front of the API may hold a body until it has all arrived "+
								"(nginx's proxy_request_buffering), so the API never saw the request, and the intermediary's own timeout (nginx's client_body_timeout) decides",
								ex.req.method, c.rn.scrub(ex.url), who)
							return
						}
						c.failf(ex, "408 request_timeout within the run's request timeout", "no answer within %v: the server waits longer for the body than the run waits for the answer "+
							"(raise -timeout if the deployment's body timeout is longer than 5 s)", c.rn.cfg.RequestTimeout)
						return
					}
					c.fatalf(ex, "an HTTP answer", "no answer: %v", ex.err)
				}
				if ex.resp.status == http.StatusRequestTimeout && notFromAPI(ex) != "" {
					if who := c.intermediary(); who != "" {
						c.noteNotJudged("%s %s (a body that never comes) got %s's own 408 before the API could answer it", ex.req.method, c.rn.scrub(ex.url), who)
						return
					}
				}
				c.expectError(ex, http.StatusRequestTimeout, "request_timeout")
			},
		},
	}
}
