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
	// Round is the round of the run the request belongs to; Barrier marks
	// the list that ends a round, sent alone once every other request of
	// the round was answered: its answer pins the state there.
	Round   int
	Barrier bool
}

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
