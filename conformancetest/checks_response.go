package conformancetest

import (
	"fmt"
	"math"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	srcEvery  = "CONTRACT.md §Every response"
	srcCodes  = "CONTRACT.md §Error codes"
	srcStore  = "CONTRACT.md §Store semantics"
	srcSchema = "inventory/openapi.yaml"
)

// sample is a request that provokes one kind of answer.
type sample struct {
	ex     *exchange
	status int
	code   string
}

// samples provokes one answer of each kind the level knows: a list, an
// update (unless read-only), and each error status and code that a client
// can provoke. Updates are aimed at a listed pet with its current quantity
// or at requests that must be rejected, so nothing changes for good.
func (c *checker) samples() []sample {
	var out []sample
	add := func(r request, status int, code string) {
		out = append(out, sample{ex: c.do(r), status: status, code: code})
	}
	items, _, listErr := c.list()
	unl := int64(math.MaxInt64)
	if listErr == nil {
		unl = unlisted(items)
	}
	add(request{method: http.MethodGet, path: "/inventory"}, http.StatusOK, "")
	add(request{method: http.MethodGet, path: "/inventory", auth: noAuth}, http.StatusUnauthorized, "unauthorized")
	add(request{method: http.MethodGet, path: "/inventory", auth: withAuth("Bearer " + wrongKey)}, http.StatusUnauthorized, "unauthorized")
	add(request{method: http.MethodPatch, path: itemPath(unl), contentType: "application/json", body: qtyBody(1)}, http.StatusNotFound, "not_found")
	if c.contract() {
		add(request{method: http.MethodPost, path: "/inventory", contentType: "application/json", body: qtyBody(1)}, http.StatusMethodNotAllowed, "method_not_allowed")
		add(request{method: http.MethodGet, path: itemPath(unl)}, http.StatusMethodNotAllowed, "method_not_allowed")
		add(request{method: http.MethodPatch, path: "/inventory/abc", contentType: "application/json", body: qtyBody(1)}, http.StatusBadRequest, "invalid_pet_id")
	}
	if p, _ := c.targetPath(); p != "" {
		add(request{method: http.MethodPatch, path: p, contentType: "application/json", body: []byte(`{}`)}, http.StatusBadRequest, "missing_field")
		add(request{method: http.MethodPatch, path: p, contentType: "application/json", body: []byte(`{"quantity":"5"}`)}, http.StatusBadRequest, "invalid_field")
		if c.contract() {
			add(request{method: http.MethodPatch, path: p, contentType: "application/json", body: []byte(`{"quantity":`)}, http.StatusBadRequest, "invalid_json")
			add(request{method: http.MethodPatch, path: p, contentType: "application/json", body: []byte(`{"quantity":1,"status":"sold"}`)}, http.StatusBadRequest, "unknown_field")
			add(request{method: http.MethodPatch, path: p, contentType: "text/plain", body: qtyBody(1)}, http.StatusUnsupportedMediaType, "unsupported_media_type")
			add(request{method: http.MethodPatch, path: p, contentType: "application/json", body: paddedBody(c.rn.cfg.MaxBodyBytes+1, 1)}, http.StatusRequestEntityTooLarge, "payload_too_large")
		}
	}
	if !c.rn.cfg.ReadOnly && listErr == nil && len(items) > 0 {
		// An update to the current quantity: a 200 that changes nothing.
		c.touch(items[0].id)
		add(request{method: http.MethodPatch, path: itemPath(items[0].id), contentType: "application/json", body: qtyBody(items[0].qty)}, http.StatusOK, "")
	}
	return out
}

