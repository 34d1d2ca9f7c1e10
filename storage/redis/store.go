package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// DefaultKeyPrefix is the key prefix used unless WithKeyPrefix says
// otherwise.
const DefaultKeyPrefix = "inventory"

// DefaultMaxRetries is how many times SetQuantity retries a transaction
// aborted by a concurrent Put or Delete of the same pet, unless
// WithMaxRetries says otherwise. With the backoff between attempts (1 ms
// doubling to at most 64 ms, jittered) the retries of one call sleep at
// most about a third of a second in all.
const DefaultMaxRetries = 10

// Store is an inventory.Store kept in Redis, shared by every process that
// uses the same Redis and key prefix. It is safe for concurrent use. Build
// it with New.
type Store struct {
	client     redis.UniversalClient
	prefix     string
	statusKey  string // HASH petId → status; a field exists iff the entry does
	qtyKey     string // HASH petId → quantity
	guardBase  string // guardBase + petId: STRING written by Put and Delete only
	maxRetries int

	aborts    atomic.Uint64
	exhausted atomic.Uint64

	// beforeExec, when set (by tests only), runs inside the optimistic
	// transactions of SetQuantity and PutIfEmpty (op names which), after
	// the read under WATCH and before MULTI/EXEC, so that a test can change
	// the entries right there.
	beforeExec func(op string)
}

var _ inventory.Store = (*Store)(nil)

// Option configures a Store built by New.
type Option func(*config)

type config struct {
	prefix     string
	maxRetries int
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
// default DefaultMaxRetries (10); 0 means a single attempt. Updates of the
// same pet never abort each other, only Put and Delete do, so retries are
// rare. When they run out, SetQuantity fails with an error matching
// inventory.ErrUnavailable, which the API answers 503 with Retry-After.
func WithMaxRetries(n int) Option {
	return func(c *config) { c.maxRetries = n }
}

// New returns a Store over client. It does not talk to Redis, so it
// succeeds while Redis is down (use Ping for readiness); it fails on a nil
// client or an invalid option. The Store does not own client: close the
// client when done with the store.
func New(client redis.UniversalClient, opts ...Option) (*Store, error) {
	if isNilClient(client) {
		return nil, errors.New("redisstore: New: client is nil")
	}
	c := config{prefix: DefaultKeyPrefix, maxRetries: DefaultMaxRetries}
	for _, o := range opts {
		o(&c)
	}
	if err := validPrefix(c.prefix); err != nil {
		return nil, fmt.Errorf("redisstore: New: WithKeyPrefix: %w", err)
	}
	if c.maxRetries < 0 || c.maxRetries > 1000 {
		return nil, fmt.Errorf("redisstore: New: WithMaxRetries(%d): must be between 0 and 1000", c.maxRetries)
	}
	tag := "{" + c.prefix + "}:"
	return &Store{
		client:     client,
		prefix:     c.prefix,
		statusKey:  tag + "status",
		qtyKey:     tag + "qty",
		guardBase:  tag + "guard:",
		maxRetries: c.maxRetries,
	}, nil
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

// KeyPrefix returns the prefix the store's keys carry, as a hash tag:
// every key of the store starts with "{" + prefix + "}:".
func (s *Store) KeyPrefix() string { return s.prefix }

// Stats counts how SetQuantity's optimistic transactions went since New.
type Stats struct {
	// WatchAborts counts transactions whose EXEC Redis refused because
	// the pet's entry was put or deleted between WATCH and EXEC; each was
	// retried or counted in RetriesExhausted. Updates never abort each
	// other, so under update traffic alone it stays 0.
	WatchAborts uint64
	// RetriesExhausted counts SetQuantity calls that gave up after
	// WithMaxRetries retries and failed with inventory.ErrUnavailable.
	RetriesExhausted uint64
}

// Stats returns the counters since New.
func (s *Store) Stats() Stats {
	return Stats{WatchAborts: s.aborts.Load(), RetriesExhausted: s.exhausted.Load()}
}

// Ping checks that Redis answers, for a readiness probe. Its error is
// translated like every other (an unreachable Redis matches
// inventory.ErrUnavailable).
func (s *Store) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return translate("ping", err)
	}
	return translate("ping", s.client.Ping(ctx).Err())
}

func field(petID int64) string { return strconv.FormatInt(petID, 10) }

