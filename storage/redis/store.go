package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// DefaultKeyPrefix is the key prefix used unless WithKeyPrefix says
// otherwise.
const DefaultKeyPrefix = "inventory"

// defaultMaxRetries is WithMaxRetries's default.
const defaultMaxRetries = 10

// Store is an inventory.Store kept in Redis, shared by every process that
// uses the same Redis and key prefix. It is safe for concurrent use. Build
// it with New.
//
// Its fields come in four groups: settings, fixed by New; state, what the
// store learns from Redis while it runs; counters, for Stats; and hooks,
// which only tests set.
type Store struct {
	settings
	state
	counters
	hooks testHooks
}

// settings are a Store's fields that New sets and nothing changes after
// (the sizes aside, which tests make small before the first call).
type settings struct {
	client  redis.UniversalClient
	cluster *redis.ClusterClient // client, when it is a ClusterClient
	info    clientInfo           // the client's configuration, for the fixes logged
	keys
	sizes

	prefix      string
	maxRetries  int                              // WithMaxRetries
	acks        int                              // WithReplicaAcks: replicas to wait for after a write
	ackTimeout  time.Duration                    // and how long
	log         *slog.Logger                     // WithLogger
	evictOK     bool                             // WithEvictionAllowed
	requireInit bool                             // WithRequireInitialized
	names       func(option, kind string) string // WithSettingNames; nil: the Go API's own names
}

// keys are the Redis keys of a Store, all under its prefix's hash tag.
type keys struct {
	itemsKey  string // HASH petId → "quantity:status"; a field exists iff the entry does
	logKey    string // STREAM: the change log, one entry per write (see changes.go)
	guardBase string // guardBase + petId: STRING written by Put and Delete only
	seedBase  string // seedBase + random: HASH, PutIfEmpty's staging copy of the items
	routeKey  string // never written: WATCHed to hold one connection for EXEC and WAIT
	markerKey string // STRING: the store was initialized (marker.go)
}

// sizes are the bounds of a Store's bounded steps (see New for the
// defaults); tests make them small to exercise chunking on a few thousand
// pets.
type sizes struct {
	scanCount int   // HSCAN COUNT of a full read
	logPage   int64 // entries per XRANGE page
	putChunk  int   // items per transaction of Put and per staging write of PutIfEmpty
	logCap    int   // item records the change log keeps, about (XADD MAXLEN ~)
}

// state is what a Store learns from Redis while it runs, shared by its
// calls.
type state struct {
	seenMarker  atomic.Bool                 // a call saw the marker (marker.go): its loss is a vanished store
	activeFault atomic.Pointer[activeFault] // the configuration fault in force, if any (fault.go)
	initFault   atomic.Pointer[initState]   // the initialization fault in force, if any (marker.go)
	probe       portProbe                   // the last probe of a port's protocol (probe.go)
	lastReload  atomic.Int64                // unix nanoseconds of the last ReloadState
}

// counters are what Stats reports, counted since New.
type counters struct {
	aborts        atomic.Uint64 // Stats.WatchAborts
	exhausted     atomic.Uint64 // Stats.RetriesExhausted
	reloads       atomic.Uint64 // Stats.ClusterReloads
	ackShortfalls atomic.Uint64 // Stats.AckShortfalls
	configFaults  atomic.Uint64 // Stats.ConfigFaults
	cutRetries    atomic.Uint64 // Stats.CutRetries: calls run again because their connection was cut (cut.go)
	cutAfterExec  atomic.Uint64 // Stats.CutAfterExec: updates cut with their EXEC in flight
}

// testHooks are a Store's points where a test acts in the middle of a
// call; each is nil outside tests.
type testHooks struct {
	// beforeExec runs inside the optimistic transactions of SetQuantity
	// and PutIfEmpty (op names which), after the read under WATCH and
	// before MULTI/EXEC, so that a test can change the entries right there.
	beforeExec func(op string)
	// afterScan runs after each HSCAN chunk of a full read (chunk counts
	// from 1), so that a test can write, trim the log or stop Redis right
	// there.
	afterScan func(chunk int)
	// afterStage runs after each staging write of PutIfEmpty (chunk counts
	// from 1).
	afterStage func(chunk int, staging string)
}

var (
	_ inventory.Store        = (*Store)(nil)
	_ inventory.ChangeLister = (*Store)(nil)
	_ inventory.Seeder       = (*Store)(nil)
)

