package votefile

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/darrm/darrm/internal/enum"
)

// Format is the format of a vote or label file: FormatCSV, FormatJSONL or
// FormatNPY (a NumPy array), or FormatAuto to tell them apart from the
// file. What the rows hold is the file's Layout.
// A Format prints and reads as its name (its String, MarshalText and
// UnmarshalText).
type Format int

const (
	// FormatAuto detects the format from the first non-blank line: JSON
	// lines if it starts with '[' or '{', CSV otherwise.
	FormatAuto Format = iota
	// FormatCSV is comma-separated values (RFC 4180, no line breaks inside
	// quoted fields).
	FormatCSV
	// FormatJSONL is JSON lines: one JSON value per line.
	FormatJSONL
	// FormatNPY is a NumPy array (.npy): in a vote file, vote counts
	// (queries x classes) or class labels (queries x teachers, or
	// teachers x queries), recognised by NumPy's magic string; as a label
	// file, the labels as a 1-D int64 array, -1 for a query not answered.
	FormatNPY
)

var formatNames = enum.Names[Format]{What: "format", List: []string{FormatAuto: "auto", FormatCSV: "csv", FormatJSONL: "jsonl", FormatNPY: "npy"},
	Also: map[string]Format{"ndjson": FormatJSONL}, Fold: true, Or: true}

// String returns the name of f.
func (f Format) String() string { return formatNames.String(f) }

// MarshalText returns the name of f.
func (f Format) MarshalText() ([]byte, error) { return []byte(formatNames.String(f)), nil }

// UnmarshalText sets f from its name.
func (f *Format) UnmarshalText(text []byte) error { return formatNames.Unmarshal(f, text) }

// Presence says whether a vote file has a header row or an id column:
// "auto" (the zero value) decides from the file, "yes" forces the header or
// the id column, "no" rules it out. It is set by its name (UnmarshalText),
// as a flag or a configuration gives it.
// A Presence prints and reads as its name (its String, MarshalText and
// UnmarshalText).
type Presence int

const (
	autoDetect Presence = iota // "auto": decided from the file (see Open)
	present                    // "yes"
	absent                     // "no"
)

var presenceNames = enum.Names[Presence]{List: []string{autoDetect: "auto", present: "yes", absent: "no"},
	Also: map[string]Presence{"true": present, "false": absent}, Fold: true, Or: true}

// String returns the name of p.
func (p Presence) String() string { return presenceNames.String(p) }

// MarshalText returns the name of p.
func (p Presence) MarshalText() ([]byte, error) { return []byte(presenceNames.String(p)), nil }

// UnmarshalText sets p from its name.
func (p *Presence) UnmarshalText(text []byte) error { return presenceNames.Unmarshal(p, text) }

// readOptions describe a vote file; the zero value detects everything.
type readOptions struct {
	Format Format
	Header Presence // CSV only
	ID     Presence
	// K is the number of votes per row; 0 takes it from the first data row.
	K int
}

// formatError describes malformed input: the file, the line (1-based), the
// column (1-based; for CSV the field, for JSON lines the byte; 0 when the
// whole line is at fault) and what is wrong. It never quotes a row, only
// the offending field, so that no error reveals a query's votes.
type formatError struct {
	File   string
	Line   int
	Column int
	Msg    string
	// Advice are the hints Msg gives (Hint).
	Advice []Hint
}

// adviceError returns the format error of file whose message a says,
// with its hints.
func adviceError(file string, a advice) *formatError {
	return &formatError{File: file, Msg: a.text, Advice: a.hints}
}

// Hints returns the hints the message gives.
func (e *formatError) Hints() []Hint { return e.Advice }

func (e *formatError) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("%s, line %d, column %d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s, line %d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *formatError) BadInput() bool { return true }

// LabelFormat is the format of labels written to path when none is
// chosen: the one its extension names (.npy, .csv, .jsonl or .ndjson),
// else the votes' format, CSV for NumPy votes (on a stream, a NumPy file
// is asked for by name) and for votes of no file (FormatAuto: ReadRows).
func LabelFormat(path string, votes Format) Format {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".npy":
		return FormatNPY
	case ".csv":
		return FormatCSV
	case ".jsonl", ".ndjson":
		return FormatJSONL
	}
	if votes == FormatNPY || votes == FormatAuto {
		return FormatCSV
	}
	return votes
}
