package redisurl

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// This file is the table the parsers built on the grammar are tested
// against: the store's (storage/redis, URLs to go-redis options) and the
// suite's (conformancetest/internal/faults, URLs to the Redis its faults
// act on). No module can import both parsers (the suite's module depends
// on porcupine alone, and each parser is internal to its module), so each
// module's test holds its own parser to the table (HoldTo), comparing
// what it understood with Want, field by field: a difference between the
// two readings fails one of them. It is not a test file so that those
// tests, in other packages, can call it; nothing else does, so it is not
// linked into a binary.

// Case is a URL and what it names, or a word of the error it must get.
type Case struct {
	Raw  string
	Want *URL   // nil: Raw is malformed
	Err  string // a part of the error, when Want is nil
}

// secret is the password in the URLs of Cases: no error may quote it.
const secret = "s3cr3t-pw"

// Secret is the password the URLs of Cases hold: an error that quotes
// it is a failure.
func Secret() string { return secret }

// Cases returns the table: every form, every structural parameter, every
// tuning parameter in each form (accepted in its own, refused in the
// others), and malformed URLs.
func Cases() []Case {
	cases := slices.Concat(formCases(), malformedCases())
	for _, form := range []Case{single(), cluster(), sentinel()} {
		for _, p := range Params {
			raw := form.Raw + "&" + p.Name + "=" + sample(p.Kind)
			switch {
			case p.Forms&formOf(form.Want.Topology) == 0:
				cases = append(cases, Case{Raw: raw, Err: "parameter " + p.Name + " is go-redis's for"})
			case p.ReplicaReads:
				cases = append(cases, Case{Raw: raw, Err: "parameter " + p.Name + ": the store reads and writes the master only"})
			default:
				cases = append(cases, Case{Raw: raw, Want: form.Want})
				if p.Kind != Text {
					cases = append(cases, Case{Raw: raw + "x", Err: "parameter " + p.Name + "="})
				}
			}
		}
	}
	return cases
}

// sample is a value of kind k; with "x" after it, it is not of k
// (Text aside).
func sample(k Kind) string {
	switch k {
	case Number:
		return "3"
	case Duration:
		return "1500ms"
	case Bool:
		return "true"
	}
	return "shop"
}

// single, cluster and sentinel are a URL of each form with a query, for
// the tuning parameters to be added to.
func single() Case {
	return Case{"redis://u:" + secret + "@10.0.0.1:6379/2?db=2", &URL{Topology: Single, Network: "tcp", Addrs: []string{"10.0.0.1:6379"}, DB: 2, User: "u", Password: secret}, ""}
}

func cluster() Case {
	return Case{"rediss://u:" + secret + "@10.0.0.1:7000?addr=10.0.0.2:7000", &URL{Topology: Cluster, Network: "tcp", Addrs: []string{"10.0.0.1:7000", "10.0.0.2:7000"}, TLS: true, User: "u", Password: secret}, ""}
}

func sentinel() Case {
	return Case{"redis://su:spw@s1:26379/1?master_name=shop&password=" + secret, &URL{Topology: Sentinel, Network: "tcp", Addrs: []string{"s1:26379"}, MasterName: "shop", DB: 1,
		Password: secret, SentinelUser: "su", SentinelPassword: "spw"}, ""}
}