// Option configures a Store built by New.
type Option func(*config)

type config struct {
	prefix     string
	maxRetries int
	acks       int
	ackTimeout time.Duration
	log        *slog.Logger
	evictOK    bool
	clientCfg  *Config // WithClientConfig

	init  bool                             // WithRequireInitialized
	names func(option, kind string) string // WithSettingNames
}

// WithKeyPrefix sets the prefix of every key the store uses; default
// DefaultKeyPrefix ("inventory"). The prefix is the key's Redis Cluster
// hash tag ({prefix}:…), so all of one inventory's keys live in one slot
// and its transactions work on Cluster. Several inventories can share one
// Redis under different prefixes. A prefix is 1 to 100 characters among
// ASCII letters, digits and . _ : / -.
func WithKeyPrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// WithMaxRetries sets how many times SetQuantity retries its optimistic
// transaction when a concurrent Put or Delete of the same pet aborted it;
// default 10; 0 means a single attempt. Between attempts it pauses 1 ms
// doubling to at most 64 ms, jittered, so the retries of one call sleep at
// most about a third of a second in all. Updates of the
// same pet never abort each other, only Put and Delete do, so retries are
// rare. When they run out, SetQuantity fails with an error matching
// inventory.ErrUnavailable, which the API answers 503 with Retry-After.
func WithMaxRetries(n int) Option {
	return func(c *config) { c.maxRetries = n }
}

// WithReplicaAcks makes every write (SetQuantity, Put, PutIfEmpty,
// Delete) wait, after its EXEC and on the same connection, until n
// replicas acknowledge it or timeout passes: Redis's WAIT n timeout. When
// fewer than n acknowledge in time, the call fails with an error matching
// inventory.ErrUnavailable (the API answers 503): the write is applied on
// the master but not promised; retrying the same write is safe (a set is
// idempotent; a retried Delete answers not found).
//
// What it promises: a write answered with success is in the memory of the
// master and of at least n replicas. Replication stays asynchronous, so
// what it does not promise: the write survives only if the replica that
// takes over is one of those n (with n equal to the number of replicas,
// any of them is; Sentinel promotes the replica with the best priority
// and then the largest replication offset, so it picks one that has the
// write unless its priority says otherwise); it does not wait for disk
// (WAITAOF does); and a write that failed with 503 may still be there.
// Lists too: with n > 0, List and ListChanges return only a state that n
// replicas hold, so that a failover to one of them never takes back what a
// list showed (see confirm.go); a read that found something new WAITs on
// the connection that read it, and fails with an error matching
// inventory.ErrUnavailable when fewer than n acknowledge in time. A log
// read that finds nothing new waits for nothing.
//
// The cost is one more round trip and the replicas' replication delay on
// every write, and on every list that finds a change. n is 0 (off, the
// default) to 16; timeout is 1 ms or more (WAIT's resolution) and should
// stay below the API's store timeout.
func WithReplicaAcks(n int, timeout time.Duration) Option {
	return func(c *config) { c.acks, c.ackTimeout = n, timeout }
}

// WithLogger sets where the store logs what an operator must fix: each
// configuration fault once at Error with its fix, and at Info when it
// clears (see ErrMisconfigured). Default slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.log = l }
}

// WithEvictionAllowed makes Ready accept a Redis whose maxmemory-policy
// is allkeys-* (allkeys-lru, allkeys-lfu, allkeys-random), which evicts
// the store's keys under memory pressure and so loses inventory silently.
// Without it such a Redis is not ready (a configuration fault). Give it
// only when the inventory can be rebuilt, for example a cache of another
// system.
func WithEvictionAllowed() Option {
	return func(c *config) { c.evictOK = true }
}

// WithClientConfig tells New the Config that built the client
// (Config.NewClient), so that a configuration fault names what only the
// Config knows: the Sentinel master's name, the file given to
// Config.UsePasswordFile, the addresses to probe when a port speaks
// another protocol. New fails when the client is not of the Config's
// topology. Without it (or with nil) the store learns what the client
// tells, and the fixes it logs are less precise.
func WithClientConfig(cfg *Config) Option {
	return func(c *config) { c.clientCfg = cfg }
}

