package provenance

import "strings"

// MechanismName names a mechanism that releases labels, as a label file's
// header states it (votefile.LabelMeta.Mechanism) and a ledger's run
// records it. The mechanisms themselves are ensemble's types, and each
// gives its own name (ensemble.Mechanism's Name: ensemble.GNMax{}.Name()
// is "gnmax"); ensemble.Registry.FromHeader reads a header's name back into one.
type MechanismName string

// String returns the mechanism's name.
func (m MechanismName) String() string { return string(m) }

// JoinMechanisms lists the names ms separated by sep, as strings.Join
// does for strings.
func JoinMechanisms(ms []MechanismName, sep string) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = string(m)
	}
	return strings.Join(names, sep)
}
