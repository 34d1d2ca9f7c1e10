package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	memstore "github.com/petinventory/petinventory/storage/memory"
)

// sharedLog is what the instances of one logStore share, as the processes
// of a Redis store share its hash and its stream: the entries and a log of
// every change, whose positions count from the start of the log's epoch.
type sharedLog struct {
	mu    sync.Mutex
	mem   *memstore.Store
	epoch int
	first int                // position of the change before log[0]
	log   []inventory.Change // log[i] is at position first+1+i

	page    int    // changes a read takes per page; 0 for all at once
	between func() // run once between the first and second page of a read (BetweenPages)
}

// logFaults are the ways a logStore can break the ChangeLister contract.
type logFaults struct {
	ignoreTrim  bool // a cursor older than the log gets what is left of it
	ignoreEpoch bool // a cursor of a lost log is taken as a position of the new one
	localOnly   bool // an instance says "unchanged" while it wrote nothing since
	unlinked    bool // a page after the first reads on from what the log holds, unchecked

	// Faults of the Config functions rather than of the store.
	failTrim      bool // TrimLog fails
	onePage       bool // BetweenPages leaves the pages unbounded, so the fault never runs
	nilInstance   bool // NewInstance returns nil
	plainInstance bool // NewInstance returns a store that is no ChangeLister
}

// plainStore hides every method but inventory.Store's.
type plainStore struct{ inventory.Store }

// logStore is an inventory.ChangeLister over a sharedLog, the model of a
// store shared by processes, for the checks that need a second instance
// (NewInstance) or a log that can be trimmed or lost (TrimLog, LoseLog):
// memstore has neither.
type logStore struct {
	sh *sharedLog
	f  logFaults

	mu         sync.Mutex // guards the two fields below (localOnly)
	lastCursor string
	wrote      bool
}

var _ inventory.ChangeLister = (*logStore)(nil)

func logStoreConfig(f logFaults) Config {
	return Config{
		NewStore: func(t *testing.T) inventory.Store {
			return &logStore{sh: &sharedLog{mem: newMem(t)}, f: f}
		},
		NewInstance: func(_ *testing.T, s inventory.Store) inventory.Store {
			switch {
			case f.nilInstance:
				return nil
			case f.plainInstance:
				return plainStore{&logStore{sh: s.(*logStore).sh, f: f}}
			}
			return &logStore{sh: s.(*logStore).sh, f: f}
		},
		TrimLog: func(_ context.Context, s inventory.Store) error {
			if f.failTrim {
				return errors.New("XTRIM: connection reset")
			}
			sh := s.(*logStore).sh
			sh.mu.Lock()
			defer sh.mu.Unlock()
			sh.first += len(sh.log)
			sh.log = nil
			return nil
		},
		BetweenPages: func(s inventory.Store, fault func()) {
			sh := s.(*logStore).sh
			sh.mu.Lock()
			defer sh.mu.Unlock()
			sh.page, sh.between = 3, fault
			if f.onePage {
				sh.page = 0
			}
		},
		LoseLog: func(_ context.Context, s inventory.Store) error {
			sh := s.(*logStore).sh
			sh.mu.Lock()
			defer sh.mu.Unlock()
			sh.epoch++
			sh.first, sh.log = 0, nil
			return nil
		},
	}
}

func (l *logStore) List(ctx context.Context) ([]inventory.Item, error) {
	l.sh.mu.Lock()
	defer l.sh.mu.Unlock()
	return l.sh.mem.List(ctx)
}

// write runs fn under the shared lock and logs what it returns.
func (l *logStore) write(fn func() ([]inventory.Change, error)) error {
	l.sh.mu.Lock()
	defer l.sh.mu.Unlock()
	changes, err := fn()
	if err != nil {
		return err
	}
	l.sh.log = append(l.sh.log, changes...)
	l.mu.Lock()
	l.wrote = true
	l.mu.Unlock()
	return nil
}

func (l *logStore) SetQuantity(ctx context.Context, id int64, q int) (it inventory.Item, err error) {
	err = l.write(func() ([]inventory.Change, error) {
		it, err = l.sh.mem.SetQuantity(ctx, id, q)
		return []inventory.Change{{Item: it}}, err
	})
	return it, err
}

func (l *logStore) Put(ctx context.Context, items ...inventory.Item) error {
	return l.write(func() ([]inventory.Change, error) {
		changes := make([]inventory.Change, len(items))
		for i, it := range items {
			changes[i].Item = it
		}
		return changes, l.sh.mem.Put(ctx, items...)
	})
}

func (l *logStore) Delete(ctx context.Context, id int64) error {
	return l.write(func() ([]inventory.Change, error) {
		return []inventory.Change{{Item: inventory.Item{PetID: id}, Deleted: true}}, l.sh.mem.Delete(ctx, id)
	})
}

// ListChanges answers a cursor "epoch.position" of the current epoch
// within the log with the changes after it, anything else with every
// entry.
func (l *logStore) ListChanges(ctx context.Context, since string) (inventory.Changes, error) {
	if err := ctx.Err(); err != nil {
		return inventory.Changes{}, err
	}
	if l.f.localOnly {
		l.mu.Lock()
		unchanged := since != "" && since == l.lastCursor && !l.wrote
		l.mu.Unlock()
		if unchanged {
			return inventory.Changes{Cursor: since}, nil
		}
	}
	ch, err := l.listChanges(ctx, since)
	if err == nil && l.f.localOnly {
		l.mu.Lock()
		l.lastCursor, l.wrote = ch.Cursor, false
		l.mu.Unlock()
	}
	return ch, err
}

func (l *logStore) listChanges(ctx context.Context, since string) (inventory.Changes, error) {
	sh := l.sh
	e, p, ok := strings.Cut(since, ".")
	epoch, err1 := strconv.Atoi(e)
	pos, err2 := strconv.Atoi(p)
	if !ok || err1 != nil || err2 != nil {
		return l.full(ctx)
	}
	var log []inventory.Change
	for first := true; ; first = false {
		sh.mu.Lock()
		now := sh.first + len(sh.log)
		if !first && l.f.unlinked {
			epoch, pos = sh.epoch, min(max(pos, sh.first), now)
		}
		if (epoch != sh.epoch && !l.f.ignoreEpoch) || pos > now || pos < 0 {
			sh.mu.Unlock()
			return l.full(ctx)
		}
		if pos < sh.first && l.f.ignoreTrim && first {
			pos = sh.first
		}
		if pos < sh.first {
			sh.mu.Unlock()
			return l.full(ctx)
		}
		end := now
		if sh.page > 0 {
			end = min(pos+sh.page, now)
		}
		log = append(log, sh.log[pos-sh.first:end-sh.first]...)
		pos, epoch = end, sh.epoch
		between := sh.between
		if end == now {
			sh.mu.Unlock()
			return inventory.Changes{Cursor: fmt.Sprintf("%d.%d", epoch, pos), Log: log}, nil
		}
		sh.between = nil
		sh.mu.Unlock()
		if between != nil {
			between()
		}
	}
}

// full answers every entry, with the cursor of the log's end.
func (l *logStore) full(ctx context.Context) (inventory.Changes, error) {
	sh := l.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	items, err := sh.mem.List(ctx)
	return inventory.Changes{Cursor: fmt.Sprintf("%d.%d", sh.epoch, sh.first+len(sh.log)), Full: true, Items: items}, err
}