// New returns a Store over client. It does not talk to Redis, so it
// succeeds while Redis is down (use Ready for readiness); it fails on a nil
// client or an invalid option. The Store does not own client: close the
// client when done with the store.
func New(client redis.UniversalClient, opts ...Option) (*Store, error) {
	if isNilClient(client) {
		return nil, errors.New("redisstore: New: client is nil")
	}
	c := config{prefix: DefaultKeyPrefix, maxRetries: defaultMaxRetries}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("redisstore: New: option %d is nil", i+1)
		}
		o(&c)
	}
	if err := validPrefix(c.prefix); err != nil {
		return nil, fmt.Errorf("redisstore: New: WithKeyPrefix: %w", err)
	}
	if c.maxRetries < 0 || c.maxRetries > 1000 {
		return nil, fmt.Errorf("redisstore: New: WithMaxRetries(%d): must be between 0 and 1000", c.maxRetries)
	}
	if c.acks < 0 || c.acks > 16 {
		return nil, fmt.Errorf("redisstore: New: WithReplicaAcks(%d, …): the number of replicas must be between 0 and 16", c.acks)
	}
	if c.acks > 0 && c.ackTimeout < time.Millisecond {
		return nil, fmt.Errorf("redisstore: New: WithReplicaAcks(%d, %v): the timeout must be 1ms or more (0 would make WAIT block forever)", c.acks, c.ackTimeout)
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	info := infoOf(client)
	if c.clientCfg != nil {
		if err := c.clientCfg.fits(client); err != nil {
			return nil, fmt.Errorf("redisstore: New: WithClientConfig: %w", err)
		}
		info = c.clientCfg.info()
	}
	tag := "{" + c.prefix + "}:"
	s := &Store{settings: settings{
		client: client,
		info:   info,
		keys: keys{
			itemsKey:  tag + "items",
			logKey:    tag + "log",
			guardBase: tag + "guard:",
			seedBase:  tag + "seed:",
			routeKey:  tag + "tx",
			markerKey: tag + markerSuffix,
		},
		sizes: sizes{
			scanCount: defaultScanCount,
			logPage:   defaultLogPage,
			putChunk:  defaultPutChunk,
			logCap:    defaultLogCap,
		},
		prefix:      c.prefix,
		maxRetries:  c.maxRetries,
		acks:        c.acks,
		ackTimeout:  c.ackTimeout,
		log:         c.log,
		evictOK:     c.evictOK,
		requireInit: c.init,
		names:       c.names,
	}}
	s.cluster, _ = client.(*redis.ClusterClient)
	return s, nil
}

func isNilClient(c redis.UniversalClient) bool {
	switch v := c.(type) {
	case nil:
		return true
	case *redis.Client:
		return v == nil
	case *redis.ClusterClient:
		return v == nil
	case *redis.Ring:
		return v == nil
	}
	return false
}

func validPrefix(p string) error {
	if p == "" || len(p) > 100 {
		return fmt.Errorf("prefix %q must be 1 to 100 characters long", p)
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '.' || c == '_' || c == ':' || c == '/' || c == '-'
		if !ok {
			return fmt.Errorf("prefix %q has %q at byte %d; use ASCII letters, digits and . _ : / - only", p, c, i)
		}
	}
	return nil
}

// KeyPrefix returns the prefix WithKeyPrefix set (DefaultKeyPrefix by
// default), without braces: every key of the store starts with
// "{" + KeyPrefix() + "}:", the prefix as a Redis Cluster hash tag.
func (s *Store) KeyPrefix() string { return s.prefix }

// Stats counts, since New, how the store's optimistic transactions and
// replica acknowledgements went and the configuration faults it met, for
// metrics.
type Stats struct {
	// WatchAborts counts transactions whose EXEC Redis refused because
	// the pet's entry was put or deleted between WATCH and EXEC; each was
	// retried or counted in RetriesExhausted. Updates never abort each
	// other, so under update traffic alone it stays 0.
	WatchAborts uint64
	// RetriesExhausted counts SetQuantity calls that gave up after
	// WithMaxRetries retries and failed with inventory.ErrUnavailable.
	RetriesExhausted uint64
	// ClusterReloads counts the times the store asked a ClusterClient to
	// reload its slot map after an error (see Store's doc: failover).
	ClusterReloads uint64
	// AckShortfalls counts writes, and list reads, that fewer replicas
	// acknowledged than WithReplicaAcks asked for, each answered with
	// ErrUnavailable.
	AckShortfalls uint64
	// ConfigFaults counts the calls (Ready included) that failed with a
	// configuration fault (an error matching ErrMisconfigured): each
	// fault is logged once, so this is how to see that it persists. A
	// store without its marker (an InitFault) is not one: Uninitialized
	// says it.
	ConfigFaults uint64
	// CutRetries counts the calls run once more because their connection
	// was cut under them (a CLIENT KILL, a restart, the network): list
	// reads, and updates cut before their EXEC was sent.
	CutRetries uint64
	// CutAfterExec counts the updates whose connection was cut with their
	// EXEC in flight: their outcome is unknown, and each was answered
	// with ErrUnavailable (503).
	CutAfterExec uint64
}

