package redisstore

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/petinventory/petinventory/internal/redistest"
	"github.com/petinventory/petinventory/inventory"
	"github.com/redis/go-redis/v9"
)

// cutOn is a hook that makes a proxy cut the connection of the first
// command named name (alone or in a pipeline or transaction) and of the
// n-1 chunks a client sends after it, and counts the commands of that
// name sent.
type cutOn struct {
	name string
	n    int
	p    *redistest.Proxy
	armed,
	sent atomic.Int64
}

func (*cutOn) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *cutOn) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.see([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

func (c *cutOn) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.see(cmds)
		return next(ctx, cmds)
	}
}

func (c *cutOn) see(cmds []redis.Cmder) {
	for _, cmd := range cmds {
		if cmd.Name() == c.name {
			c.sent.Add(1)
			if c.armed.CompareAndSwap(0, 1) {
				c.p.CutNext(c.n)
			}
			return
		}
	}
}

// cutStore is a store whose Redis connections go through a proxy that
// can cut them, with 40 pets. Without goRedisRetries, go-redis's own
// retries (MaxRetries) are off: each may land on another cut connection,
// and with them off, the store's own retry is what answers.
func cutStore(t *testing.T, goRedisRetries bool) (*Store, *redistest.Proxy) {
	t.Helper()
	n := redistest.StartNode(t, "cut")
	p := redistest.StartProxy(t, n.Addr(), 0)
	var s *Store
	if goRedisRetries {
		s = storeAtURL(t, "redis://"+p.Addr()+"/0", WithKeyPrefix(uniquePrefix(t)))
	} else {
		o := &redis.Options{Addr: p.Addr()}
		ApplyTimeouts(o)
		o.MaxRetries = -1
		c := redis.NewClient(o)
		t.Cleanup(func() { _ = c.Close() })
		var err error
		if s, err = New(c, WithKeyPrefix(uniquePrefix(t))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(t.Context(), items(40, 0, 1, inventory.StatusAvailable)...); err != nil {
		t.Fatal(err)
	}
	return s, p
}

// A full read whose connection is cut under it runs once more, on
// another connection, and answers; cut again, it fails as unavailable.
func TestListRetriedOnceWhenCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cuts int
		ok   bool
	}{{"cut once", 1, true}, {"cut twice", 2, false}} {
		t.Run(tc.name, func(t *testing.T) {
			s, p := cutStore(t, false)
			hook := &cutOn{name: "hscan", n: tc.cuts, p: p}
			s.client.AddHook(hook)
			got, err := s.List(t.Context())
			if p.Cuts() != tc.cuts {
				t.Fatalf("the proxy cut %d connections, want %d", p.Cuts(), tc.cuts)
			}
			if tc.ok && (err != nil || len(got) != 40) {
				t.Fatalf("List after one cut = %d items, %v; want the 40", len(got), err)
			}
			if !tc.ok && !errors.Is(err, inventory.ErrUnavailable) {
				t.Fatalf("List cut twice = %v; want unavailable (retried once only)", err)
			}
			if r := s.cutRetries.Load(); r != 1 {
				t.Errorf("cutRetries = %d, want 1", r)
			}
		})
	}
}

