package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// The sizes of the bounded steps. Each keeps one command of Redis short and
// one reply small, whatever the size of the inventory (BENCHMARKS.md has
// the timings behind them).
const (
	// defaultScanCount is the COUNT of each HSCAN of a full read: small
	// enough that an HSCAN stays short on a Redis that shares its CPU,
	// large enough that a full read takes few round trips.
	defaultScanCount = 300
	// defaultLogPage is the COUNT of each XRANGE of the change log: at
	// most 100 entries (of one write each, or of a Put chunk each).
	defaultLogPage = 100
	// defaultPutChunk is how many items one transaction of Put, or one
	// staging write of PutIfEmpty, holds: its MSET of guard keys and HSET
	// of items stay short commands.
	defaultPutChunk = 250
	// defaultLogCap is about how many item records the change log keeps:
	// 10 000 entries of single writes, fewer entries of Put chunks (XADD
	// MAXLEN ~ 10 000 / items per entry). A reader whose position was
	// trimmed away reads everything again; the cap bounds the log's memory
	// whatever is written.
	defaultLogCap = 10000
	// fullReadAttempts bounds how many times a full read starts over
	// because the log moved under it (its starting entry trimmed away, or
	// a reset logged meanwhile) before it gives up as unavailable.
	fullReadAttempts = 5
)

// The op field of a change log entry.
const (
	opSet   = "set"   // d: "petId:quantity:status" records joined by ","
	opDel   = "del"   // d: petIds joined by ","
	opReset = "reset" // the items were replaced wholesale (PutIfEmpty); d is empty
	opMark  = "mark"  // changes nothing: a position for a full read of a log that was empty
)

// newNonce returns the random nonce of a log entry, in hex. Entry ids
// are times, which a log created again (Clear, a restart without
// persistence, a failover that lost entries) can issue again for other
// contents; the nonce tells the entries apart.
func newNonce() string { return strconv.FormatUint(rand.Uint64(), 16) }

// validNonce reports whether n is a nonce as newNonce writes it.
func validNonce(n string) bool {
	if n == "" || len(n) > 16 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// maxLen is the MAXLEN of an entry of records item records: the log keeps
// about logCap records.
func (s *Store) maxLen(records int) int64 {
	return int64(max(s.logCap/max(records, 1), 1))
}

// logAdd queues the XADD of one change log entry on p, inside the
// MULTI/EXEC of the write it logs.
func (s *Store) logAdd(ctx context.Context, p redis.Cmdable, records int, op, data string) {
	p.XAdd(ctx, &redis.XAddArgs{
		Stream: s.logKey,
		MaxLen: s.maxLen(records),
		Approx: true,
		Values: []string{"n", newNonce(), "op", op, "d", data},
	})
}

// logSet queues the XADD of an entry that sets items.
func (s *Store) logSet(ctx context.Context, p redis.Cmdable, items []inventory.Item) {
	var b strings.Builder
	b.Grow(len(items) * 24)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(it.PetID, 10))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(it.Quantity))
		b.WriteByte(':')
		b.WriteString(string(it.Status))
	}
	s.logAdd(ctx, p, len(items), opSet, b.String())
}

// cursor names the state after the log entry id whose nonce is nonce.
func cursor(id, nonce string) string { return id + "/" + nonce }

// parseCursor splits a cursor; ok is false when c is not one.
func parseCursor(c string) (id, nonce string, ok bool) {
	id, nonce, ok = strings.Cut(c, "/")
	if !ok || !validNonce(nonce) {
		return "", "", false
	}
	if _, _, ok := parseID(id); !ok {
		return "", "", false
	}
	return id, nonce, true
}

// parseID parses a stream entry id "ms-seq".
func parseID(id string) (ms, seq uint64, ok bool) {
	a, b, ok := strings.Cut(id, "-")
	if !ok {
		return 0, 0, false
	}
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return ms, seq, err1 == nil && err2 == nil
}

// entryField returns the string field name of a log entry.
func entryField(m redis.XMessage, name string) (string, bool) {
	v, ok := m.Values[name].(string)
	return v, ok
}

// logReason is why a log read cannot say what changed since a position.
type logReason int

const (
	logGone    logReason = iota + 1 // the position is no longer in the log
	logMoved                        // entries went between two pages
	logReset                        // a seed replaced everything
	logCorrupt                      // an entry cannot be parsed
)

func (r logReason) String() string {
	switch r {
	case logGone:
		return "the change log no longer holds the position (trimmed, or the log was replaced: Clear, a restart without persistence, a failover that lost entries)"
	case logMoved:
		return "the change log lost entries between two pages of a read (trimmed, or the log was replaced)"
	case logReset:
		return "the inventory was replaced wholesale (a seed) since the position"
	case logCorrupt:
		return "a change log entry cannot be parsed"
	}
	return "the change log cannot say what changed"
}

