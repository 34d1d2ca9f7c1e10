package conformancetest

import (
	"strings"
	"testing"
	"time"
)

func TestParseFault(t *testing.T) {
	for in, want := range map[string]string{
		"6s exec kubectl -n shop delete pod 'redis-0'": "6s exec kubectl -n shop delete pod 'redis-0'",
		" 4s  redis-pause 2s ":                         "4s redis-pause 2s",
		"3s redis-kill-clients":                        "3s redis-kill-clients",
		"1m2s redis-failover":                          "1m2s redis-failover",
	} {
		f, err := ParseFault(in)
		if err != nil || f.String() != want {
			t.Errorf("ParseFault(%q) = %q, %v; want %q", in, f.String(), err, want)
		}
	}
	for in, why := range map[string]string{
		"redis-failover":               "not a duration",
		"-1s redis-failover":           "negative",
		"6s exec":                      "needs a command",
		"6s redis-pause":               "one duration",
		"6s redis-pause soon":          "not a duration",
		"6s redis-failover now":        "takes no argument",
		"6s redis-restart":             "unknown kind",
		"6s redis-kill-clients please": "takes no argument",
	} {
		if _, err := ParseFault(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseFault(%q): %v, want an error saying %q", in, err, why)
		}
	}
}

func TestConfigFaults(t *testing.T) {
	f := func(s string) Fault { x, _ := ParseFault(s); return x }
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{ConsistencyFaults: []Fault{f("1s redis-failover")}}, "give it a duration"},
		{Config{Consistency: time.Second, ConsistencyFaults: []Fault{f("2s exec true")}}, "not within the run"},
		{Config{Consistency: 3 * time.Second, ConsistencyFaults: []Fault{f("2s redis-pause 1s")}}, "needs the Redis"},
		{Config{Consistency: 3 * time.Second, ConsistencyFaults: []Fault{f("2s redis-pause 1s")}, ConsistencyRedis: "http://u:hunter2@h:1"}, "redis://"},
		{Config{Consistency: 3 * time.Second, ConsistencyFaults: []Fault{{Offset: time.Second, Kind: "nap"}}}, "unknown kind"},
	} {
		tc.cfg.BaseURL, tc.cfg.APIKey = "http://127.0.0.1:1/v1", "key-0123456789"
		_, err := tc.cfg.normalized()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%+v: %v, want an error saying %q", tc.cfg.ConsistencyFaults, err, tc.want)
		}
	}
}
