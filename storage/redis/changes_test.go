package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// commands counts the commands a client sends, those of pipelines and
// transactions one by one (MULTI and EXEC included), and its round trips:
// each command sent alone, and each pipeline or transaction, as one.
type commands struct{ n, trips atomic.Int64 }

func (*commands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		c.trips.Add(1)
		return next(ctx, cmd)
	}
}

func (c *commands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		c.trips.Add(1)
		return next(ctx, cmds)
	}
}

// count returns the commands c sends during f.
func (c *commands) count(f func()) int64 {
	before := c.n.Load()
	f()
	return c.n.Load() - before
}

// roundTrips returns the round trips c makes during f.
func (c *commands) roundTrips(f func()) int64 {
	before := c.trips.Load()
	f()
	return c.trips.Load() - before
}

// trimLog drops every entry of the store's change log, as a capped log
// outrun by writes does (storetest.Config.TrimLog).
func trimLog(ctx context.Context, st inventory.Store) error {
	s := st.(*Store)
	return s.client.XTrimMaxLen(ctx, s.logKey, 0).Err()
}

// loseLog replaces the store's change log by one with the same entries
// under the same ids, each with a new nonce: what a log created again
// after a restart without persistence, or a failover that lost entries,
// looks like at worst, ids reissued for other entries
// (storetest.Config.LoseLog).
func loseLog(ctx context.Context, st inventory.Store) error {
	s := st.(*Store)
	entries, err := s.client.XRange(ctx, s.logKey, "-", "+").Result()
	if err != nil {
		return err
	}
	_, err = s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, s.logKey)
		for _, e := range entries {
			op, _ := e.Values["op"].(string)
			d, _ := e.Values["d"].(string)
			p.XAdd(ctx, &redis.XAddArgs{Stream: s.logKey, ID: e.ID, Values: []string{"n", newNonce(), "op", op, "d", d}})
		}
		return nil
	})
	return err
}

// newInstance is a second store over the same data, as another process
// would open it (storetest.Config.NewInstance).
func newInstance(t *testing.T, st inventory.Store) inventory.Store {
	s := st.(*Store)
	other, err := New(s.client, WithKeyPrefix(s.prefix))
	if err != nil {
		t.Fatal(err)
	}
	return other
}

// follower holds what a caller of ListChanges holds: the entries and the
// cursor, kept current by applying each answer.
type follower struct {
	t      *testing.T
	s      *Store
	cursor string
	items  map[int64]inventory.Item
}

// list asks for what changed and applies it; it returns the answer.
func (f *follower) list() inventory.Changes {
	f.t.Helper()
	ch, err := f.s.ListChanges(f.t.Context(), f.cursor)
	if err != nil {
		f.t.Fatalf("ListChanges(%q) = %v", f.cursor, err)
	}
	if ch.Cursor == "" {
		f.t.Fatalf("ListChanges(%q) returned no cursor", f.cursor)
	}
	if ch.Full {
		if len(ch.Log) != 0 {
			f.t.Fatalf("a full answer with a log: %+v", ch.Log)
		}
		if !slices.IsSortedFunc(ch.Items, byPetID) {
			f.t.Fatalf("full answer not sorted by pet id: %+v", ch.Items)
		}
		f.items = make(map[int64]inventory.Item, len(ch.Items))
		for _, it := range ch.Items {
			if _, dup := f.items[it.PetID]; dup {
				f.t.Fatalf("pet %d twice in a full answer", it.PetID)
			}
			f.items[it.PetID] = it
		}
	} else {
		if f.items == nil {
			f.t.Fatal("a log answered to a caller that holds nothing")
		}
		for _, c := range ch.Log {
			if c.Deleted {
				delete(f.items, c.PetID)
			} else {
				f.items[c.PetID] = c.Item
			}
		}
	}
	f.cursor = ch.Cursor
	return ch
}

// sorted returns what the follower holds, as List returns it.
func (f *follower) sorted() []inventory.Item {
	return slices.SortedFunc(maps.Values(f.items), byPetID)
}

// check asks for what changed, and checks that the follower then holds
// what List returns and that the answer was full or not as want says.
func (f *follower) check(what string, wantFull bool) inventory.Changes {
	f.t.Helper()
	ch := f.list()
	if ch.Full != wantFull {
		f.t.Errorf("%s: ListChanges answered full %v, want %v (log %+v)", what, ch.Full, wantFull, ch.Log)
	}
	want, err := f.s.List(f.t.Context())
	if err != nil {
		f.t.Fatal(err)
	}
	if got := f.sorted(); !slices.Equal(got, want) {
		f.t.Fatalf("%s: after applying ListChanges the caller holds\n%+v\nList returns\n%+v", what, got, want)
	}
	return ch
}

