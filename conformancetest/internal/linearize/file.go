package linearize

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// Format names the history file's format, which WriteHistory writes; a
// file of another format is refused, not misread. Format 2 added each
// request's HTTP status, refusal and stale mark with its Age, the strict
// mark of a list sent with Cache-Control: no-cache, the run's minimum of
// updates, stale-if-error bound and recovery limit, and the fault each
// failure followed; ReadHistory still reads format 1 (formatV1), whose requests
// not answered 200 have the status StatusUnrecorded and no refusal, and
// which judges again to the same verdict.
const Format = "inventory-conformance consistency history 2"

// formatV1 is the format of the files saved before statuses were kept.
const formatV1 = "inventory-conformance consistency history 1"

// file is a history as JSON: the run's parameters, every request, and
// the verdict of the run that saved it. conformancetest/README.md
// documents it.
type file struct {
	Format string `json:"format"`
	// Started is when the run started (wall clock, for people); every
	// time below is an offset from it on the monotonic clock.
	Started  time.Time `json:"started"`
	BaseURLs []string  `json:"baseURLs"`
	Pets     []filePet `json:"pets"`
	Clients  int       `json:"clients"`
	// DurationNs is how long the clients ran.
	DurationNs int64 `json:"durationNs"`
	// StalenessNs is the staleness bound the run judged against (0:
	// strict); MinUpdates and StaleIfErrorNs its other options (absent:
	// zero, as in format 1).
	StalenessNs    int64 `json:"stalenessNs"`
	MinUpdates     int   `json:"minUpdates,omitempty"`
	StaleIfErrorNs int64 `json:"staleIfErrorNs,omitempty"`
	// RecoveryLimitNs is Options.Recovery (absent: zero, recovery not
	// judged, as in the files saved before it was kept).
	RecoveryLimitNs int64 `json:"recoveryLimitNs,omitempty"`
	// Faults are the faults the run applied, in order.
	Faults []Fault `json:"faults,omitempty"`
	// Verdict is what the run that saved the history concluded.
	Verdict  *fileVerdict `json:"verdict,omitempty"`
	Requests []fileOp     `json:"requests"`
}

// Fault is a fault of a run's schedule as its history keeps it: what
// was given, when the suite applied it and what it did. Times are
// offsets from the start of the run, in nanoseconds. What it cost is
// not kept: it follows from the requests.
type Fault struct {
	// Fault is the fault as given: "6s redis-failover".
	Fault    string `json:"fault"`
	Kind     string `json:"kind"`
	OffsetNs int64  `json:"offsetNs"`
	// AppliedNs is when it was sent; EndedNs, for a fault that lasts
	// (a pause, a command, a failover), when it ended.
	AppliedNs int64  `json:"appliedAtNs"`
	EndedNs   *int64 `json:"endedAtNs,omitempty"`
	Note      string `json:"note,omitempty"`
	// Closed, for redis-kill-clients, is how many client connections
	// it closed.
	Closed     *int64 `json:"closedConnections,omitempty"`
	ExitStatus *int   `json:"exitStatus,omitempty"`
	Output     string `json:"output,omitempty"`
}

type filePet struct {
	ID       int64 `json:"petId"`
	Quantity int64 `json:"quantity"` // before the run
}

type fileVerdict struct {
	Outcome   string        `json:"outcome"` // "pass", "fail" or "not judged"
	Failures  []fileFailure `json:"failures,omitempty"`
	NotJudged string        `json:"notJudged,omitempty"`
}

type fileFailure struct {
	Kind     FailureKind `json:"kind,omitempty"` // absent in the files of earlier versions
	Problem  string      `json:"problem"`
	Expected string      `json:"expected"`
	// AfterFault is Failure.Fault, an index in faults; absent for none.
	AfterFault *int `json:"afterFault,omitempty"`
}