// Stats returns the counters since New.
func (s *Store) Stats() Stats {
	return Stats{WatchAborts: s.aborts.Load(), RetriesExhausted: s.exhausted.Load(),
		ClusterReloads: s.reloads.Load(), AckShortfalls: s.ackShortfalls.Load(),
		ConfigFaults: s.configFaults.Load(), CutRetries: s.cutRetries.Load(), CutAfterExec: s.cutAfterExec.Load()}
}

// reloadInterval is the shortest time between two slot-map reloads the
// store asks of a ClusterClient: a storm of failing calls during a
// failover is one reload per interval, not one per call.
const reloadInterval = 250 * time.Millisecond

// fail translates err (see translate) after reacting to it: on a
// ClusterClient, an error that says the slot map may be out of date asks
// for a reload (at most once per reloadInterval), since go-redis alone
// reloads it only every minute or on MOVED, and keeps redialling a dead
// master meanwhile; MOVED and ASK on a ClusterClient (a slot moving, or
// redirects exhausted) are unavailable for now. A configuration fault
// (see classify) is recorded (logged once) and is unavailable, matching
// ErrMisconfigured too. A nil err is a success, which ends a fault in
// force.
func (s *Store) fail(op string, err error) error {
	if err == nil {
		s.cleared(op == "ready")
		return nil
	}
	if s.cluster != nil && reloadAfter(err) {
		s.reloadClusterState()
	}
	if f := s.classify(err); f != nil {
		if f.Kind == faultMasterName {
			// go-redis says "all sentinels … are unreachable: redis: nil"
			// when a sentinel answered that it knows no such master.
			f.Err = &restated{msg: "the sentinels that answered know no master of that name", err: err}
		}
		f.Op = op
		s.fault(f, op == "ready")
		return inventory.Unavailable(f)
	}
	if s.cluster != nil && !unavailable(err) && reloadAfter(err) {
		return inventory.Unavailable(fmt.Errorf("redis %s: the Cluster moved the store's slot: %w", op, err))
	}
	return translate(op, err)
}

// restated is an error of go-redis's told in words that do not mislead;
// it still matches what it wraps.
type restated struct {
	msg string
	err error
}

func (e *restated) Error() string { return e.msg }
func (e *restated) Unwrap() error { return e.err }

func (s *Store) reloadClusterState() {
	now := time.Now().UnixNano()
	last := s.lastReload.Load()
	if now-last < int64(reloadInterval) || !s.lastReload.CompareAndSwap(last, now) {
		return
	}
	s.reloads.Add(1)
	s.cluster.ReloadState(context.Background())
}

// Ping checks that Redis answers PING. That is not readiness: a replica,
// a sentinel or a Cluster node that does not own the store's keys answer
// it too; Ready checks that the store can serve. Its error is
// translated like every other (an unreachable Redis matches
// inventory.ErrUnavailable).
func (s *Store) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return translate("ping", err)
	}
	return s.fail("ping", s.client.Ping(ctx).Err())
}

