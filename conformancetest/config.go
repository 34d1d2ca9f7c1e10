package conformancetest

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/consistency"
	"github.com/petinventory/petinventory/conformancetest/internal/report"
	"github.com/petinventory/petinventory/conformancetest/internal/suite"
)

// Level selects which rules are checked.
type Level = report.Level

// The levels.
const (
	LevelSpec     = report.LevelSpec
	LevelContract = report.LevelContract
)

// Defaults of the Config fields left zero.
const (
	DefaultMaxBodyBytes   = 16 << 10
	DefaultRequestTimeout = 10 * time.Second
	DefaultParallelism    = 8
	// DefaultConsistencyClients is the number of clients of the
	// consistency run when Config.ConsistencyClients is zero.
	DefaultConsistencyClients = 8
	// DefaultConsistencyMinUpdates is the fewest updates answered 200
	// a consistency run can pass with when Config.ConsistencyMinUpdates
	// is zero.
	DefaultConsistencyMinUpdates = 20
	// DefaultConsistencyRecovery is how long after the last fault the
	// deployment has to recover when Config.ConsistencyRecovery is
	// zero.
	DefaultConsistencyRecovery = 60 * time.Second
)

// Config says which deployment to check and how.
type Config struct {
	// BaseURL is the base of the API, version segment included:
	// "https://staging.example/v1". The routes are BaseURL+"/inventory" and
	// BaseURL+"/inventory/{petId}".
	BaseURL string
	// APIKey is a valid bearer key. It is never printed: every output
	// shows $INVENTORY_API_KEY instead.
	APIKey string
	// HTTPClient sends the requests; nil means a client with a transport
	// of the run's own (a clone of http.DefaultTransport's settings). The
	// runner works on a copy that does not follow redirects, so that a
	// redirect is seen as the answer it is, and closes the client's idle
	// connections when the run ends. Every request sets Accept-Encoding
	// itself (identity unless a check asks for gzip), so that no answer
	// is decoded by the transport: the checks judge the bytes sent.
	HTTPClient *http.Client
	// ReadOnly skips every check whose requests would change the
	// inventory on a conforming server (a PATCH that succeeds), with that
	// reason. Checks that send requests which must be rejected still run.
	ReadOnly bool
	// Level is LevelContract (the default when empty) or LevelSpec.
	Level Level
	// Replicas are further base URLs of the same deployment (other
	// replicas, or the same load balancer by other routes), in the form
	// of BaseURL. Only the consistency checks use them: their clients are
	// spread over BaseURL and every replica. Every other check runs
	// against BaseURL alone.
	Replicas []string
	// Run, when not empty, is a regular expression: only checks whose
	// name it matches run (as with go test -run, unanchored).
	Run string
	// Skip, when not empty, is a regular expression: checks whose name it
	// matches do not run (as with go test -skip, unanchored). It applies
	// after Run.
	Skip string
	// Consistency is how long the consistency run lasts: clients that
	// list and update at once, whose history is then checked for
	// linearizability (see the check consistency/linearizable). Zero
	// skips it: it writes many times, so it runs only when asked.
	Consistency time.Duration
	// ConsistencyClients is the number of clients of the consistency run
	// (default DefaultConsistencyClients), spread over BaseURL and
	// Replicas, each with one request in flight.
	ConsistencyClients int
	// ConsistencyHTML, when not empty, is a file that the consistency
	// check writes a picture of its history to when it fails: the HTML
	// visualization of porcupine, the linearizability checker, showing
	// the requests of each client on one time line and how far a
	// linearization got. The HTML report links to it.
	ConsistencyHTML string
	// ConsistencyStaleness, when not zero, judges the consistency run
	// against a bounded-staleness promise instead of the strict one: a
	// list must show every update answered at least this long before it
	// was sent (each list's call is moved this much earlier before the
	// linearizability check: Δ-atomicity). The run leaves this much quiet
	// before each barrier list, and starts this long after reading the
	// quantities before it. Zero is the strict promise. Every run
	// reports the observed staleness (Result.Consistency) whatever the
	// bound. It is the deployment's bound for the other checks too:
	// update/visible-in-list and etag/changes-after-update send the
	// default list (no Cache-Control) this long after an update's answer;
	// without it they list until it shows the update, for at most 10 s.
	// (The state the suite reads, checks and restores comes from strict
	// lists, Cache-Control: no-cache, whatever the bound.)
	ConsistencyStaleness time.Duration
	// ConsistencyHistory, when not empty, is a file that the consistency
	// check saves its history to, passed or failed: every request with
	// its call and return, base URL, pet, what it sent and saw, and the
	// verdict (JSON; the format is in the module's README).
	// ReplayConsistency judges such a file again without the deployment.
	ConsistencyHistory string
	// ConsistencyMinUpdates is the fewest updates answered 200 with
	// which a consistency run can pass (default
	// DefaultConsistencyMinUpdates): a verdict on a thin history says
	// little, so a run with fewer fails with KindThinHistory, naming the
	// count and what to change (a longer run, more clients). Negative is
	// an error.
	ConsistencyMinUpdates int
	// ConsistencyStaleIfError is the deployment's stale-if-error bound
	// (the server's -stale-if-error): lists it marks stale
	// (Cache-Status: petinventory; fwd=stale, with Age) are judged
	// against it: each may show a state at most this old (and at most
	// its Age plus a second), one instant of the inventory the store
	// confirmed; older fails with KindStaleBeyondBound. Zero: the
	// deployment serves no stale list, and one marked stale fails with
	// KindUnexpectedStale. Lists not marked stale are judged as ever.
	ConsistencyStaleIfError time.Duration
	// ConsistencyFaults is the consistency run's fault schedule: each
	// fault is applied at its offset from the start of the run, on the
	// run's clock, and the report says when and what it cost (the
	// window without a successful update, the answers other than 200,
	// the updates of unknown outcome); a failure says which fault it
	// followed. They need Consistency, and the redis-* kinds need
	// ConsistencyRedis. A fault that cannot be applied stops the run:
	// RunChecks returns ErrFault.
	ConsistencyFaults []Fault
	// ConsistencyRecovery bounds the recovery from the schedule's faults
	// (default DefaultConsistencyRecovery): after the last fault ended,
	// the run waits for the deployment to answer a strict list and an
	// update with 200 again (honouring Retry-After), and reports how
	// long it took ("recovered 2.4 s after the last fault ended"); not
	// recovered within it fails with KindNotRecovered. The quantities are
	// restored afterwards, an answer 503 retried within the same limit.
	ConsistencyRecovery time.Duration
	// ConsistencyRedis is the Redis the redis-* faults act on, a URL in
	// the forms of the store's REDIS_URL: one node
	// (redis://[user:password@]host:port, rediss://…, unix:///path), a
	// Cluster (redis://host:port?addr=host2:port2, or ?cluster=true), a
	// Sentinel-managed master (redis://sentinel:port?master_name=NAME&addr=…,
	// the URL's credentials the sentinels', username= and password= the
	// master's). Its password is never printed. The user needs
	// "+ping +client|pause +client|kill +cluster|slots +cluster|failover"
	// on the data nodes (the last two for a Cluster) and
	// "+sentinel|get-master-addr-by-name +sentinel|failover" on the
	// sentinels.
	ConsistencyRedis string
	// ConsistencyRedisCAFile, when not empty, holds the PEM CA
	// certificates trusted for ConsistencyRedis's TLS certificates (as
	// the server's INVENTORY_REDIS_CA_FILE), and turns TLS on.
	ConsistencyRedisCAFile string
	// ConsistencyRedisPrefix is the store's key prefix (default
	// DefaultConsistencyRedisPrefix, the store's own): in a Cluster,
	// redis-failover fails over the master of its slot.
	ConsistencyRedisPrefix string
	// MaxBodyBytes is the body limit the deployment is configured with
	// (default DefaultMaxBodyBytes, the library's default of 16 KiB).
	MaxBodyBytes int64
	// RequestTimeout bounds each request (default DefaultRequestTimeout).
	RequestTimeout time.Duration
	// Parallelism is the number of simultaneous updates of one pet in each
	// round of the concurrency check (default DefaultParallelism, at least
	// 2); their bodies are released together once their headers are sent.
	Parallelism int
	// HTMLReport, when not empty, is a file that Run writes the report of
	// its checks to, as HTML (see Report.WriteHTML), once they have run:
	// a CI job that fails keeps it as an artifact. RunChecks returns the
	// Report instead and leaves the writing to its caller.
	HTMLReport string
	// Progress, when not nil, is called after each check with its result,
	// for output while the run goes on. It is called from the goroutine
	// that called RunChecks.
	Progress func(Result)
}

