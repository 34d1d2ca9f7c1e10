// Package redisstore is the inventory.Store kept in Redis, for services
// that run more than one replica: every replica pointed at the same Redis
// and key prefix serves the same inventory.
//
// It takes a redis.UniversalClient from github.com/redis/go-redis/v9, so a
// single node, Sentinel and Cluster all fit:
//
//	opts, err := redisstore.OptionsFromURL(os.Getenv("REDIS_URL"))
//	...
//	client := redis.NewClient(opts)
//	defer client.Close()
//	store, err := redisstore.New(client)              // does not dial Redis
//	api, err := inventory.New(store, inventory.WithAPIKeys(key),
//		inventory.WithStoreTimeout(2*time.Second)) // every store call gets a deadline
//
// # Key layout
//
// Every key starts with the prefix (WithKeyPrefix, default "inventory") in
// braces, a Redis Cluster hash tag, so all of one inventory's keys live in
// one slot and its multi-key transactions work on Cluster:
//
//	{inventory}:status        HASH   petId → status. A field exists exactly
//	                                 when the pet has an entry. Written by Put
//	                                 and Delete only.
//	{inventory}:qty           HASH   petId → quantity. Written by Put, Delete
//	                                 and SetQuantity.
//	{inventory}:guard:{petId} STRING written ("1") by Put and deleted by Delete,
//	                                 in the same transaction as the status:
//	                                 what SetQuantity WATCHes.
//
// Pet ids are decimal strings ("-42"). The keys belong to the store: a
// value it never writes (a non-integer quantity, an unknown status) makes
// the call fail with an internal error naming the key and field, never a
// panic or a made-up item. The store never runs FLUSHDB, KEYS or SCAN.
//
// Keeping status and quantity in two hashes is what lets concurrent
// updates proceed without aborting one another: an update WATCHes the
// pet's guard, which only Put and Delete write, reads the status, and
// writes the quantity in MULTI/EXEC. A hot pet with 32 concurrent writers
// costs no retry at all; only a Put or Delete of that same pet between
// WATCH and EXEC aborts an update, which is then retried (WithMaxRetries).
// A guard per pet, rather than WATCHing the status hash, keeps seeding or
// administration of other pets from aborting anyone's update.
//
// # Guarantees
//
//   - SetQuantity is atomic: it fails with inventory.ErrNotFound and
//     writes nothing when the pet has no entry; otherwise it writes the
//     quantity, leaves the status as it is, and returns the entry as this
//     write stored it. Concurrent updates of one pet are serialised by
//     Redis and none is lost. Three round trips (WATCH, HGET, MULTI/EXEC).
//   - List is one MULTI/EXEC of two HGETALLs: one round trip, and a
//     snapshot of one instant, whatever the number of entries. It is
//     sorted by petId in the process.
//   - Put of any number of items is one MULTI/EXEC: atomic and idempotent.
//     Delete is one MULTI/EXEC too. PutIfEmpty seeds only a store with no
//     entry, atomically, so that replicas starting together seed once and
//     a restart never overwrites real stock.
//   - Every call honours its context: a done context fails before anything
//     is sent, and with ContextTimeoutEnabled (set by ApplyTimeouts) the
//     deadline bounds every socket read and write.
//
// Redis acknowledges a write once it is in its memory. Whether it survives
// a Redis restart depends on the server's persistence (RDB/AOF) settings,
// and a failover to a replica may lose the last writes acknowledged by the
// old primary: see the Redis documentation on persistence and replication.
//
// # Errors
//
// Errors from go-redis are translated in one place. A pet with no entry
// is inventory.ErrNotFound. A deadline or cancellation, a failed dial, a
// refused, reset or closed connection, a pool timeout, and the replies
// LOADING, READONLY, MASTERDOWN, CLUSTERDOWN, TRYAGAIN and max-clients are
// an *inventory.Error with code unavailable that wraps the cause: the API
// answers 503 with Retry-After and logs a warning. So is an update whose
// retries ran out. Anything else (authentication, out of memory, TLS,
// corrupt data, a bug) is answered 500 and logged as an error.
//
// # Timeouts
//
// go-redis's defaults have changed between minor versions, so
// OptionsFromURL and ApplyTimeouts set them explicitly: DialTimeout 2 s
// (2 attempts, 100 ms apart), ReadTimeout and WriteTimeout 2 s, PoolTimeout
// 2 s, go-redis's own retries of a failed command 2 (backoff 8–256 ms), and
// ContextTimeoutEnabled. A request's store deadline (inventory's
// WithStoreTimeout) is usually the tighter bound: a stopped Redis is
// answered 503 within it.
package redisstore
