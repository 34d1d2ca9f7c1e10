package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// The initialization marker. A store is initialized once, explicitly
// (Initialize, or a seed through PutIfEmpty): the marker key
// {prefix}:initialized is written in the transaction that makes the seed
// the store's entries, in the store's hash slot like every key of the
// store. Redis losing everything (a restart without persistence, FLUSHALL,
// a failover to an emptied replica) loses the marker too, which is how a
// store that vanished is told from one that is empty: with
// WithRequireInitialized the store then refuses to serve rather than list
// an empty inventory or answer not found for a pet it held.

// markerSuffix names the marker key after the store's hash tag.
const markerSuffix = "initialized"

// ErrNotInitialized matches (errors.Is) the error of a store made with
// WithRequireInitialized that finds no marker: never initialized, or
// wiped under the process (see the package doc, Initialization). Such an
// error holds an *InitFault (errors.As) and matches
// inventory.ErrUnavailable: the API answers 503, with a message that names
// the fault and its fix. It is not a configuration fault: it does not
// match ErrMisconfigured and is not counted in Stats.ConfigFaults, since
// no setting of the client fixes it, only the store's data does (a
// restore, or an initialization); an alert on configuration faults then
// stays silent while the one on the marker (Store.Uninitialized) fires.
var ErrNotInitialized = errors.New("redisstore: the store is not initialized")

// InitFault is the error of a store made with WithRequireInitialized that
// finds no marker: what is wrong and what fixes it. Every call that finds
// the marker missing returns an error from which errors.As gets it; it
// matches ErrNotInitialized. The store logs it once at Error (attributes
// "fault", the Kind, and "option", "Store.Initialize"), reports it in
// Uninitialized until a call finds the marker again, and logs at Info
// then.
type InitFault struct {
	// Kind is FaultNotInitialized or FaultVanished.
	Kind string
	// Op is the store's call that found the marker missing ("ready",
	// "list", "list changes", "set quantity").
	Op string
	// Fix says what is wrong and what fixes it, in one sentence that
	// names the Go API (Store.Initialize), or the application's words for
	// it (WithSettingNames). It holds no address nor credential: it is
	// what a client reads.
	Fix string
}

// Error is "redisstore: the store is not initialized: redis OP: FIX".
func (f *InitFault) Error() string {
	return fmt.Sprintf("%v: redis %s: %s", ErrNotInitialized, f.Op, f.Fix)
}

// Unwrap returns ErrNotInitialized, so that the fault matches it.
func (f *InitFault) Unwrap() error { return ErrNotInitialized }

// The kinds of InitFault: the values of InitFault.Kind, of Uninitialized,
// and of the "fault" attribute of the line logged.
const (
	// FaultNotInitialized: the store holds no marker, and this Store never
	// saw one: initialize it once (Initialize), or restore it.
	FaultNotInitialized = "not-initialized"
	// FaultVanished: the marker this Store saw is gone: Redis lost the
	// store under the process; restore it, or initialize it again.
	FaultVanished = "store-vanished"
)

// WithRequireInitialized makes the store serve only once initialized
// (Initialize, or PutIfEmpty): a list (a full read), an update and Ready
// fail with an error matching ErrNotInitialized (an *InitFault) when the
// marker key is missing, logged once with its fix. The check rides in
// the pipeline of the read it guards (no round trip of its own): a full
// read, the first page of a read of what changed since a state held, an
// update's read under WATCH, Ready's first pipeline. So a list and Ready
// agree: a store whose marker alone was deleted (its change log kept) is
// refused by the next list, not only by the next Ready, and once either
// found it missing both refuse it until a call finds it again. Without
// this option the store serves whatever Redis holds, as an empty store
// when it holds nothing.
func WithRequireInitialized() Option {
	return func(c *config) { c.init = true }
}

