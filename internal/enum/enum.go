// Package enum is the text form of darrm's enumerations: a table of names
// indexed by value, read and written the same way by every package.
package enum

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/darrm/darrm/internal/param"
)

// Names is the text of an enumeration T whose values are 0, 1, ...:
// List[v] names value v. An empty entry names nothing (a zero value that
// means "not stated"): it is never parsed nor offered.
type Names[T ~int] struct {
	// What the values are, as errors say it: `kind "x": must be one of
	// ...`; "" leaves it out: `"x": must be one of ...`.
	What string
	// List holds the names, indexed by value.
	List []string
	// Zero is the text of the zero value when List gives it no name
	// ("unstated"); parsing never returns it.
	Zero string
	// Also holds further names that parse to a value but are never
	// printed: a synonym ("ndjson") or a name that an earlier darrm used.
	Also map[string]T
	// Fold makes parsing ignore case.
	Fold bool
	// Or words the rule in Parse's error "must be a, b or c", not "must
	// be one of a, b, c".
	Or bool
}

// String returns the name of v: Zero for an unnamed zero value, and
// T(v), as Go prints it, for a value without a name.
func (n Names[T]) String(v T) string {
	switch i := int(v); {
	case n.Named(v):
		return n.List[i]
	case i == 0 && n.Zero != "":
		return n.Zero
	default:
		return fmt.Sprintf("%s(%d)", reflect.TypeFor[T]().Name(), i)
	}
}

// Named reports whether v has a name in List.
func (n Names[T]) Named(v T) bool {
	i := int(v)
	return i >= 0 && i < len(n.List) && n.List[i] != ""
}

// Parse returns the value named s (in List or Also), or an error naming
// every name of List.
func (n Names[T]) Parse(s string) (T, error) {
	is := func(name string) bool { return name == s || n.Fold && strings.EqualFold(name, s) }
	if s != "" {
		if i := slices.IndexFunc(n.List, is); i >= 0 {
			return T(i), nil
		}
		for name, v := range n.Also {
			if is(name) {
				return v, nil
			}
		}
	}
	valid := slices.DeleteFunc(slices.Clone(n.List), func(s string) bool { return s == "" })
	rule := "must be one of " + strings.Join(valid, ", ")
	if n.Or && len(valid) > 1 {
		rule = "must be " + strings.Join(valid[:len(valid)-1], ", ") + " or " + valid[len(valid)-1]
	}
	if n.What == "" {
		return 0, fmt.Errorf("%s: %s", param.Quote(s), rule)
	}
	return 0, fmt.Errorf("%s %s: %s", n.What, param.Quote(s), rule)
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
