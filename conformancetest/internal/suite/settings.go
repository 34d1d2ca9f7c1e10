package suite

import (
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/petinventory/petinventory/conformancetest/internal/report"
)

// Config is conformancetest.Config field for field, in the same order,
// F its type of fault (conformancetest.Fault); the fields are documented
// there. The root converts its Config with a Go conversion,
// suite.Config[conformancetest.Fault](cfg), which does not compile once
// a field is added to, removed from or changed in one and not the other:
// the two cannot drift apart.
type Config[F any] struct {
	BaseURL                 string
	APIKey                  string
	HTTPClient              *http.Client
	ReadOnly                bool
	Level                   report.Level
	Replicas                []string
	Run                     string
	Skip                    string
	Consistency             time.Duration
	ConsistencyClients      int
	ConsistencyHTML         string
	ConsistencyStaleness    time.Duration
	ConsistencyHistory      string
	ConsistencyMinUpdates   int
	ConsistencyStaleIfError time.Duration
	ConsistencyFaults       []F
	ConsistencyRecovery     time.Duration
	ConsistencyRedis        string
	ConsistencyRedisCAFile  string
	ConsistencyRedisPrefix  string
	MaxBodyBytes            int64
	RequestTimeout          time.Duration
	Parallelism             int
	HTMLReport              string
	Progress                func(report.Result)
}

// Settings is a run's configuration as the internal packages read it:
// normalized by the root (defaults applied, every value checked), its
// faults converted to this package's Fault.
type Settings = Config[Fault]

// Fault is conformancetest.Fault, its fields documented there; the root
// converts one with a Go conversion, which does not compile once the two
// differ. Package internal/consistency reads, checks and applies it.
type Fault struct {
	Offset time.Duration
	Kind   string
	Args   []string
}

// String is the fault in the command line's form: "6s redis-pause 2s".
func (f Fault) String() string {
	return strings.Join(append([]string{f.Offset.String(), f.Kind}, f.Args...), " ")
}

// Convert returns c with its faults converted by fault: the Settings of
// a run.
func Convert[F any](c Config[F], fault func(F) Fault) Settings {
	var s Settings
	// c and s are one generic struct: the same fields in the same order,
	// of the same types but for the faults. Copied by position, none is
	// left out, whatever fields come.
	from, to := reflect.ValueOf(c), reflect.ValueOf(&s).Elem()
	for i := range to.NumField() {
		if to.Type().Field(i).Name != "ConsistencyFaults" {
			to.Field(i).Set(from.Field(i))
		}
	}
	for _, f := range c.ConsistencyFaults {
		s.ConsistencyFaults = append(s.ConsistencyFaults, fault(f))
	}
	return s
}