// WithSettingNames gives the store the words of the application's settings
// for its Go API: names is called with an option (the values of
// ConfigFault.Option: OptionURL, OptionTLSFiles, OptionPasswordFile,
// OptionEviction; and OptionInitialize, for an InitFault) and the fault's
// kind, and returns what the fault's fix calls it instead ("",
// to keep the Go API's name). A server whose operators set REDIS_URL rather
// than call ParseURL words its faults in those names this way.
func WithSettingNames(names func(option, kind string) string) Option {
	return func(c *config) { c.names = names }
}

// name is what a fix of kind calls option: the application's words
// (WithSettingNames), or the Go API's name.
func (s *Store) name(option, kind string) string {
	if s.names != nil {
		if n := s.names(option, kind); n != "" {
			return n
		}
	}
	return option
}

// queueMarker queues the check of the marker on p, with
// WithRequireInitialized; nil without it.
func (s *Store) queueMarker(ctx context.Context, p redis.Pipeliner) *redis.IntCmd {
	if !s.requireInit {
		return nil
	}
	return p.Exists(ctx, s.markerKey)
}

// checkMarker reads the check queueMarker queued (nil: none was): the
// error of the command, or of a store without its marker, or nil.
func (s *Store) checkMarker(op string, marker *redis.IntCmd) error {
	if marker == nil {
		return nil
	}
	n, err := marker.Result()
	if err != nil {
		return err
	}
	if n == 0 {
		return s.uninitialized(op)
	}
	s.sawMarker()
	return nil
}

// sawMarker records that a call found the marker (or wrote it): its loss
// from now on is a vanished store, and an initialization fault in force is
// over, whoever saw it (Ready or not), logged at Info.
func (s *Store) sawMarker() {
	// Load first: every update and list comes here, and a store to a
	// word all of them read would be a write shared between cores.
	if !s.seenMarker.Load() {
		s.seenMarker.Store(true)
	}
	if old := s.initFault.Load(); old != nil && s.initFault.CompareAndSwap(old, nil) {
		s.log.Info("redisstore: initialization fault cleared: the store is initialized and serves again", "fault", old.kind)
	}
}

// initState is the initialization fault in force: its kind.
type initState struct{ kind string }

// uninitialized records the fault of a store without its marker (logged
// once with its fix) and returns it as the unavailable error a client
// reads: the fault and the one step that fixes it.
func (s *Store) uninitialized(op string) error {
	key := s.markerKey
	f := &InitFault{Op: op}
	if s.seenMarker.Load() {
		f.Kind = FaultVanished
		f.Fix = fmt.Sprintf("the inventory store %q vanished under this process: its key %s is gone (a Redis restart without persistence, a FLUSHALL or FLUSHDB, "+
			"or a failover to an emptied replica) and it is not served; restore its Redis from a backup, or start it over by initializing it once with %s; "+
			"nothing seeds it again on its own", s.prefix, key, s.name(OptionInitialize, f.Kind))
	} else {
		f.Kind = FaultNotInitialized
		f.Fix = fmt.Sprintf("the inventory store %q is not initialized (its key %s is missing) and is not served; "+
			"initialize it once with %s, or restore its Redis from a backup", s.prefix, key, s.name(OptionInitialize, f.Kind))
	}
	for {
		old := s.initFault.Load()
		if old != nil && old.kind == f.Kind {
			break
		}
		if s.initFault.CompareAndSwap(old, &initState{kind: f.Kind}) {
			s.log.Error("redisstore: initialization fault: "+f.Fix, "fault", f.Kind, "option", OptionInitialize, "op", op)
			break
		}
	}
	return inventory.UnavailableBecause(f.Fix, f)
}

// Uninitialized returns the kind of the initialization fault in force
// (FaultNotInitialized or FaultVanished): a call (Ready, a list, an
// update) found no marker, and none found it since; "" otherwise, and
// before any call looked. A configuration fault met meanwhile does not
// hide it: the two are told apart.
func (s *Store) Uninitialized() string {
	if f := s.initFault.Load(); f != nil {
		return f.kind
	}
	return ""
}