// Ready reports whether the store can serve requests, for a readiness
// probe. Unlike Ping, it sends every command the store sends (see
// ACLRule), on the store's own keys or on probe keys under the same hash
// tag ({prefix}:probe:…, deleted in the same transaction): WATCH, then
// one pipeline (EXISTS, UNWATCH, WAIT 0 0, INFO memory), then one
// MULTI/EXEC that writes nothing lists can see: a write that changes
// nothing to the items hash (HDEL of a field that never exists), reads of
// the items hash and the change log, and writes, reads and deletes of the
// probe keys (MSET, HSET, EXPIRE, RENAME, PERSIST, HGET, XADD, DEL,
// UNLINK). So a server that answers PING
// but cannot serve is not ready: a Cluster node that does not own the
// store's slot reached as a single node (MOVED), a sentinel's port
// (unknown command), a read-only replica (READONLY), a Sentinel or
// Cluster without a master, an ACL user that may not run one of the
// commands (NOPERM, naming it), wrong credentials or TLS settings. A Redis
// whose maxmemory-policy is allkeys-* is not ready either, unless
// WithEvictionAllowed says so; with WithRequireInitialized, a store
// without its initialization marker is not ready either
// (ErrNotInitialized). Its errors are translated like every other;
// configuration faults match ErrMisconfigured, and are logged once with
// their fix.
func (s *Store) Ready(ctx context.Context) error {
	const op = "ready"
	if err := ctx.Err(); err != nil {
		return translate(op, err)
	}
	probe := "{" + s.prefix + "}:probe:" + newNonce()
	var info *redis.StringCmd
	var marker *redis.IntCmd // with WithRequireInitialized
	err := s.watch(ctx, func(tx *redis.Tx) error {
		var exists, unwatch, wait redis.Cmder
		_, _ = tx.Pipelined(ctx, func(p redis.Pipeliner) error {
			exists = p.Exists(ctx, s.itemsKey)
			marker = s.queueMarker(ctx, p)
			unwatch = p.Do(ctx, "unwatch")
			wait = p.Do(ctx, "wait", 0, 0) // no replica to wait for: answers at once
			info = p.Info(ctx, "memory")
			return nil
		})
		for _, c := range []redis.Cmder{exists, unwatch} {
			if err := c.Err(); err != nil {
				return err
			}
		}
		err := txPipelined(ctx, tx, func(p redis.Pipeliner) error {
			p.Ping(ctx)
			p.HDel(ctx, s.itemsKey, "") // a write: refused by a read-only replica
			p.HLen(ctx, s.itemsKey)
			p.HScan(ctx, s.itemsKey, 0, "", 1)
			p.XRangeN(ctx, s.logKey, "-", "+", 1)
			p.XRevRangeN(ctx, s.logKey, "+", "-", 1)
			p.MSet(ctx, probe+":guard", "1")
			p.HSet(ctx, probe+":staging", "0", "0:sold")
			p.Expire(ctx, probe+":staging", seedTTL)
			p.Rename(ctx, probe+":staging", probe+":items")
			p.Persist(ctx, probe+":items")
			p.HGet(ctx, probe+":items", "0")
			p.XAdd(ctx, &redis.XAddArgs{Stream: probe + ":log", MaxLen: 1, Approx: true, Values: []any{"probe", "1"}})
			p.Del(ctx, probe+":guard", probe+":items")
			p.Unlink(ctx, probe+":log")
			return nil
		})
		if err != nil {
			return err // before WAIT's error: a replica refuses WAIT, but READONLY says why
		}
		if err := wait.Err(); err != nil {
			return err
		}
		if err := info.Err(); err != nil && (!isReply(err) || isNoPerm(err)) {
			return err // a server without INFO memory (a test double) says nothing of eviction
		}
		return nil
	}, s.logKey)
	if err == nil && !s.evictOK {
		if policy := infoField(info.Val(), "maxmemory_policy"); strings.HasPrefix(policy, "allkeys-") {
			err = &evictionFault{policy: policy}
		}
	}
	if err == nil {
		err = s.checkMarker(op, marker)
	}
	return s.fail(op, err)
}

