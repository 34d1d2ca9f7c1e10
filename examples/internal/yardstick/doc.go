// Command yardstick is the baseline of the million-pet load test
// (scripts/bench/million.sh): the least a Gin server can do to answer the
// inventory API on Redis the way the library does (a change stream), so that
// "library ÷ yardstick" is what the library adds.
//
//   - GET /v1/inventory answers fixed bytes held in memory (the bytes
//     examples/redis answered, read from -body at start), with the
//     headers the API sends.
//   - A list that accepts gzip or carries If-None-Match first makes one
//     Redis round trip (XREVRANGE of the change stream's last entry: what
//     showing every write answered before the list costs at least), whose
//     entry id is its ETag ("<id>" identity, "<id>-gzip" gzip). It then
//     answers 304 when If-None-Match names that tag (or *), else the gzip
//     bytes (-gzip-body, which must decode to -body; by default -body
//     compressed at start) or the identity bytes, all from memory.
//   - PATCH /v1/inventory/{petId} with {"quantity":N} runs the write of
//     the store's change-stream layout: WATCH {p}:guard:<id>, HGET
//     {p}:items <id> (a value "<qty>:<status>"), then MULTI, HSET of the
//     new value, XADD {p}:log MAXLEN ~ 10000 * n <nonce> op set d
//     "<id>:<qty>:<status>", EXEC; it answers 200 with the item, 404 for
//     a pet it does not hold, 400 for a bad id or body, 503 when Redis
//     fails or the transaction keeps aborting.
//
// Both routes check the bearer key with the library's own authenticator
// (inventory.NewKeyAuthenticator), on an engine set up as examples/redis
// sets up its own (gin.New with Recovery, served by demo.ServeHTTP), so
// that the comparison differs only in what the library does.
//
// At start it seeds its own key prefix from the items of the -body file
// in HSET chunks of 1 000 fields (so seeding never blocks Redis for
// long), refusing a prefix that already holds items, and only then
// listens: a server that answers is seeded. It never updates the list
// bytes it serves: it measures what serving a shared body and writing
// through WATCH/MULTI cost, not a cache. It is a measuring tool, not an
// example to copy.
//
//	REDIS_URL=redis://127.0.0.1:6479/0 INVENTORY_API_KEYS=KEY \
//	    yardstick -addr 127.0.0.1:18093 -body list.json -redis-prefix ys-1
package main