func responseChecks() []*check {
	header := func(name, rule string, ok func(vals []string) string) *check {
		return &check{
			name: name, source: srcEvery, rule: rule,
			run: func(c *checker) {
				for _, s := range c.samples() {
					key := strings.TrimPrefix(name, "headers/")
					var vals []string
					switch key {
					case "content-type":
						vals = s.ex.resp.header.Values("Content-Type")
					default:
						vals = s.ex.resp.header.Values("X-Content-Type-Options")
					}
					if problem := ok(vals); problem != "" {
						c.failf(s.ex, rule, "%s", problem)
					}
				}
			},
		}
	}
	return []*check{
		header("headers/content-type", "Every answer has Content-Type: application/json. petinventory sends no parameter; the suite tolerates charset=utf-8, which changes nothing for a JSON reader (RFC 8259 §11), and fails any other.", func(vals []string) string {
			if len(vals) != 1 {
				return fmt.Sprintf("%d Content-Type headers, not 1", len(vals))
			}
			mt, params, err := mime.ParseMediaType(vals[0])
			if err != nil || mt != "application/json" {
				return fmt.Sprintf("Content-Type: %s", vals[0])
			}
			for k, v := range params {
				if k != "charset" || !strings.EqualFold(v, "utf-8") {
					return fmt.Sprintf("Content-Type: %s (application/json with no parameter, or tolerated, charset=utf-8; nothing else)", vals[0])
				}
			}
			return ""
		}),
		{
			name: "headers/cache-control", source: srcEvery + "; " + srcCaching,
			rule: "A list answer (200, 304) has Cache-Control: private, no-cache (kept by the client only, revalidated each time); every other answer has Cache-Control: no-store.",
			run: func(c *checker) {
				for _, s := range c.samples() {
					vals := s.ex.resp.header.Values("Cache-Control")
					if s.ex.req.method == http.MethodGet && s.ex.req.path == "/inventory" && s.ex.resp.status == http.StatusOK {
						if p := listCacheControl(vals); p != "" {
							c.failf(s.ex, "Cache-Control: private, no-cache on a list answer", "%s", p)
						}
						continue
					}
					if p := noStore(vals); p != "" {
						c.failf(s.ex, "Cache-Control: no-store on every answer but the list", "%s", p)
					}
				}
			},
		},
		header("headers/nosniff", "Every answer has X-Content-Type-Options: nosniff.", func(vals []string) string {
			if len(vals) == 1 && strings.EqualFold(strings.TrimSpace(vals[0]), "nosniff") {
				return ""
			}
			if len(vals) == 0 {
				return "no X-Content-Type-Options header"
			}
			return fmt.Sprintf("X-Content-Type-Options: %s", strings.Join(vals, ", "))
		}),
		{
			name: "errors/body-shape", spec: true,
			source: "spec §7; " + srcEvery + "; " + srcCodes,
			rule:   "Every error answer has the Error body {code, message, status}: exactly these members, status equal to the HTTP status, a non-empty message, and the code the table gives for the case.",
			run: func(c *checker) {
				for _, s := range c.samples() {
					if s.status != http.StatusOK {
						c.expectError(s.ex, s.status, s.code)
					}
				}
			},
		},
		{
			name:   "errors/message-names-fault",
			source: srcEvery,
			rule:   "An error message names the field or header at fault: Authorization, petId, Content-Type, quantity, the unknown member, the method.",
			run: func(c *checker) {
				unl := itemPath(c.unlistedID())
				probes := []struct {
					r       request
					mention string
				}{
					{request{method: http.MethodGet, path: "/inventory", auth: noAuth}, "Authorization"},
					{request{method: http.MethodGet, path: "/inventory", auth: withAuth("Bearer " + wrongKey)}, "Authorization"},
					{request{method: http.MethodDelete, path: "/inventory"}, "DELETE"},
					{request{method: http.MethodPatch, path: "/inventory/abc", contentType: "application/json", body: qtyBody(1)}, "petId"},
					{request{method: http.MethodPatch, path: unl, contentType: "text/plain", body: qtyBody(1)}, "Content-Type"},
					{request{method: http.MethodPatch, path: unl, contentType: "application/json", body: []byte(`{}`)}, "quantity"},
					{request{method: http.MethodPatch, path: unl, contentType: "application/json", body: []byte(`{"quantity":"5"}`)}, "quantity"},
					{request{method: http.MethodPatch, path: unl, contentType: "application/json", body: []byte(`{"quantity":1,"colour":"red"}`)}, "colour"},
				}
				for _, p := range probes {
					ex := c.do(p.r)
					msg, ok := errorMessage(ex.resp)
					if !ok {
						c.failf(ex, "an Error body whose message names "+p.mention, "no Error message in the answer (%s)", errorSummary(ex.resp))
						continue
					}
					if !strings.Contains(strings.ToLower(msg), strings.ToLower(p.mention)) {
						c.failf(ex, "a message that names "+p.mention, "message %q does not name %s", msg, p.mention)
					}
				}
			},
		},
		{
			name:   "errors/key-never-echoed",
			source: srcEvery + "; " + srcAuth,
			rule:   "No answer repeats a key or any part of the Authorization header: not with no scheme, another scheme, trailing junk, or a wrong key.",
			run: func(c *checker) {
				key := c.rn.cfg.APIKey
				if len(key) < minEchoKey {
					c.skipf("the API key is shorter than %d characters: an echo of it cannot be told from chance", minEchoKey)
				}
				var probes []request
				for _, h := range []string{key, "Basic " + key, "Token " + key, "Bearer " + key + " extra", "Bearer " + key + ",", "Bearer" + key, "Bearer " + wrongKey, "Bearer " + key + "x"} {
					probes = append(probes,
						request{method: http.MethodGet, path: "/inventory", auth: withAuth(h)},
						request{method: http.MethodPatch, path: "/inventory/abc", auth: withAuth(h), contentType: "application/json", body: qtyBody(1)})
				}
				probes = append(probes, request{method: http.MethodPatch, path: "/inventory/abc", contentType: "application/json", body: qtyBody(1)})
				for _, r := range probes {
					ex := c.do(r) // try flags an echo of the valid key
					if c.rn.echoes(ex.resp, wrongKey) {
						c.failf(ex, "no key in any answer", "the answer echoes the wrong key that was sent (%s)", wrongKey)
					}
				}
			},
		},
		{
			name:   "openapi/responses",
			source: srcSchema,
			rule:   "Every answer matches the OpenAPI document: its status is documented for the operation, its body has the documented schema, and the documented headers are set.",
			run: func(c *checker) {
				for _, s := range c.samples() {
					// try has validated status and body already.
					op, _ := operationFor(s.ex.req.method, s.ex.req.path)
					want := requiredHeaders(op, s.ex.resp.status)
					for _, h := range want {
						if len(s.ex.resp.header.Values(h)) == 0 {
							c.failf(s.ex, fmt.Sprintf("the headers the document requires for %d: %s", s.ex.resp.status, strings.Join(want, ", ")), "no %s header", h)
						}
					}
				}
			},
		},
	}
}