// infoField returns the value of field in an INFO reply ("" if absent).
func infoField(info, field string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func field(petID int64) string { return strconv.FormatInt(petID, 10) }

// maxCutRetries bounds how many times an update runs again when its
// connection was cut before its EXEC was sent. More than once: a CLIENT
// KILL of every client cuts the pool's idle connections too, and the
// retry may be handed one of them before go-redis has noticed; each
// attempt drops the connection it found cut, so a few suffice.
const maxCutRetries = 3

// SetQuantity replaces one pet's quantity with an optimistic transaction
// in two round trips: WATCH of the pet's guard key (written only by Put
// and Delete) and HGET of its entry in one pipeline on the transaction's
// connection, then MULTI, HSET of the entry with the new quantity and the
// status read, XADD of the change to the log, EXEC (and WAIT, with
// WithReplicaAcks). EXEC succeeding proves the entry existed with that
// status when the quantity was written, so the item returned is the one
// stored by this write. A pet with no entry returns inventory.ErrNotFound
// and writes nothing.
//
// Updates never touch what they WATCH, so concurrent updates of one pet do
// not abort each other; only a Put or Delete of the same pet in between
// does, and the transaction is retried (see WithMaxRetries).
//
// When the transaction's connection is cut under it (connectionCut: a
// CLIENT KILL, a restart, the network) before EXEC was sent, nothing was
// written and the update runs once more, on another connection. Once
// EXEC was sent, the outcome is unknown: it fails as unavailable, as any
// lost connection does, and the client may retry (a set is idempotent).
func (s *Store) SetQuantity(ctx context.Context, petID int64, quantity int) (inventory.Item, error) {
	const op = "set quantity"
	if err := ctx.Err(); err != nil {
		return inventory.Item{}, translate(op, err)
	}
	it := inventory.Item{PetID: petID, Quantity: quantity}
	guard := s.guardBase + field(petID)
	execSent := false // by the attempt under way
	attempt := func() error {
		execSent = false
		return s.pinned(ctx, func(c pinnedConn) (err error) {
			it.Status, err = s.update(ctx, c, guard, it, &execSent)
			return err
		})
	}
	cutRetries := 0
	for n := 0; ; n++ {
		err := attempt()
		if err == nil {
			return it, nil
		}
		if connectionCut(err) {
			if !execSent && cutRetries < maxCutRetries {
				cutRetries++
				s.cutRetries.Add(1)
				n-- // not an abort: WithMaxRetries counts those
				continue
			}
			if execSent {
				s.cutAfterExec.Add(1)
			}
		}
		if !errors.Is(err, redis.TxFailedErr) {
			return inventory.Item{}, s.fail(op, err)
		}
		s.aborts.Add(1)
		if n == s.maxRetries {
			s.exhausted.Add(1)
			return inventory.Item{}, inventory.Unavailable(fmt.Errorf(
				"redis: the update of pet %d was aborted %d times by concurrent changes of its entry; retry later: %w",
				petID, n+1, err))
		}
		if err := sleep(ctx, backoff(n)); err != nil {
			return inventory.Item{}, translate(op, err)
		}
	}
}

// txClient returns the client on whose connection a transaction over key
// sends WATCH itself, in one pipeline with its first read: the Client, or
// the ClusterClient's master of key's slot. It returns nil for another
// kind of client (a Ring), whose transaction WATCHes through Watch.
func (s *Store) txClient(ctx context.Context, key string) (*redis.Client, error) {
	switch c := s.client.(type) {
	case *redis.Client:
		return c, nil
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, key)
	}
	return nil, nil
}

// update is one attempt of SetQuantity on c, a pinned connection: it
// writes it.Quantity to it.PetID's entry, keeping the entry's status,
// which it returns. It sends WATCH guard in one pipeline with its read of
// the entry. It sets *execSent before it sends MULTI/EXEC: from then on, a
// failure leaves the outcome unknown.
func (s *Store) update(ctx context.Context, c pinnedConn, guard string, it inventory.Item, execSent *bool) (inventory.Status, error) {
	const op = "set quantity"
	f := field(it.PetID)
	var raw *redis.StringCmd
	var marker *redis.IntCmd // with WithRequireInitialized
	executed := false
	w := redis.NewStatusCmd(ctx, "watch", guard)
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		_ = p.Process(ctx, w)
		raw = p.HGet(ctx, s.itemsKey, f)
		marker = s.queueMarker(ctx, p)
		return nil
	})
	if werr := w.Err(); werr != nil {
		return "", werr
	}
	if err != nil && err != raw.Err() {
		return "", err // no connection: the commands were never sent
	}
	// This WATCH is released by EXEC, or by UNWATCH on every way out
	// without it, so that no WATCH stays on a pooled connection (go-redis
	// releases only the WATCH of a Tx's own keys when it closes).
	defer func() {
		if !executed {
			_ = c.Do(context.WithoutCancel(ctx), "unwatch").Err()
		}
	}()
	// A store without its marker has no entry to update, or none to trust:
	// never a not found for a pet a wiped store held.
	if err := s.checkMarker(op, marker); err != nil {
		return "", err
	}
	v, err := raw.Result()
	if err != nil {
		return "", err // redis.Nil: no entry, translated to not found
	}
	if _, it.Status, err = s.parseValue(f, v); err != nil {
		return "", err
	}
	if s.hooks.beforeExec != nil {
		s.hooks.beforeExec(op)
	}
	// The status cannot change between the HGET and EXEC without aborting
	// EXEC: only Put and Delete change it, and they write the guard. The
	// transaction holds only HSET and XADD, which never reply nil: so
	// TxPipelined's habit of returning redis.Nil for a nil reply even when
	// EXEC committed cannot turn a success into a not found here.
	*execSent = true
	err = txPipelined(ctx, c, func(p redis.Pipeliner) error {
		p.HSet(ctx, s.itemsKey, f, value(it.Quantity, it.Status))
		s.logSet(ctx, p, []inventory.Item{it})
		return nil
	})
	// EXEC ran, and released the WATCH, when it committed or aborted.
	executed = err == nil || errors.Is(err, redis.TxFailedErr)
	if err != nil {
		return "", err
	}
	return it.Status, s.waitAcks(ctx, c, op, ackWrite)
}

