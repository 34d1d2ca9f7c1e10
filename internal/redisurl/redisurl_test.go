package redisurl

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCases: Parse reads every URL of the table as it says, and refuses
// every malformed one with an error naming what is wrong and quoting no
// password; the table holds every form and parameter.
func TestCases(t *testing.T) {
	HoldTo(t, func(raw string) (URL, string, error) {
		u, err := Parse(raw)
		if err != nil {
			return URL{}, "", err
		}
		return *u, u.ServerName(), nil
	})
	accepted := 0
	for _, tc := range Cases() {
		if tc.Want != nil {
			accepted++
		}
	}
	if refused := len(Cases()) - accepted; accepted < 40 || refused < 80 {
		t.Errorf("the table has %d URLs read and %d refused; want every form and parameter (at least 40 and 80)", accepted, refused)
	}
}

// TestHoldToFails: HoldTo fails a parser that reads a field otherwise,
// accepts a malformed URL, refuses a good one, or quotes the password;
// and not for a field it is told to ignore.
func TestHoldToFails(t *testing.T) {
	parse := func(raw string) (URL, string, error) {
		u, err := Parse(raw)
		if err != nil {
			return URL{}, "", err
		}
		return *u, u.ServerName(), nil
	}
	for _, tc := range []struct {
		name   string
		parse  func(string) (URL, string, error)
		ignore []string
		want   string
	}{
		{"a field read otherwise", func(raw string) (URL, string, error) {
			u, s, err := parse(raw)
			u.SentinelPassword = u.Password
			return u, s, err
		}, nil, "SentinelPassword: got"},
		{"a malformed URL accepted", func(raw string) (URL, string, error) {
			u, s, _ := parse(raw)
			return u, s, nil
		}, nil, "want an error saying"},
		{"a good URL refused", func(raw string) (URL, string, error) {
			u, s, err := parse(raw)
			if err == nil && u.Topology == Cluster {
				err = fmt.Errorf("no Cluster here")
			}
			return u, s, err
		}, nil, "no Cluster here"},
		{"the password quoted", func(raw string) (URL, string, error) {
			u, s, err := parse(raw)
			if err != nil {
				err = fmt.Errorf("%w (in %s)", err, raw)
			}
			return u, s, err
		}, nil, "the error quotes the password"},
		{"another server name", func(raw string) (URL, string, error) {
			u, _, err := parse(raw)
			return u, "elsewhere", err
		}, nil, "TLS server name"},
		{"an ignored field", func(raw string) (URL, string, error) {
			u, s, err := parse(raw)
			u.DB = 99
			return u, s, err
		}, []string{"DB"}, ""},
	} {
		rec := &recorder{}
		HoldTo(rec, tc.parse, tc.ignore...)
		if got := strings.Join(rec.errs, "\n"); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: HoldTo reported %d failures (%.200s…), want failures saying %q", tc.name, len(rec.errs), got, tc.want)
		}
	}
}

// recorder is a T that keeps what it is told.
type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestParamsGoToGoRedis: the tuning parameters given are in Params, for
// go-redis to map, and the structural ones are not.
func TestParamsGoToGoRedis(t *testing.T) {
	u, err := Parse("redis://s:1/2?master_name=m&addr=s2:1&password=pw&dial_timeout=3s&pool_size=20&db=3")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(u.Params); got != "map[dial_timeout:[3s] pool_size:[20]]" {
		t.Errorf("Params = %s, want dial_timeout and pool_size alone", got)
	}
}

// TestParamNames: each parameter is listed once, none both structural and
// tuning, and each is in at least one form.
func TestParamNames(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Params {
		if seen[p.Name] || slices.Contains(structural, p.Name) || p.Forms == 0 {
			t.Errorf("parameter %s: listed twice, structural too, or in no form", p.Name)
		}
		seen[p.Name] = true
	}
	for old, name := range oldNames {
		if _, ok := param(old); !ok {
			t.Errorf("old name %s is not a parameter", old)
		}
		if _, ok := param(name); !ok {
			t.Errorf("%s is not a parameter", name)
		}
	}
}

func TestString(t *testing.T) {
	for raw, want := range map[string]string{
		"redis://u:pw@10.0.0.1:6379/1":                   "single node 10.0.0.1:6379, db 1",
		"rediss://:pw@r.example":                         "single node r.example:6379, db 0 (TLS)",
		"unix:///tmp/r.sock?db=2":                        "single node, socket /tmp/r.sock, db 2",
		"redis://h1:7000?addr=h2:7000":                   "cluster, seeds h1:7000 h2:7000",
		"rediss://su:pw@s1:26379/3?master_name=shop":     `sentinel, master "shop" via s1:26379, db 3 (TLS)`,
		"redis://s1:26379?master_name=shop&password=mpw": `sentinel, master "shop" via s1:26379, db 0`,
	} {
		u, err := Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.String(); got != want || strings.Contains(got, "pw") {
			t.Errorf("Parse(%q).String() = %q, want %q", raw, got, want)
		}
	}
}

func TestServerName(t *testing.T) {
	for raw, want := range map[string]string{
		"rediss://r.example:6380":                   "r.example",
		"rediss://[::1]:6380":                       "::1",
		"rediss://s1:26379?master_name=m&addr=s2:1": "s1",
		"unix:///tmp/r.sock":                        "",
	} {
		u, err := Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.ServerName(); got != want {
			t.Errorf("Parse(%q).ServerName() = %q, want %q", raw, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"redis://u:pw@h:1/0":                      "redis://xxxxx@h:1/0",
		"redis://h:1/0?password=pw&db=1":          "redis://h:1/0?password=xxxxx&db=1",
		`parse "redis://:pw@h:x/0": invalid port`: `parse "redis://xxxxx@h:x/0": invalid port`,
		`parse "redis://u:p/w#x@h:1/0": invalid`:  `parse "redis://xxxxx@h:1/0": invalid`,
		"redis://u:a?b@h:1/0":                     "redis://xxxxx@h:1/0",
		"redis://h:1/0":                           "redis://h:1/0",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func ExampleParse() {
	u, err := Parse("redis://sentinel-0:26379/0?master_name=shop&addr=sentinel-1:26379&username=app&password=secret&dial_timeout=3s")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(u)
	fmt.Println("master's user:", u.User, "sentinels' user:", u.SentinelUser == "", "tuning:", u.Params)

	_, err = Parse("redis://10.0.0.1:7000?cluster=true&read_only=true")
	fmt.Println(err)
	// Output:
	// sentinel, master "shop" via sentinel-0:26379 sentinel-1:26379, db 0
	// master's user: app sentinels' user: true tuning: map[dial_timeout:[3s]]
	// parameter read_only: the store reads and writes the master only (it must read what it wrote), so reads cannot go to replicas
}
