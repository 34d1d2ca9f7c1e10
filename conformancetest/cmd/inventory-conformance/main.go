// Command inventory-conformance checks a running Pet Store inventory API
// against the specification and the petinventory contract, over HTTP.
//
//	INVENTORY_API_KEY=... inventory-conformance -base-url https://staging.example/v1
//
// It prints a table of checks (result, name, source of the rule), the
// details of every failure with a curl command that reproduces it, and a
// summary line "N passed, N failed, N skipped". The key is never printed.
//
// Exit status: 0 when no check failed, 1 when some check failed, 2 for a
// usage error or a fault of the consistency run's schedule that could
// not be applied, 3 when the target could not be reached at all, 130 when
// interrupted (quantities changed so far are restored first).
//
// Flags:
//
//	-base-url URL        base URL, version segment included (required); give
//	                     it again for each further replica of the deployment:
//	                     the consistency run spreads its clients over them all,
//	                     every other check runs against the first
//	-api-key KEY         bearer key (default: $INVENTORY_API_KEY, else the first
//	                     key of $INVENTORY_API_KEYS, the comma-separated keys
//	                     the repository's servers accept; prefer a variable,
//	                     a flag shows in the process list)
//	-read-only           skip every check that changes quantities
//	-level spec|contract spec: only what the seed spec requires; contract:
//	                     every rule of CONTRACT.md (default contract)
//	-run REGEXP          run only the checks whose name matches
//	-skip REGEXP         do not run the checks whose name matches
//	-consistency D       run consistency/linearizable for D (e.g. 10s): clients
//	                     list and update at once and the history is checked for
//	                     linearizability (off by default: it writes many times)
//	-consistency-clients N  clients of the consistency run (default 8)
//	-consistency-html FILE  when the consistency check fails, write a picture
//	                     of the history (porcupine's visualization) to FILE
//	-consistency-staleness D  the deployment's staleness bound: judge the
//	                     consistency run against a bounded-staleness promise
//	                     (a list shows every update answered at least D before
//	                     it was sent; default 0: strict), and wait D before the
//	                     default list after an update and before a consistency
//	                     run; every run reports its observed staleness
//	-consistency-history FILE  save the history of the consistency run to FILE
//	                     (JSON: every request, what it saw, the verdict)
//	-consistency-min-updates N  the fewest updates answered 200 a consistency
//	                     run can pass with (default 20): a thinner history
//	                     fails with kind thin-history
//	-consistency-stale-if-error D  the deployment's stale-if-error bound (the
//	                     server's -stale-if-error): lists it marks stale
//	                     (Cache-Status: petinventory; fwd=stale, with Age) are
//	                     judged against D; without it a list marked stale
//	                     fails with kind unexpected-stale
//	-consistency-replay FILE  judge a history saved by -consistency-history
//	                     again, without any deployment (no -base-url, no key):
//	                     the same verdict, words and exit status as the run
//	                     that saved it (with -consistency-staleness, judged
//	                     against that bound instead of the run's)
//	-consistency-fault "OFFSET KIND [ARG...]"  apply a fault OFFSET (a duration)
//	                     after the consistency run starts; repeat it for more.
//	                     Only with -consistency. The kinds:
//	                       exec COMMAND...      run COMMAND with sh -c (time limit
//	                                            1m); it must exit 0, and its exit
//	                                            status and last lines are reported
//	                       redis-pause D        CLIENT PAUSE (ALL) for D on the
//	                                            master, on every master of a Cluster
//	                       redis-kill-clients   CLIENT KILL TYPE normal on every
//	                                            master (the suite's connection spared)
//	                       redis-failover       SENTINEL FAILOVER <master_name>; on
//	                                            a Cluster, CLUSTER FAILOVER on a
//	                                            replica of the master of the store's
//	                                            slot; ends when the new master is
//	                                            announced
//	                     e.g. -consistency-fault "6s exec kubectl -n shop delete pod redis-0"
//	                     The report gives each fault's window (the longest
//	                     stretch around it in which no update succeeded), its
//	                     answers other than 200 by status, its updates of
//	                     unknown outcome and the lists' availability in its
//	                     window. A fault that cannot be applied stops the run
//	                     with exit status 2; the fault Redis is checked (its
//	                     password, the commands its faults need) before any
//	                     check runs.
//	-consistency-recovery D  after the last fault ended, how long the deployment
//	                     has to answer a strict list and an update with 200
//	                     again (default 1m; Retry-After honoured); the report
//	                     says "recovered N s after the last fault ended", and
//	                     a deployment not recovered by then fails with kind
//	                     not-recovered
//	-consistency-redis URL  the Redis the redis-* faults act on, in any form of
//	                     the server's REDIS_URL (one node, rediss://, Sentinel
//	                     with master_name=, Cluster with addr=); default
//	                     $INVENTORY_CONSISTENCY_REDIS_URL, which keeps the
//	                     password off the command line; it is never printed
//	-consistency-redis-ca-file FILE  PEM CA certificates for its TLS (turns TLS on)
//	-consistency-redis-prefix P  the store's key prefix (default inventory): a
//	                     Cluster's redis-failover acts on the master of its slot
//	-junit FILE          also write a JUnit XML report to FILE
//	-html FILE           also write an HTML report to FILE: one page with the
//	                     verdict, the failures first with their curl lines
//	-json                print the report as JSON instead of the table
//	-v                   print each check as it finishes, and each rule
//	-timeout D           time limit of each request (default 10s)
//	-max-body-bytes N    the deployment's body limit (default 16384)
//	-list                list the checks of the level and exit
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
)