func items(n int, from int64, q int, st inventory.Status) []inventory.Item {
	out := make([]inventory.Item, n)
	for i := range out {
		out[i] = inventory.Item{PetID: from + int64(i), Quantity: q, Status: st}
	}
	return out
}

// TestListChangesCommands: a list of an unchanged inventory is one
// command (XRANGE) whatever its size, and so is one after a write.
func TestListChangesCommands(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		ctx := t.Context()
		cmds := &commands{}
		c.AddHook(cmds)
		s := newTestStore(t, c)
		if err := s.Put(ctx, items(1000, 0, 5, inventory.StatusAvailable)...); err != nil {
			t.Fatal(err)
		}
		f := &follower{t: t, s: s}
		if ch := f.list(); !ch.Full || len(ch.Items) != 1000 {
			t.Fatalf("ListChanges(\"\") = full %v, %d items; want full, 1000", ch.Full, len(ch.Items))
		}
		for _, size := range []int{1000, 3000} {
			if err := s.Put(ctx, items(size-1000, 1000, 1, inventory.StatusSold)...); err != nil {
				t.Fatal(err)
			}
			f.list() // takes the Put in
			cursor := f.cursor
			var ch inventory.Changes
			if n := cmds.count(func() { ch = f.list() }); n != 1 {
				t.Errorf("%d pets: ListChanges of the current cursor sent %d commands, want 1 (XRANGE)", size, n)
			}
			if ch.Full || len(ch.Log) != 0 || ch.Cursor != cursor {
				t.Errorf("%d pets: ListChanges of the current cursor = %+v, want nothing changed and the same cursor", size, ch)
			}
			if _, err := s.SetQuantity(ctx, 7, 70); err != nil {
				t.Fatal(err)
			}
			if n := cmds.count(func() { ch = f.list() }); n != 1 {
				t.Errorf("%d pets: ListChanges after one update sent %d commands, want 1 (XRANGE)", size, n)
			}
			want := []inventory.Change{{Item: inventory.Item{PetID: 7, Quantity: 70, Status: inventory.StatusAvailable}}}
			if ch.Full || !slices.Equal(ch.Log, want) || ch.Cursor == cursor {
				t.Errorf("%d pets: ListChanges after one update = full %v, log %+v, cursor %q (was %q); want log %+v and a new cursor", size, ch.Full, ch.Log, ch.Cursor, cursor, want)
			}
		}
	})
}

// TestListChangesIncremental: after each kind of write the answer is the
// log of what changed, paged (3 entries a page here), and applying it
// gives what List returns.
func TestListChangesIncremental(t *testing.T) {
	// Pages of 3 entries, and of 1: a first page then holds only the
	// cursor's own entry.
	for _, page := range []int64{3, 1} {
		t.Run(fmt.Sprintf("page=%d", page), func(t *testing.T) { testListChangesIncremental(t, page) })
	}
}

func testListChangesIncremental(t *testing.T, page int64) {
	backends(t, func(t *testing.T, c *redis.Client) {
		ctx := t.Context()
		s := newTestStore(t, c)
		s.logPage, s.putChunk = page, 100
		f := &follower{t: t, s: s}
		f.check("empty store", true)
		f.check("nothing changed", false)
		steps := []struct {
			what  string
			write func() error
		}{
			{"Put of 2", func() error {
				return s.Put(ctx, items(2, 1, 3, inventory.StatusPending)...)
			}},
			{"SetQuantity", func() error { _, err := s.SetQuantity(ctx, 2, 9); return err }},
			{"Delete", func() error { return s.Delete(ctx, 1) }},
			{"Delete of no entry", func() error {
				if err := s.Delete(ctx, 1); !errors.Is(err, inventory.ErrNotFound) {
					return fmt.Errorf("Delete of a deleted pet = %v, want not found", err)
				}
				return nil
			}},
			{"Put of 450 in 5 chunks", func() error {
				return s.Put(ctx, items(450, -200, 4, inventory.StatusSold)...)
			}},
			{"10 updates and a delete", func() error {
				for i := range 10 {
					if _, err := s.SetQuantity(ctx, int64(i), i*11); err != nil {
						return err
					}
				}
				return s.Delete(ctx, 3)
			}},
		}
		for _, st := range steps {
			if err := st.write(); err != nil {
				t.Fatalf("%s: %v", st.what, err)
			}
			f.check(st.what, false)
			f.check(st.what+", then nothing", false)
		}
	})
}