// markerValue is what the marker holds: how and when the store was
// initialized, for an operator who reads it (GET).
func markerValue(how string) string {
	return how + " " + time.Now().UTC().Format(time.RFC3339)
}

// Initialization is what Initialize did.
type Initialization int

const (
	// AlreadyInitialized: the store held its marker; nothing was written.
	AlreadyInitialized Initialization = iota
	// Initialized: the store held neither marker nor entries; the items
	// (none, for an empty inventory) and the marker were written in one
	// transaction.
	Initialized
	// Adopted: the store held entries but no marker (seeded before the
	// marker existed); the marker was written, the entries kept.
	Adopted
)

func (i Initialization) String() string {
	switch i {
	case AlreadyInitialized:
		return "already initialized"
	case Initialized:
		return "initialized"
	case Adopted:
		return "adopted"
	}
	return fmt.Sprintf("Initialization(%d)", int(i))
}

// Initialize initializes a store that has no marker, and only such a
// store: of several processes initializing one store at once exactly one
// writes. A store with no marker and no entry gets items (none: an empty
// inventory) and the marker in one transaction (as PutIfEmpty writes them,
// in chunks into a staging hash first); a store with entries but no marker,
// seeded before the marker existed, is adopted: the marker is written, the
// entries are kept; a store with its marker is left as it is. Like every
// write, it trusts what inventory.Service checked: check items with
// inventory.ValidateItems first. Give it a context with a deadline sized
// for the seed, as PutIfEmpty.
func (s *Store) Initialize(ctx context.Context, items ...inventory.Item) (Initialization, error) {
	const op = "initialize"
	if err := ctx.Err(); err != nil {
		return AlreadyInitialized, translate(op, err)
	}
	for attempt := 0; ; attempt++ {
		marked, held, err := s.existing(ctx, s.client)
		if err != nil {
			return AlreadyInitialized, s.fail(op, err)
		}
		switch {
		case marked > 0:
			s.sawMarker()
			return AlreadyInitialized, nil
		case held > 0:
			done, err := s.adopt(ctx, op)
			if done {
				return Adopted, err // err: written, but not acknowledged by enough replicas
			}
			if err != nil {
				return AlreadyInitialized, err
			}
		case len(items) > 0:
			wrote, err := s.putIfEmpty(ctx, op, true, items)
			if wrote || err != nil {
				return Initialized, err
			}
		default:
			done, err := s.markEmpty(ctx, op)
			if done || err != nil {
				return Initialized, err
			}
		}
		// Another process initialized it meanwhile: look again.
		if attempt == s.maxRetries {
			return AlreadyInitialized, inventory.Unavailable(fmt.Errorf("redis %s: the store changed under %d attempts; retry later", op, attempt+1))
		}
	}
}

// existing reports whether the marker and the items hash exist, read on c.
func (s *Store) existing(ctx context.Context, c redis.Cmdable) (marked, held int64, err error) {
	var m, h *redis.IntCmd
	_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		m = p.Exists(ctx, s.markerKey)
		h = p.Exists(ctx, s.itemsKey)
		return nil
	})
	return m.Val(), h.Val(), err
}

// Adopt writes the marker of a store seeded before the marker existed
// (entries, no marker), keeping its entries, and reports whether it did:
// a store with its marker, or without entries (never initialized, or
// wiped), is left as it is. Initialize adopts such a store too; Adopt is
// for a process that initializes nothing (no seed) but must not refuse a
// store that only predates the marker.
func (s *Store) Adopt(ctx context.Context) (bool, error) {
	const op = "adopt"
	if err := ctx.Err(); err != nil {
		return false, translate(op, err)
	}
	return s.adopt(ctx, op)
}

// adopt writes the marker of a store that holds entries without it;
// done is false when it holds none, or its marker, by then.
func (s *Store) adopt(ctx context.Context, op string) (done bool, err error) {
	return s.mark(ctx, op, func(marked, held bool) bool { return !marked && held }, func(p redis.Pipeliner) {
		p.MSet(ctx, s.markerKey, markerValue("adopted"))
	})
}

