package checks

import (
	"net/http"

	"github.com/petinventory/petinventory/conformancetest/internal/suite"
	"github.com/petinventory/petinventory/conformancetest/internal/wire"
)

const srcMedia = "CONTRACT.md §Update stock level › Media type"

// Media are the checks of the update's media type: those accepted, and
// what every other gets.
var Media = []*suite.Check{
	{
		Name: "media/absent", Writes: true, Source: srcMedia,
		Rule: "A request with no Content-Type is read as JSON.",
		Run:  run(accepted("")),
	},
	{
		Name: "media/json-with-charset", Writes: true, Source: srcMedia,
		Rule: "application/json with a charset=utf-8 parameter (any case) is accepted.",
		Run:  run(accepted("application/json; charset=utf-8", "application/json;charset=UTF-8", "Application/JSON")),
	},
	{
		Name: "media/merge-patch", Writes: true, Source: srcMedia,
		Rule: "application/merge-patch+json is accepted.",
		Run:  run(accepted("application/merge-patch+json", "application/merge-patch+json; charset=utf-8")),
	},
	{
		Name:   "media/unsupported",
		Source: srcMedia,
		Rule:   "Any other media type (text/plain, application/xml, a form, JSON Patch, a charset other than UTF-8) is 415 unsupported_media_type.",
		Run:    run(mediaUnsupported),
	},
	{
		Name:   "media/checked-before-body",
		Source: srcMedia + "; " + srcOrder,
		Rule:   "The media type is checked before the body: text/plain with invalid JSON, or with an empty body, is 415.",
		Run:    run(mediaCheckedBeforeBody),
	},
}

// mediaUnsupported judges media/unsupported.
func mediaUnsupported(c checker) {
	p := c.Target()
	for _, ct := range []string{
		"text/plain", "application/xml", "application/x-www-form-urlencoded",
		"multipart/form-data; boundary=x", "application/json-patch+json",
		"application/json; charset=iso-8859-1",
	} {
		ex := c.Do(wire.Request{Method: http.MethodPatch, Path: p, ContentType: ct, Body: wire.QtyBody(1)})
		c.expectError(ex, http.StatusUnsupportedMediaType, "unsupported_media_type")
	}
}

// mediaCheckedBeforeBody judges media/checked-before-body.
func mediaCheckedBeforeBody(c checker) {
	p := c.Target()
	for _, b := range [][]byte{[]byte("not json"), {}} {
		ex := c.Do(wire.Request{Method: http.MethodPatch, Path: p, ContentType: "text/plain", Body: b})
		c.expectError(ex, http.StatusUnsupportedMediaType, "unsupported_media_type")
	}
}

// accepted judges a media/ check of accepted types: an update of a
// listed pet sent with each of types (no Content-Type for "") is
// answered 200 with the pet.
func accepted(types ...string) func(c checker) {
	return func(c checker) {
		pet := c.AnyPet()
		c.Touch(pet.ID)
		for i, ct := range types {
			q := newQuantity(i, pet.Qty)
			ex := c.Do(wire.Request{Method: http.MethodPatch, Path: wire.ItemPath(pet.ID), ContentType: ct, Body: wire.QtyBody(q)})
			c.expectItem(ex, pet.ID, q, pet.Status)
		}
	}
}
