package redisurl

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kind is the type of a parameter's value.
type Kind int

// The kinds of parameter values, as go-redis reads them.
const (
	Text     Kind = iota // any string (client_name)
	Number               // an integer (pool_size=20, max_retries=-1)
	Duration             // 500ms, 3s, or a whole number of seconds (dial_timeout=3); 0 or less turns it off
	Bool                 // true, false, 1 or 0
)

// Forms is a set of topologies a parameter goes with.
type Forms uint8

// The forms of Forms.
const (
	InSingle Forms = 1 << iota
	InCluster
	InSentinel
	InAll = InSingle | InCluster | InSentinel
)

// Param is a tuning parameter of a Redis URL: one of go-redis's, which
// go-redis maps to its options, for the forms whose parser reads it.
type Param struct {
	Name  string
	Kind  Kind
	Forms Forms
	// ReplicaReads: it would send reads to replicas; refused.
	ReplicaReads bool
}

// Params are the tuning parameters, as go-redis v9's URL parsers read
// them (redis.ParseURL for one node, ParseClusterURL, ParseFailoverURL):
// a parameter a form's parser does not read is an error in that form, as
// it is in go-redis. storage/redis tests that go-redis's parser of each
// form accepts each parameter listed for it.
var Params = []Param{
	{"client_name", Text, InAll, false},
	{"protocol", Number, InAll, false},
	{"max_retries", Number, InAll, false},
	{"min_retry_backoff", Duration, InAll, false},
	{"max_retry_backoff", Duration, InAll, false},
	{"dial_timeout", Duration, InAll, false},
	{"read_timeout", Duration, InAll, false},
	{"write_timeout", Duration, InAll, false},
	{"pool_fifo", Bool, InAll, false},
	{"pool_size", Number, InAll, false},
	{"pool_timeout", Duration, InAll, false},
	{"min_idle_conns", Number, InAll, false},
	{"max_idle_conns", Number, InAll, false},
	{"max_active_conns", Number, InAll, false},
	{"max_concurrent_dials", Number, InAll, false},
	{"pipeline_pool_size", Number, InAll, false},
	{"pipeline_read_buffer_size", Number, InAll, false},
	{"pipeline_write_buffer_size", Number, InAll, false},
	{"conn_max_idle_time", Duration, InAll, false},
	{"conn_max_lifetime", Duration, InAll, false},
	{"conn_max_lifetime_jitter", Duration, InAll, false},
	{"idle_timeout", Duration, InSingle, false}, // conn_max_idle_time's old name
	{"max_conn_age", Duration, InSingle, false}, // conn_max_lifetime's old name
	{"dialer_retries", Number, InCluster | InSentinel, false},
	{"dialer_retry_timeout", Duration, InCluster | InSentinel, false},
	{"route_by_latency_tolerance", Duration, InCluster | InSentinel, false},
	{"context_timeout_enabled", Bool, InSentinel, false},
	{"max_redirects", Number, InCluster, false},
	{"failing_timeout_seconds", Number, InCluster, false},
	{"read_only", Bool, InCluster, true},
	{"route_by_latency", Bool, InCluster | InSentinel, true},
	{"route_randomly", Bool, InCluster | InSentinel, true},
	{"replica_only", Bool, InSentinel, true},
	{"use_disconnected_replicas", Bool, InSentinel, true},
}

// structural are the parameters that shape what a URL names, read by
// Parse itself into URL's fields.
var structural = []string{"addr", "cluster", "db", "master_name", "password", "skip_verify", "username"}

// oldNames are go-redis's old names of two parameters: it reads the old
// one only without the new, so giving both is an error.
var oldNames = map[string]string{"idle_timeout": "conn_max_idle_time", "max_conn_age": "conn_max_lifetime"}

// param returns the tuning parameter named name.
func param(name string) (Param, bool) {
	i := slices.IndexFunc(Params, func(p Param) bool { return p.Name == name })
	if i < 0 {
		return Param{}, false
	}
	return Params[i], true
}

