// Package listbody is the list's body engine: it keeps the body of the
// list of every state of the store encoded, identity and gzip, in
// immutable segments that every list in flight shares, and builds the
// body of the next state from a change log by re-encoding only the
// segments the changes touch. It also names each state with its entity
// tags.
//
// It knows nothing of HTTP: package inventory decides which body a request
// gets (content negotiation), whether it gets one at all (If-None-Match),
// and when the store is read. An entry's type and its JSON are the
// caller's, described once by a Format.
package listbody
