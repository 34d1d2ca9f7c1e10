package e2e

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/petinventory/petinventory/conformancetest"
	"github.com/petinventory/petinventory/internal/proctest"
)

// The consistency run's history is as dense as the deployment allows,
// wherever the suite runs from: across a slow network, beside other
// clients' traffic, on replicas that acknowledge writes late, and through
// a failover, with how long the deployment took to recover measured; a
// history too thin to say much fails.

// TestConsistencyAcrossSlowNetwork: a correct server reached through a
// proxy that adds 40 ms each way (two base URLs, each through a proxy of
// its own) passes a 10 s run holding at least 700 operations; a run with
// fewer updates answered 200 than -consistency-min-updates fails with
// kind thin-history; and a server that answers an update with another
// client's write, behind the same delay, is caught in every run.
func TestConsistencyAcrossSlowNetwork(t *testing.T) {
	proctest.Long(t)
	node := redisFor(t)
	rs := startReplicas(t, "redis://"+node.Addr()+"/0", "e2e-slow-network", []string{"gin"})
	slow := []string{delayed(t, rs[0].base, httpDelay), delayed(t, rs[0].base, httpDelay)}

	t.Run("a correct server passes with at least 700 operations", func(t *testing.T) {
		const run, least = 10 * time.Second, 700
		began := time.Now()
		res := runCmd(t, commandBinary(t), consistencyArgs(run, slow)...)
		outcome, lin := linearizable(t, res.stdout)
		proctest.Summary(t, summaryEnv, "consistency across %v each way, two base URLs, one correct server, %v run: %s (exit %d); %s; in %.1fs",
			httpDelay, run, outcome, res.code, density(lin), time.Since(began).Seconds())
		if outcome != "PASS" || res.code != 0 {
			t.Fatalf("exit %d, %s:\n%s%s", res.code, outcome, res.stdout, res.stderr)
		}
		if lin.Consistency.Operations < least {
			t.Errorf("the history holds %d operations, want at least %d at %v of round trip", lin.Consistency.Operations, least, 2*httpDelay)
		}
	})

	t.Run("too few updates fail as a thin history", func(t *testing.T) {
		// One client for one second at 80 ms a request sends a dozen
		// requests at most: fewer updates than the default 20 needed.
		began := time.Now()
		res := runCmd(t, commandBinary(t), consistencyArgs(time.Second, slow, "-consistency-clients", "1")...)
		outcome, lin := linearizable(t, res.stdout)
		proctest.Summary(t, summaryEnv, "consistency across %v each way, one client for 1s: %s (exit %d), kinds %q; %s; in %.1fs",
			httpDelay, outcome, res.code, kindsOf(lin), density(lin), time.Since(began).Seconds())
		if outcome != "FAIL" || res.code != 1 || !slices.Equal(kindsOf(lin), []string{conformancetest.KindThinHistory}) {
			t.Fatalf("exit %d, %s, kinds %q; want 1, FAIL, only %q:\n%s%s", res.code, outcome, kindsOf(lin), conformancetest.KindThinHistory, res.stdout, res.stderr)
		}
		if c := lin.Consistency; c.MinUpdates != conformancetest.DefaultConsistencyMinUpdates || c.UpdatesOK >= c.MinUpdates {
			t.Errorf("the report says %d updates answered 200 with %d needed; want fewer than the default %d", c.UpdatesOK, c.MinUpdates, conformancetest.DefaultConsistencyMinUpdates)
		}
	})

	t.Run("a lost update is caught in every run", func(t *testing.T) {
		const runs, run = 3, 3 * time.Second
		base, _ := serveBroken(t, brokenCaseNamed(t, "loses concurrent updates"))
		broken := []string{delayed(t, base, httpDelay), delayed(t, base, httpDelay)}
		began := time.Now()
		var caught []string
		for i := range runs {
			res := runCmd(t, commandBinary(t), consistencyArgs(run, broken)...)
			outcome, lin := linearizable(t, res.stdout)
			kinds := kindsOf(lin)
			t.Logf("run %d: exit %d, %s, kinds %q; %s", i+1, res.code, outcome, kinds, density(lin))
			if outcome != "FAIL" || res.code != 1 || len(kinds) == 0 || !slices.Contains(lostUpdate, kinds[0]) {
				t.Errorf("run %d of %d: exit %d, %s, kinds %q; want 1, FAIL, first of one of %q:\n%s%s", i+1, runs, res.code, outcome, kinds, lostUpdate, res.stdout, res.stderr)
				continue
			}
			caught = append(caught, kinds[0])
		}
		proctest.Summary(t, summaryEnv, "consistency across %v each way, a server answering updates with another client's write: caught in %d of %d runs of %v (%q); in %.1fs",
			httpDelay, len(caught), runs, run, caught, time.Since(began).Seconds())
	})
}