// TestListChangesFallbacks: whenever the log cannot say what changed since
// the cursor, the answer is full and right, and a line is logged when
// something is wrong (not for a seed).
func TestListChangesFallbacks(t *testing.T) {
	pet := inventory.Item{PetID: 4, Quantity: 2, Status: inventory.StatusAvailable}
	cases := []struct {
		name  string
		do    func(t *testing.T, s *Store, f *follower)
		log   string // in the log line; "" for none
		level string
	}{
		{"Trimmed", func(t *testing.T, s *Store, f *follower) {
			if _, err := s.SetQuantity(t.Context(), 4, 3); err != nil {
				t.Fatal(err)
			}
			if err := trimLog(t.Context(), s); err != nil {
				t.Fatal(err)
			}
		}, "no longer holds the position", "INFO"},
		{"TrimmedThenWritten", func(t *testing.T, s *Store, f *follower) {
			if err := trimLog(t.Context(), s); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(t.Context(), items(3, 10, 1, inventory.StatusSold)...); err != nil {
				t.Fatal(err)
			}
		}, "no longer holds the position", "INFO"},
		{"SameIDsNewNonces", func(t *testing.T, s *Store, f *follower) {
			if _, err := s.SetQuantity(t.Context(), 4, 3); err != nil {
				t.Fatal(err)
			}
			if err := loseLog(t.Context(), s); err != nil {
				t.Fatal(err)
			}
		}, "no longer holds the position", "INFO"},
		{"Cleared", func(t *testing.T, s *Store, f *follower) {
			if err := s.Clear(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(t.Context(), items(2, 100, 1, inventory.StatusSold)...); err != nil {
				t.Fatal(err)
			}
		}, "no longer holds the position", "INFO"},
		{"Seeded", func(t *testing.T, s *Store, f *follower) {
			if err := s.Delete(t.Context(), 4); err != nil {
				t.Fatal(err)
			}
			f.check("emptied", false)
			if wrote, err := s.PutIfEmpty(t.Context(), items(5, 1, 8, inventory.StatusSold)...); !wrote || err != nil {
				t.Fatalf("PutIfEmpty = %v, %v", wrote, err)
			}
		}, "", ""},
		{"CorruptData", func(t *testing.T, s *Store, f *follower) {
			s.logAdd(t.Context(), s.client, 1, opSet, "4:x:sold")
		}, "cannot be parsed", "WARN"},
		{"UnknownOp", func(t *testing.T, s *Store, f *follower) {
			s.logAdd(t.Context(), s.client, 1, "swap", "4")
		}, "cannot be parsed", "WARN"},
		{"NoNonce", func(t *testing.T, s *Store, f *follower) {
			s.client.XAdd(t.Context(), &redis.XAddArgs{Stream: s.logKey, Values: []string{"op", opDel, "d", "4"}})
		}, "cannot be parsed", "WARN"},
		{"MalformedCursor", func(t *testing.T, s *Store, f *follower) {
			f.cursor = "12-x/abc"
		}, "never issued", "WARN"},
		{"CursorWithoutNonce", func(t *testing.T, s *Store, f *follower) {
			f.cursor = strings.Split(f.cursor, "/")[0]
		}, "never issued", "WARN"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			backends(t, func(t *testing.T, c *redis.Client) {
				var buf syncBuffer
				s := newTestStore(t, c, WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
				if err := s.Put(t.Context(), pet); err != nil {
					t.Fatal(err)
				}
				f := &follower{t: t, s: s}
				f.check("first", true)
				tc.do(t, s, f)
				buf = syncBuffer{}
				f.check(tc.name, true)
				f.check(tc.name+", then nothing", false)
				logs := buf.String()
				if tc.log == "" {
					if logs != "" {
						t.Errorf("logged %q, want nothing", logs)
					}
				} else if strings.Count(logs, "\n") != 1 || !strings.Contains(logs, tc.log) || !strings.Contains(logs, "level="+tc.level) {
					t.Errorf("logged %q, want one line at %s saying %q", logs, tc.level, tc.log)
				}
			})
		})
	}
}

// TestFullReadStartsOver: when the log moves under a full read (its
// starting entry trimmed away, a seed, an entry that cannot be parsed) it
// starts over, and gives up as unavailable when that keeps happening.
func TestFullReadStartsOver(t *testing.T) {
	backends(t, func(t *testing.T, c *redis.Client) {
		ctx := t.Context()
		var buf syncBuffer
		s := newTestStore(t, c, WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
		if err := s.Put(ctx, items(300, 0, 1, inventory.StatusSold)...); err != nil {
			t.Fatal(err)
		}
		moves := []func(){
			func() { _ = trimLog(ctx, s); _, _ = s.SetQuantity(ctx, 5, 55) },
			func() { s.logAdd(ctx, s.client, 1, opSet, "garbage") },
			func() { s.logAdd(ctx, s.client, 1, opReset, "") },
		}
		for i, move := range moves {
			buf = syncBuffer{}
			attempts := 0
			s.hooks.afterScan = func(int) {
				if attempts++; attempts == 1 {
					move()
				}
			}
			got, err := s.List(ctx)
			if err != nil || len(got) != 300 || got[5].Quantity != 55 && i == 0 {
				t.Fatalf("move %d: List = %d items, %v", i, len(got), err)
			}
			if attempts != 2 {
				t.Errorf("move %d: %d scans, want 2 (the second after starting over)", i, attempts)
			}
			if i == 1 && !strings.Contains(buf.String(), "cannot be parsed") {
				t.Errorf("move %d: logged %q, want a line about the entry that cannot be parsed", i, buf.String())
			}
		}
		s.hooks.afterScan = func(int) { s.logAdd(ctx, s.client, 1, opReset, "") }
		if got, err := s.List(ctx); !errors.Is(err, inventory.ErrUnavailable) || got != nil {
			t.Fatalf("List while the log is reset during every scan = %d items, %v; want unavailable", len(got), err)
		}
	})
}

// pageFaults runs a fault once, just before the second XRANGE of the
// change log it is armed for: a log trimmed, deleted or replaced between
// two pages of one read (storetest.Config.BetweenPages). One is added to
// a client, for every store on it.
type pageFaults struct {
	mu    sync.Mutex
	armed map[string]*pageFault // by the log's key
}

type pageFault struct {
	xranges int
	fault   func()
}

// arm makes the next read of logKey's log run fault before its second page.
func (p *pageFaults) arm(logKey string, fault func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed == nil {
		p.armed = map[string]*pageFault{}
	}
	p.armed[logKey] = &pageFault{fault: fault}
}

// due returns the fault to run before cmd, if any.
func (p *pageFaults) due(cmd redis.Cmder) func() {
	args := cmd.Args()
	if cmd.Name() != "xrange" || len(args) < 2 {
		return nil
	}
	key, _ := args[1].(string)
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.armed[key]
	if a == nil {
		return nil
	}
	if a.xranges++; a.xranges < 2 {
		return nil
	}
	delete(p.armed, key)
	return a.fault
}

func (*pageFaults) DialHook(next redis.DialHook) redis.DialHook { return next }

func (p *pageFaults) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if f := p.due(cmd); f != nil {
			f()
		}
		return next(ctx, cmd)
	}
}