// redisURLVar is the variable -consistency-redis defaults to: a URL with
// a password there shows in no process list and no CI log that echoes
// the command.
const redisURLVar = "INVENTORY_CONSISTENCY_REDIS_URL"

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitUnreachable = 3
	exitInterrupted = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, a second one kills at once.
		<-ctx.Done()
		stop()
	}()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is the command without process globals, so that it can be read and
// tested as a function.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var o options
	fs := o.flagSet(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "inventory-conformance: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return exitUsage
	}
	lvl := conformancetest.Level(o.level)
	if lvl != conformancetest.LevelSpec && lvl != conformancetest.LevelContract {
		fmt.Fprintf(stderr, "inventory-conformance: -level %q: want spec or contract\n", o.level)
		return exitUsage
	}
	if o.list {
		return list(stdout, lvl)
	}
	if msg := o.badNumber(); msg != "" {
		fmt.Fprintln(stderr, "inventory-conformance: "+msg)
		return exitUsage
	}
	if o.replay != "" {
		fs.Visit(func(f *flag.Flag) { o.judgeStaleness = o.judgeStaleness || f.Name == "consistency-staleness" })
		return o.runReplay(stdout, stderr)
	}
	cfg, ok := o.config(lvl, getenv, stderr)
	if !ok {
		return exitUsage
	}
	return o.check(ctx, cfg, stdout, stderr)
}

// badNumber says which number of the consistency run's flags is out of
// range, "" when none is. Zero in Config means the default; on the
// command line it is a mistake.
func (o *options) badNumber() string {
	switch {
	case o.clients == 0:
		return "-consistency-clients 0: the consistency run needs at least one client"
	case o.minUpdates < 1:
		return fmt.Sprintf("-consistency-min-updates %d: give the fewest updates answered 200 a run may pass with, at least 1", o.minUpdates)
	case o.recovery <= 0:
		return fmt.Sprintf("-consistency-recovery %v: give how long the deployment has to recover after the last fault, a positive duration", o.recovery)
	case o.staleIfError < 0:
		return fmt.Sprintf("-consistency-stale-if-error %v is negative: give the deployment's stale-if-error bound, or 0 for none", o.staleIfError)
	}
	return ""
}

// options are the command's flags.
type options struct {
	baseURLs, faultSpecs                      stringList
	apiKey, level, runRE, skipRE, junit, html string
	consHTML, history, replay                 string
	redisURL, redisCA, redisPrefix            string
	readOnly, asJSON, verbose, list           bool
	timeout, consistency, staleness           time.Duration
	staleIfError, recovery                    time.Duration
	maxBody                                   int64
	clients, minUpdates                       int
	judgeStaleness                            bool // -consistency-staleness was given
}

