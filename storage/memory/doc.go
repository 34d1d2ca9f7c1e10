// Package memstore is the embedded inventory.Store: every entry in the
// memory of one process, guarded by one read-write lock.
//
// It is the zero-setup default for examples, tests and single-replica
// services. It keeps nothing across a restart and is not shared between
// replicas: for either, use package redisstore.
//
// It is initialized by construction: New's items (none, for an empty
// inventory) are its initial stock, and it lives and dies with its
// process, so it cannot vanish under the process that serves it. It has
// no initialization marker and needs none, unlike a Redis store
// (redisstore.WithRequireInitialized), which outlives the processes that
// serve it and may be wiped under them.
//
// Every method is safe for concurrent use. SetQuantity is atomic (one write
// lock), List is a consistent snapshot (one read lock, copied), and Put of
// several items is atomic.
//
// The store implements inventory.ChangeLister: it remembers its last 4096
// changes, so that the API, which keeps the list it last read, asks only
// for what changed since. A cursor names an instance (a random tag) and a
// version: an unchanged one is answered without a lock or an allocation,
// one within the remembered changes with those changes, and any other (a
// cursor of another instance, or older than the 4096 changes) with every
// entry. A Put of more than 1024 entries (seeding) is not logged entry by
// entry: it makes every older cursor get every entry instead.
package memstore