// A list by cursor (one XRANGE) cut under it runs once more too.
func TestListChangesRetriedWhenCut(t *testing.T) {
	t.Parallel()
	s, p := cutStore(t, false)
	ch, err := s.ListChanges(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetQuantity(t.Context(), 3, 9); err != nil {
		t.Fatal(err)
	}
	s.client.AddHook(&cutOn{name: "xrange", n: 1, p: p})
	got, err := s.ListChanges(t.Context(), ch.Cursor)
	if err != nil || p.Cuts() != 1 || len(got.Log) != 1 || got.Log[0].Quantity != 9 {
		t.Fatalf("ListChanges after a cut = %+v, %v (%d cut); want the one change", got, err, p.Cuts())
	}
	if r := s.cutRetries.Load(); r != 1 {
		t.Errorf("cutRetries = %d, want 1", r)
	}
}

// An update whose connection is cut before its EXEC was sent (its WATCH
// and read) wrote nothing, and runs once more; one cut with its EXEC in
// flight has an unknown outcome and fails as unavailable, not retried.
// go-redis's own retries are on, as in the server: they cannot help a
// transaction, whose connection is its own ("Conn is in a bad state").
func TestUpdateCut(t *testing.T) {
	t.Parallel()
	t.Run("before EXEC", func(t *testing.T) {
		s, p := cutStore(t, true)
		hook := &cutOn{name: "watch", n: 1, p: p}
		s.client.AddHook(hook)
		it, err := s.SetQuantity(t.Context(), 5, 77)
		if err != nil || it.Quantity != 77 {
			t.Fatalf("SetQuantity cut before EXEC = %+v, %v; want it written", it, err)
		}
		if st := s.Stats(); p.Cuts() != 1 || hook.sent.Load() != 2 || st.CutRetries != 1 || st.CutAfterExec != 0 {
			t.Errorf("%d cut, %d WATCH sent, %+v; want 1, 2 (once more), CutRetries 1 and CutAfterExec 0", p.Cuts(), hook.sent.Load(), st)
		}
		got, err := s.List(t.Context())
		if err != nil || got[5].Quantity != 77 {
			t.Fatalf("List = %v, %v; want pet 5 at 77", got, err)
		}
	})
	t.Run("before EXEC, twice", func(t *testing.T) {
		// A CLIENT KILL of every client cuts the pool's idle connections
		// too: the first retry may be handed one of them.
		s, p := cutStore(t, true)
		hook := &cutOn{name: "watch", n: 2, p: p}
		s.client.AddHook(hook)
		it, err := s.SetQuantity(t.Context(), 5, 76)
		if err != nil || it.Quantity != 76 {
			t.Fatalf("SetQuantity cut twice before EXEC = %+v, %v; want it written", it, err)
		}
		if st := s.Stats(); p.Cuts() != 2 || st.CutRetries != 2 || st.CutAfterExec != 0 {
			t.Errorf("%d cut, %+v; want 2, CutRetries 2 and CutAfterExec 0", p.Cuts(), st)
		}
	})
	t.Run("before EXEC, every time", func(t *testing.T) {
		s, p := cutStore(t, true)
		hook := &cutOn{name: "watch", n: maxCutRetries + 1, p: p}
		s.client.AddHook(hook)
		_, err := s.SetQuantity(t.Context(), 5, 75)
		if !errors.Is(err, inventory.ErrUnavailable) {
			t.Fatalf("SetQuantity cut before every EXEC = %v; want unavailable after %d retries", err, maxCutRetries)
		}
		if st := s.Stats(); st.CutRetries != maxCutRetries || st.CutAfterExec != 0 {
			t.Errorf("%+v; want CutRetries %d and CutAfterExec 0", st, maxCutRetries)
		}
		if got, err := s.List(t.Context()); err != nil || got[5].Quantity != 1 {
			t.Fatalf("List = %v, %v; want pet 5 unchanged", got, err)
		}
	})
	t.Run("EXEC in flight", func(t *testing.T) {
		s, p := cutStore(t, true)
		hook := &cutOn{name: "exec", n: 1, p: p}
		s.client.AddHook(hook)
		_, err := s.SetQuantity(t.Context(), 5, 78)
		if !errors.Is(err, inventory.ErrUnavailable) {
			t.Fatalf("SetQuantity cut with EXEC in flight = %v; want unavailable (outcome unknown)", err)
		}
		if st := s.Stats(); p.Cuts() != 1 || hook.sent.Load() != 1 || st.CutRetries != 0 || st.CutAfterExec != 1 {
			t.Errorf("%d cut, %d EXEC sent, %+v; want 1, 1 (not again), CutRetries 0 and CutAfterExec 1", p.Cuts(), hook.sent.Load(), st)
		}
		// The proxy dropped the EXEC: nothing was written, and the next
		// update goes through on a new connection.
		if got, err := s.List(t.Context()); err != nil || got[5].Quantity != 1 {
			t.Fatalf("List = %v, %v; want pet 5 unchanged", got, err)
		}
		if it, err := s.SetQuantity(t.Context(), 5, 79); err != nil || it.Quantity != 79 {
			t.Fatalf("SetQuantity after the cut = %+v, %v", it, err)
		}
	})
}
