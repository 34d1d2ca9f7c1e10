// Package report writes the result of a conformance run for the people and
// the tools that read it: the Report and its Results, as text (WriteText),
// JUnit XML (WriteJUnit), one self-contained HTML page (WriteHTML) and JSON
// (its field tags), and the curl command that reproduces a request (Curl).
// It decides nothing about the target: the checks fill the Report, this
// package only shows it. Package conformancetest exports these types under
// the same names.
package report