func (*pageFaults) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// betweenPages is storetest.Config.BetweenPages for stores on a client
// that p was added to: pages of 3 entries (the entry read last and 2 new
// ones), and fault before the second.
func (p *pageFaults) betweenPages(st inventory.Store, fault func()) {
	s := st.(*Store)
	s.logPage = 3
	p.arm(s.logKey, fault)
}

// replaceLog replaces the store's log by one with the same ids, new
// nonces and other quantities (each set 1000 more), and the items by the
// state that log leads to: a failover that lost the log's tail and took
// other writes under reissued ids, at worst.
func replaceLog(ctx context.Context, s *Store) error {
	entries, err := s.client.XRange(ctx, s.logKey, "-", "+").Result()
	if err != nil {
		return err
	}
	_, err = s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, s.logKey)
		for _, e := range entries {
			op, _ := entryField(e, "op")
			d, _ := entryField(e, "d")
			if op == opSet {
				changes, err := appendChanges(nil, op, d)
				if err != nil {
					return err
				}
				var recs []string
				for _, c := range changes {
					c.Quantity += 1000
					p.HSet(ctx, s.itemsKey, field(c.PetID), value(c.Quantity, c.Status))
					recs = append(recs, fmt.Sprintf("%d:%d:%s", c.PetID, c.Quantity, c.Status))
				}
				d = strings.Join(recs, ",")
			}
			p.XAdd(ctx, &redis.XAddArgs{Stream: s.logKey, ID: e.ID, Values: []string{"n", newNonce(), "op", op, "d", d}})
		}
		return nil
	})
	return err
}