// List returns every entry by ascending petId. It is one MULTI/EXEC of
// HGETALL on the status and quantity hashes: one round trip, and a
// snapshot of one instant, whatever the size of the inventory.
func (s *Store) List(ctx context.Context) ([]inventory.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, translate("list", err)
	}
	var st, qt *redis.MapStringStringCmd
	// HGETALL never replies nil (a missing hash is an empty map), so the
	// error of TxPipelined is a real failure, never a redis.Nil.
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		st = p.HGetAll(ctx, s.statusKey)
		qt = p.HGetAll(ctx, s.qtyKey)
		return nil
	})
	if err != nil {
		return nil, translate("list", err)
	}
	statuses, quantities := st.Val(), qt.Val()
	items := make([]inventory.Item, 0, len(statuses))
	for f, raw := range statuses {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil || field(id) != f {
			return nil, corrupt(s.statusKey, f, f, "a pet id")
		}
		status, err := s.parseStatus(f, raw)
		if err != nil {
			return nil, err
		}
		rawQty, ok := quantities[f]
		if !ok {
			return nil, inventory.Errorf(inventory.CodeInternal,
				"redisstore: corrupt data: key %q field %q has a status but key %q has no field %q (change these keys only through the Store)", s.statusKey, f, s.qtyKey, f)
		}
		q, err := s.parseQuantity(f, rawQty)
		if err != nil {
			return nil, err
		}
		items = append(items, inventory.Item{PetID: id, Quantity: q, Status: status})
	}
	slices.SortFunc(items, func(a, b inventory.Item) int {
		switch {
		case a.PetID < b.PetID:
			return -1
		case a.PetID > b.PetID:
			return 1
		}
		return 0
	})
	return items, nil
}

// SetQuantity replaces one pet's quantity with an optimistic transaction:
// WATCH the pet's guard key (written only by Put and Delete), read its
// status, then MULTI, HSET of the quantity, EXEC. EXEC succeeding proves
// the entry existed with that status when the quantity was written, so the
// item returned is the one stored by this write. A pet with no entry
// returns inventory.ErrNotFound and writes nothing.
//
// Updates never touch what they WATCH, so concurrent updates of one pet do
// not abort each other; only a Put or Delete of the same pet in between
// does, and the transaction is retried (see WithMaxRetries).
func (s *Store) SetQuantity(ctx context.Context, petID int64, quantity int) (inventory.Item, error) {
	const op = "set quantity"
	if err := ctx.Err(); err != nil {
		return inventory.Item{}, translate(op, err)
	}
	if quantity < 0 || quantity > inventory.MaxQuantity {
		return inventory.Item{}, inventory.Errorf(inventory.CodeInvalidField, "quantity %d is outside 0..%d", quantity, inventory.MaxQuantity)
	}
	f := field(petID)
	var status inventory.Status
	txf := func(tx *redis.Tx) error {
		raw, err := tx.HGet(ctx, s.statusKey, f).Result()
		if err != nil {
			return err // redis.Nil: no entry, translated to not found
		}
		if status, err = s.parseStatus(f, raw); err != nil {
			return err
		}
		if s.beforeExec != nil {
			s.beforeExec(op)
		}
		// The transaction holds only HSET, which never replies nil: so
		// TxPipelined's habit of returning redis.Nil for a nil reply even
		// when EXEC committed cannot turn a success into a not found here.
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, s.qtyKey, f, quantity)
			return nil
		})
		return err
	}
	for attempt := 0; ; attempt++ {
		err := s.client.Watch(ctx, txf, s.guardBase+f)
		if err == nil {
			return inventory.Item{PetID: petID, Quantity: quantity, Status: status}, nil
		}
		if !errors.Is(err, redis.TxFailedErr) {
			return inventory.Item{}, translate(op, err)
		}
		s.aborts.Add(1)
		if attempt == s.maxRetries {
			s.exhausted.Add(1)
			return inventory.Item{}, inventory.Unavailable(fmt.Errorf(
				"redis: the update of pet %d was aborted %d times by concurrent changes of its entry: %w", petID, attempt+1, err))
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return inventory.Item{}, translate(op, err)
		}
	}
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

// Put creates or replaces entries in one MULTI/EXEC: atomic, and
// idempotent. Each item is checked with inventory.Item.Validate first and
// nothing is written when one is invalid. A pet given twice keeps its last
// item.
func (s *Store) Put(ctx context.Context, items ...inventory.Item) error {
	const op = "put"
	if err := ctx.Err(); err != nil {
		return translate(op, err)
	}
	w, err := s.newPutWrite(items)
	if err != nil || w == nil {
		return err
	}
	_, err = s.client.TxPipelined(ctx, w.queue(ctx))
	return translate(op, err)
}