// flagSet defines the command's flags, and its usage, to be parsed into o.
func (o *options) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("inventory-conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.apiKey, "api-key", "", "bearer API key (default: $INVENTORY_API_KEY, else the first key of $INVENTORY_API_KEYS; prefer a variable)")
	fs.BoolVar(&o.readOnly, "read-only", false, "skip every check that changes quantities")
	fs.StringVar(&o.level, "level", string(conformancetest.LevelContract), "spec: only what the seed spec requires; contract: every rule of CONTRACT.md")
	fs.StringVar(&o.runRE, "run", "", "run only the checks whose name matches this regular expression")
	fs.StringVar(&o.junit, "junit", "", "also write a JUnit XML report to this file")
	fs.StringVar(&o.html, "html", "", "also write an HTML report (one self-contained page) to this file")
	fs.BoolVar(&o.asJSON, "json", false, "print the report as JSON instead of the table")
	fs.BoolVar(&o.verbose, "v", false, "print each check as it finishes, and each rule")
	fs.DurationVar(&o.timeout, "timeout", conformancetest.DefaultRequestTimeout, "time limit of each request")
	fs.Int64Var(&o.maxBody, "max-body-bytes", conformancetest.DefaultMaxBodyBytes, "the deployment's body limit")
	fs.BoolVar(&o.list, "list", false, "list the checks of the level and exit")
	fs.StringVar(&o.skipRE, "skip", "", "do not run the checks whose name matches this regular expression")
	fs.DurationVar(&o.consistency, "consistency", 0, "run the consistency check for this long (e.g. 10s); 0 skips it")
	fs.IntVar(&o.clients, "consistency-clients", conformancetest.DefaultConsistencyClients, "clients of the consistency run, spread over every -base-url")
	fs.StringVar(&o.consHTML, "consistency-html", "", "when the consistency check fails, write a picture of the history (HTML) to this file")
	fs.StringVar(&o.history, "consistency-history", "", "save the history of the consistency run (JSON: every request, what it saw, the verdict) to this file")
	fs.StringVar(&o.replay, "consistency-replay", "", "judge a history saved by -consistency-history again, without any deployment, and exit as that run would")
	fs.DurationVar(&o.staleness, "consistency-staleness", 0, "the deployment's staleness bound: judge the consistency run against a bounded-staleness promise, a list shows every update answered at least this long before it was sent (0: strict); the default list after an update, and a consistency run, wait it out (the suite's own reads are strict lists, Cache-Control: no-cache)")
	fs.IntVar(&o.minUpdates, "consistency-min-updates", conformancetest.DefaultConsistencyMinUpdates, "the fewest updates answered 200 a consistency run can pass with: a thinner history fails (kind thin-history)")
	fs.DurationVar(&o.staleIfError, "consistency-stale-if-error", 0, "the deployment's stale-if-error bound (the server's -stale-if-error): lists it marks stale (Cache-Status: petinventory; fwd=stale) are judged against it; 0: a list marked stale fails (kind unexpected-stale)")
	fs.Var(&o.faultSpecs, "consistency-fault", faultUsage)
	fs.DurationVar(&o.recovery, "consistency-recovery", conformancetest.DefaultConsistencyRecovery, "after the last fault of -consistency-fault ended, how long the deployment has to answer a strict list and an update with 200 again (honouring Retry-After) before the run fails (kind not-recovered)")
	fs.StringVar(&o.redisURL, "consistency-redis", "", "the `URL` of the Redis the redis-* faults act on, in any form of the server's REDIS_URL: redis://[user:password@]host:port, rediss://…, unix:///path, Sentinel (?master_name=NAME&addr=…), Cluster (?addr=…); default $"+redisURLVar+", which keeps its password off the command line; the password is never printed")
	fs.StringVar(&o.redisCA, "consistency-redis-ca-file", "", "PEM CA certificates trusted for -consistency-redis's TLS (turns TLS on)")
	fs.StringVar(&o.redisPrefix, "consistency-redis-prefix", conformancetest.DefaultConsistencyRedisPrefix, "the store's key prefix: a Cluster's redis-failover acts on the master of its slot")
	fs.Var(&o.baseURLs, "base-url", "base URL of the API, version segment included, e.g. https://staging.example/v1 (required); repeat it for each replica of the deployment")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: inventory-conformance -base-url URL [flags]\n\n"+
			"Checks a running inventory API against the spec and the contract.\n"+
			"The key comes from -api-key, else $INVENTORY_API_KEY, else the first of the\n"+
			"comma-separated keys in $INVENTORY_API_KEYS (the variable the server reads\n"+
			"its keys from), and is never printed.\n\n")
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nexit status: 0 all passed, 1 a check failed, 2 usage or a fault that could not be applied, 3 target unreachable, 130 interrupted\n")
	}
	return fs
}

