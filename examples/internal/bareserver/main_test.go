package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// get sends a list request over a real socket, without the transport's
// own Accept-Encoding or decompression.
func get(t *testing.T, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer k")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestGzipMiddleware(t *testing.T) {
	body := []byte(`[` + strings.Repeat(`{"petId":1,"quantity":2,"status":"sold"},`, 200) + `{"petId":2,"quantity":0,"status":"sold"}]`)
	for _, gz := range []bool{false, true} {
		srv := httptest.NewServer(newEngine(body, "k", gz))
		resp, b := get(t, srv.URL+"/v1/inventory", "Accept-Encoding", "gzip")
		if resp.StatusCode != 200 {
			t.Fatalf("gzip %v: status %d", gz, resp.StatusCode)
		}
		if !gz {
			if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(b, body) {
				t.Errorf("without -gzip: Content-Encoding %q, %d bytes; want the identity body", resp.Header.Get("Content-Encoding"), len(b))
			}
		} else {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("-gzip: Content-Encoding %q: %v", resp.Header.Get("Content-Encoding"), err)
			}
			if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, body) || len(b) >= len(body) {
				t.Errorf("-gzip: %d compressed bytes do not decode to the %d-byte body: %v", len(b), len(body), err)
			}
			// A client that does not accept gzip gets the identity body.
			resp, b = get(t, srv.URL+"/v1/inventory")
			if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(b, body) {
				t.Errorf("-gzip without Accept-Encoding: Content-Encoding %q, %d bytes; want the identity body", resp.Header.Get("Content-Encoding"), len(b))
			}
		}
		if resp, _ := get(t, srv.URL+"/v1/inventory", "Authorization", "Bearer wrong"); resp.StatusCode != 401 {
			t.Errorf("gzip %v: a wrong key got %d", gz, resp.StatusCode)
		}
		srv.Close()
	}
}
