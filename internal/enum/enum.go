// Package enum is the text form of darrm's enumerations: a table of names
// indexed by value, read and written the same way by every package.
package enum

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Names is the text of an enumeration T whose values are 0, 1, ...:
// List[v] names value v. An empty entry names nothing (a zero value that
// means "not stated"): it is never parsed nor offered.
type Names[T ~int] struct {
	// What the values are, as errors say it: `kind "x": must be one of ...`.
	What string
	// List holds the names, indexed by value.
	List []string
	// Zero is the text of the zero value when List gives it no name
	// ("unstated"); parsing never returns it.
	Zero string
}

// String returns the name of v: Zero for an unnamed zero value, and
// T(v), as Go prints it, for a value without a name.
func (n Names[T]) String(v T) string {
	switch i := int(v); {
	case i >= 0 && i < len(n.List) && n.List[i] != "":
		return n.List[i]
	case i == 0 && n.Zero != "":
		return n.Zero
	default:
		return fmt.Sprintf("%s(%d)", reflect.TypeFor[T]().Name(), i)
	}
}

// Parse returns the value named s, or an error naming every name.
func (n Names[T]) Parse(s string) (T, error) {
	if i := slices.Index(n.List, s); i >= 0 && s != "" {
		return T(i), nil
	}
	valid := slices.DeleteFunc(slices.Clone(n.List), func(s string) bool { return s == "" })
	return 0, fmt.Errorf("%s %q: must be one of %s", n.What, s, strings.Join(valid, ", "))
}

// Unmarshal sets *v to the value named b (Parse), for UnmarshalText; *v
// is unchanged on error.
func (n Names[T]) Unmarshal(v *T, b []byte) error {
	x, err := n.Parse(string(b))
	if err == nil {
		*v = x
	}
	return err
}