// lostUpdate are the kinds a server that answers an update with another
// client's write may first be caught by: the answer itself, or, when the
// other write's request is the one judged first, a set of requests that
// cannot be ordered.
var lostUpdate = []string{conformancetest.KindAnotherWrite, conformancetest.KindUnorderable}

// outsideClients is how many clients of other pets run beside the suite
// in the runs with outside traffic.
const outsideClients = 6

// TestConsistencyWithOutsideTraffic: three processes on a Sentinel set
// whose replicas lag 50 ms, while six other clients list and update other
// pets through them. With -replica-acks 1 an 8 s run holds at least 50
// updates answered 200 and passes. With -replica-acks 2 a 20 s run
// through a forced failover ("6s redis-failover") passes with a recovery
// figure, no answer 500 to the suite or the outside clients, and the
// quantities as they were before.
func TestConsistencyWithOutsideTraffic(t *testing.T) {
	proctest.Long(t)
	d := startSentinelDeployment(t)

	t.Run("acks=1", func(t *testing.T) {
		const run, least = 8 * time.Second, 50
		all := d.servers(t, "e2e-outside-acks1", "-replica-acks", "1", "-replica-ack-timeout", "2s", "-store-timeout", "4s")
		began := time.Now()
		load := startOutside(t, all, outsideClients)
		res := runCmd(t, commandBinary(t), consistencyArgs(run, all)...)
		load.stop()
		outcome, lin := linearizable(t, res.stdout)
		proctest.Summary(t, summaryEnv, "consistency sentinel lag=%v acks=1, %d outside clients, %v run: %s (exit %d); %s; %s; in %.1fs",
			failoverLag, outsideClients, run, outcome, res.code, density(lin), load, time.Since(began).Seconds())
		if outcome != "PASS" || res.code != 0 {
			t.Fatalf("exit %d, %s:\n%s%s", res.code, outcome, res.stdout, res.stderr)
		}
		if lin.Consistency.UpdatesOK < least {
			t.Errorf("%d updates answered 200, want at least %d", lin.Consistency.UpdatesOK, least)
		}
	})

	t.Run("acks=2 through a forced failover", func(t *testing.T) {
		const run = 20 * time.Second
		all := d.servers(t, "e2e-outside-acks2", "-replica-acks", "2", "-replica-ack-timeout", "2s", "-store-timeout", "4s")
		before := strictQuantities(t, all[0])
		old := d.set.Master()
		began := time.Now()
		load := startOutside(t, all, outsideClients)
		res := runCmd(t, commandBinary(t), consistencyArgs(run, all, "-consistency-redis", d.url, "-consistency-fault", "6s redis-failover")...)
		load.restore(t)
		promoted := d.set.WaitFailover(old, time.Minute)
		after := strictQuantities(t, all[0])
		outcome, lin := linearizable(t, res.stdout)
		faults := faultsOf(t, lin)
		proctest.Summary(t, summaryEnv, "consistency sentinel lag=%v acks=2, %d outside clients, forced failover (redis-failover) 6s into a %v run, %s promoted: %s (exit %d); %s; %s; %s; in %.1fs",
			failoverLag, outsideClients, run, promoted.Name, outcome, res.code, density(lin), faultFigures(lin), load, time.Since(began).Seconds())
		if outcome != "PASS" || res.code != 0 {
			t.Fatalf("exit %d, %s:\n%s%s", res.code, outcome, res.stdout, res.stderr)
		}
		if len(faults) != 1 || lin.Consistency.RecoveredAfter == nil {
			t.Errorf("the report has %d faults and recovery %q; want one, with a recovery figure:\n%s", len(faults), lin.Consistency.Recovered, res.stdout)
		}
		for _, f := range faults {
			if f.Answers["500"] > 0 {
				t.Errorf("the suite got %d answers 500 after the fault", f.Answers["500"])
			}
		}
		lists, updates := load.tally(false), load.tally(true)
		if lists["500"]+updates["500"] > 0 {
			t.Errorf("the outside clients got answers 500: %s", load)
		}
		if !maps.Equal(before, after) {
			t.Errorf("the quantities were not restored: before %v, after %v", before, after)
		}
	})
}