// markEmpty initializes a store that holds neither marker nor entry as an
// empty inventory: the marker, and a reset entry in the change log so
// that a reader holding an older state reads it whole.
func (s *Store) markEmpty(ctx context.Context, op string) (done bool, err error) {
	return s.mark(ctx, op, func(marked, held bool) bool { return !marked && !held }, func(p redis.Pipeliner) {
		p.MSet(ctx, s.markerKey, markerValue("empty"))
		s.logAdd(ctx, p, 1, opReset, "")
	})
}

// mark runs queue (which writes the marker) in one transaction that
// WATCHes the marker and the items hash, when want says so of whether
// they exist; done is false when want said no, or another process wrote
// either meanwhile (the transaction aborted: look again).
func (s *Store) mark(ctx context.Context, op string, want func(marked, held bool) bool, queue func(p redis.Pipeliner)) (done bool, err error) {
	err = s.watch(ctx, func(tx *redis.Tx) error {
		marked, held, err := s.existing(ctx, tx)
		if err != nil {
			return err
		}
		if !want(marked > 0, held > 0) {
			return nil
		}
		if err := txPipelined(ctx, tx, func(p redis.Pipeliner) error { queue(p); return nil }); err != nil {
			return err
		}
		done = true
		return s.waitAcks(ctx, tx, op, ackWrite)
	}, s.markerKey, s.itemsKey)
	if errors.Is(err, redis.TxFailedErr) {
		return false, nil
	}
	if done {
		s.sawMarker()
	}
	return done, s.fail(op, err)
}

// DurabilityRisk returns, when the Redis the store is on keeps nothing
// across a restart (no append-only file and no RDB save point), a sentence
// naming that risk and its fix; "" when it keeps something or the store
// cannot tell. It reads INFO persistence, which the store's ACL rule
// allows, and, when the append-only file is off, CONFIG GET save, which it
// asks only as the default user: the store's ACL rule (ACLRule) grants no
// CONFIG, and a refusal would be an entry of ACL LOG; where CONFIG is
// refused all the same (managed services rename or refuse it) it cannot
// tell. A Redis without persistence that restarts comes back empty, and a
// replica of it empties itself too: the store then vanishes (see
// WithRequireInitialized). The error is a failure to ask.
func (s *Store) DurabilityRisk(ctx context.Context) (string, error) {
	const op = "durability"
	var node redis.Cmdable = s.client
	if master, err := s.txClient(ctx, s.itemsKey); err != nil {
		return "", translate(op, err)
	} else if master != nil {
		node = master
	}
	info, err := node.Info(ctx, "persistence").Result()
	if err != nil {
		if isReply(err) {
			return "", nil
		}
		return "", translate(op, err)
	}
	if infoField(info, "aof_enabled") != "0" || namedUser(s.client) {
		return "", nil
	}
	save, err := node.ConfigGet(ctx, "save").Result()
	if err != nil {
		if isReply(err) {
			return "", nil // CONFIG refused, renamed or unknown: cannot tell
		}
		return "", translate(op, err)
	}
	if v, ok := save["save"]; !ok || v != "" {
		return "", nil
	}
	return "durability risk: Redis keeps nothing across a restart (appendonly no, and no save points): a restart, or a failover to a replica " +
		"that restarted, empties the inventory, which is then not served until it is restored or initialized again; " +
		"turn persistence on (appendonly yes, or save points, in redis.conf and with CONFIG SET), or use a managed Redis with persistence", nil
}

// namedUser reports whether c logs in as an ACL user other than default.
func namedUser(c redis.UniversalClient) bool {
	var user string
	switch c := c.(type) {
	case *redis.Client:
		user = c.Options().Username
	case *redis.ClusterClient:
		user = c.Options().Username
	}
	return user != "" && user != "default"
}