// watch runs fn in a WATCH transaction on the client, as Watch does, and
// fails with errRedirected when fn did not run to its end although Watch
// returned nil: go-redis's ClusterClient.Watch (v9.23) does that when a
// MOVED or ASK outlasts its redirects (max_redirects), which would make a
// write that never happened look like a success.
func (s *Store) watch(ctx context.Context, fn func(*redis.Tx) error, keys ...string) error {
	done := false
	err := s.client.Watch(ctx, func(tx *redis.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		done = true
		return nil
	}, keys...)
	if err == nil && !done {
		return errRedirected
	}
	return err
}

// txPipelined runs fn's commands in one MULTI/EXEC on c (a client or a
// Tx). When Redis refused a command while queueing it and so discarded
// the transaction (EXECABORT), the error is that command's (READONLY from
// a replica, MOVED, OOM, NOREPLICAS…), which says why and is translated by
// what it says; EXECABORT alone would be an unknown error.
func txPipelined(ctx context.Context, c interface {
	TxPipelined(context.Context, func(redis.Pipeliner) error) ([]redis.Cmder, error)
}, fn func(redis.Pipeliner) error) error {
	cmds, err := c.TxPipelined(ctx, fn)
	if !isExecAbort(err) {
		return err
	}
	for _, cmd := range cmds {
		if e := cmd.Err(); e != nil && !isExecAbort(e) {
			return e
		}
	}
	return err
}

