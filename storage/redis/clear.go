package redisstore

import (
	"context"
	"slices"

	"github.com/redis/go-redis/v9"
)

// clearScanCount is the COUNT of Clear's SCANs.
const clearScanCount = 250

// Clear deletes every key of the store's prefix, and only those: a SCAN
// with MATCH on the prefix's hash tag, then UNLINK (which frees a large
// hash in the background instead of blocking Redis), never KEYS or
// FLUSHDB, so other data in the same Redis is safe. It is for tearing down a test or
// demo inventory; writes running meanwhile may leave keys behind.
//
// On Cluster, the scan runs on the master that owns the prefix's slot,
// where every key of the store lives.
//
// Each SCAN asks for a bounded number of keys, and each UNLINK takes at
// most as many, so that every command stays
// short; the round trips grow with the inventory (a store holds a guard key
// per pet as well as its entries).
func (s *Store) Clear(ctx context.Context) error {
	const op = "clear"
	var node redis.Cmdable = s.client
	if cc, ok := s.client.(*redis.ClusterClient); ok {
		master, err := cc.MasterForKey(ctx, s.itemsKey)
		if err != nil {
			return s.fail(op, err)
		}
		node = master
	}
	match := "{" + s.prefix + "}:*"
	var cursor uint64
	for {
		keys, next, err := node.Scan(ctx, cursor, match, clearScanCount).Result()
		if err != nil {
			return s.fail(op, err)
		}
		// COUNT is a hint: a page may hold a few more keys; each UNLINK
		// takes at most clearScanCount of them all the same.
		for chunk := range slices.Chunk(keys, clearScanCount) {
			if err := node.Unlink(ctx, chunk...).Err(); err != nil {
				return s.fail(op, err)
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}
