package votefile

import (
	"fmt"
	"io"
	"slices"

	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/peek"
)

// Options say what the caller knows of a vote file; the zero value lets
// Open decide everything from the file.
type Options struct {
	// Format is the file's format; FormatAuto decides from its start.
	Format Format
	// Layout LayoutCounts says the rows are vote counts, one column per
	// class. The zero value, LayoutVotes, leaves it to the metadata
	// header or, without one, to Classes (class indices) or to the rows:
	// 0/1 votes, or counts when the first rows are evidently counts (a
	// Note says so).
	Layout Layout
	// Classes is C. Given (not 0) without a header, the rows are class
	// indices 0..C-1 (or with LayoutCounts, C counts); a header's C must
	// be the same.
	Classes int
	// K is the number of teachers the caller states, 0 for the file's.
	// It lets counts sum to fewer than K (teachers that abstained) and
	// tells counts from 0/1 votes; Open leaves a 0/1 file's K to the
	// caller to compare.
	K int
	// Header and ID say whether a CSV file has a header row and whether
	// the rows have an id column (the zero value, auto: decided from the file).
	Header Presence
	ID     Presence
	// Orientation says which axis of a matrix of class labels (a NumPy
	// array, or a CSV file without a metadata header) holds the teachers:
	// TeachersInRows (PATE's published votes; a CSV file is then read
	// whole) or QueriesInRows. Such a file needs it, whatever its shape;
	// a file that states it (a metadata header, JSON lines: a row per
	// query) may be read without it, and one it contradicts is refused.
	Orientation Orientation
	// Size is the size in bytes of In when In is an io.ReaderAt that
	// holds the file from its start (an *os.File; Open sets it for a file
	// it opens): an .npz archive (Array) needs it, and a NumPy array of
	// which a query is a column is then read in place, in bounded memory;
	// without it such an array is read whole into memory first, at most
	// 256 MiB (docs/pate.md, "NumPy files").
	Size int64
	// Array names the array to read in a NumPy .npz archive, read from
	// an io.ReaderAt of Size bytes.
	Array string
	// Meta is the file's metadata header when the file does not hold it
	// (a NumPy array cannot; a CSV or JSON lines file may be without it),
	// from a file of its own, its sidecar: MetaFile, named in errors. The
	// file is read as if it opened with this header, with every check
	// that gets; a file that has a header of its own is refused, so that
	// it never has two. Without it Open reads the sidecar from MetaIn, or
	// from the file MetaFile names, or beside the file.
	Meta     *Meta
	MetaFile string
	MetaIn   io.Reader
	// In is the vote file, when Open reads it from a reader rather than
	// from a file it opens (standard input, votes in memory); Open neither
	// closes it nor looks beside it for a sidecar.
	In io.Reader
	// Note, if set, is told what Open decided that neither the options
	// nor the metadata header said, for the caller to tell its user, e.g.
	// "counts.csv holds vote counts, one column per class: read as
	// counts"; also when an error follows the decision.
	Note func(string)
}

// A note is what Open decided of a file that neither its caller nor its
// metadata header said, for the caller to tell its user.
type note struct {
	File   string // the file's name
	Layout Layout // the layout decided
	Why    string // the evidence
}

// String says what was decided and why, e.g. "counts.csv holds vote
// counts, one column per class: read as counts".
func (n note) String() string {
	return fmt.Sprintf("%s %s: read as %v", n.File, n.Why, n.Layout)
}

// optionError is an option of Open that the file contradicts, said as the
// caller's user gave it.
type optionError struct{ advice }

func (e optionError) Error() string { return e.text }

// BadInput reports that the error is the caller's input.
func (e optionError) BadInput() bool { return true }

// Hints returns the hints the message gives.
func (e optionError) Hints() []Hint { return e.hints }