// logFaults are the ways the log can move between two pages of a read.
var logFaults = []struct {
	name string
	do   func(ctx context.Context, s *Store) error
}{
	{"XTRIM", func(ctx context.Context, s *Store) error { return trimLog(ctx, s) }},
	{"XTRIMThenWrite", func(ctx context.Context, s *Store) error {
		if err := trimLog(ctx, s); err != nil {
			return err
		}
		_, err := s.SetQuantity(ctx, 12, 1200)
		return err
	}},
	{"DEL", func(ctx context.Context, s *Store) error { return s.client.Del(ctx, s.logKey).Err() }},
	{"DELThenWrites", func(ctx context.Context, s *Store) error {
		if err := s.client.Del(ctx, s.logKey).Err(); err != nil {
			return err
		}
		for i := range 3 {
			if _, err := s.SetQuantity(ctx, 12, 1200+i); err != nil {
				return err
			}
		}
		return nil
	}},
	{"Replaced", replaceLog},
}

// TestLogPagesFollowEachOther: a log trimmed, deleted or replaced between
// two pages of a read makes the read fall back to a full one (with its
// log line), never skip what was lost; then the cursor follows the log
// again. Pages of 1 (read as 2), 2 and 3 entries.
func TestLogPagesFollowEachOther(t *testing.T) {
	for _, page := range []int64{1, 2, 3} {
		for _, fault := range logFaults {
			t.Run(fmt.Sprintf("page=%d/%s", page, fault.name), func(t *testing.T) {
				backends(t, func(t *testing.T, c *redis.Client) {
					ctx := t.Context()
					pf := &pageFaults{}
					c.AddHook(pf)
					var buf syncBuffer
					s := newTestStore(t, c, WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
					s.logPage = page
					if err := s.Put(ctx, items(12, 1, 1, inventory.StatusAvailable)...); err != nil {
						t.Fatal(err)
					}
					f := &follower{t: t, s: s}
					f.check("first", true)
					for i := range 10 {
						if _, err := s.SetQuantity(ctx, int64(1+i), 10+i); err != nil {
							t.Fatal(err)
						}
					}
					ran := false
					pf.arm(s.logKey, func() {
						ran = true
						if err := fault.do(ctx, s); err != nil {
							t.Error(err)
						}
					})
					buf = syncBuffer{}
					f.check(fault.name+" between two pages", true)
					if !ran {
						t.Fatal("the fault never ran: the read took one page")
					}
					if logs := buf.String(); strings.Count(logs, "\n") != 1 || !strings.Contains(logs, "between two pages") || !strings.Contains(logs, "level=INFO") {
						t.Errorf("logged %q, want one line at INFO saying the log lost entries between two pages", logs)
					}
					for i := range 5 {
						if _, err := s.SetQuantity(ctx, int64(1+i), 50+i); err != nil {
							t.Fatal(err)
						}
					}
					f.check("writes after", false)
					f.check("nothing after", false)
				})
			})
		}
	}
}

// TestFullReadReplayPagesFollowEachOther: the replay after a full read's
// HSCAN pages the log the same way; a log trimmed, deleted or replaced
// between two of its pages makes the full read start over.
func TestFullReadReplayPagesFollowEachOther(t *testing.T) {
	for _, page := range []int64{1, 2, 3} {
		for _, fault := range logFaults {
			t.Run(fmt.Sprintf("page=%d/%s", page, fault.name), func(t *testing.T) {
				backends(t, func(t *testing.T, c *redis.Client) {
					ctx := t.Context()
					pf := &pageFaults{}
					c.AddHook(pf)
					s := newTestStore(t, c)
					s.logPage = page
					if err := s.Put(ctx, items(12, 1, 1, inventory.StatusAvailable)...); err != nil {
						t.Fatal(err)
					}
					ran, scans := false, 0
					s.hooks.afterScan = func(int) {
						if scans++; scans > 1 {
							return
						}
						for i := range 10 {
							if _, err := s.SetQuantity(ctx, int64(1+i), 10+i); err != nil {
								t.Error(err)
							}
						}
						pf.arm(s.logKey, func() {
							ran = true
							if err := fault.do(ctx, s); err != nil {
								t.Error(err)
							}
						})
					}
					got, err := s.List(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if !ran || scans != 2 {
						t.Fatalf("the fault ran %v, %d scans; want it run and 2 scans (the second after starting over)", ran, scans)
					}
					s.hooks.afterScan = nil
					want, err := s.List(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("List with the log moved under its replay =\n%+v\nthen List =\n%+v", got, want)
					}
				})
			})
		}
	}
}
