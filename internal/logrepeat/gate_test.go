package logrepeat

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestAllowFirstThenQuietThenCounted(t *testing.T) {
	var g Gate
	t0 := time.Unix(1000, 0)
	if ok, held := g.Allow("a", t0); !ok || held != 0 {
		t.Fatalf("first occurrence: got %v, %d; want true, 0", ok, held)
	}
	for i := 1; i <= 5; i++ {
		if ok, _ := g.Allow("a", t0.Add(time.Duration(i)*time.Second)); ok {
			t.Fatalf("repeat %d within the interval was allowed", i)
		}
	}
	if ok, held := g.Allow("b", t0.Add(time.Second)); !ok || held != 0 {
		t.Fatalf("another line: got %v, %d; want true, 0", ok, held)
	}
	if ok, held := g.Allow("a", t0.Add(DefaultInterval)); !ok || held != 5 {
		t.Fatalf("after the interval: got %v, %d; want true, 5", ok, held)
	}
	if ok, _ := g.Allow("a", t0.Add(DefaultInterval+time.Second)); ok {
		t.Fatal("the interval did not start again after the line was logged")
	}
}

func TestIntervalSetting(t *testing.T) {
	g := Gate{Interval: 10 * time.Millisecond}
	t0 := time.Unix(0, 0)
	g.Allow("x", t0)
	if ok, _ := g.Allow("x", t0.Add(9*time.Millisecond)); ok {
		t.Fatal("allowed before Interval")
	}
	if ok, held := g.Allow("x", t0.Add(10*time.Millisecond)); !ok || held != 1 {
		t.Fatalf("at Interval: got %v, %d; want true, 1", ok, held)
	}
}

func TestBoundedMemory(t *testing.T) {
	g := Gate{Max: 4}
	t0 := time.Unix(0, 0)
	for i := range 100 {
		if ok, _ := g.Allow(fmt.Sprint(i), t0); !ok {
			t.Fatalf("new line %d was held back", i)
		}
		if len(g.lines) > 4 {
			t.Fatalf("remembers %d lines, more than Max 4", len(g.lines))
		}
	}
	// Old quiet lines are dropped first, recent ones kept.
	g = Gate{Max: 2, Interval: time.Second}
	g.Allow("old", t0)
	g.Allow("recent", t0.Add(1500*time.Millisecond))
	g.Allow("new", t0.Add(1600*time.Millisecond))
	if _, ok := g.lines["recent"]; !ok {
		t.Fatal("a recent line was forgotten while an expired one could go")
	}
	if _, ok := g.lines["old"]; ok {
		t.Fatal("an expired line was kept past Max")
	}
	// A Max lowered on a Gate in use: the lines never grow, and come down
	// to Max as they expire.
	g = Gate{Max: 8, Interval: time.Second}
	for i := range 8 {
		g.Allow(fmt.Sprint(i), t0)
	}
	g.Max = 4
	if ok, _ := g.Allow("new", t0.Add(time.Millisecond)); !ok || len(g.lines) > 8 {
		t.Fatalf("a new line after Max was lowered: allowed %v, %d lines remembered; want true and no more than the 8 before", ok, len(g.lines))
	}
	if ok, _ := g.Allow("later", t0.Add(2*time.Second)); !ok || len(g.lines) > 4 {
		t.Fatalf("a new line once the others expired: allowed %v, %d lines remembered; want true and at most Max 4", ok, len(g.lines))
	}
}

func TestConcurrentUse(t *testing.T) {
	var g Gate
	now := time.Unix(0, 0)
	var wg sync.WaitGroup
	allowed := make(chan bool, 800)
	for range 8 {
		wg.Go(func() {
			for range 100 {
				ok, _ := g.Allow("same", now)
				allowed <- ok
			}
		})
	}
	wg.Wait()
	close(allowed)
	n := 0
	for ok := range allowed {
		if ok {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d of 800 concurrent occurrences were allowed, want 1", n)
	}
}

// TestFloodStaysThrottled: Max+10 distinct lines, each logged once, then
// all of them again within the interval: only the 10 oldest were
// forgotten to make room, and the Max most recent stay held back, so a
// flood of distinct lines is throttled (forgetting every line when full
// would let every one of them through again).
func TestFloodStaysThrottled(t *testing.T) {
	const max = 8
	g := Gate{Max: max, Interval: time.Minute}
	t0 := time.Unix(0, 0)
	const lines = max + 10
	for i := range lines {
		if ok, _ := g.Allow(fmt.Sprint("line ", i), t0.Add(time.Duration(i)*time.Millisecond)); !ok {
			t.Fatalf("the first occurrence of line %d was held back", i)
		}
	}
	if len(g.lines) != max {
		t.Fatalf("remembers %d lines after %d distinct ones, want Max %d", len(g.lines), lines, max)
	}
	later := t0.Add(time.Second)
	for i := lines - 1; i >= 10; i-- { // the most recent first: none of them is pushed out
		if ok, _ := g.Allow(fmt.Sprint("line ", i), later); ok {
			t.Errorf("line %d, one of the %d most recent, was let through again within the interval", i, max)
		}
	}
	if ok, _ := g.Allow("line 0", later); !ok {
		t.Error("line 0, the oldest, was not forgotten to make room")
	}
	if _, kept := g.lines["line 10"]; kept {
		t.Error("line 0 came back in place of another than the oldest (line 10)")
	}
}