// faultUsage is the usage of -consistency-fault.
const faultUsage = "a fault of the consistency run, `\"OFFSET KIND [ARG...]\"`, repeatable, only with -consistency: OFFSET a duration from the start of the run; KIND one of\n" +
	"  exec COMMAND...     run COMMAND with sh -c (time limit 1m; it must exit 0; exit status and last lines reported)\n" +
	"  redis-pause D       CLIENT PAUSE (ALL) for D on the master, every master of a Cluster\n" +
	"  redis-kill-clients  CLIENT KILL TYPE normal on every master, the suite's own connection spared\n" +
	"  redis-failover      SENTINEL FAILOVER <master_name>; on a Cluster CLUSTER FAILOVER on a replica of the master of the store's slot\n" +
	"e.g. \"6s exec kubectl -n shop delete pod redis-0\", \"4s redis-pause 2s\", \"6s redis-failover\". " +
	"The report says each fault's window (the longest stretch around it with no update answered 200), its answers other than 200, its updates of unknown outcome and the lists' availability, " +
	"and how long after the last fault the deployment recovered (-consistency-recovery); " +
	"a fault that cannot be applied stops the run with exit status 2 (the fault Redis, its password and rights, is checked before any check runs)"

// list prints the checks of level lvl: -list.
func list(stdout io.Writer, lvl conformancetest.Level) int {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tWRITES\tSOURCE\tRULE")
	for _, c := range conformancetest.Checks(lvl) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Name, map[bool]string{true: "yes", false: "-"}[c.Writes], c.Source, c.Rule)
	}
	tw.Flush()
	return exitOK
}

// runReplay judges a saved history again: -consistency-replay.
func (o *options) runReplay(stdout, stderr io.Writer) int {
	if len(o.baseURLs) > 0 {
		fmt.Fprintln(stderr, "inventory-conformance: -consistency-replay judges a saved history and sends nothing: give no -base-url")
		return exitUsage
	}
	rc := conformancetest.ReplayConfig{History: o.replay, ConsistencyHTML: o.consHTML}
	if o.judgeStaleness {
		rc.ConsistencyStaleness, rc.JudgeStaleness = o.staleness, true
	}
	rep, err := conformancetest.ReplayConsistency(rc)
	if err != nil {
		fmt.Fprintf(stderr, "inventory-conformance: -consistency-replay: %v\n", err)
		return exitUsage
	}
	return report(rep, o.asJSON, o.verbose, o.junit, o.html, stdout, stderr)
}

// config is the run's configuration, or false when a flag is wrong (it
// says so on stderr).
func (o *options) config(lvl conformancetest.Level, getenv func(string) string, stderr io.Writer) (conformancetest.Config, bool) {
	var faults []conformancetest.Fault
	for _, spec := range o.faultSpecs {
		f, err := conformancetest.ParseFault(spec)
		if err != nil {
			fmt.Fprintf(stderr, "inventory-conformance: -consistency-fault: %v\n", err)
			return conformancetest.Config{}, false
		}
		faults = append(faults, f)
	}
	if len(faults) > 0 && o.consistency == 0 {
		fmt.Fprintln(stderr, "inventory-conformance: -consistency-fault applies faults during the consistency run: give it a duration with -consistency (e.g. -consistency 20s)")
		return conformancetest.Config{}, false
	}
	key := apiKeyFrom(o.apiKey, getenv)
	if o.redisURL == "" {
		// Read here, not as the flag's default, which -h would print,
		// password and all.
		o.redisURL = getenv(redisURLVar)
	}
	if len(o.baseURLs) == 0 {
		fmt.Fprintln(stderr, "inventory-conformance: -base-url is required (e.g. -base-url http://127.0.0.1:8080/v1)")
		return conformancetest.Config{}, false
	}
	if key == "" {
		fmt.Fprintln(stderr, "inventory-conformance: no API key: set INVENTORY_API_KEY (or INVENTORY_API_KEYS, as for the server, or pass -api-key)")
		return conformancetest.Config{}, false
	}
	return conformancetest.Config{
		BaseURL:              o.baseURLs[0],
		Replicas:             o.baseURLs[1:],
		APIKey:               key,
		ReadOnly:             o.readOnly,
		Level:                lvl,
		Run:                  o.runRE,
		Skip:                 o.skipRE,
		MaxBodyBytes:         o.maxBody,
		RequestTimeout:       o.timeout,
		Consistency:          o.consistency,
		ConsistencyClients:   o.clients,
		ConsistencyHTML:      o.consHTML,
		ConsistencyHistory:   o.history,
		ConsistencyStaleness: o.staleness,

		ConsistencyMinUpdates:   o.minUpdates,
		ConsistencyStaleIfError: o.staleIfError,
		ConsistencyRecovery:     o.recovery,
		ConsistencyFaults:       faults,
		ConsistencyRedis:        o.redisURL,
		ConsistencyRedisCAFile:  o.redisCA,
		ConsistencyRedisPrefix:  o.redisPrefix,
	}, true
}

