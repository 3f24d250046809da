package votefile

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/darrm/darrm/internal/peek"
)

// Options say what the caller knows of a vote file; the zero value lets
// Read decide everything from the file.
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
	// tells counts from 0/1 votes; Read leaves a 0/1 file's K to the
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
	// Size is the size in bytes of r when r is an io.ReaderAt that holds
	// the file from its start (an *os.File): an .npz archive (Array)
	// needs it, and a NumPy array of which a query is a column is then
	// read in place, in bounded memory; without it such an array is read
	// whole into memory first, at most 256 MiB (docs/pate.md, "NumPy
	// files").
	Size int64
	// Array names the array to read in a NumPy .npz archive; r must then
	// be an io.ReaderAt of Size bytes.
	Array string
	// Meta is the file's metadata header when the file does not hold it
	// (a NumPy array cannot; a CSV or JSON lines file may be without it):
	// read from a file of its own (ReadSidecar), MetaFile, named in
	// errors. The file is read as if it opened with this header, with
	// every check that gets; a file that has a header of its own is
	// refused, so that it never has two.
	Meta     *Meta
	MetaFile string
}

// A note is what Read decided of a file that neither its caller nor its
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

// optionError is a Read option that the file contradicts, said as the
// caller's user gave it.
type optionError struct{ advice }

func (e optionError) Error() string { return e.text }

// BadInput reports that the error is the caller's input.
func (e optionError) BadInput() bool { return true }

// Hints returns the hints the message gives.
func (e optionError) Hints() []Hint { return e.hints }

// Read reads the start of the vote file r (its metadata header and
// first data row) and returns the reader of its queries: of 0/1 votes of
// two classes, or of vote counts or class indices of C classes
// (Reader.ManyClasses), as the header, the options and, where neither
// says, the rows decide (docs/aggregate.md, "Vote counts without a
// flag"). It returns what it so decided as Notes, also with an error
// after the decision. A NumPy array
// (.npy, or with opts.Array an .npz archive's) is recognised by its
// start. name is used in errors; a malformed file, or options it
// contradicts, is an error with BadInput() true.
func Read(r io.Reader, name string, opts Options) (Reader, []note, error) {
	var vf *voteFile
	var err error
	if opts.Array != "" {
		ra, ok := r.(io.ReaderAt)
		if !ok || opts.Size <= 0 {
			return nil, nil, &formatError{File: name, Msg: fmt.Sprintf("array %s: an .npz archive is read from a file, not from a stream", show([]byte(opts.Array)))}
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

// read reads vf as Read does.
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

// SidecarPath returns the name of the sidecar of the vote file path: the
// file beside it that holds its metadata header (ReadSidecar), path with
// ".meta.json" added, as in votes.npy.meta.json.
func SidecarPath(path string) string { return path + ".meta.json" }

// ReadSidecar reads a sidecar: the metadata header of a vote file that
// does not hold it (a NumPy array, a CSV file without it), in a file of
// its own. It holds the header's JSON object, as a vote file's first line
// does, and nothing else but blanks (it may span lines); the same rules
// apply (Meta.Validate). name is used in errors, which are format errors.
func ReadSidecar(r io.Reader, name string) (*Meta, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxLineBytes+1))
	switch {
	case err != nil:
		return nil, err
	case len(b) > maxLineBytes:
		return nil, &formatError{File: name, Msg: fmt.Sprintf("a metadata header longer than %d bytes", maxLineBytes)}
	case !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0:
		return nil, &formatError{File: name, Msg: "not a metadata header: binary data"}
	}
	obj := bytes.TrimSpace(bytes.TrimPrefix(b, []byte("\ufeff")))
	if len(obj) == 0 || obj[0] != '{' || !isHeaderObject(obj) {
		return nil, &formatError{File: name, Msg: fmt.Sprintf("not a metadata header: a sidecar holds the vote file's header, the JSON object {\"%s\": %d, ...} that a vote file's first line holds", headerKey, headerVersion)}
	}
	m, err := parseMeta(obj)
	if err != nil {
		return nil, &formatError{File: name, Msg: err.Error()}
	}
	return m, nil
}

// IsVoteHeader reports whether obj, the JSON object of a file's first
// line (after "# " in CSV), is a vote file's metadata header: it has
// the key headerKey.
func IsVoteHeader(obj []byte) bool { return slices.Contains(peek.Keys(obj), headerKey) }

// IsLabelHeader reports whether obj, the JSON object of a file's first
// line (after "# " in CSV), is a label file's header: it has the key
// labelsKey.
func IsLabelHeader(obj []byte) bool { return slices.Contains(peek.Keys(obj), labelsKey) }
