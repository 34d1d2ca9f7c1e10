package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// seedTTL is how long a staging hash of PutIfEmpty outlives its last
// write: a seeder that dies midway leaves nothing behind for longer. Each
// chunk, a short command, refreshes it.
const seedTTL = time.Minute

// PutIfEmpty puts items only when the store holds no entry at all, and
// reports whether it wrote them; atomically: of several replicas seeding
// an empty Redis at once exactly one writes, all of its items or none,
// and a store that already holds stock is never overwritten by a
// restart's seed.
//
// It writes the items in chunks of 250 (each a short command) into a
// staging hash of its own, {prefix}:seed:<random>, which expires a minute
// after its last write, together with the pets' guard keys; then one
// transaction (WATCH of the items hash, EXISTS, MULTI, RENAME of the
// staging hash to the items hash, PERSIST, MSET of the initialization
// marker (see Initialize), XADD of a reset entry to the change log, EXEC)
// makes them the store's entries at once, unless the
// store holds entries by then: the staging hash is then deleted (UNLINK)
// and it reports false. Guard keys written by a seed that lost are left:
// they are what Put writes, and a guard without an entry changes nothing.
//
// Its time grows with the seed (BENCHMARKS.md has it at up to a million
// pets) while each of its commands stays short: give it a context with a
// deadline sized for the seed, or none, not a request's. When the items were written but fewer
// replicas acknowledged them than WithReplicaAcks asks, it reports true
// with the error.
func (s *Store) PutIfEmpty(ctx context.Context, items ...inventory.Item) (bool, error) {
	const op = "put if empty"
	if err := ctx.Err(); err != nil {
		return false, translate(op, err)
	}
	if len(items) == 0 {
		return false, nil
	}
	return s.putIfEmpty(ctx, op, false, items)
}

// putIfEmpty is PutIfEmpty, and Initialize's seed: with unmarked, only
// into a store without its marker either. Either writes the marker with
// the items.
func (s *Store) putIfEmpty(ctx context.Context, op string, unmarked bool, items []inventory.Item) (bool, error) {
	watched := []string{s.itemsKey}
	if unmarked {
		watched = append(watched, s.markerKey)
	}
	// A store with stock: write nothing at all, not even the staging hash.
	if n, err := s.client.Exists(ctx, watched...).Result(); err != nil || n > 0 {
		return false, s.fail(op, err)
	}
	staging := s.seedBase + newNonce()
	chunks := 0
	for chunk := range slices.Chunk(items, s.putChunk) {
		if chunks++; s.hooks.afterStage != nil && chunks > 1 {
			s.hooks.afterStage(chunks-1, staging)
		}
		guards, entries := s.putArgs(chunk)
		err := txPipelined(ctx, s.client, func(p redis.Pipeliner) error {
			p.MSet(ctx, guards...)
			p.HSet(ctx, staging, entries...)
			p.Expire(ctx, staging, seedTTL)
			return nil
		})
		if err != nil {
			s.unlink(ctx, staging)
			return false, s.fail(op, err)
		}
	}
	for attempt := 0; ; attempt++ {
		wrote := false
		err := s.watch(ctx, func(tx *redis.Tx) error {
			n, err := tx.Exists(ctx, watched...).Result()
			if err != nil || n > 0 {
				return err
			}
			if s.hooks.beforeExec != nil {
				s.hooks.beforeExec(op)
			}
			err = txPipelined(ctx, tx, func(p redis.Pipeliner) error {
				p.Rename(ctx, staging, s.itemsKey)
				p.Persist(ctx, s.itemsKey)
				p.MSet(ctx, s.markerKey, markerValue("seed"))
				s.logAdd(ctx, p, 1, opReset, "")
				return nil
			})
			if err != nil {
				return err
			}
			wrote = true
			s.sawMarker()
			return s.waitAcks(ctx, tx, op, ackWrite)
		}, watched...)
		if !wrote {
			if err == nil || !errors.Is(err, redis.TxFailedErr) || attempt == s.maxRetries {
				s.unlink(ctx, staging)
			}
		}
		if err == nil {
			return wrote, nil
		}
		if !errors.Is(err, redis.TxFailedErr) {
			return wrote, s.fail(op, err) // wrote: written, but not acknowledged by enough replicas
		}
		// Another writer changed the entries: look again.
		if attempt == s.maxRetries {
			return false, inventory.Unavailable(fmt.Errorf(
				"redis: the seeding was aborted %d times by concurrent changes; retry later: %w", attempt+1, err))
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			s.unlink(ctx, staging)
			return false, translate(op, err)
		}
	}
}

// unlink deletes a staging hash that will not be used, in the background
// of Redis (UNLINK), even when ctx is done; when that fails too, its
// expiry removes it within seedTTL.
func (s *Store) unlink(ctx context.Context, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_ = s.client.Unlink(ctx, key).Err()
}
