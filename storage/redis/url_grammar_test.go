package redisstore

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petinventory/petinventory/storage/redis/internal/redisurl"
	"github.com/redis/go-redis/v9"
)

// TestParseURLReadsTheGrammarsTable: ParseURL reads every URL of the
// grammar's table (redisurl.Cases) as the table says, in the go-redis
// options it builds: topology, addresses, database, TLS and its server
// name, the credentials of the nodes and of the sentinels; refuses every
// malformed one; and hands every tuning parameter to its go-redis option.
// The conformance suite's fault target is held to the same table
// (conformancetest/internal/faults), so a URL the two read differently
// fails one of the two tests.
func TestParseURLReadsTheGrammarsTable(t *testing.T) {
	redisurl.HoldTo(t, func(raw string) (redisurl.URL, string, error) {
		c, err := ParseURL(raw)
		if err != nil {
			return redisurl.URL{}, "", err
		}
		checkTuning(t, raw, c)
		u, serverName := understood(c)
		return u, serverName, nil
	})
}

// understood is what the go-redis options of c say, in the grammar's
// terms, and the TLS server name.
func understood(c *Config) (redisurl.URL, string) {
	var u redisurl.URL
	var tlsOn bool
	var serverName string
	switch c.Topology {
	case Failover:
		o := c.Failover
		u = redisurl.URL{Topology: redisurl.Sentinel, Network: "tcp", Addrs: o.SentinelAddrs, MasterName: o.MasterName, DB: o.DB,
			User: o.Username, Password: o.Password, SentinelUser: o.SentinelUsername, SentinelPassword: o.SentinelPassword}
		if tlsOn = o.TLSConfig != nil; tlsOn {
			u.SkipVerify, serverName = o.TLSConfig.InsecureSkipVerify, o.TLSConfig.ServerName
		}
	case Cluster:
		o := c.Cluster
		u = redisurl.URL{Topology: redisurl.Cluster, Network: "tcp", Addrs: o.Addrs, User: o.Username, Password: o.Password}
		if tlsOn = o.TLSConfig != nil; tlsOn {
			u.SkipVerify, serverName = o.TLSConfig.InsecureSkipVerify, o.TLSConfig.ServerName
		}
	default:
		o := c.Single
		u = redisurl.URL{Topology: redisurl.Single, Network: o.Network, Addrs: []string{o.Addr}, DB: o.DB, User: o.Username, Password: o.Password}
		if tlsOn = o.TLSConfig != nil; tlsOn {
			u.SkipVerify, serverName = o.TLSConfig.InsecureSkipVerify, o.TLSConfig.ServerName
		}
	}
	u.TLS = tlsOn
	return u, serverName
}

// goRedisField are the option fields of the tuning parameters whose name
// is not the parameter's in CamelCase.
var goRedisField = map[string]string{"pool_fifo": "PoolFIFO", "idle_timeout": "ConnMaxIdleTime", "max_conn_age": "ConnMaxLifetime"}

// checkTuning: every tuning parameter of raw reached its go-redis option
// with its value (the table gives each its kind's sample: 3, 1500ms,
// true, shop).
func checkTuning(t *testing.T, raw string, c *Config) {
	t.Helper()
	g, err := redisurl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	opts := reflect.ValueOf(c.Single)
	switch c.Topology {
	case Cluster:
		opts = reflect.ValueOf(c.Cluster)
	case Failover:
		opts = reflect.ValueOf(c.Failover)
	}
	for name := range g.Params {
		if name == "conn_max_lifetime_jitter" {
			continue // go-redis bounds it by conn_max_lifetime, unset here
		}
		field := goRedisField[name]
		if field == "" {
			for _, w := range strings.Split(name, "_") {
				field += strings.ToUpper(w[:1]) + w[1:]
			}
		}
		f := opts.Elem().FieldByName(field)
		if !f.IsValid() {
			t.Errorf("ParseURL(%q): go-redis's options have no field %s for parameter %s", raw, field, name)
			continue
		}
		var want any
		switch v := g.Params.Get(name); f.Interface().(type) {
		case time.Duration:
			want, _ = time.ParseDuration(v)
		case int:
			want, _ = strconv.Atoi(v)
		case bool:
			want = v == "true"
		default:
			want = v
		}
		if !reflect.DeepEqual(f.Interface(), want) {
			t.Errorf("ParseURL(%q): %s is %v, want %v (parameter %s)", raw, field, f.Interface(), want, name)
		}
	}
}

// TestGrammarParamsAreGoRedis: go-redis's own parser of each form reads
// each tuning parameter the grammar lets through in that form, and
// refuses each one it refuses: the grammar lists go-redis's parameters,
// and a go-redis upgrade that changes them fails here.
func TestGrammarParamsAreGoRedis(t *testing.T) {
	forms := []struct {
		form  redisurl.Forms
		base  string
		parse func(string) error
	}{
		{redisurl.InSingle, "redis://h:1/0?db=0", func(u string) error { _, err := redis.ParseURL(u); return err }},
		{redisurl.InCluster, "redis://h:1?addr=h:2", func(u string) error { _, err := redis.ParseClusterURL(u); return err }},
		{redisurl.InSentinel, "redis://h:1?master_name=m", func(u string) error { _, err := redis.ParseFailoverURL(u); return err }},
	}
	samples := map[redisurl.Kind]string{redisurl.Text: "x", redisurl.Number: "3", redisurl.Duration: "2s", redisurl.Bool: "true"}
	for _, f := range forms {
		for _, p := range redisurl.Params {
			err := f.parse(f.base + "&" + p.Name + "=" + samples[p.Kind])
			if in := p.Forms&f.form != 0; in != (err == nil) {
				t.Errorf("go-redis's parser for %s, parameter %s: error %v; the grammar lists it for %s", f.form, p.Name, err, p.Forms)
			}
		}
	}
}
