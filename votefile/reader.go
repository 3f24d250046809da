package votefile

import (
	"io"
	"strconv"
)

// Query is one row of a vote file. ID, Votes and Counts are valid until
// the next call of the reader's Next.
type Query struct {
	Index    int    // position among the queries, from 1
	Line     int    // line of the file
	ID       []byte // the id column (a JSON string decoded), nil without one
	IDNumber bool   // the id was a JSON number (its text is the literal)
	// Votes are the K votes of a two-class vote file, each 0 or 1; nil
	// for a multi-class file.
	Votes []byte
	// Counts are the number of teachers that vote for each class: C
	// counts summing to K, for every vote file ([K-L, L] for 0/1 votes
	// with L ones).
	Counts []int
}

// Key returns the text that names q in a label file: its id, or its
// position from 1 without one.
func (q *Query) Key() string {
	if q.ID == nil {
		return strconv.Itoa(q.Index)
	}
	return string(q.ID)
}

// Reader streams the queries of a vote file in constant memory, as Open
// returns it: 0/1 votes of two classes, or vote counts or class indices
// of C >= 2 classes (ManyClasses). Every query carries its counts
// (Query.Counts), so that a reader is a counts view of any vote file.
type Reader interface {
	// Next advances to the next query; false at the end of the file or on
	// an error (Err).
	Next() bool
	// Query returns the current query.
	Query() *Query
	// Err returns the error that stopped Next, or nil at the end.
	Err() error
	// BytesRead returns the bytes consumed so far.
	BytesRead() int64
	// Meta returns the file's metadata header, or nil if it has none.
	Meta() *Meta
	// HeaderError returns err, a rule of the metadata header that the
	// caller found broken (a *HeaderError, as provenance.Check reports
	// one), as a format error at the header's place; any other error as
	// it is.
	HeaderError(err error) error
	// K returns the number of teachers, Classes the number of classes.
	K() int
	Classes() int
	// Input returns the kind of votes the file is read as, and so the
	// mechanisms that label them: TwoClass, 0/1 votes (Query.Votes), or
	// ManyClasses, counts or class indices (Query.Counts only).
	Input() Input
	// Layout returns how the rows hold the teachers' answers.
	Layout() Layout
	// Format returns the file's format (CSV, JSONL or NPY); HasHeader whether
	// a CSV file has a header row; HasID whether the rows carry an id.
	Format() Format
	HasHeader() bool
	HasID() bool
	// MayAbstain reports whether a row may lack votes (class labels, of
	// which -1 is a teacher that did not vote, or counts under a stated K
	// that may sum to fewer); Abstained returns the votes not cast in the
	// queries read so far. 0/1 votes have none.
	MayAbstain() bool
	Abstained() int64
}

var (
	_ Reader = (*voteReader)(nil)
	_ Reader = (*classReader)(nil)
)

// rows is a reader's progress through the data rows of a file: the first
// row is read when the file is opened, and returned by the first next.
type rows struct {
	pending bool
	done    bool
	err     error
}

// lineSource hands out a file's data rows: a text file's lines, or the
// bytes of a NumPy array's queries; io.EOF at the end.
type lineSource interface {
	nextNonBlank() ([]byte, error)
}

// next advances to the next row: the pending first one, else the next
// line of lines, which parse reads (and steps the row's index); false at
// the end of the file or on an error, which err keeps.
func (s *rows) next(lines lineSource, parse func([]byte) error) bool {
	if s.pending {
		s.pending = false
		return true
	}
	if s.done || s.err != nil {
		return false
	}
	line, err := lines.nextNonBlank()
	if err == io.EOF {
		s.done = true
		return false
	}
	if err == nil {
		err = parse(line)
	}
	if err != nil {
		s.err = err
		return false
	}
	return true
}

// Input is the kind of votes a file is read as, and so the kind a
// mechanism labels: TwoClass (0/1 votes) or ManyClasses (counts, or class
// indices of C classes). It is no layout: 0/1 votes and class indices of
// two classes (Options.Classes = 2) have the same layout and classes, and
// only the 0/1 votes carry each teacher's vote (Query.Votes), which the
// two-class mechanisms need.
type Input int

const (
	// TwoClass is 0/1 votes, one column per teacher.
	TwoClass Input = iota
	// ManyClasses is vote counts, or class indices, of C >= 2 classes.
	ManyClasses
)

// String returns "two-class votes" or "multi-class votes".
func (i Input) String() string {
	if i == ManyClasses {
		return "multi-class votes"
	}
	return "two-class votes"
}