// PutIfEmpty puts items, as Put does, only when the store holds no entry
// at all, and reports whether it wrote them. It is atomic (WATCH on the
// status hash, HLEN, MULTI/EXEC): of several replicas seeding an empty
// Redis at once exactly one writes, and a store that already holds stock
// is never overwritten by a restart's seed.
func (s *Store) PutIfEmpty(ctx context.Context, items ...inventory.Item) (bool, error) {
	const op = "put if empty"
	if err := ctx.Err(); err != nil {
		return false, translate(op, err)
	}
	w, err := s.newPutWrite(items)
	if err != nil || w == nil {
		return false, err
	}
	for attempt := 0; ; attempt++ {
		wrote := false
		err := s.client.Watch(ctx, func(tx *redis.Tx) error {
			n, err := tx.HLen(ctx, s.statusKey).Result()
			if err != nil || n > 0 {
				return err
			}
			if s.beforeExec != nil {
				s.beforeExec(op)
			}
			_, err = tx.TxPipelined(ctx, w.queue(ctx))
			wrote = err == nil
			return err
		}, s.statusKey)
		if err == nil {
			return wrote, nil
		}
		if !errors.Is(err, redis.TxFailedErr) {
			return false, translate(op, err)
		}
		// Another writer changed the entries: look again.
		if attempt == s.maxRetries {
			return false, inventory.Unavailable(fmt.Errorf("redis: the seeding was aborted %d times by concurrent changes: %w", attempt+1, err))
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return false, translate(op, err)
		}
	}
}

// putWrite is the MULTI body of a Put: MSET of the guards, HSET of the
// statuses, HSET of the quantities.
type putWrite struct {
	s                            *Store
	guards, statuses, quantities []any
}

// newPutWrite validates items and prepares their write; nil, nil when
// there is nothing to write.
func (s *Store) newPutWrite(items []inventory.Item) (*putWrite, error) {
	if len(items) == 0 {
		return nil, nil
	}
	w := &putWrite{
		s:          s,
		guards:     make([]any, 0, 2*len(items)),
		statuses:   make([]any, 0, 2*len(items)),
		quantities: make([]any, 0, 2*len(items)),
	}
	for _, it := range items {
		if err := it.Validate(); err != nil {
			return nil, err
		}
		f := field(it.PetID)
		// Writing the guard is what aborts a concurrent SetQuantity of
		// this pet, which read the old status under WATCH.
		w.guards = append(w.guards, s.guardBase+f, "1")
		w.statuses = append(w.statuses, f, string(it.Status))
		w.quantities = append(w.quantities, f, it.Quantity)
	}
	return w, nil
}

func (w *putWrite) queue(ctx context.Context) func(p redis.Pipeliner) error {
	return func(p redis.Pipeliner) error {
		p.MSet(ctx, w.guards...)
		p.HSet(ctx, w.s.statusKey, w.statuses...)
		p.HSet(ctx, w.s.qtyKey, w.quantities...)
		return nil
	}
}

// Delete removes one entry (its status, quantity and guard) in one
// MULTI/EXEC; inventory.ErrNotFound when there was none.
func (s *Store) Delete(ctx context.Context, petID int64) error {
	const op = "delete"
	if err := ctx.Err(); err != nil {
		return translate(op, err)
	}
	f := field(petID)
	var removed *redis.IntCmd
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, s.guardBase+f)
		removed = p.HDel(ctx, s.statusKey, f)
		p.HDel(ctx, s.qtyKey, f)
		return nil
	})
	if err != nil {
		return translate(op, err)
	}
	if removed.Val() == 0 {
		return inventory.ErrNotFound
	}
	return nil
}

func (s *Store) parseStatus(f, raw string) (inventory.Status, error) {
	st := inventory.Status(raw)
	if !st.Valid() {
		return "", corrupt(s.statusKey, f, raw, "a status (available, pending, sold)")
	}
	return st, nil
}

func (s *Store) parseQuantity(f, raw string) (int, error) {
	q, err := strconv.Atoi(raw)
	if err != nil || q < 0 || q > inventory.MaxQuantity {
		return 0, corrupt(s.qtyKey, f, raw, fmt.Sprintf("a quantity in 0..%d", inventory.MaxQuantity))
	}
	return q, nil
}

// corrupt is the internal error for a value in Redis that the store never
// writes: someone changed the keys by hand, or another program shares the
// prefix. The API answers 500 and logs this message.
func corrupt(key, field, value, want string) error {
	if len(value) > 40 {
		value = value[:40] + "…"
	}
	return inventory.Errorf(inventory.CodeInternal,
		"redisstore: corrupt data: key %q field %q holds %q, which is not %s (change these keys only through the Store)", key, field, value, want)
}
