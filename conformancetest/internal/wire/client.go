package wire

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Client sends a run's requests to its deployment.
type Client struct {
	// BaseURL is where a request without Request.Base goes.
	BaseURL string
	// APIKey is sent as "Bearer <key>" by every request without
	// Request.Auth, and hidden in everything the client shows.
	APIKey string
	// HTTP sends the requests; it follows no redirect and decodes no
	// content coding (see conformancetest.Config.HTTPClient).
	HTTP *http.Client
	// Timeout bounds each request.
	Timeout time.Duration
}

// Send performs r. It never fails the check itself: a transport error is
// returned in the exchange.
func (cl *Client) Send(ctx context.Context, r Request) *Exchange {
	base := cl.BaseURL
	if r.Base != "" {
		base = r.Base
	}
	ex := &Exchange{Req: r, URL: base + r.Path}
	ctx, cancel := context.WithTimeout(ctx, cl.Timeout)
	defer cancel()
	req, err := cl.NewRequest(ctx, r, ex.URL)
	if err != nil {
		ex.Err = err
		return ex
	}
	resp, err := cl.HTTP.Do(req)
	if err != nil {
		ex.Err = err
		return ex
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(MaxResponseBytes)+1))
	if err != nil {
		ex.Err = fmt.Errorf("reading the response body: %w", err)
		return ex
	}
	truncated := len(b) > MaxResponseBytes
	if truncated {
		b = b[:MaxResponseBytes]
	}
	ex.Resp = &Response{Status: resp.StatusCode, Header: resp.Header, Body: b, Truncated: truncated}
	return ex
}

// NewRequest builds the HTTP request of r, headers included.
func (cl *Client) NewRequest(ctx context.Context, r Request, url string) (*http.Request, error) {
	var body io.Reader
	if r.Body != nil {
		if r.Gate != nil {
			body = &gatedBody{ctx: ctx, g: r.Gate, once: new(sync.Once), r: bytes.NewReader(r.Body)}
		} else if r.Chunked {
			body = onlyReader{bytes.NewReader(r.Body)}
		} else {
			body = bytes.NewReader(r.Body)
		}
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, url, body)
	if err != nil {
		return nil, err
	}
	if r.Chunked {
		req.ContentLength = -1
		req.GetBody = nil
	}
	if gb, ok := body.(*gatedBody); ok {
		req.ContentLength = int64(len(r.Body))
		req.GetBody = func() (io.ReadCloser, error) {
			return io.NopCloser(&gatedBody{ctx: ctx, g: gb.g, once: gb.once, r: bytes.NewReader(r.Body)}), nil
		}
	}
	switch {
	case r.Auth == nil:
		req.Header.Set("Authorization", "Bearer "+cl.APIKey)
	case r.Auth.Send:
		req.Header.Set("Authorization", r.Auth.Value)
	}
	if r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	// Set explicitly, so that net/http neither adds gzip nor decodes the
	// answer: the checks see the raw bytes and headers.
	req.Header.Set("Accept-Encoding", r.AcceptedEncoding())
	if r.IfNoneMatch != "" {
		req.Header.Set("If-None-Match", r.IfNoneMatch)
	}
	if r.NoCache {
		req.Header.Set("Cache-Control", NoCacheDirective)
	}
	return req, nil
}
