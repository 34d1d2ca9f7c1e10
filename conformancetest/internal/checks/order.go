package checks

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

const srcOrder = "CONTRACT.md §Check order"

// Order are the checks of the order in which an update's faults are
// found: method, key, petId, media type, size, body, store.
var Order = []*suite.Check{
	{
		Name:   "order/method-before-auth",
		Source: srcOrder,
		Rule:   "The route's method is checked before authentication: another method without a valid key is 405, not 401.",
		Run:    run(orderMethodBeforeAuth),
	},
	{
		Name:   "order/auth-first",
		Source: srcAuth + "; " + srcOrder,
		Rule:   "An unauthenticated caller learns nothing: without a valid key, a bad petId, a bad media type, a body over the limit, a bad body, an unknown pet are all 401, and a listed and an unlisted pet get the same answer.",
		Run:    run(orderAuthFirst),
	},
	{
		Name:   "order/pet-id-before-media-type",
		Source: srcOrder,
		Rule:   "petId is checked before the media type: PATCH /inventory/abc with Content-Type text/plain is 400 invalid_pet_id.",
		Run:    run(orderPetIDBeforeMediaType),
	},
	{
		Name:   "order/media-type-before-size",
		Source: srcOrder,
		Rule:   "The media type is checked before the body size: a text/plain body over the limit is 415.",
		Run:    run(orderMediaTypeBeforeSize),
	},
	{
		Name:   "order/size-before-body",
		Source: srcOrder,
		Rule:   "The body size is checked before the body: invalid JSON over the limit is 413, not 400.",
		Run:    run(orderSizeBeforeBody),
	},
	{
		Name:   "order/body-before-store",
		Source: srcOrder,
		Rule:   "The body is checked before the store: an invalid body for a pet that does not exist is 400 with the body's code, not 404.",
		Run:    run(orderBodyBeforeStore),
	},
}

// orderMethodBeforeAuth judges order/method-before-auth.
func orderMethodBeforeAuth(c checker) {
	p := wire.ItemPath(c.UnlistedID())
	c.expect405(c.Do(wire.Request{Method: http.MethodDelete, Path: "/inventory", Auth: wire.NoAuth}), listAllow)
	c.expect405(c.Do(wire.Request{Method: http.MethodPut, Path: p, Auth: wire.NoAuth}), http.MethodPatch)
	c.expect405(c.Do(wire.Request{Method: http.MethodGet, Path: p, Auth: wire.WithAuth("Bearer " + wrongKey)}), http.MethodPatch)
}

// orderAuthFirst judges order/auth-first.
func orderAuthFirst(c checker) {
	items, _, err := c.List()
	if err != nil {
		c.Skipf("cannot discover pets: %v (see list/ok)", err)
	}
	unl := wire.ItemPath(wire.Unlisted(items))
	big := paddedBody(c.Settings().MaxBodyBytes+1, 1)
	for _, a := range []*wire.AuthHeader{wire.NoAuth, wire.WithAuth("Bearer " + wrongKey)} {
		invalid := a != wire.NoAuth
		probes := []wire.Request{
			{Method: http.MethodPatch, Path: "/inventory/abc", Auth: a, ContentType: "application/json", Body: []byte(`{"quantity":1}`)},
			{Method: http.MethodPatch, Path: unl, Auth: a, ContentType: "text/plain", Body: []byte(`{"quantity":1}`)},
			{Method: http.MethodPatch, Path: unl, Auth: a, ContentType: "application/json", Body: big},
			{Method: http.MethodPatch, Path: unl, Auth: a, ContentType: "application/json", Body: []byte(`{"quantity":`)},
			{Method: http.MethodPatch, Path: unl, Auth: a, ContentType: "application/json", Body: []byte(`{}`)},
			{Method: http.MethodPatch, Path: unl, Auth: a, ContentType: "application/json", Body: []byte(`{"quantity":1}`)},
		}
		for _, r := range probes {
			c.expectUnauthorized(c.Do(r), invalid)
		}
		if len(items) == 0 {
			continue
		}
		// Same request to a listed pet (its current quantity:
		// a wrong acceptance changes nothing) and to an
		// unlisted one: the answers must not differ.
		c.Guard(items[0].ID)
		known := c.Do(wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(items[0].ID), Auth: a, ContentType: "application/json", Body: wire.QtyBody(items[0].Qty)})
		unknown := c.Do(wire.Request{Method: http.MethodPatch, Path: unl, Auth: a, ContentType: "application/json", Body: wire.QtyBody(items[0].Qty)})
		if known.Resp.Status != unknown.Resp.Status || string(known.Resp.Body) != string(unknown.Resp.Body) {
			c.Failf(unknown, "the same answer for a listed and an unlisted pet",
				"without a valid key, a listed pet gets %s %s but an unlisted one gets %s %s: the answer tells which pets exist",
				wire.ErrorSummary(known.Resp), wire.ShowBody(known.Resp.Body), wire.ErrorSummary(unknown.Resp), wire.ShowBody(unknown.Resp.Body))
		}
	}
}

// orderPetIDBeforeMediaType judges order/pet-id-before-media-type.
func orderPetIDBeforeMediaType(c checker) {
	ex := c.Do(wire.Request{Method: http.MethodPatch, Path: "/inventory/abc", ContentType: "text/plain", Body: []byte("hello")})
	c.expectError(ex, http.StatusBadRequest, "invalid_pet_id")
}

// orderMediaTypeBeforeSize judges order/media-type-before-size.
func orderMediaTypeBeforeSize(c checker) {
	p := c.Target()
	ex := c.Do(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "text/plain", Body: paddedBody(c.Settings().MaxBodyBytes+1, 1)})
	c.expectError(ex, http.StatusUnsupportedMediaType, "unsupported_media_type")
}

// orderSizeBeforeBody judges order/size-before-body.
func orderSizeBeforeBody(c checker) {
	p := c.Target()
	body := []byte("{" + strings.Repeat("x", int(c.Settings().MaxBodyBytes)))
	ex := c.Do(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "application/json", Body: body})
	c.expectError(ex, http.StatusRequestEntityTooLarge, "payload_too_large")
}

// orderBodyBeforeStore judges order/body-before-store.
func orderBodyBeforeStore(c checker) {
	p := wire.ItemPath(c.UnlistedID())
	for _, tc := range []struct{ body, code string }{
		{`nope`, "invalid_json"},
		{`{}`, "missing_field"},
		{`{"quantity":"5"}`, "invalid_field"},
		{`{"quantity":1,"status":"sold"}`, "unknown_field"},
	} {
		ex := c.Do(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "application/json", Body: []byte(tc.body)})
		c.expectError(ex, http.StatusBadRequest, tc.code)
	}
}

// paddedBody returns a valid update body of exactly n bytes: the object
// with spaces before its closing brace.
func paddedBody(n int64, qty int64) []byte {
	head := fmt.Sprintf(`{"quantity":%d`, qty)
	pad := int(n) - len(head) - 1
	if pad < 0 {
		pad = 0
	}
	return []byte(head + strings.Repeat(" ", pad) + "}")
}