// noStore returns what is wrong with the Cache-Control of an answer
// other than the list ("" when it says no-store).
func noStore(vals []string) string {
	for _, v := range vals {
		for _, d := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(d), "no-store") {
				return ""
			}
		}
	}
	if len(vals) == 0 {
		return "no Cache-Control header"
	}
	return fmt.Sprintf("Cache-Control: %s (no-store missing)", strings.Join(vals, ", "))
}

// errorMessage returns the message member of an Error body.
func errorMessage(resp *response) (string, bool) {
	v, err := decodeJSON(resp.body)
	if err != nil {
		return "", false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	msg, ok := obj["message"].(string)
	return msg, ok
}

// concurrencyRounds is the number of rounds of parallel updates; with
// every round's bodies released together it catches a read-back that is
// not atomic with its write in every run, at a cost the result states.
const concurrencyRounds = 12

// gateWait bounds the wait for every request of a round to have sent its
// headers; past it the round is released with those that did.
const gateWait = 2 * time.Second

func concurrencyChecks() []*check {
	return []*check{
		{
			name: "concurrency/parallel-updates", writes: true,
			source: srcStore,
			rule:   "Parallel updates of one pet are atomic: each 200 carries its own value and the pet's status, strict lists (Cache-Control: no-cache) taken meanwhile show only values that were written, and the final value is one that was sent.",
			run:    parallelUpdates,
		},
	}
}

// parallelUpdates sends, in each round, Parallelism updates of one pet
// whose connections are open and headers sent before their bodies are
// released together, with two lists sent at the release.
func parallelUpdates(c *checker) {
	start := time.Now()
	pet := c.anyPet()
	c.touch(pet.id)
	n := c.rn.cfg.Parallelism
	const listsPerRound = 2
	prev := pet.qty
	released := 0
	defer func() {
		c.mu.Lock()
		c.res.Detail = fmt.Sprintf("%d rounds of %d updates of pet %d, released together once %d of them had sent their headers, and %d lists per round: %d requests in %s",
			concurrencyRounds, n, pet.id, released, listsPerRound, c.res.Requests, time.Since(start).Round(time.Millisecond))
		c.mu.Unlock()
	}()
	for round := range concurrencyRounds {
		values := make([]int64, n)
		next := int64(1000 + 100*round)
		for i := range values {
			if next == pet.qty {
				next++
			}
			values[i] = next
			next++
		}
		allowedInList := append(slices.Clone(values), prev)
		g := newGate(n)
		var wg sync.WaitGroup
		updates := make([]*exchange, n)
		lists := make([]*exchange, listsPerRound)
		for i := range n {
			wg.Go(func() {
				updates[i] = c.try(request{method: http.MethodPatch, path: itemPath(pet.id), contentType: "application/json", body: qtyBody(values[i]), gate: g})
			})
		}
		ready := 0
		timer := time.NewTimer(gateWait)
	wait:
		for ready < n {
			select {
			case <-g.ready:
				ready++
			case <-timer.C:
				break wait
			case <-c.ctx.Done():
				break wait
			}
		}
		timer.Stop()
		if round == 0 || ready < released {
			released = ready
		}
		close(g.release)
		for i := range lists {
			wg.Go(func() {
				// Strict: the quantities a list may show are those of
				// this round and the one before, which a list up to a
				// staleness bound old may not be.
				lists[i] = c.try(stateList())
			})
		}
		wg.Wait()
		for i, ex := range updates {
			if ex.err != nil {
				if c.ctx.Err() != nil {
					panic(abort{})
				}
				c.failf(ex, "an answer to every update", "no answer: %v", ex.err)
				continue
			}
			c.expectItem(ex, pet.id, values[i], pet.status)
		}
		for _, ex := range lists {
			if ex.err != nil {
				continue
			}
			items, err := parseItems(ex.resp)
			if err != nil {
				c.failf(ex, "200 with the list while updates run", "%v", err)
				continue
			}
			for _, it := range items {
				if it.id == pet.id && (!slices.Contains(allowedInList, it.qty) || it.status != pet.status) {
					c.failf(ex, fmt.Sprintf("pet %d with a quantity among %v and status %q", pet.id, allowedInList, pet.status),
						"a list taken during the updates shows pet %d with quantity %d and status %q", pet.id, it.qty, it.status)
				}
			}
		}
		items, ex, err := c.list()
		if err != nil {
			c.fatalf(ex, "the list readable after the updates", "%v", err)
		}
		found := false
		for _, it := range items {
			if it.id == pet.id {
				found = true
				prev = it.qty
				if !slices.Contains(values, it.qty) {
					c.failf(ex, fmt.Sprintf("a final quantity among the values sent %v", values), "after %d parallel updates pet %d has quantity %d, which no update sent", n, pet.id, it.qty)
				}
			}
		}
		if !found {
			c.fatalf(ex, "the pet still listed", "pet %d is no longer listed after the parallel updates", pet.id)
		}
	}
}