// logBreak is a log read that cannot say what changed since a position:
// no failure of Redis, but a reason to read the whole inventory (or to
// start a full read over). For logCorrupt, entry and detail say which
// entry and what is wrong with it.
type logBreak struct {
	reason logReason
	entry  string
	detail string
}

func (e *logBreak) Error() string {
	if e.entry == "" {
		return e.reason.String()
	}
	return fmt.Sprintf("%s: change log entry %s: %s", e.reason, e.entry, e.detail)
}

// corruptEntry is the logBreak of log entry id, which cannot be parsed.
func corruptEntry(id, detail string) *logBreak {
	return &logBreak{reason: logCorrupt, entry: id, detail: detail}
}

// readLog reads the change log on c after the entry (id, nonce): the changes,
// oldest first, and the cursor of the last entry read ("" when none
// follows it). Its error is a *logBreak when the log cannot say what
// changed (logGone, logMoved, logReset, logCorrupt), any other a failure
// to talk to Redis, or, when guard names the store's call (op) and the
// store requires its marker, the fault of a store without it: the
// marker's check rides in the pipeline of the first page (see
// guardedPage).
//
// Every page starts at the entry read last, inclusive, and checks its id
// and nonce: the entry is still there only if nothing before it was
// trimmed and the log was not replaced, so each page proves it follows
// the last (XTRIM drops entries from the oldest, and a log created again
// never holds an entry of the old one with its nonce). So a page is at
// least 2 entries long, one of them new. Each XRANGE page is atomic, and
// every write appends its entry in the transaction that applies it, so
// the changes bring a state at id to the state at the log's end when the
// last page was read.
func (s *Store) readLog(ctx context.Context, c redis.Cmdable, id, nonce, guard string) (log []inventory.Change, last string, err error) {
	page := max(s.logPage, 2)
	for first := true; ; first = false {
		var msgs []redis.XMessage
		if first && guard != "" {
			msgs, err = s.guardedPage(ctx, c, guard, id, page)
		} else {
			msgs, err = c.XRangeN(ctx, s.logKey, id, "+", page).Result()
		}
		if err != nil {
			return nil, "", err
		}
		if len(msgs) == 0 || msgs[0].ID != id || !hasNonce(msgs[0], nonce) {
			if first {
				return nil, "", &logBreak{reason: logGone}
			}
			return nil, "", &logBreak{reason: logMoved}
		}
		for _, m := range msgs[1:] {
			n, ok := entryField(m, "n")
			if !ok || !validNonce(n) {
				return nil, "", corruptEntry(m.ID, "no valid nonce (field n)")
			}
			op, _ := entryField(m, "op")
			switch op {
			case opReset:
				return nil, "", &logBreak{reason: logReset}
			case opMark:
			case opSet, opDel:
				d, _ := entryField(m, "d")
				var perr error
				if log, perr = appendChanges(log, op, d); perr != nil {
					return nil, "", corruptEntry(m.ID, perr.Error())
				}
			default:
				return nil, "", corruptEntry(m.ID, fmt.Sprintf("unknown op %q", truncate(op)))
			}
			id, nonce = m.ID, n
			last = cursor(id, nonce)
		}
		if int64(len(msgs)) < page {
			return log, last, nil
		}
	}
}

// guardedPage is the first XRANGE page of a read of the log for op, with
// WithRequireInitialized the marker's EXISTS in the same pipeline: no
// round trip of its own. A store whose marker alone was deleted keeps its
// change log, so without it a list since a state held would go on
// answering from that state while Ready refuses the store; with it the
// list refuses it too (and a vanished store, log and all, is refused as
// the store it is rather than read whole).
func (s *Store) guardedPage(ctx context.Context, c redis.Cmdable, op, id string, page int64) ([]redis.XMessage, error) {
	if !s.requireInit {
		return c.XRangeN(ctx, s.logKey, id, "+", page).Result()
	}
	var msgs *redis.XMessageSliceCmd
	var marker *redis.IntCmd
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		msgs = p.XRangeN(ctx, s.logKey, id, "+", page)
		marker = s.queueMarker(ctx, p)
		return nil
	})
	if merr := s.checkMarker(op, marker); merr != nil {
		return nil, merr
	}
	if err != nil {
		return nil, err
	}
	return msgs.Val(), nil
}

// hasNonce reports whether log entry m carries nonce.
func hasNonce(m redis.XMessage, nonce string) bool {
	n, _ := entryField(m, "n")
	return n == nonce
}