// readVotes reads the start of the vote file r, which name names in errors,
// as Open says.
func readVotes(r io.Reader, name string, opts Options) (Reader, []note, error) {
	var vf *voteFile
	var err error
	if opts.Array != "" {
		ra, ok := r.(io.ReaderAt)
		if !ok || opts.Size <= 0 {
			return nil, nil, &formatError{File: name, Msg: fmt.Sprintf("array %s: an .npz archive is read from a file, not from a stream", param.Quote(opts.Array))}
		}
		vf, err = openNPZ(ra, opts.Size, name, opts.Array)
	} else {
		vf, err = open(r, name, opts.Format)
		if ra, ok := r.(io.ReaderAt); ok && err == nil && vf.npy != nil && opts.Size > 0 {
			vf.npy.place(ra, opts.Size, false)
		}
	}
	if err == nil && opts.Meta != nil {
		err = vf.setMeta(opts.Meta, opts.MetaFile)
	}
	if err != nil {
		if vf != nil && vf.member != nil {
			vf.member.Close()
		}
		return nil, nil, err
	}
	in, notes, err := vf.read(opts)
	if err != nil && vf.member != nil {
		vf.member.Close()
	}
	return in, notes, err
}

// read reads vf as readVotes does.
func (vf *voteFile) read(opts Options) (Reader, []note, error) {
	name, m := vf.vr.name, vf.vr.meta
	counts := opts.Layout == LayoutCounts
	var notes []note
	if !counts && opts.Classes == 0 && !vf.manyClasses() {
		layout, err := vf.detectLayout(readOptions{Header: opts.Header, ID: opts.ID, K: opts.K})
		if err != nil {
			return nil, nil, err
		}
		if layout != LayoutCounts || m != nil {
			if opts.Orientation == TeachersInRows {
				// 0/1 votes have a row per query, as their header, when
				// they have one, says.
				return nil, nil, optionError{advise("%s: %v reads class labels (%v), a row per teacher; 0/1 votes have a row per query: leave it out",
					name, teachersInRows, Hint{optClasses, "C"})}
			}
			r, err := vf.Votes(readOptions{Format: opts.Format, Header: opts.Header, ID: opts.ID})
			return r, nil, err
		}
		counts = true
		notes = append(notes, note{File: name, Layout: LayoutCounts, Why: "holds vote counts, one column per class"})
	}
	co := classOptions{Header: opts.Header, ID: opts.ID, Classes: opts.Classes, Orientation: opts.Orientation}
	switch {
	case m != nil:
		if opts.Classes != 0 && opts.Classes != m.Classes {
			return nil, notes, optionError{advise("%s: the ensemble's classes: %d given, but the vote file's metadata header states %d: a value given must equal the header's (leave it out to use the header's) (%v)",
				name, opts.Classes, m.Classes, Hint{optClasses, ""})}
		}
		if counts && m.Layout != LayoutCounts {
			return nil, notes, optionError{advise("%v contradicts the metadata header of %s, which states layout %v (class indices)", Hint{optLayout, "counts"}, name, m.Layout)}
		}
	case counts:
		co.Input, co.K = inputCounts, opts.K
	case opts.Classes != 0:
		co.Input, co.K = inputClasses, opts.K
	default:
		co.K = opts.K
	}
	r, err := vf.Classes(co)
	return r, notes, err
}

// setMeta gives the file the metadata header m, read from the sidecar
// file (Options.Meta); a file with a header of its own is refused.
func (vf *voteFile) setMeta(m *Meta, file string) error {
	vr := vf.vr
	if file == "" {
		file = "the metadata header given"
	}
	if vr.meta != nil {
		return &formatError{File: vr.name, Line: vr.metaLine, Msg: fmt.Sprintf("the file has a metadata header of its own, and %s states one as well: a vote file has one header (remove one of them)", file)}
	}
	if err := m.Validate(); err != nil {
		return &formatError{File: file, Msg: err.Error()}
	}
	vr.meta, vr.metaFile = m, file
	return nil
}

// IsHeader reports whether obj, the JSON object of a file's first line
// (after "# " in CSV), is the header of a file of this package (ok), a
// label file's (labels: it has the key labelsKey) or a vote file's
// metadata header (it has the key headerKey, which decides when it has
// both), so that a caller that recognises files tells both apart by one
// call.
func IsHeader(obj []byte) (labels, ok bool) {
	keys := peek.Keys(obj)
	if slices.Contains(keys, headerKey) {
		return false, true
	}
	labels = slices.Contains(keys, labelsKey)
	return labels, labels
}
