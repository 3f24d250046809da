// Package provenance says where a release's labels come from: the
// mechanism that made them (its name, as a label file's header states
// it) and the teacher ensemble whose votes they aggregate
// (what a vote file's metadata header states, read and checked; the
// binding a ledger holds; the teachers' post-processing cap).
//
// Package votefile reads and writes the headers as plain data; this
// package interprets them. Check is the one check of what a release, an
// account, a ledger or a writer of votes states of the ensemble against
// the header of its votes: the header's relation, kind, partition and
// teachers' guarantees (a DP-SGD run's recomputed by the accountant), and
// every parameter stated. It returns the Binding, what a release states
// of its ensemble, from which follows the teacher-level cap on every
// total (Binding.Cap). Check applies the one table of which partition of
// the training data keeps which neighbouring relation.
//
// A header of other teachers (*TeachersError) is the caller's input: it
// has BadInput() bool, true.
//
// The headers are documented in docs/aggregate.md.
package provenance