// appendChanges appends the changes of one set or del entry's data.
func appendChanges(log []inventory.Change, op, d string) ([]inventory.Change, error) {
	if d == "" {
		return log, errors.New("no data (field d)")
	}
	for rec := range strings.SplitSeq(d, ",") {
		if op == opDel {
			id, ok := parsePetID(rec)
			if !ok {
				return log, fmt.Errorf("%q is not a pet id", truncate(rec))
			}
			log = append(log, inventory.Change{Item: inventory.Item{PetID: id}, Deleted: true})
			continue
		}
		ids, entry, _ := strings.Cut(rec, ":")
		id, ok := parsePetID(ids)
		if !ok {
			return log, fmt.Errorf("%q is not a pet id", truncate(rec))
		}
		q, st, ok := parseEntry(entry)
		if !ok {
			return log, fmt.Errorf("%q is not petId:quantity:status", truncate(rec))
		}
		log = append(log, inventory.Change{Item: inventory.Item{PetID: id, Quantity: q, Status: st}})
	}
	return log, nil
}

// List returns every entry by ascending petId, as one consistent
// snapshot: a full read (see ListChanges), in bounded chunks, so that no
// command of Redis runs long whatever the size of the inventory.
func (s *Store) List(ctx context.Context) ([]inventory.Item, error) {
	const op = "list"
	if err := ctx.Err(); err != nil {
		return nil, translate(op, err)
	}
	ch, err := s.readAll(ctx, op)
	if err != nil {
		return nil, err
	}
	return ch.Items, nil
}

// ListChanges implements inventory.ChangeLister. A cursor names a change
// log entry (its id and nonce). When since names one the log still holds,
// the answer is what the log holds after it: one XRANGE when nothing
// changed (it returns just that entry; with WithRequireInitialized, the
// marker's EXISTS in the same pipeline), and pages of 100 entries
// otherwise, each starting at the entry the last one ended on and checking
// it, so that no change lost between two pages is skipped. When the log
// cannot say (since is "" or malformed, its entry was trimmed away or the
// log replaced, before the read or between two of its pages, a seed
// replaced everything, an entry cannot be parsed), it is a full read, and
// a line is logged for everything but since "" and a seed.
//
// A full read notes the log's last entry, reads the items hash in HSCAN
// chunks of about 300, then replays every entry logged after the noted
// one: each sets absolute values, so the result is the state at the log's
// end, a state the store held, although the chunks were read at different
// times. When the noted entry is trimmed away meanwhile, or a seed
// replaced everything, it starts over (at most 5 times, then fails as
// unavailable).
//
// With WithReplicaAcks(n, …) the state returned is one that n replicas
// hold (see confirm.go): a read runs on one connection to the master and,
// when it found anything after since (a full read always does), WAITs
// there before returning; when fewer than n replicas acknowledge in time,
// it fails as unavailable and returns nothing. A read that finds nothing
// after since costs no WAIT.
func (s *Store) ListChanges(ctx context.Context, since string) (inventory.Changes, error) {
	const op = "list changes"
	if err := ctx.Err(); err != nil {
		return inventory.Changes{}, translate(op, err)
	}
	// A store found without its marker reads whole (which checks it)
	// rather than log at every list that the log lost the position.
	if since != "" && s.Uninitialized() == "" {
		id, nonce, ok := parseCursor(since)
		if !ok {
			s.log.Warn("redisstore: a list cursor this store never issued; reading the whole inventory", "cursor", truncate(since))
			return s.readAll(ctx, op)
		}
		var ch inventory.Changes
		err := s.onceMoreIfCut(func() error {
			return s.readOn(ctx, op, func(c redis.Cmdable) (confirm bool, err error) {
				log, last, err := s.readLog(ctx, c, id, nonce, op)
				if err != nil {
					return false, err
				}
				if last == "" {
					// Nothing after since: the state since names was
					// confirmed when it was returned.
					ch = inventory.Changes{Cursor: since}
					return false, nil
				}
				ch = inventory.Changes{Cursor: last, Log: log}
				return true, nil
			})
		})
		brk, broken := errors.AsType[*logBreak](err)
		switch {
		case err == nil:
			return ch, nil
		case !broken:
			return inventory.Changes{}, s.fail(op, err)
		case brk.reason == logCorrupt:
			s.log.Warn("redisstore: "+brk.reason.String()+"; reading the whole inventory", "key", s.logKey, "error", brk.Error())
		case brk.reason == logGone, brk.reason == logMoved:
			s.log.Info("redisstore: "+brk.reason.String()+"; reading the whole inventory", "key", s.logKey, "cursor", since)
		}
	}
	return s.readAll(ctx, op)
}

