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
	// Type is the name String gives a value without a name, Type(v); ""
	// is the Go type's own name (a Value's alias needs it said).
	Type string
}

// Table gives the names of the enumeration V: a Value's names.
type Table[V ~int] interface{ Names() *Names[V] }

// Value is a value of an enumeration exported for its values alone: the
// package declares it as an alias, type Kind = enum.Value[kinds], whose
// table type (kinds) gives the names, and its constants of type Kind.
// Value is the one String, MarshalText and UnmarshalText of every such
// enumeration, so that each prints and reads as its name (a flag, a JSON
// or config value) without a copy of the three methods per type.
type Value[T Table[Value[T]]] int

// String returns the name of v (Names.String).
func (v Value[T]) String() string {
	var t T
	return t.Names().String(v)
}

// MarshalText returns the name of v.
func (v Value[T]) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText sets v from its name (Names.Unmarshal).
func (v *Value[T]) UnmarshalText(b []byte) error {
	var t T
	return t.Names().Unmarshal(v, b)
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
		name := n.Type
		if name == "" {
			name = reflect.TypeFor[T]().Name()
		}
		return fmt.Sprintf("%s(%d)", name, i)
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
		return 0, fmt.Errorf("%q: %s", s, rule)
	}
	return 0, fmt.Errorf("%s %q: %s", n.What, s, rule)
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
