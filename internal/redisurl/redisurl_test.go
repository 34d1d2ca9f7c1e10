package redisurl

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCases: Parse reads every URL of the table as it says, and refuses
// every malformed one with an error naming what is wrong and quoting no
// password.
func TestCases(t *testing.T) {
	cases := Cases()
	accepted := 0
	for _, tc := range cases {
		got, err := Parse(tc.Raw)
		if err != nil && strings.Contains(err.Error(), Secret()) {
			t.Errorf("Parse(%q): the error quotes the password: %v", tc.Raw, err)
		}
		if tc.Want == nil {
			if err == nil || !strings.Contains(err.Error(), tc.Err) {
				t.Errorf("Parse(%q) = %v, %v; want an error saying %q", tc.Raw, got, err, tc.Err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.Raw, err)
			continue
		}
		accepted++
		for _, d := range Compare(*got, *tc.Want) {
			t.Errorf("Parse(%q): %s", tc.Raw, d)
		}
	}
	if accepted < 40 || len(cases)-accepted < 80 {
		t.Errorf("the table has %d URLs read and %d refused; want every form and parameter (at least 40 and 80)", accepted, len(cases)-accepted)
	}
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