// readAll is a full read (see ListChanges), starting over when the log
// moved under it, and once when its connection was cut under it.
func (s *Store) readAll(ctx context.Context, op string) (inventory.Changes, error) {
	var why *logBreak
	for range fullReadAttempts {
		var ch inventory.Changes
		err := s.onceMoreIfCut(func() error {
			return s.readOn(ctx, op, func(c redis.Cmdable) (confirm bool, err error) {
				ch, err = s.readAllOnce(ctx, c, op)
				return err == nil, err
			})
		})
		if err == nil {
			return ch, nil
		}
		brk, broken := errors.AsType[*logBreak](err)
		if !broken {
			return inventory.Changes{}, s.fail(op, err)
		}
		if brk.reason == logCorrupt {
			s.log.Warn("redisstore: "+brk.reason.String()+" during a full read; starting over after it", "key", s.logKey, "error", brk.Error())
		}
		why = brk
	}
	return inventory.Changes{}, inventory.Unavailable(fmt.Errorf(
		"redis %s: the change log moved under %d full reads in a row (%s); retry later", op, fullReadAttempts, why.reason))
}

// readAllOnce is one attempt of a full read for op, on c; its error is a
// *logBreak when the log moved under it and it must start over.
func (s *Store) readAllOnce(ctx context.Context, c redis.Cmdable, op string) (ch inventory.Changes, err error) {
	var (
		rev    *redis.XMessageSliceCmd
		hlen   *redis.IntCmd
		marker *redis.IntCmd // with WithRequireInitialized
	)
	if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		rev = p.XRevRangeN(ctx, s.logKey, "+", "-", 1)
		hlen = p.HLen(ctx, s.itemsKey)
		marker = s.queueMarker(ctx, p)
		return nil
	}); err != nil {
		return ch, err
	}
	// A wiped store reads empty: never a list of [] for it (marker.go).
	if err := s.checkMarker(op, marker); err != nil {
		return ch, err
	}
	var id, nonce string
	if last := rev.Val(); len(last) == 1 {
		if n, ok := entryField(last[0], "n"); ok && validNonce(n) {
			id, nonce = last[0].ID, n
		}
	}
	if id == "" {
		// No log yet (a new store, Clear, a restart without persistence),
		// or its last entry has no nonce: log a position to start from.
		nonce = newNonce()
		id, err = c.XAdd(ctx, &redis.XAddArgs{
			Stream: s.logKey, MaxLen: s.maxLen(1), Approx: true,
			Values: []string{"n", nonce, "op", opMark, "d", ""},
		}).Result()
		if err != nil {
			return ch, err
		}
	}

	items := make([]inventory.Item, 0, hlen.Val()+16)
	var cur uint64
	chunks := 0
	for {
		kv, next, err := c.HScan(ctx, s.itemsKey, cur, "", int64(s.scanCount)).Result()
		if err != nil {
			return ch, err
		}
		for i := 0; i+1 < len(kv); i += 2 {
			f, raw := kv[i], kv[i+1]
			petID, ok := parsePetID(f)
			if !ok {
				return ch, corrupt(s.itemsKey, f, f, "a pet id")
			}
			q, st, err := s.parseValue(f, raw)
			if err != nil {
				return ch, err
			}
			items = append(items, inventory.Item{PetID: petID, Quantity: q, Status: st})
		}
		chunks++
		if s.hooks.afterScan != nil {
			s.hooks.afterScan(chunks)
		}
		if cur = next; cur == 0 {
			break
		}
	}

	log, last, err := s.readLog(ctx, c, id, nonce, "") // the marker was checked above
	if err != nil {
		return ch, err
	}
	if last == "" {
		last = cursor(id, nonce)
	}
	return inventory.Changes{Cursor: last, Full: true, Items: apply(items, log)}, nil
}

func byPetID(a, b inventory.Item) int { return cmp.Compare(a.PetID, b.PetID) }

// apply sorts the items a scan read by pet id, drops the duplicates HSCAN
// may return, and applies log over them.
func apply(items []inventory.Item, log []inventory.Change) []inventory.Item {
	slices.SortFunc(items, byPetID)
	// A pet HSCAN returned twice with two values changed during the scan,
	// so after the noted entry: log sets it, whichever copy is kept.
	items = slices.CompactFunc(items, func(a, b inventory.Item) bool { return a.PetID == b.PetID })
	if len(log) == 0 {
		return items
	}
	last := make(map[int64]inventory.Change, len(log))
	for _, c := range log {
		last[c.PetID] = c
	}
	j := 0
	for _, it := range items {
		if c, ok := last[it.PetID]; ok {
			delete(last, it.PetID)
			if c.Deleted {
				continue
			}
			it = c.Item
		}
		items[j] = it
		j++
	}
	items = items[:j]
	n := len(items)
	for _, c := range last {
		if !c.Deleted {
			items = append(items, c.Item)
		}
	}
	if len(items) > n {
		slices.SortFunc(items, byPetID)
	}
	return items
}
