package suite

import "context"

// Check is one named rule and the function that judges it.
type Check struct {
	// Name is the group and the rule: "auth/missing-header". -run and
	// -skip select by it, reports show it: it never changes by accident
	// (the command's -list is a golden file).
	Name string
	// Source cites the rule's source: "spec §5; CONTRACT.md §Authentication".
	Source string
	// Rule is the rule in one sentence.
	Rule string
	// Spec marks a check that the seed spec alone requires; it runs at
	// both levels (its assertions adapt to the level). Other checks run
	// at the contract level only.
	Spec bool
	// Writes marks a check whose requests change the inventory on a
	// conforming server; a read-only run skips it.
	Writes bool
	// Run judges the rule: it sends requests with the Checker and
	// records what fails. It may stop early with Fatalf, Skipf or Abort;
	// what it changed is put back after it, however it ends.
	Run func(c *Checker)
	// Prepare, when not nil, checks what the check needs besides the
	// deployment, once the deployment was probed and before any check
	// runs (the consistency check's fault Redis): an error stops the run
	// there, so that a broken harness costs seconds, not a whole run.
	// scrub keeps the API key out of what it says.
	Prepare func(ctx context.Context, cfg Settings, scrub func(string) string) error
}
