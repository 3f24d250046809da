package inputs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/votefile"
)

// VoteFlags say how to read a vote file (votefile.Options): its
// format, counts (--input-format counts), class indices (--classes C),
// or what the metadata header states.
type VoteFlags struct {
	Classes  int               `flag:"classes" help:"number of classes C: the votes are class indices 0..C-1 (with --input-format counts, every row must have C counts; a metadata header states C, which this may repeat)"`
	InFormat Format            `flag:"input-format" help:"votes as csv or jsonl, or counts: rows of C vote counts, or npy (auto: a NumPy file by its start, JSON lines if the first line starts with [ or {; a metadata header states the layout)"`
	Header   votefile.Presence `flag:"header" help:"CSV header row: auto, yes or no"`
	ID       votefile.Presence `flag:"id" help:"id column: auto, yes or no"`
	// A matrix of class labels without a metadata header (NumPy, CSV)
	// needs one of these; a NumPy file is recognised by its start.
	TeachersInRows bool   `flag:"teachers-in-rows" help:"class labels (with --classes C, NumPy or CSV without a metadata header) as teachers x queries, a row per teacher, the layout of PATE's published votes; such a file needs this or --queries-in-rows"`
	QueriesInRows  bool   `flag:"queries-in-rows" help:"class labels (with --classes C, NumPy or CSV without a metadata header) as queries x teachers, a row per query, as darrm's vote files and prediction matrices; such a file needs this or --teachers-in-rows"`
	Array          string `flag:"array" help:"the array to read in a NumPy .npz archive (VOTES must then be a file)"`
}

// orientation returns the orientation of a matrix of class labels the
// flags state (votefile.Options.Orientation).
func (f *VoteFlags) orientation() (votefile.Orientation, error) {
	switch {
	case f.TeachersInRows && f.QueriesInRows:
		return 0, cli.Usagef("--teachers-in-rows and --queries-in-rows: give one, the axis that holds the teachers")
	case f.TeachersInRows:
		return votefile.TeachersInRows, nil
	case f.QueriesInRows:
		return votefile.QueriesInRows, nil
	}
	return votefile.OrientationUnstated, nil
}

// Format is --input-format: a file's format, or counts, its layout.
type Format struct {
	format votefile.Format
	layout votefile.Layout
}

// MarshalText returns "counts" or the format's name.
func (f Format) MarshalText() ([]byte, error) {
	if f.layout == votefile.LayoutCounts {
		return []byte("counts"), nil
	}
	return f.format.MarshalText()
}

// UnmarshalText reads "counts" or a format's name.
func (f *Format) UnmarshalText(b []byte) error {
	if strings.EqualFold(string(b), "counts") {
		*f = Format{layout: votefile.LayoutCounts}
		return nil
	}
	x, err := votefile.ParseFormat(string(b))
	if err != nil {
		return fmt.Errorf("format %q: must be auto, csv, jsonl, counts or npy", b)
	}
	*f = Format{format: x}
	return nil
}

// OpenVotes opens the vote file name (- for standard input), with
// --array the array of that name in the .npz archive name, and reads it
// as the flags and its header say (votefile.Read), telling on stderr
// what the reader decided that nothing said. Close the Closer it
// returns after reading.
func (f *VoteFlags) OpenVotes(cmd *cobra.Command, name string) (votefile.Reader, io.Closer, error) {
	fs := cmd.Flags()
	if err := votefile.CheckClasses(f.Classes); fs.Changed("classes") && err != nil {
		return nil, nil, cli.Usagef("--%v", err)
	}
	orientation, err := f.orientation()
	if err != nil {
		return nil, nil, err
	}
	file, err := Open(cmd, "VOTES", name, WantVotes)
	if err != nil {
		return nil, nil, err
	}
	opts := votefile.Options{Format: f.InFormat.format, Layout: f.InFormat.layout, Classes: f.Classes, Header: f.Header, ID: f.ID,
		Orientation: orientation, Size: max(cli.InputSize(name), 0), Array: f.Array}
	if k := fs.Lookup("K"); k != nil && k.Changed {
		opts.K, _ = fs.GetInt("K")
	}
	var done io.Closer = file
	var r io.Reader = file
	if f.Array != "" {
		zf, err := openArchive(name, f.Array)
		if err != nil {
			file.Close()
			return nil, nil, err
		}
		r, done = zf, closers{zf, file}
		if st, err := zf.Stat(); err == nil {
			opts.Size = st.Size()
		}
	}
	in, notes, err := votefile.Read(r, cli.InputName(name), opts)
	for _, n := range notes {
		fmt.Fprintf(cmd.ErrOrStderr(), "darrm: %v (as --input-format counts says; docs/aggregate.md, \"Vote counts without a flag\")\n", n)
	}
	if err != nil {
		done.Close()
		return nil, nil, err
	}
	return in, done, nil
}

// openArchive opens the .npz archive path, whose array --array names,
// for reading at any offset.
func openArchive(path, array string) (*os.File, error) {
	if path == cli.Std {
		return nil, cli.Usagef("--array %s: an .npz archive is read from a file, not from standard input", array)
	}
	zf, err := os.Open(path)
	if err != nil {
		return nil, cli.Usagef("VOTES %v", err)
	}
	return zf, nil
}

// closers closes each of its closers in turn.
type closers []io.Closer

func (cs closers) Close() error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
