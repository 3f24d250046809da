package votefile

import (
	"fmt"
	"strconv"

	"github.com/darrm/darrm/internal/enum"
)

// Option is a field of Options or Stated that the advice in the errors
// of Read and Check names (Hint): OptionFormat, OptionLayout,
// OptionClasses, OptionK, OptionID, OptionTeachersInRows and OptionArray
// are Options.Format, Layout, Classes, K, ID, TeachersInRows and Array;
// OptionPartition is Stated.Partition. A caller that gives them its own
// way (darrm: flags) words each its way (Advised).
type Option int

// The options the advice of Read's and Check's errors names.
const (
	OptionFormat Option = iota
	OptionLayout
	OptionClasses
	OptionK
	OptionID
	OptionTeachersInRows
	OptionArray
	OptionPartition
)

var optionNames = enum.Names[Option]{What: "option", List: []string{
	OptionFormat: "Options.Format", OptionLayout: "Options.Layout", OptionClasses: "Options.Classes", OptionK: "Options.K",
	OptionID: "Options.ID", OptionTeachersInRows: "Options.TeachersInRows", OptionArray: "Options.Array", OptionPartition: "Stated.Partition",
}}

// String returns the option's field, e.g. "Options.Classes".
func (o Option) String() string { return optionNames.String(o) }

// Hint is advice in an error's text to set Option, to Value when it is
// not "": the value's text form (Layout "counts", Presence "yes", Format
// "npy"), a number, or a placeholder ("C" for a number of classes).
type Hint struct {
	Option Option
	Value  string
}

// String returns the hint as the error's text has it: the option, with
// " = " and the value when there is one.
func (h Hint) String() string {
	if h.Value == "" {
		return h.Option.String()
	}
	return h.Option.String() + " = " + h.Value
}

// Advised is an error whose text gives Hints, each as Hint.String has
// it: a caller that gives the options its own way replaces each by its
// own words.
type Advised interface {
	error
	Hints() []Hint
}

// teachersInRows is the hint to set (or leave out) Options.TeachersInRows.
var teachersInRows = Hint{Option: OptionTeachersInRows}

// statedK is the hint to state k teachers.
func statedK(k int) Hint { return Hint{OptionK, strconv.Itoa(k)} }

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