// backoff is the pause before retry attempt+1: 1 ms doubling up to 64 ms,
// with full jitter over its upper half so that aborted writers do not
// retry in lockstep.
func backoff(attempt int) time.Duration {
	d := time.Millisecond << min(attempt, 6)
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// exec runs one MULTI/EXEC of queue: a single round trip without
// WithReplicaAcks; with it, on a pinned connection, then WAIT on that
// connection (waitAcks).
func (s *Store) exec(ctx context.Context, op string, queue func(p redis.Pipeliner) error) error {
	if s.acks == 0 {
		return txPipelined(ctx, s.client, queue)
	}
	for attempt := 0; ; attempt++ {
		err := s.pinned(ctx, func(c pinnedConn) error {
			if err := txPipelined(ctx, c, queue); err != nil {
				return err
			}
			return s.waitAcks(ctx, c, op, ackWrite)
		})
		// Only a FLUSHDB or FLUSHALL between WATCH (of a Ring's pinned
		// connection) and EXEC aborts it: nothing was written, so run it
		// again.
		if !errors.Is(err, redis.TxFailedErr) || attempt == s.maxRetries {
			return err
		}
	}
}

// Put creates or replaces entries, and is idempotent. Up to 250 items it
// is one MULTI/EXEC, atomic; more are written in
// transactions of 250 items each, in order: each chunk is atomic (a list
// shows all of it or none of it) but a list may show the first chunks
// without the later ones, and a failure may leave the first chunks
// written (retrying the same Put is safe). Chunks keep every command
// short, so that a large Put does not stall the other clients of Redis.
// Like every write, it trusts what inventory.Service checked (the
// inventory.Store contract): go through the Service, or check items with
// inventory.ValidateItems first.
func (s *Store) Put(ctx context.Context, items ...inventory.Item) error {
	const op = "put"
	if err := ctx.Err(); err != nil {
		return translate(op, err)
	}
	for chunk := range slices.Chunk(items, s.putChunk) {
		if err := s.exec(ctx, op, s.queuePut(ctx, chunk)); err != nil {
			return s.fail(op, err)
		}
	}
	s.cleared(false)
	return nil
}

// queuePut returns the MULTI body of one chunk of a Put: MSET of the
// guards, HSET of the entries, XADD of the change.
func (s *Store) queuePut(ctx context.Context, items []inventory.Item) func(p redis.Pipeliner) error {
	guards, entries := s.putArgs(items)
	return func(p redis.Pipeliner) error {
		// Writing the guard is what aborts a concurrent SetQuantity of
		// these pets, which read the old status under WATCH.
		p.MSet(ctx, guards...)
		p.HSet(ctx, s.itemsKey, entries...)
		s.logSet(ctx, p, items)
		return nil
	}
}

// putArgs returns the arguments of the MSET of items' guards and of the
// HSET of their entries.
func (s *Store) putArgs(items []inventory.Item) (guards, entries []any) {
	guards = make([]any, 0, 2*len(items))
	entries = make([]any, 0, 2*len(items))
	for _, it := range items {
		f := field(it.PetID)
		guards = append(guards, s.guardBase+f, "1")
		entries = append(entries, f, value(it.Quantity, it.Status))
	}
	return guards, entries
}

// Delete removes one entry (its field of the items hash and its guard) in
// one MULTI/EXEC that also logs the removal; inventory.ErrNotFound when
// there was none (the log then holds a removal of a pet that had no entry,
// which changes nothing for whoever applies it).
func (s *Store) Delete(ctx context.Context, petID int64) error {
	const op = "delete"
	if err := ctx.Err(); err != nil {
		return translate(op, err)
	}
	f := field(petID)
	var removed *redis.IntCmd
	err := s.exec(ctx, op, func(p redis.Pipeliner) error {
		p.Del(ctx, s.guardBase+f)
		removed = p.HDel(ctx, s.itemsKey, f)
		s.logAdd(ctx, p, 1, opDel, f)
		return nil
	})
	if err != nil {
		return s.fail(op, err)
	}
	s.cleared(false)
	if removed.Val() == 0 {
		return inventory.ErrNotFound
	}
	return nil
}

// value is the items hash's value for an entry: "quantity:status".
func value(quantity int, status inventory.Status) string {
	return strconv.Itoa(quantity) + ":" + string(status)
}

// parseValue reads a value of the items hash (field f names the pet, for
// the error). The status returned is one of inventory's constants, so it
// does not keep raw alive.
func (s *Store) parseValue(f, raw string) (int, inventory.Status, error) {
	q, st, ok := parseEntry(raw)
	if !ok {
		return 0, "", corrupt(s.itemsKey, f, raw,
			fmt.Sprintf(`an entry "quantity:status" (a quantity in 0..%d; available, pending or sold)`, inventory.MaxQuantity))
	}
	return q, st, nil
}

// parseEntry parses "quantity:status".
func parseEntry(raw string) (int, inventory.Status, bool) {
	qs, ss, ok := strings.Cut(raw, ":")
	if !ok {
		return 0, "", false
	}
	q, ok := parseQuantity(qs)
	if !ok {
		return 0, "", false
	}
	st, ok := parseStatus(ss)
	return q, st, ok
}

// parseQuantity parses a quantity in 0..MaxQuantity in canonical decimal.
func parseQuantity(raw string) (int, bool) {
	q, err := strconv.Atoi(raw)
	if err != nil || q < 0 || q > inventory.MaxQuantity || raw[0] == '+' || raw[0] == '-' || (len(raw) > 1 && raw[0] == '0') {
		return 0, false
	}
	return q, true
}

// parseStatus returns inventory's constant for raw.
func parseStatus(raw string) (inventory.Status, bool) {
	switch inventory.Status(raw) {
	case inventory.StatusAvailable:
		return inventory.StatusAvailable, true
	case inventory.StatusPending:
		return inventory.StatusPending, true
	case inventory.StatusSold:
		return inventory.StatusSold, true
	}
	return "", false
}

// parsePetID parses a pet id in canonical decimal (as field writes it).
func parsePetID(raw string) (int64, bool) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || field(id) != raw {
		return 0, false
	}
	return id, true
}

// errCorrupt is matched by the error for a value in Redis that the store
// never writes: someone changed the keys by hand, or another program shares
// the prefix. The API answers 500 and logs the message.
var errCorrupt = errors.New("redisstore: corrupt data")

// corrupt returns the errCorrupt error naming the key, field and value.
func corrupt(key, field, value, want string) error {
	return fmt.Errorf("%w: key %q field %q holds %q, which is not %s (change these keys only through the Store)", errCorrupt, key, field, truncate(value), want)
}

// truncate shortens a value quoted in an error message.
func truncate(value string) string {
	if len(value) > 40 {
		return value[:40] + "…"
	}
	return value
}