type fileOp struct {
	Client  int    `json:"client"`
	BaseURL string `json:"baseURL"`
	Kind    string `json:"kind"` // "list" or "update"
	Round   int    `json:"round"`
	Barrier bool   `json:"barrier,omitempty"`
	CallNs  int64  `json:"callNs"`
	// ReturnNs is when the answer (or its failure) came.
	ReturnNs int64 `json:"returnNs"`
	// Outcome: a list "ok" (answered 200 with a list) or "failed"; an
	// update "ok" (answered 200 with an item) or "unknown".
	Outcome string `json:"outcome"`
	// An update: the pet, the quantity sent, and for "ok" the quantity
	// its answer carried.
	Pet      int64  `json:"petId,omitempty"`
	Quantity *int64 `json:"quantity,omitempty"`
	Got      *int64 `json:"got,omitempty"`
	// Answer says how the request was answered, when not by a plain
	// success: "503 (code \"unavailable\")", "no answer (…)"; for a
	// failed list, why it failed.
	Answer string `json:"answer,omitempty"`
	// Seen is what an "ok" list showed of each pet in play, in the order
	// of pets; null for a pet it lacked.
	Seen []*int64 `json:"seen,omitempty"`
	// Format 2: Status is the HTTP status of the answer (0: none came);
	// Refused marks an update answered 4xx; Stale a list marked stale,
	// with its Age in AgeSeconds (absent when it gave none).
	Status     *int   `json:"status,omitempty"`
	Refused    bool   `json:"refused,omitempty"`
	Stale      bool   `json:"stale,omitempty"`
	AgeSeconds *int64 `json:"ageSeconds,omitempty"`
	// Strict marks a list sent with Cache-Control: no-cache (Op.Strict);
	// absent in the files saved before it was kept.
	Strict bool `json:"strict,omitempty"`
}

// Saved is a history read back from its file, with what the run that
// saved it concluded.
type Saved struct {
	History *History
	Started time.Time
	// Staleness is the bound the run judged against; MinUpdates and
	// StaleIfError its other options (Options), zero in a file of format
	// 1.
	Staleness    time.Duration
	MinUpdates   int
	StaleIfError time.Duration
	Recovery     time.Duration
	// Verdict is the run's verdict (each failure its kind and words;
	// Detail, Counts and the picture left empty), nil when the file
	// holds none.
	Verdict *Verdict
}

