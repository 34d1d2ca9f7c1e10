// Package redisstore is the inventory.Store kept in Redis, for services
// that run more than one replica: every replica pointed at the same Redis
// and key prefix serves the same inventory.
//
// It takes a redis.UniversalClient from github.com/redis/go-redis/v9, so a
// single node, Sentinel and Cluster all fit. ParseURL names any of the
// three in go-redis's own URL forms and builds the client with the
// store's timeouts:
//
//	cfg, err := redisstore.ParseURL(os.Getenv("REDIS_URL"))
//	...
//	client := cfg.NewClient()                         // does not dial Redis
//	defer client.Close()
//	log.Info("store", "redis", cfg.String())          // never shows a password
//	store, err := redisstore.New(client, redisstore.WithClientConfig(cfg))
//	api, err := inventory.New(store, inventory.WithAPIKeys(key),
//		inventory.WithStoreTimeout(2*time.Second)) // every store call gets a deadline
//
// The URL forms:
//
//	redis://[user:password@]host:6379/0        one node (rediss:// for TLS)
//	unix:///run/redis/redis.sock?db=0          one node on this host
//	redis://h1:7000?addr=h2:7000&addr=h3:7000  a Cluster, from any seed nodes
//	redis://h1:7000?cluster=true               a Cluster, from a single seed
//	redis://s1:26379?master_name=shop&addr=s2:26379&addr=s3:26379
//	                                           a master managed by Sentinel
//
// cluster=true is this package's parameter; the rest is go-redis's
// (redis.ParseURL, redis.ParseClusterURL, redis.ParseFailoverURL), so
// go-redis's query parameters of each form (dial_timeout, pool_size, …)
// work too. In the Sentinel form the URL's user and password are the
// sentinels'; the master's are the username= and password= parameters. A
// malformed URL, an unknown parameter or one of another form, a value of
// the wrong type, several hosts separated by commas, or a parameter that
// would read from replicas is an error naming it. The grammar is the one
// the conformance suite reads its -consistency-redis URL with, so the
// store and the suite read a URL alike.
//
// # Key layout
//
// Every key starts with the prefix (WithKeyPrefix, default "inventory") in
// braces, a Redis Cluster hash tag, so all of one inventory's keys live in
// one slot and its multi-key transactions work on Cluster:
//
//	{inventory}:items         HASH   petId → "quantity:status" ("12:available").
//	                                 A field exists exactly when the pet has an
//	                                 entry. One value per pet, so every HSCAN
//	                                 chunk is consistent pet by pet.
//	{inventory}:log           STREAM the change log: one entry per write,
//	                                 appended in the write's own MULTI/EXEC,
//	                                 capped (XADD MAXLEN ~) at about 10 000 item
//	                                 records. Fields: n, a random 64-bit nonce
//	                                 in hex; op, set | del | reset | mark; d,
//	                                 "petId:quantity:status" records joined by
//	                                 "," for set, petIds for del.
//	{inventory}:guard:{petId} STRING written ("1") by Put and deleted by Delete,
//	                                 in the same transaction as the entry: what
//	                                 SetQuantity WATCHes.
//	{inventory}:seed:{random} HASH   PutIfEmpty's staging copy of a seed, renamed
//	                                 to items when it lands; expires a minute
//	                                 after its last write.
//	{inventory}:tx            never written: WATCHed on a Ring (no Conn
//	                                 of one node) to hold one connection for
//	                                 a write or a read and its WAIT.
//
// Pet ids are decimal strings ("-42"). The keys belong to the store: a
// value it never writes (a non-integer quantity, an unknown status) makes
// the call fail with an internal error naming the key and field, never a
// panic or a made-up item; a log entry it cannot parse makes a list read
// everything again (and log a warning), never a wrong list. The store
// never runs FLUSHDB or KEYS; only Clear runs SCAN (with MATCH on the
// prefix's hash tag, on the one node that owns it).
//
// All processes sharing a prefix must run a version of this package with
// this layout.
//
// Concurrent updates of one pet do not abort one another: an update
// WATCHes the pet's guard, which only Put and Delete write, reads the
// entry (WATCH and HGET in one pipeline on the transaction's connection:
// one round trip), and writes the entry with the new quantity and the
// status it read in MULTI/EXEC; the status cannot have changed meanwhile
// without the guard. Updates of a hot pet cost no retry, however many writers; only
// a Put or Delete of that same pet between WATCH and EXEC aborts an
// update, which is then retried (WithMaxRetries). A guard per pet, rather
// than WATCHing the items hash, keeps seeding or administration of other
// pets from aborting anyone's update.
//
// # No long command
//
// Redis runs one command at a time, so one long command stalls every
// other client of that Redis. No command of the store runs long at any
// size of the inventory (the package's tests check it against a real
// redis-server's SLOWLOG; BENCHMARKS.md has the figures):
//
//   - a full read is HSCAN in chunks of about 300 entries, then the log
//     entries written meanwhile, in XRANGE pages of 100;
//   - Put writes at most 250 items per transaction; PutIfEmpty stages a
//     seed 250 items at a time and makes it the store's entries with one
//     RENAME;
//   - Clear scans 250 keys at a time and deletes them with UNLINK.
//
// # Guarantees
//
//   - SetQuantity is atomic: it fails with inventory.ErrNotFound and
//     writes nothing when the pet has no entry; otherwise it writes the
//     quantity, leaves the status as it is, logs the change, and returns
//     the entry as this write stored it. Concurrent updates of one pet are
//     serialised by Redis and none is lost. Two round trips: WATCH and
//     HGET pipelined, then MULTI/EXEC (on a Cluster, on the connection to
//     the master of the store's slot). An update that ends without EXEC
//     (no entry) sends UNWATCH, so no WATCH stays on a pooled connection.
//   - List is a full read: it notes the log's last entry, reads the items
//     hash in HSCAN chunks, then replays every entry logged after the
//     noted one. Each entry sets absolute values, so the result is the
//     state at the log's end, a state the store held at one instant,
//     although the chunks were read at different times. Its round trips
//     grow with the inventory (one per HSCAN chunk); it starts over
//     when the log moved under it (at most 5 times, then unavailable). A
//     Redis that fails midway fails the read: never a partial list.
//   - The store implements inventory.ChangeLister. A cursor is a log
//     entry's id and nonce ("1700000000000-5/9f3a…"). ListChanges of a
//     cursor the log holds is what was logged after it: one XRANGE of one
//     entry when nothing changed, whatever the size of the inventory, and
//     one XRANGE after one write. A longer read pages the log 100 entries
//     at a time, and every page starts at the entry the last one ended on
//     and checks its id and nonce: XTRIM drops the oldest entries first and
//     a new log never holds an old entry's nonce, so while that entry is
//     there nothing after it was lost, and a change lost between two pages
//     (a trim, DEL or Clear of the log, a failover, while a process reads
//     a backlog) is never skipped. The replay of a full read pages the same
//     way. When the log cannot say (the entry was trimmed away, the log was
//     replaced by Clear, a restart without persistence or a failover that
//     lost entries, before the read or between two of its pages, a seed
//     replaced every entry, an entry cannot be parsed, a cursor the store
//     never issued) it is a full read, and a line is logged (Info for a
//     position the log lost, Warn for what cannot be parsed; none for a
//     seed). Entry ids are times, which a new log can issue again for
//     other entries: the nonce tells them apart.
//   - A full read of a store with no log (new, cleared, or restarted
//     without persistence) writes a mark entry to start from, so it needs
//     the master, like a write.
//   - Put of up to 250 items is one MULTI/EXEC: atomic and idempotent.
//     A larger Put is atomic per chunk of 250 items, written in order.
//     Delete is one MULTI/EXEC. PutIfEmpty seeds only a store with no
//     entry, atomically, all or nothing, so that replicas starting
//     together seed once and a restart never overwrites real stock.
//   - A connection cut under a call (CLIENT KILL after a password
//     rotation, a managed Redis's maintenance, a restart, the network)
//     costs no list an answer: a list's read (a full read, or the XRANGE
//     of a cursor) whose connection broke runs once more, on another
//     connection (cut.go). An update cut before its EXEC was sent wrote
//     nothing and runs again, up to three times (a CLIENT KILL of every
//     client also cuts the idle connections a retry may be handed); cut
//     with its EXEC in flight, its outcome
//     is unknown and it fails as unavailable (503), which a client may
//     retry. go-redis's warnings about such connections are counted as one
//     (GoRedisLogger).
//   - Every call honours its context: a done context fails before anything
//     is sent, and with ContextTimeoutEnabled (set by ApplyTimeouts) the
//     deadline bounds every socket read and write.
//
// # Readiness
//
// Ping says Redis answers; Ready says the store can serve, for /readyz: it
// sends every command the store sends, on its own keys and on
// probe keys under the same hash tag that it deletes in the same
// transaction, so lists see nothing of it. So a Cluster node that does
// not own the store's slot reached as a single node (MOVED), a sentinel's
// port (unknown command), a read-only replica (READONLY), a Sentinel or
// Cluster with no master, and an ACL user that may not run one of the
// commands are not ready; nor is a Redis whose maxmemory-policy is
// allkeys-* (it would evict the inventory), unless WithEvictionAllowed.
//
// # Initialization
//
// A store is initialized once, explicitly: Initialize (or PutIfEmpty)
// writes the marker key {prefix}:initialized in the transaction that
// writes the seed. With WithRequireInitialized a store without its marker
// is not served: never initialized (FaultNotInitialized), or lost under
// the process (FaultVanished: a restart without persistence, FLUSHALL, a
// failover to an emptied replica, the marker deleted). Every call that
// finds it missing (Ready, a list, an update; the check rides in the
// pipeline each sends anyway) fails with an *InitFault matching
// ErrNotInitialized and inventory.ErrUnavailable, whose Fix the client
// reads; the store logs it once at Error and reports it in Uninitialized
// until a call finds the marker again. It is not a configuration fault:
// no setting fixes it, a restore or an initialization does, so it neither
// matches ErrMisconfigured nor counts in Stats.ConfigFaults.
//
// # Configuration faults
//
// A fault that retrying does not fix and an operator must is a
// configuration fault. Every call fails with an error that matches both
// inventory.ErrUnavailable (the API answers 503 with Retry-After, never
// 500, never a made-up "not found" or empty list) and ErrMisconfigured,
// and holds a *ConfigFault (errors.As): its Kind, the Command an ACL
// refused, the File at fault, the Option of this package that fixes it
// and the Fix, a sentence that names that Go API. The store logs it once
// at Error through WithLogger's logger, with the attributes "fault",
// "option", "file" and "command", so that an application that names its
// own settings (an environment variable, a flag) can add them from
// "option"; it counts the failed calls in Stats.ConfigFaults while it
// persists, and logs at Info once it clears (the next successful call;
// for a fault Ready met, such as the eviction policy or a command only
// Ready and lists send, the next successful Ready). The faults, by kind,
// with their Option:
//
//   - tls-verify (Config.LoadTLSFiles): the server's certificate is not
//     trusted; give its CA.
//   - tls-client-certificate (Config.LoadTLSFiles): the server requires
//     a client certificate (mutual TLS) and got none it trusts; give it
//     and its key.
//   - plain-to-tls-port, tls-to-plain-port (URL): redis:// spoken to a
//     TLS port (use rediss://), or rediss:// to a plain one (use
//     redis://); told by asking the port in the other protocol, at most
//     every 5 s.
//   - credentials (URL, or Config.UsePasswordFile when the client reads
//     one): WRONGPASS or NOAUTH. In the Sentinel form the URL's user and
//     password are the sentinels', the username= and password=
//     parameters (or the password file) the master's; the fix says which
//     side refused.
//   - acl (on the Redis side): NOPERM; the fix names the command and the
//     rule that grants it (+xadd), or the key pattern (~{prefix}:*), and
//     the whole ACLRule.
//   - master-name (URL): the sentinels know no master of the name given.
//   - cluster-node-as-single, not-a-cluster, sentinel-port (URL): the URL
//     names another topology than the server's.
//   - eviction-policy (WithEvictionAllowed): maxmemory-policy allkeys-*
//     (Ready only).
//   - maxmemory (on the Redis side): OOM command not allowed; raise
//     maxmemory or free memory.
//   - password-file (Config.UsePasswordFile): the file is missing or
//     empty when a new connection reads it (a rotation that left it so).
//
// Give New the Config that built the client (WithClientConfig): the
// store then knows what the client does not tell, the Sentinel master's
// name and the password file, and its fixes name them.
//
// go-redis logs on its own too (process-wide, redis.SetLogger):
// NewGoRedisLogger sends its lines to an slog.Logger, its routine
// Sentinel events at Info, a failure it repeats once a minute.
//
// # ACL
//
// The store needs its commands on the keys {prefix}:* and no Pub/Sub
// channel; go-redis's Cluster client also sends CLUSTER SLOTS (the slot
// map) and COMMAND (whose reply it caches to route commands, and asks
// again for every command while refused). ACLRule(prefix) is that least
// rule, one for a single node, a Cluster and Sentinel alike; for the
// default prefix:
//
//	ACL SETUSER app on >PASSWORD resetkeys resetchannels -@all ~{inventory}:* +ping +info +watch +unwatch +multi +exec +exists +hget +hset +hdel +hlen +hscan +mset +del +unlink +expire +persist +rename +xadd +xrange +xrevrange +wait +cluster|slots +command
//
// Clear also needs +scan. A password that rotates can be read from a file
// for every new connection (Config.UsePasswordFile): after ACL SETUSER
// with the new password and the file updated, close the old connections
// (CLIENT KILL USER app) and the same Store writes again.
//
// # Files
//
// The package is one: the fault diagnosis reads the store's state and
// the client's configuration, and a package boundary between them would
// export what no user needs. Its files keep the three jobs apart:
//
//   - the store: store.go (New, options, SetQuantity, Put, Delete, Ready),
//     changes.go (the change log, List, ListChanges), seed.go
//     (PutIfEmpty), marker.go (the initialization marker: Initialize,
//     InitFault), clear.go;
//   - client set-up: url.go (ParseURL, Config), timeouts.go
//     (ApplyTimeouts), tls.go (LoadTLSFiles, UsePasswordFile), acl.go
//     (ACLRule), log.go (GoRedisLogger), client.go (what the store knows
//     of its client: WithClientConfig);
//   - fault diagnosis: errors.go (translation of go-redis's errors,
//     unavailable), fault.go (ConfigFault, the table of faults classify
//     reads, logging a fault once), probe.go (asking a port which
//     protocol it speaks).
//
// # Failover
//
// On a ClusterClient, after a connection error, a timeout, CLUSTERDOWN,
// TRYAGAIN, MOVED, ASK or READONLY, the store asks go-redis to reload the
// slot map (ClusterClient.ReloadState), at most once every 250 ms however
// many calls fail. go-redis alone reloads it only every minute or on a
// MOVED, and meanwhile keeps redialling a master that was killed, which
// would make a Cluster's failover cost a minute of failed writes instead of
// seconds. Meanwhile calls fail with inventory.ErrUnavailable (503 with
// Retry-After), never an unknown error (500) and never a stale answer: the
// store reads and writes masters only (ParseURL refuses read_only and the
// other replica-routing parameters).
//
// With Sentinel (redis.NewFailoverClient) go-redis does what is needed on
// its own: it subscribes to the sentinels' +switch-master, closes its
// connections to any other address when the master changes, and asks the
// sentinels for the master's address on every new connection, so once the
// sentinels promote a replica the next connection reaches it. The store
// adds nothing there beyond answering 503 until then.
//
// # Replica acknowledgements
//
// Redis acknowledges a write once it is in its memory. Whether it survives
// a Redis restart depends on the server's persistence (RDB/AOF) settings,
// and a failover to a replica may lose the last writes acknowledged by the
// old primary: see the Redis documentation on persistence and replication.
// WithReplicaAcks(n, timeout) makes every write wait, after its EXEC and on
// the same connection, for Redis's WAIT n timeout; a write that fewer
// replicas acknowledged in time is answered 503 (it may be applied, and
// retrying it is safe), and so is one whose WAIT the master refuses
// because it was demoted to a replica meanwhile (a graceful failover, a
// healed split brain): its outcome is unknown. A write answered with success is then in the
// memory of the master and of n replicas, which is what a failover keeps
// when the replica promoted is one of them: see WithReplicaAcks for what
// it does and does not promise. Lists too show only a state n replicas
// hold: a read that found something new runs WAIT on the one connection
// it read on (a WAIT covers what its connection last saw; on a fresh
// connection it would answer at once), and a state not held in time is
// not returned but unavailable. A read that finds nothing new runs none.
//
// # Errors
//
// Errors from go-redis are translated in one place. A pet with no entry
// is inventory.ErrNotFound. A deadline or cancellation, a failed dial, a
// refused, reset or closed connection, a pool timeout, and the replies
// LOADING, READONLY, MASTERDOWN, CLUSTERDOWN, TRYAGAIN and max-clients are
// an error with code unavailable (inventory.Unavailable) wrapping the
// cause: the API answers 503 with Retry-After and logs a warning. So are
// an update whose retries ran out, a write that fewer replicas
// acknowledged than WithReplicaAcks asks, a transaction that a replica
// refused (READONLY), and every configuration fault (authentication, ACL,
// TLS, out of memory, a topology that does not fit: see Configuration
// faults). Anything else (corrupt data, a bug) is answered 500 and logged
// as an error.
//
// # Timeouts
//
// go-redis's defaults have changed between minor versions, so ParseURL
// (and ApplyTimeouts, for options you build yourself, of any topology)
// set them explicitly (see ApplyTimeouts): DialTimeout 2 s
// (2 attempts, 100 ms apart), ReadTimeout and WriteTimeout 2 s, PoolTimeout
// 2 s, go-redis's own retries of a failed command 2 (backoff 8–256 ms), and
// ContextTimeoutEnabled. A request's store deadline (inventory's
// WithStoreTimeout) is usually the tighter bound: a stopped Redis is
// answered 503 within it.
package redisstore