// check runs the checks with cfg and reports them: the command's run.
func (o *options) check(ctx context.Context, cfg conformancetest.Config, stdout, stderr io.Writer) int {
	if o.verbose {
		cfg.Progress = func(r conformancetest.Result) {
			fmt.Fprintf(stderr, "%-4s  %s (%d requests, %v)\n", strings.ToUpper(string(r.Outcome)), r.Name, r.Requests, r.Duration.Round(time.Millisecond))
		}
	}
	rep, err := conformancetest.RunChecks(ctx, cfg)
	switch {
	case errors.Is(err, conformancetest.ErrUnreachable):
		fmt.Fprintf(stderr, "inventory-conformance: %v\n", err)
		return exitUnreachable
	case err != nil && ctx.Err() != nil:
		fmt.Fprintln(stderr, "inventory-conformance: interrupted")
		return exitInterrupted
	case err != nil:
		fmt.Fprintf(stderr, "inventory-conformance: %v\n", err)
		return exitUsage
	}
	return report(rep, o.asJSON, o.verbose, o.junit, o.html, stdout, stderr)
}

// report prints rep (as JSON or the table), writes the JUnit and HTML
// files asked for, and returns the exit status.
func report(rep *conformancetest.Report, asJSON, verbose bool, junit, htmlOut string, stdout, stderr io.Writer) int {
	var err error
	if asJSON {
		// The table starts with the headlines; beside JSON they go to
		// stderr, where a person reads.
		for _, h := range rep.Headlines {
			fmt.Fprintf(stderr, "inventory-conformance: READ FIRST: %s\n", h)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = rep.WriteText(stdout, verbose)
	}
	if err != nil {
		fmt.Fprintf(stderr, "inventory-conformance: writing the report: %v\n", err)
	}
	for _, out := range []struct {
		flag, path string
		write      func(io.Writer) error
	}{
		{"-junit", junit, rep.WriteJUnit},
		{"-html", htmlOut, rep.WriteHTML},
	} {
		if out.path == "" {
			continue
		}
		if err := writeFile(out.path, out.write); err != nil {
			fmt.Fprintf(stderr, "inventory-conformance: %s: %v\n", out.flag, err)
			return exitUsage
		}
	}
	switch {
	case rep.Failed():
		return exitFailed
	case rep.Interrupted:
		return exitInterrupted
	}
	return exitOK
}

// apiKeyFrom returns the key of the run: the flag's, else
// INVENTORY_API_KEY, else the first key of INVENTORY_API_KEYS (the
// comma-separated keys a server of the repository accepts), so that one
// variable can serve both.
func apiKeyFrom(flagKey string, getenv func(string) string) string {
	if flagKey != "" {
		return flagKey
	}
	if k := getenv("INVENTORY_API_KEY"); k != "" {
		return k
	}
	for _, k := range strings.Split(getenv("INVENTORY_API_KEYS"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			return k
		}
	}
	return ""
}

// stringList is a flag that may be given several times.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ", ") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// writeFile writes a report to path with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %v", path, err)
	}
	return nil
}