// WriteHistory writes h as JSON to w, in the format Format, with the
// time the run started, the options it was judged with (opt: Staleness,
// MinUpdates and StaleIfError; Limit is not kept) and its verdict (v,
// nil for none): one request a line, so that a file reads and compares
// line by line.
func WriteHistory(w io.Writer, h *History, started time.Time, opt Options, v *Verdict) error {
	f := file{Format: Format, Started: started, BaseURLs: h.Bases, Clients: h.Clients, DurationNs: int64(h.Duration), StalenessNs: int64(opt.Staleness),
		MinUpdates: opt.MinUpdates, StaleIfErrorNs: int64(opt.StaleIfError), RecoveryLimitNs: int64(opt.Recovery), Faults: h.Faults}
	for _, p := range h.Pets {
		f.Pets = append(f.Pets, filePet{ID: p.ID, Quantity: p.Qty})
	}
	if v != nil {
		fv := &fileVerdict{Outcome: v.Outcome(), NotJudged: v.NotJudged}
		for _, x := range v.Failures {
			ff := fileFailure{Kind: x.Kind, Problem: x.Problem, Expected: x.Expected}
			if x.Fault >= 0 {
				ff.AfterFault = &x.Fault
			}
			fv.Failures = append(fv.Failures, ff)
		}
		f.Verdict = fv
	}
	head, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	// The requests, one a line, in place of the empty list.
	i := bytes.LastIndex(head, []byte(`"requests": null`))
	if i < 0 {
		return errors.New("linearize: the history's head has no requests member")
	}
	var buf bytes.Buffer
	buf.Write(head[:i])
	buf.WriteString("\"requests\": [\n")
	for k, o := range h.Ops {
		b, err := json.Marshal(toFile(h, o))
		if err != nil {
			return err
		}
		buf.WriteString("    ")
		buf.Write(b)
		if k < len(h.Ops)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("  ]\n}\n")
	_, err = w.Write(buf.Bytes())
	return err
}

func toFile(h *History, o Op) fileOp {
	f := fileOp{Client: o.Client, BaseURL: h.Bases[o.Base], Round: o.Round, Barrier: o.Barrier, CallNs: o.Call, ReturnNs: o.Return, Answer: o.Answer,
		Status: &o.Status, Refused: o.Refused && o.Kind == Update, Strict: o.Strict && o.Kind == List}
	switch o.Kind {
	case List:
		f.Kind, f.Outcome = "list", "failed"
		if o.OK {
			f.Outcome, f.Stale = "ok", o.Stale
			if o.Stale && o.Age >= 0 {
				f.AgeSeconds = &o.Age
			}
			for s := range h.Pets {
				if o.Seen[s] != -1 {
					f.Seen = append(f.Seen, &o.Seen[s])
				} else {
					f.Seen = append(f.Seen, nil)
				}
			}
		}
	default:
		f.Kind, f.Outcome, f.Pet, f.Quantity = "update", "unknown", h.Pets[o.Slot].ID, &o.Qty
		if o.Known {
			f.Outcome, f.Got = "ok", &o.Got
			if o.Answer == "200" {
				f.Answer = "" // said by the outcome
			}
		}
	}
	return f
}

// ReadHistory reads a history that WriteHistory wrote, of format Format
// or formatV1, and refuses one that does not hold together (a request
// through a base URL or on a pet the run did not name, a time out of
// order, a status that contradicts its outcome).
func ReadHistory(r io.Reader) (*Saved, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a consistency history: %v", err)
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	// A base URL given twice is one base: the run judges it so
	// (UniqueBases), and so does a file saved before it did.
	f.BaseURLs = UniqueBases(f.BaseURLs)
	h := &History{Bases: f.BaseURLs, Clients: f.Clients, Duration: time.Duration(f.DurationNs), Faults: f.Faults}
	slot := map[int64]int{}
	for i, p := range f.Pets {
		h.Pets = append(h.Pets, Pet{ID: p.ID, Qty: p.Quantity})
		slot[p.ID] = i
	}
	for k, x := range f.Requests {
		o, err := fromFile(&f, k, x, slot)
		if err != nil {
			return nil, fmt.Errorf("request %d of the history: %v", k+1, err)
		}
		h.Ops = append(h.Ops, o)
	}
	s := &Saved{History: h, Started: f.Started, Staleness: time.Duration(f.StalenessNs), MinUpdates: f.MinUpdates, StaleIfError: time.Duration(f.StaleIfErrorNs),
		Recovery: time.Duration(f.RecoveryLimitNs)}
	if fv := f.Verdict; fv != nil {
		v := &Verdict{NotJudged: fv.NotJudged}
		for k, x := range fv.Failures {
			g := Failure{Kind: x.Kind, Pet: -1, Base: -1, Fault: -1, Problem: x.Problem, Expected: x.Expected}
			if x.AfterFault != nil {
				if *x.AfterFault < 0 || *x.AfterFault >= len(f.Faults) {
					return nil, fmt.Errorf("failure %d of the history's verdict: it follows fault %d, not one of the %d of the history", k+1, *x.AfterFault+1, len(f.Faults))
				}
				g.Fault = *x.AfterFault
			}
			v.Failures = append(v.Failures, g)
		}
		s.Verdict = v
	}
	return s, nil
}

// UniqueBases is bases without repeats, in the order of their first
// appearance: a base URL given twice names one way to the deployment,
// whose requests are judged together.
func UniqueBases(bases []string) []string {
	var out []string
	for _, b := range bases {
		if !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out
}

// check checks the run's parameters of the history file f.
func (f *file) check() error {
	switch {
	case f.Format != Format && f.Format != formatV1:
		return fmt.Errorf("not a consistency history of this version: format %q, want %q (or %q, which it still reads)", f.Format, Format, formatV1)
	case len(f.BaseURLs) == 0:
		return errors.New("the history names no base URL")
	case len(f.Pets) == 0 || len(f.Pets) > MaxPets:
		return fmt.Errorf("the history names %d pets, not 1 to %d", len(f.Pets), MaxPets)
	case f.Clients < 1:
		return fmt.Errorf("the history names %d clients", f.Clients)
	case f.StalenessNs < 0 || f.DurationNs < 0:
		return errors.New("the history's duration or staleness is negative")
	case f.MinUpdates < 0 || f.StaleIfErrorNs < 0 || f.RecoveryLimitNs < 0:
		return errors.New("the history's minimum of updates, stale-if-error bound or recovery limit is negative")
	case f.Format == formatV1 && (f.MinUpdates != 0 || f.StaleIfErrorNs != 0 || f.RecoveryLimitNs != 0):
		return fmt.Errorf("a history of format %q with minUpdates, staleIfErrorNs or recoveryLimitNs, which that format did not have", formatV1)
	}
	for k, x := range f.Faults {
		if x.Fault == "" || x.AppliedNs < 0 || x.EndedNs != nil && *x.EndedNs < x.AppliedNs {
			return fmt.Errorf("fault %d of the history: unnamed, or ended before it was applied", k+1)
		}
	}
	return nil
}

// fromFile reads request k of the file f, x, as an Op; slot maps each pet
// in play to its index.
func fromFile(f *file, k int, x fileOp, slot map[int64]int) (Op, error) {
	o := Op{Client: x.Client, Round: x.Round, Barrier: x.Barrier, Call: x.CallNs, Return: x.ReturnNs, Answer: x.Answer, Age: NoAge}
	o.Base = slices.Index(f.BaseURLs, x.BaseURL)
	switch {
	case o.Base < 0:
		return o, fmt.Errorf("base URL %q is not one of the history's", x.BaseURL)
	case x.ReturnNs < x.CallNs:
		return o, errors.New("returned before its call")
	case k > 0 && x.CallNs < f.Requests[k-1].CallNs:
		return o, errors.New("the requests are not ordered by call")
	case x.Client < 0 || x.Client > f.Clients || x.Round < 0:
		return o, fmt.Errorf("client %d or round %d out of range", x.Client, x.Round)
	}
	var err error
	switch x.Kind {
	case "list":
		err = listFromFile(f, x, &o)
	case "update":
		err = updateFromFile(x, slot, &o)
	default:
		return o, fmt.Errorf("kind %q is neither list nor update", x.Kind)
	}
	if err != nil {
		return o, err
	}
	return o, statusFromFile(f, x, &o)
}

// listFromFile reads the list x into o.
func listFromFile(f *file, x fileOp, o *Op) error {
	o.Kind = List
	switch x.Outcome {
	case "ok":
		if len(x.Seen) != len(f.Pets) {
			return fmt.Errorf("a list that shows %d pets, not the %d in play", len(x.Seen), len(f.Pets))
		}
		o.OK = true
		for s, q := range x.Seen {
			o.Seen[s] = -1
			if q != nil {
				o.Seen[s] = *q
			}
		}
	case "failed":
	default:
		return fmt.Errorf("a list's outcome %q is neither ok nor failed", x.Outcome)
	}
	switch {
	case x.Refused:
		return errors.New("a list marked refused: only an update is")
	case (x.Stale || x.AgeSeconds != nil) && !o.OK:
		return errors.New("a list that failed marked stale or with an Age: only a list answered 200 is")
	case x.AgeSeconds != nil && (!x.Stale || *x.AgeSeconds < 0):
		return errors.New("an Age on a list not marked stale, or a negative one")
	}
	o.Stale, o.Strict = x.Stale, x.Strict
	if x.AgeSeconds != nil {
		o.Age = *x.AgeSeconds
	}
	return nil
}

// updateFromFile reads the update x into o.
func updateFromFile(x fileOp, slot map[int64]int, o *Op) error {
	s, ok := slot[x.Pet]
	if !ok || x.Quantity == nil {
		return fmt.Errorf("an update of pet %d, not in play, or without its quantity", x.Pet)
	}
	o.Kind, o.Slot, o.Qty = Update, s, *x.Quantity
	switch x.Outcome {
	case "ok":
		if x.Got == nil {
			return errors.New("an update answered ok without the quantity its answer carried")
		}
		o.Known, o.Got = true, *x.Got
		if o.Answer == "" {
			o.Answer = "200"
		}
	case "unknown":
	default:
		return fmt.Errorf("an update's outcome %q is neither ok nor unknown", x.Outcome)
	}
	if x.Stale || x.AgeSeconds != nil || x.Strict {
		return errors.New("an update marked stale, strict or with an Age: only a list is")
	}
	if x.Refused && o.Known {
		return errors.New("an update both answered ok and refused")
	}
	o.Refused = x.Refused
	return nil
}

// statusFromFile reads the status of request x into o: from the file in
// format 2, where it must agree with the outcome; in format 1, which did
// not keep it, 200 for a request answered ok and StatusUnrecorded for
// the others.
func statusFromFile(f *file, x fileOp, o *Op) error {
	if f.Format == formatV1 {
		if x.Status != nil || x.Refused || x.Stale || x.AgeSeconds != nil || x.Strict {
			return fmt.Errorf("a status, refusal or stale mark in a history of format %q, which did not keep them", formatV1)
		}
		o.Status = StatusUnrecorded
		if x.Outcome == "ok" {
			o.Status = 200
		}
		return nil
	}
	if x.Status == nil {
		return errors.New("without its status")
	}
	st := *x.Status
	switch {
	case st != StatusNone && st != StatusUnrecorded && (st < 100 || st > 599):
		return fmt.Errorf("status %d is not an HTTP status", st)
	case x.Outcome == "ok" && st != 200:
		return fmt.Errorf("answered ok with the status %d", st)
	case o.Refused && (st < 400 || st > 499):
		return fmt.Errorf("refused with the status %d, not a 4xx", st)
	}
	o.Status = st
	return nil
}
