package linearize

import "time"

// MaxPets is the number of pets a consistency run updates. Lists are kept
// whole (one read of every pet in play at one instant), so the state of
// the model is these few quantities; more pets would add nothing a
// replica's staleness does not already show with three.
const MaxPets = 3

// Kind tells a list from an update.
type Kind uint8

const (
	List Kind = iota
	Update
)

// Pet is a pet in play, with its quantity before the run.
type Pet struct {
	ID  int64
	Qty int64
}

// Op is one request of a consistency run, as a client saw it. Times are
// nanoseconds since the run started, on the monotonic clock.
type Op struct {
	Client int
	Base   int // index in History.Bases
	Kind   Kind
	Call   int64
	// Return is when the answer (or its failure) came.
	Return int64
	// An update: the pet (its index in History.Pets), the quantity sent,
	// whether its outcome is known (answered 200 with an item) and the
	// quantity that answer carried. Answer says how it was answered, for
	// the words of a failure.
	Slot   int
	Qty    int64
	Known  bool
	Got    int64
	Answer string
	// A list: the quantity of each pet in play (-1 when the list lacked
	// it). OK is false for a list that failed (no answer, not 200, not a
	// list); it is dropped from the history.
	Seen [MaxPets]int64
	OK   bool
	// Status is the HTTP status of the answer, as the client read it
	// from the response (never from words): 200, 503, …; StatusNone (0)
	// when no answer came (a transport error, a time-out, a connection
	// cut), StatusUnrecorded for a request not answered 200 in a
	// history saved before statuses were kept (format 1).
	Status int
	// Refused marks an update answered 4xx: the deployment refused it,
	// so it changed nothing. The model still holds it as a write of
	// unknown outcome (Known false), as it always did: a refusal that
	// wrote would show in a list, and the update checks judge the
	// refusal itself. The fault figures (FaultResults) count refusals
	// apart from updates of unknown outcome.
	Refused bool
	// Stale marks a list answered 200 that the deployment marked as
	// served from a stale state (during a store outage, from the last
	// state its store confirmed: its stale-if-error mode); Age is its
	// Age header (RFC 9111: whole seconds since that state was
	// confirmed), NoAge when it had none. Both are read only for a list
	// answered 200: such a list is judged against
	// Options.StaleIfError, not as the other lists are (see stale.go).
	Stale bool
	Age   int64
	// Strict marks a list sent with Cache-Control: no-cache, which a
	// deployment answers from its store, never from a held or stale
	// state: the run's barrier lists and its recovery probes (see
	// Recover).
	Strict bool
	// Round is the round of the run the request belongs to; Barrier marks
	// the list that ends a round, sent alone once every other request of
	// the round was answered: its answer pins the state there.
	Round   int
	Barrier bool
}

// The statuses an Op holds besides the HTTP ones.
const (
	// StatusNone: no answer came.
	StatusNone = 0
	// StatusUnrecorded: a request not answered 200, in a history of
	// format 1, which did not keep statuses.
	StatusUnrecorded = -1
)

// NoAge is Op.Age for a list without an Age header.
const NoAge = -1

// History is a consistency run: what it ran against and every request.
type History struct {
	// Bases are the base URLs the clients spread over.
	Bases []string
	// Pets are the pets in play.
	Pets []Pet
	// Clients is the number of clients; in the picture, the barrier
	// lists are the client numbered after them.
	Clients int
	// Duration is how long the clients ran.
	Duration time.Duration
	// Ops are the requests, ordered by call.
	Ops []Op
	// Faults are the faults the run applied (see Fault).
	Faults []Fault
}

// op is a request as the model holds it: ret is its return in the model
// (for an unknown outcome, see judge), idx its index in History.Ops.
type op struct {
	Op
	ret int64
	idx int
}
