// Package strictjson validates JSON as RFC 8259 defines it, more strictly
// than encoding/json: a member name twice in one object is an error, the
// nesting is bounded, and the members of an object are reported as byte
// ranges without being decoded. It says where and why a document is not
// JSON; package inventory decides what an update body must hold and which
// error code answers it.
package strictjson
