// Package votefile reads and writes the files of a private majority
// release: vote files (the teachers' 0/1 votes, or vote counts and class
// indices of C classes) and label files, with their versioned metadata
// headers.
//
// A vote file's header (Meta) states which teacher ensemble voted and
// what its guarantee rests on: K, the classes, the layout, each teacher's
// (ε, Δ) and its provenance (stated, or a DP-SGD run), the neighbouring
// relation, the kind of teachers and how their data was cut. This package
// reads and writes it as plain data and checks its form; it knows nothing
// of privacy, and imports nothing that does. Package provenance reads
// what the header states and checks it (provenance.Check).
//
// Open is the one reader of vote files (CSV, JSON lines, NumPy .npy and
// .npz, recognised by their start), from a file or a reader, with the
// header of its sidecar (the file beside it, SidecarPath, or one given)
// when it holds none: it decides from the header, the caller's Options
// or the rows whether they hold 0/1 votes, vote counts or class indices,
// tells what it decided (Options.Note), and streams the queries in
// constant memory; every query carries its counts, so any Reader is a
// counts view of its file. A class label -1, or counts short of a stated
// K, is a teacher that abstained. WriteVotes and WriteCounts write vote
// files, LabelWriter and LabelReader label files. Nothing here prints, logs or
// returns a query's un-noised majority: a reader hands each query's votes
// to the caller, and a label file holds only released labels.
//
// A malformed file (its error names the file, the line, the column and the
// rule, never a row, and may carry hints on how to read it: Hint) and a
// header that breaks a rule (*HeaderError) are the caller's input: they
// have BadInput() bool, true, by which callers tell them from a failure to
// read.
//
// The file formats are documented in docs/aggregate.md.
package votefile
