package oapiclient

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

const testKey = "oapiclient-test-key"

// TestGeneratedClientIsCurrent regenerates the client from
// inventory/openapi.yaml with the oapi-codegen of go.mod's tool directive
// (GOWORK=off, so the generator builds with exactly the versions this
// module pins) and fails when client.gen.go differs.
func TestGeneratedClientIsCurrent(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run oapi-codegen: %v", err)
	}
	cfg, err := os.ReadFile("oapi-codegen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "client.gen.go")
	cfg = bytes.Replace(cfg, []byte("output: client.gen.go"), []byte("output: "+out), 1)
	cfgFile := filepath.Join(dir, "oapi-codegen.yaml")
	if err := os.WriteFile(cfgFile, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "tool", "oapi-codegen", "-config", cfgFile, "../../inventory/openapi.yaml")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("client.gen.go is not what oapi-codegen makes of inventory/openapi.yaml; run go generate in internal/oapiclient and commit the result")
	}
}

// serve starts the inventory API on a memstore behind a real socket and
// returns a generated client for it.
func serve(t *testing.T, key string) *ClientWithResponses {
	t.Helper()
	store, err := memstore.New(
		inventory.Item{PetID: 1, Quantity: 3, Status: inventory.StatusAvailable},
		inventory.Item{PetID: 2, Quantity: 0, Status: inventory.StatusSold},
	)
	if err != nil {
		t.Fatal(err)
	}
	api, err := inventory.New(store, inventory.WithAPIKeys(testKey), inventory.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.StripPrefix("/v1", api))
	t.Cleanup(srv.Close)
	c, err := NewClientWithResponses(srv.URL+"/v1", WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTypedErrorCodes uses the generated client against the real API and
// switches on the typed code of each error answer: the document gives
// every status its own code enum, so no type assertion is needed.
func TestTypedErrorCodes(t *testing.T) {
	ctx := context.Background()
	c := serve(t, testKey)

	nf, err := c.UpdateInventoryWithResponse(ctx, 999, InventoryUpdate{Quantity: 5})
	if err != nil {
		t.Fatal(err)
	}
	if nf.JSON404 == nil {
		t.Fatalf("pet 999: status %d, body %s; want a 404 NotFound body", nf.StatusCode(), nf.Body)
	}
	switch nf.JSON404.Code {
	case NotFoundCodeNotFound:
	default:
		t.Errorf("404 code %q, want %q", nf.JSON404.Code, NotFoundCodeNotFound)
	}
	if nf.JSON404.Status != N404 || nf.JSON404.Message == "" {
		t.Errorf("404 body %+v: want status 404 and a message", *nf.JSON404)
	}

	bad, err := c.UpdateInventoryWithBodyWithResponse(ctx, 1, "application/json", strings.NewReader(`{"quantity":5,"extra":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if bad.JSON400 == nil {
		t.Fatalf("unknown member: status %d, body %s; want a 400 BadRequest body", bad.StatusCode(), bad.Body)
	}
	switch bad.JSON400.Code {
	case UnknownField:
	case InvalidJson, InvalidPetId, MissingField, InvalidField:
		t.Errorf("400 code %q, want %q", bad.JSON400.Code, UnknownField)
	default:
		t.Errorf("400 code %q is not one the document gives a 400", bad.JSON400.Code)
	}

	media, err := c.UpdateInventoryWithBodyWithResponse(ctx, 1, "application/json; charset=latin1", strings.NewReader(`{"quantity":5}`))
	if err != nil {
		t.Fatal(err)
	}
	if media.JSON415 == nil || media.JSON415.Code != UnsupportedMediaTypeCodeUnsupportedMediaType || media.JSON415.Status != N415 {
		t.Errorf("charset=latin1: status %d, body %s; want a 415 unsupported_media_type", media.StatusCode(), media.Body)
	}

	ok, err := c.UpdateInventoryWithResponse(ctx, 1, InventoryUpdate{Quantity: 5})
	if err != nil {
		t.Fatal(err)
	}
	if ok.JSON200 == nil || *ok.JSON200 != (InventoryItem{PetId: 1, Quantity: 5, Status: Available}) {
		t.Errorf("update: status %d, body %s; want pet 1 at 5, available", ok.StatusCode(), ok.Body)
	}

	list, err := c.ListInventoryWithResponse(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if list.JSON200 == nil || len(*list.JSON200) != 2 || (*list.JSON200)[0].Quantity != 5 || (*list.JSON200)[1].Status != Sold {
		t.Errorf("list: status %d, body %s; want pets 1 (5) and 2 (sold)", list.StatusCode(), list.Body)
	}

	wrong, err := serve(t, "not-the-key").ListInventoryWithResponse(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if wrong.JSON401 == nil {
		t.Fatalf("wrong key: status %d, body %s; want a 401 Unauthorized body", wrong.StatusCode(), wrong.Body)
	}
	switch wrong.JSON401.Code {
	case UnauthorizedCodeUnauthorized:
	default:
		t.Errorf("401 code %q, want %q", wrong.JSON401.Code, UnauthorizedCodeUnauthorized)
	}
	if h := wrong.HTTPResponse.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="invalid_token"`) {
		t.Errorf("401 WWW-Authenticate %q, want the invalid_token challenge", h)
	}
}

// TestConditionalList revalidates a list through the generated client's
// If-None-Match parameter: the same state is 304 with no body, a state
// after an update is 200 with a new ETag.
func TestConditionalList(t *testing.T) {
	ctx := context.Background()
	c := serve(t, testKey)
	first, err := c.ListInventoryWithResponse(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.JSON200 == nil || first.Headers200 == nil || first.Headers200.ETag == "" {
		t.Fatalf("list: status %d, headers %v; want a 200 with an ETag", first.StatusCode(), first.HTTPResponse.Header)
	}
	if cc := first.Headers200.CacheControl; cc != "private, no-cache" {
		t.Errorf("list Cache-Control %q, want private, no-cache", cc)
	}
	tag := first.Headers200.ETag

	same, err := c.ListInventoryWithResponse(ctx, &ListInventoryParams{IfNoneMatch: &tag})
	if err != nil {
		t.Fatal(err)
	}
	if same.StatusCode() != http.StatusNotModified || len(same.Body) != 0 || same.Headers304 == nil || same.Headers304.ETag != tag {
		t.Fatalf("If-None-Match %s on the same state: status %d, body %q, headers %v; want 304 with the same ETag and no body",
			tag, same.StatusCode(), same.Body, same.HTTPResponse.Header)
	}

	if _, err := c.UpdateInventoryWithResponse(ctx, 2, InventoryUpdate{Quantity: 9}); err != nil {
		t.Fatal(err)
	}
	after, err := c.ListInventoryWithResponse(ctx, &ListInventoryParams{IfNoneMatch: &tag})
	if err != nil {
		t.Fatal(err)
	}
	if after.JSON200 == nil || after.Headers200 == nil || after.Headers200.ETag == tag || (*after.JSON200)[1].Quantity != 9 {
		t.Errorf("If-None-Match %s after an update: status %d, body %s, headers %v; want 200 with pet 2 at 9 and a new ETag",
			tag, after.StatusCode(), after.Body, after.HTTPResponse.Header)
	}
}