// formCases are well-formed URLs of every form and structural parameter.
func formCases() []Case {
	tcp := func(t Topology, addrs ...string) URL { return URL{Topology: t, Network: "tcp", Addrs: addrs} }
	with := func(u URL, edit func(*URL)) *URL { edit(&u); return &u }
	return []Case{
		single(), cluster(), sentinel(),
		{"redis://localhost", with(tcp(Single, "localhost:6379"), func(*URL) {}), ""},
		{"redis://", with(tcp(Single, "localhost:6379"), func(*URL) {}), ""},
		{"redis://:" + secret + "@[::1]:6380/0", with(tcp(Single, "[::1]:6380"), func(u *URL) { u.Password = secret }), ""},
		{"redis://u%3Ax:p%40ss%2Fw@h:1/3", with(tcp(Single, "h:1"), func(u *URL) { u.User, u.Password, u.DB = "u:x", "p@ss/w", 3 }), ""},
		{"redis://h:1/0?db=5", with(tcp(Single, "h:1"), func(u *URL) { u.DB = 5 }), ""},
		{"redis://h:1?cluster=false", with(tcp(Single, "h:1"), func(*URL) {}), ""},
		{"rediss://u:" + secret + "@r.example:6380/0?skip_verify=true", with(tcp(Single, "r.example:6380"), func(u *URL) {
			u.TLS, u.SkipVerify, u.User, u.Password = true, true, "u", secret
		}), ""},
		{"rediss://r.example?skip_verify=false", with(tcp(Single, "r.example:6379"), func(u *URL) { u.TLS = true }), ""},
		{"unix:///run/redis.sock?db=3", &URL{Topology: Single, Network: "unix", Addrs: []string{"/run/redis.sock"}, DB: 3}, ""},
		{"unix://u:" + secret + "@/run/redis.sock", &URL{Topology: Single, Network: "unix", Addrs: []string{"/run/redis.sock"}, User: "u", Password: secret}, ""},
		{"redis://10.0.0.1:7000?addr=10.0.0.2:7000&addr=10.0.0.3:7000", with(tcp(Cluster, "10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"), func(*URL) {}), ""},
		{"redis://10.0.0.1:7000?cluster=true", with(tcp(Cluster, "10.0.0.1:7000"), func(*URL) {}), ""},
		{"redis://10.0.0.1:7000/0?cluster=1&addr=[::1]:7001", with(tcp(Cluster, "10.0.0.1:7000", "[::1]:7001"), func(*URL) {}), ""},
		{"rediss://10.0.0.1:7000?cluster=true&skip_verify=1", with(tcp(Cluster, "10.0.0.1:7000"), func(u *URL) { u.TLS, u.SkipVerify = true, true }), ""},
		{"redis://s1:26379?master_name=shop&addr=s2:26379&addr=s3:26379", with(tcp(Sentinel, "s1:26379", "s2:26379", "s3:26379"), func(u *URL) { u.MasterName = "shop" }), ""},
		{"rediss://s1?master_name=shop&username=app&password=" + secret + "&db=4&skip_verify=true&cluster=false",
			with(tcp(Sentinel, "s1:6379"), func(u *URL) {
				u.MasterName, u.User, u.Password, u.DB, u.TLS, u.SkipVerify = "shop", "app", secret, 4, true, true
			}), ""},
	}
}