// normalized returns the configuration with defaults applied, or an error
// that says what is wrong with it: the first step that finds something.
func (c Config) normalized() (Config, error) {
	for _, step := range []func(*Config) error{
		(*Config).checkTarget,
		(*Config).checkKey,
		(*Config).checkSelection,
		(*Config).checkConsistency,
		(*Config).checkLimits,
		(*Config).ownClient,
	} {
		if err := step(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// settings is c, normalized, as the internal packages read it: a Go
// conversion to suite.Config, which does not compile once the two differ.
func (c Config) settings() suite.Settings {
	return suite.Convert(suite.Config[Fault](c), func(f Fault) suite.Fault { return suite.Fault(f) })
}

// checkTarget checks BaseURL and Replicas, and drops their trailing
// slashes.
func (c *Config) checkTarget() error {
	if c.BaseURL == "" {
		return errors.New("conformancetest: Config.BaseURL is empty; give the API's base URL with its version segment, e.g. http://127.0.0.1:8080/v1")
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("conformancetest: Config.BaseURL %q is not an absolute http or https URL", c.BaseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("conformancetest: Config.BaseURL %q must not hold a query or fragment", c.BaseURL)
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	replicas := make([]string, 0, len(c.Replicas))
	for _, r := range c.Replicas {
		u, err := url.Parse(r)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("conformancetest: Config.Replicas: %q is not an absolute http or https URL without query or fragment", r)
		}
		replicas = append(replicas, strings.TrimRight(r, "/"))
	}
	c.Replicas = replicas
	return nil
}

// checkKey checks APIKey.
func (c *Config) checkKey() error {
	if c.APIKey == "" {
		return errors.New("conformancetest: Config.APIKey is empty; every route needs a valid bearer key")
	}
	if strings.ContainsAny(c.APIKey, " \t\r\n") {
		return errors.New("conformancetest: Config.APIKey holds whitespace; a bearer key cannot")
	}
	return nil
}

// checkSelection checks Level (LevelContract when empty), Run and Skip.
func (c *Config) checkSelection() error {
	switch c.Level {
	case "":
		c.Level = LevelContract
	case LevelSpec, LevelContract:
	default:
		return fmt.Errorf("conformancetest: Config.Level %q is neither %q nor %q", c.Level, LevelSpec, LevelContract)
	}
	if c.Run != "" {
		if _, err := regexp.Compile(c.Run); err != nil {
			return fmt.Errorf("conformancetest: Config.Run: %v", err)
		}
	}
	if c.Skip != "" {
		if _, err := regexp.Compile(c.Skip); err != nil {
			return fmt.Errorf("conformancetest: Config.Skip: %v", err)
		}
	}
	return nil
}

// checkConsistency checks the settings of the consistency run, its fault
// schedule included, and applies their defaults.
func (c *Config) checkConsistency() error {
	if c.Consistency < 0 {
		return fmt.Errorf("conformancetest: Config.Consistency %v is negative", c.Consistency)
	}
	if c.ConsistencyStaleness < 0 {
		return fmt.Errorf("conformancetest: Config.ConsistencyStaleness %v is negative", c.ConsistencyStaleness)
	}
	if c.ConsistencyStaleIfError < 0 {
		return fmt.Errorf("conformancetest: Config.ConsistencyStaleIfError %v is negative", c.ConsistencyStaleIfError)
	}
	if c.ConsistencyMinUpdates < 0 {
		return fmt.Errorf("conformancetest: Config.ConsistencyMinUpdates %d is negative; give the fewest updates answered 200 a run may pass with (0: the default, %d)", c.ConsistencyMinUpdates, DefaultConsistencyMinUpdates)
	}
	if c.ConsistencyMinUpdates == 0 {
		c.ConsistencyMinUpdates = DefaultConsistencyMinUpdates
	}
	if c.ConsistencyRecovery < 0 {
		return fmt.Errorf("conformancetest: Config.ConsistencyRecovery %v is negative", c.ConsistencyRecovery)
	}
	if c.ConsistencyRecovery == 0 {
		c.ConsistencyRecovery = DefaultConsistencyRecovery
	}
	if err := c.checkFaults(); err != nil {
		return err
	}
	if c.ConsistencyClients == 0 {
		c.ConsistencyClients = DefaultConsistencyClients
	}
	if c.ConsistencyClients < 1 || c.ConsistencyClients > consistency.MaxClients {
		return fmt.Errorf("conformancetest: Config.ConsistencyClients %d is not in 1..%d", c.ConsistencyClients, consistency.MaxClients)
	}
	return nil
}

// checkFaults checks the schedule of a configuration, and applies the
// default of ConsistencyRedisPrefix.
func (c *Config) checkFaults() error {
	if c.ConsistencyRedisPrefix == "" {
		c.ConsistencyRedisPrefix = DefaultConsistencyRedisPrefix
	}
	schedule := make([]suite.Fault, len(c.ConsistencyFaults))
	for i, f := range c.ConsistencyFaults {
		schedule[i] = suite.Fault(f)
	}
	return consistency.CheckSchedule(c.Consistency, schedule, c.ConsistencyRedis, c.ConsistencyRedisCAFile)
}

// checkLimits checks MaxBodyBytes, RequestTimeout and Parallelism, and
// applies their defaults.
func (c *Config) checkLimits() error {
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxBodyBytes < 64 {
		return fmt.Errorf("conformancetest: Config.MaxBodyBytes %d is below 64", c.MaxBodyBytes)
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.RequestTimeout < 0 {
		return fmt.Errorf("conformancetest: Config.RequestTimeout %v is negative", c.RequestTimeout)
	}
	if c.Parallelism == 0 {
		c.Parallelism = DefaultParallelism
	}
	if c.Parallelism < 2 {
		return fmt.Errorf("conformancetest: Config.Parallelism %d is below 2; the concurrency check needs parallel requests", c.Parallelism)
	}
	return nil
}

// ownClient replaces HTTPClient with the run's own copy, which follows no
// redirect (see Config.HTTPClient).
func (c *Config) ownClient() error {
	var cp http.Client
	if c.HTTPClient != nil {
		cp = *c.HTTPClient
	} else {
		// A transport of the run's own, not http.DefaultTransport: the
		// runner closes its idle connections at the end (see RunChecks),
		// which must not close those of the rest of the process.
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			tr := t.Clone()
			// Every request sets Accept-Encoding itself (see wire.Client).
			tr.DisableCompression = true
			// One idle connection per client of the busiest check, so
			// that its requests do not each dial a new one.
			tr.MaxIdleConnsPerHost = max(c.Parallelism, c.ConsistencyClients, tr.MaxIdleConnsPerHost)
			cp.Transport = tr
		} else {
			// The process replaced the default; take the stock settings.
			cp.Transport = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
		}
	}
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.HTTPClient = &cp
	return nil
}
