package wire

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
)

// Request is one request a check sends. Paths are relative to the base
// URL ("/inventory", "/inventory/12?x=1").
type Request struct {
	Method string
	Path   string
	// Auth is the Authorization header; nil sends "Bearer <key>".
	Auth *AuthHeader
	// ContentType is sent when not empty.
	ContentType string
	Body        []byte
	// Chunked sends the body without Content-Length.
	Chunked bool
	// AcceptEncoding is the Accept-Encoding header; empty sends
	// "identity", so that every answer is seen as the server sent it
	// (no transparent decoding by the client).
	AcceptEncoding string
	// IfNoneMatch is sent as If-None-Match when not empty.
	IfNoneMatch string
	// NoCache sends Cache-Control: no-cache, which a deployment with a
	// staleness bound answers from its store as it is, never from a
	// state it holds (CONTRACT.md §With a staleness bound): the strict
	// list. Without it a list is the default one, as a client sends it,
	// which such a deployment may answer up to its bound old.
	NoCache bool
	// Base, when not empty, is the base URL to send to instead of
	// the client's: one of Config.Replicas.
	Base string
	// Gate, when not nil, holds the body back until the gate opens: the
	// connection is open and the headers are sent, so that requests
	// released together reach the server together.
	Gate *Gate
}

// Gate releases the bodies of several requests at once.
type Gate struct {
	Ready   chan struct{} // receives once per request whose headers are out
	Release chan struct{} // closed to let every body go
}

// NewGate returns a gate for n requests.
func NewGate(n int) *Gate {
	return &Gate{Ready: make(chan struct{}, n), Release: make(chan struct{})}
}

// gatedBody is a request body that reports its first read (the transport
// reads the body only after it has flushed the headers of a request with
// a length and a body of unknown type) and then waits for the gate. A
// retry on another connection (GetBody) reads a new one that waits too
// and reports nothing more: Ready counts requests, once each.
type gatedBody struct {
	ctx    context.Context
	g      *Gate
	once   *sync.Once
	r      *bytes.Reader
	waited bool
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if !b.waited {
		b.waited = true
		b.once.Do(func() { b.g.Ready <- struct{}{} })
		select {
		case <-b.g.Release:
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		}
	}
	return b.r.Read(p)
}

// StateList is the list the suite learns and verifies state with: the
// strict list (NoCache), so that a deployment with a staleness bound
// shows every update answered before it, as every other deployment
// does. The checks that look at the default list, the one clients get,
// send a request without NoCache and say so.
func StateList() Request {
	return Request{Method: http.MethodGet, Path: "/inventory", NoCache: true}
}

// defaultAcceptEncoding is what a request accepts when it does not say.
const defaultAcceptEncoding = "identity"

// AcceptedEncoding is the Accept-Encoding the request is sent with.
func (r Request) AcceptedEncoding() string {
	if r.AcceptEncoding == "" {
		return defaultAcceptEncoding
	}
	return r.AcceptEncoding
}

// AuthHeader is an Authorization header to send, or none.
type AuthHeader struct {
	Send  bool
	Value string
}

// NoAuth sends no Authorization header.
var NoAuth = &AuthHeader{}

// WithAuth sends the Authorization header v.
func WithAuth(v string) *AuthHeader { return &AuthHeader{Send: true, Value: v} }

// NoCacheDirective is the Cache-Control of a strict list (RFC 9111
// §5.2.1.4).
const NoCacheDirective = "no-cache"

// onlyReader hides the type of a reader so that net/http cannot learn its
// length: the request goes out chunked.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