// malformedCases are URLs every parser must refuse, with a word of the
// error.
func malformedCases() []Case {
	var out []Case
	for raw, err := range map[string]string{
		"":                                                    "empty",
		"10.0.0.1:6379":                                       "must start with",
		"http://h:1":                                          "must start with",
		"redis+cluster://h:1":                                 "must start with",
		"redis://:" + secret + "@h:notaport":                  "port",
		"redis://u:" + secret + "%zz@h:1":                     "user or password",
		"rediss://u:" + secret + "#x@h:1/0":                   "percent-encode",
		"rediss://u:" + secret + "/x@h:1/0":                   "percent-encode",
		"rediss://u:1?" + secret + "@h:1/0":                   "percent-encode",
		"redis://h:1/notadb":                                  `"notadb"`,
		"redis://h:1/0/1":                                     "want /N",
		"redis://h:1/-1":                                      "0 or more",
		"redis://h:1?db=x":                                    "parameter db",
		"redis://h:1?bogus=1":                                 "unknown parameter",
		"redis://h:1?master-name=m":                           "did you mean master_name?",
		"redis://h:1?Cluster=true":                            "did you mean cluster?",
		"redis://h:99999":                                     `port "99999"`,
		"redis://a:1,b:2/0":                                   "separated by commas",
		"redis://a:1?addr=b":                                  `addr="b"`,
		"redis://a:1?addr=b:x":                                `addr="b:x"`,
		"redis://a:1?addr=:2":                                 `addr=":2"`,
		"redis://a:1?addr=b:0":                                `addr="b:0"`,
		"redis://a:1?cluster=yes":                             "cluster=",
		"redis://a:1?cluster=true&cluster=1":                  "cluster is given more than once",
		"redis://a:1?dial_timeout=1s&dial_timeout=2s":         "dial_timeout is given more than once",
		"redis://a:1?cluster=false&addr=b:2":                  "cluster=false",
		"redis://a:1/2?cluster=true":                          "database 0 only",
		"redis://a:1?cluster=true&db=0":                       "parameter db",
		"redis://s:1?master_name=":                            "master_name is empty",
		"redis://s:1?master_name=m&cluster=true":              "contradict",
		"redis://s:1/x?master_name=m":                         "database",
		"unix:///r.sock?addr=h:1":                             "parameter addr does not go with unix://",
		"unix:///r.sock?cluster=true":                         "parameter cluster does not go with unix://",
		"unix:///r.sock?master_name=m":                        "parameter master_name does not go with unix://",
		"unix://":                                             "no socket path",
		"redis://h:1?password=" + secret:                      "username= and password=",
		"redis://h:1?addr=h:2&username=u":                     "username= and password=",
		"redis://h:1?skip_verify=true":                        "rediss://",
		"rediss://h:1?skip_verify=maybe":                      "skip_verify",
		"redis://h:1?idle_timeout=1s&conn_max_idle_time=2s":   "give one",
		"redis://h:1?max_conn_age=1s&conn_max_lifetime=2s":    "give one",
		"redis://s:1?master_name=m&password=" + secret + "&x": "unknown parameter",
	} {
		out = append(out, Case{Raw: raw, Err: err})
	}
	slices.SortFunc(out, func(a, b Case) int { return cmpString(a.Raw, b.Raw) })
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// T is the part of a *testing.T that HoldTo uses (the package does not
// import testing: it is linked into the store).
type T interface {
	Helper()
	Errorf(format string, args ...any)
}

// HoldTo holds a parser built on the grammar to the table: for every URL
// of Cases, parse returns what the parser understood, in the grammar's
// terms, and the TLS server name it verifies (with TLS), or its error.
// A URL read otherwise than the table says, a malformed one accepted or
// refused for another reason, and an error that quotes the password are
// failures. ignore names the fields of URL the parser does not read (the
// suite's faults act on whole servers: no DB); Params are never compared
// (what go-redis maps them to is the store's to test).
func HoldTo(t T, parse func(raw string) (got URL, serverName string, err error), ignore ...string) {
	t.Helper()
	for _, tc := range Cases() {
		got, serverName, err := parse(tc.Raw)
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%q: the error quotes the password: %v", tc.Raw, err)
		}
		switch {
		case tc.Want == nil && (err == nil || !strings.Contains(err.Error(), tc.Err)):
			t.Errorf("%q: read as %+v, error %v; want an error saying %q", tc.Raw, got, err, tc.Err)
		case tc.Want != nil && err != nil:
			t.Errorf("%q: %v", tc.Raw, err)
		case tc.Want != nil:
			for _, d := range Compare(got, *tc.Want, ignore...) {
				t.Errorf("%q: %s", tc.Raw, d)
			}
			if got.TLS && serverName != tc.Want.ServerName() {
				t.Errorf("%q: TLS server name %q, want %q", tc.Raw, serverName, tc.Want.ServerName())
			}
		}
	}
}

// Compare lists the fields in which got differs from want, Params and
// the fields named in ignore aside, each as "Field: got …, want …"; none
// when they agree.
func Compare(got, want URL, ignore ...string) []string {
	var out []string
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		name := g.Type().Field(i).Name
		if name == "Params" || slices.Contains(ignore, name) {
			continue
		}
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			out = append(out, fmt.Sprintf("%s: got %v, want %v", name, g.Field(i).Interface(), w.Field(i).Interface()))
		}
	}
	return out
}
