package votefile

import (
	"fmt"

	"github.com/darrm/darrm/internal/enum"
)

// The fields of Options and Stated that the advice in the errors of Open
// and Check names (Hint.Field).
const (
	optFormat      = "Options.Format"
	optLayout      = "Options.Layout"
	optClasses     = "Options.Classes"
	optK           = "Options.K"
	optID          = "Options.ID"
	optOrientation = "Options.Orientation"
	optArray       = "Options.Array"
	optPartition   = "Stated.Partition"
)

// Hint is advice in an error's text to set Field, a field of Options or
// Stated (e.g. "Options.Classes"), to Value when it is not "": the
// value's text form (Layout "counts", Presence "yes", Format "npy"), a
// number, or a placeholder ("C" for a number of classes). An error that
// gives hints has a method Hints() []Hint, each hint in its text as
// String has it: a caller that gives the options its own way (darrm:
// flags) words each its way.
type Hint struct {
	Field string
	Value string
}

// String returns the hint as the error's text has it: the field, with
// " = " and the value when there is one.
func (h Hint) String() string {
	if h.Value == "" {
		return h.Field
	}
	return h.Field + " = " + h.Value
}

// Orientation says which axis of a matrix of class labels holds the
// teachers: QueriesInRows, TeachersInRows, or unstated (the zero value).
// A vote file with a metadata header, or of JSON lines, has a row per
// query; a header-less CSV file or NumPy array of class labels does not
// say, so the caller states it (Options.Orientation), whatever the
// matrix's shape: a square one, or one with fewer queries than teachers,
// reads either way, and one way is false.
// A Orientation prints and reads as its name (its String, MarshalText and
// UnmarshalText).
type Orientation int

const (
	// orientationUnstated is the zero value: a matrix of class labels
	// whose file does not state its orientation is refused.
	orientationUnstated Orientation = iota
	// QueriesInRows is a row per query, a column per teacher: darrm's vote
	// files and prediction matrices.
	QueriesInRows
	// TeachersInRows is a row per teacher, a column per query: PATE's
	// published votes.
	TeachersInRows
)

var orientationNames = enum.Names[Orientation]{What: "orientation", List: []string{QueriesInRows: "queries-in-rows", TeachersInRows: "teachers-in-rows"}, Zero: "unstated"}

// String returns the name of o.
func (o Orientation) String() string { return orientationNames.String(o) }

// MarshalText returns the name of o.
func (o Orientation) MarshalText() ([]byte, error) { return []byte(orientationNames.String(o)), nil }

// UnmarshalText sets o from its name.
func (o *Orientation) UnmarshalText(text []byte) error { return orientationNames.Unmarshal(o, text) }

// orientationHint is the hint to state orientation o.
func orientationHint(o Orientation) Hint { return Hint{optOrientation, o.String()} }

// teachersInRows and queriesInRows are the hints to state either
// orientation.
var (
	teachersInRows = orientationHint(TeachersInRows)
	queriesInRows  = orientationHint(QueriesInRows)
)

// advice is text with the hints it gives.
type advice struct {
	text  string
	hints []Hint
}

func (a advice) String() string { return a.text }

// advise formats text as fmt.Sprintf does and keeps the hints among args:
// each Hint, and those of each advice.
func advise(format string, args ...any) advice {
	a := advice{text: fmt.Sprintf(format, args...)}
	for _, x := range args {
		switch x := x.(type) {
		case Hint:
			a.hints = append(a.hints, x)
		case advice:
			a.hints = append(a.hints, x.hints...)
		}
	}
	return a
}
