// Package checks holds the rules of the spec and the contract that the
// suite judges by asking the deployment, one named function each, in a
// table per area (List, Cache, Routes, Auth, Order, PetID, Media, Size,
// Body, Update, Response, Concurrency, Head, Timeout, Malformed): a
// check is found by its name in its area's table, which names the
// function that judges it, beside it in the same file.
//
// A check sends its requests and records what fails with the
// suite.Checker it runs with (here wrapped as checker, which adds the
// assertions the checks share: expectStatus, expectError, expectItem).
// The consistency check is package internal/consistency's; the root
// package assembles every table into the run's registry.
package checks