// Known reports whether name is a parameter of some form.
func Known(name string) bool {
	_, ok := param(name)
	return ok || slices.Contains(structural, name)
}

// formOf is the set a topology's URL is in.
func formOf(t Topology) Forms {
	switch t {
	case Cluster:
		return InCluster
	case Sentinel:
		return InSentinel
	}
	return InSingle
}

// String names the forms: "a Cluster or Sentinel".
func (f Forms) String() string {
	var names []string
	for _, n := range []struct {
		f    Forms
		name string
	}{{InSingle, "one node"}, {InCluster, "a Cluster"}, {InSentinel, "Sentinel"}} {
		if f&n.f != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, " or ")
}

// checkNames fails on a parameter no form knows (suggesting the known
// one it looks like a misspelling of) and on one given more than once
// (addr aside, which names one address each time).
func checkNames(q url.Values) error {
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	slices.Sort(names) // the same error for the same URL
	for _, k := range names {
		if !Known(k) {
			return unknownParam(k)
		}
		if len(q[k]) > 1 && k != "addr" {
			return fmt.Errorf("parameter %s is given more than once", k)
		}
	}
	return nil
}

// checkTuning checks the tuning parameters of q against the form of t:
// each one the form's, not one that reads from replicas, of its kind.
func checkTuning(q url.Values, t Topology) error {
	for _, p := range Params {
		if !q.Has(p.Name) {
			continue
		}
		switch {
		case p.Forms&formOf(t) == 0:
			return fmt.Errorf("parameter %s is go-redis's for %s only; this URL names %s", p.Name, p.Forms, t.article())
		case p.ReplicaReads:
			return fmt.Errorf("parameter %s: the store reads and writes the master only (it must read what it wrote), so reads cannot go to replicas", p.Name)
		}
		if err := checkValue(p.Kind, q.Get(p.Name)); err != nil {
			return fmt.Errorf("parameter %s=%q: %w", p.Name, q.Get(p.Name), err)
		}
	}
	for old, name := range oldNames {
		if q.Has(old) && q.Has(name) {
			return fmt.Errorf("parameters %s and %s name the same setting (%s is the old name): give one", old, name, old)
		}
	}
	return nil
}

// checkValue checks a value of kind k as go-redis parses it.
func checkValue(k Kind, v string) error {
	if v == "" {
		return nil // go-redis: the default
	}
	switch k {
	case Number:
		if _, err := strconv.Atoi(v); err != nil {
			return errors.New("want a whole number")
		}
	case Duration:
		if _, err := strconv.Atoi(v); err == nil {
			return nil
		}
		if _, err := time.ParseDuration(v); err != nil {
			return errors.New("want a duration (500ms, 3s) or a whole number of seconds")
		}
	case Bool:
		if _, err := parseBool(v); err != nil {
			return err
		}
	}
	return nil
}

// parseBool reads a boolean as go-redis does: true, false, 1 or 0.
func parseBool(v string) (bool, error) {
	switch v {
	case "true", "1":
		return true, nil
	case "false", "0", "":
		return false, nil
	}
	return false, errors.New("want true or false")
}

// unknownParam is the error for a query parameter no form knows, with the
// known one it is closest to when it looks like a misspelling of it.
func unknownParam(k string) error {
	best, bestD := "", len(k)/3+2
	norm := strings.ToLower(strings.ReplaceAll(k, "-", "_"))
	for _, p := range knownNames() {
		if d := editDistance(norm, p); d < bestD {
			best, bestD = p, d
		}
	}
	if best != "" {
		return fmt.Errorf("unknown parameter %q; did you mean %s?", k, best)
	}
	return fmt.Errorf("unknown parameter %q; the parameters are go-redis's (master_name, addr, username, password, dial_timeout, pool_size, …) and cluster", k)
}

// knownNames are the names of every parameter, sorted.
func knownNames() []string {
	names := slices.Clone(structural)
	for _, p := range Params {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
