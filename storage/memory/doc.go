// Package memstore is the embedded inventory.Store: every entry in the
// memory of one process, guarded by one read-write lock.
//
// It is the zero-setup default for examples, tests and single-replica
// services. It keeps nothing across a restart and is not shared between
// replicas: for either, use package redisstore.
//
// Every method is safe for concurrent use. SetQuantity is atomic (one write
// lock), List is a consistent snapshot (one read lock, copied), and Put of
// several items is atomic.
package memstore
