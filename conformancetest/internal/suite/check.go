package suite

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
}
