package setup

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// VoteFlags say how to read a vote file (votefile.Options): its
// format, counts (--input-format counts), class indices (--classes C),
// or what the metadata header states, in the file or in a sidecar.
type VoteFlags struct {
	VoteReadFlags
	// A vote file that holds no metadata header takes it from a sidecar.
	Meta string `flag:"meta" help:"the votes' metadata header, in a file" default:"VOTES.meta.json"`
	// headerFile is the sidecar OpenVotes read the header from.
	headerFile string
	// header is the header of the votes OpenVotes opened last
	// (CheckedHeader).
	header *provenance.CheckedHeader
	// noted is the vote file whose notes (its sidecar, what the reader
	// decided) OpenVotes printed: a command that opens the votes again
	// (a PTR release: the test, then the labels) says them once.
	noted string
}

// VoteReadFlags say how to read a vote file but its header: the flags
// of VoteFlags but --meta.
type VoteReadFlags struct {
	Classes  int               `flag:"classes" help:"number of classes C: votes are class indices 0..C-1"`
	InFormat voteFormat        `flag:"input-format" help:"votes: csv, jsonl, counts or npy (auto: by their start)"`
	Header   votefile.Presence `flag:"header" help:"CSV header row: auto, yes or no"`
	ID       votefile.Presence `flag:"id" help:"id column: auto, yes or no"`
	// A matrix of class labels without a metadata header (NumPy, CSV)
	// needs one of these; a NumPy file is recognised by its start.
	TeachersInRows bool   `flag:"teachers-in-rows" help:"class labels as teachers x queries (PATE's published layout)"`
	QueriesInRows  bool   `flag:"queries-in-rows" help:"class labels as queries x teachers (darrm's vote files)"`
	Array          string `flag:"array" help:"the array to read in a NumPy .npz archive"`
}

// HeaderFile returns the file the votes' metadata header was read from,
// when OpenVotes read it from a sidecar; "" otherwise.
func (f *VoteFlags) HeaderFile() string { return f.headerFile }

// CheckedHeader returns the header of the votes OpenVotes opened last,
// checked there: a release compares with it and checks it no more.
func (f *VoteFlags) CheckedHeader() *provenance.CheckedHeader { return f.header }

// orientation returns the orientation of a matrix of class labels the
// flags state (votefile.Options.Orientation).
func (f *VoteReadFlags) orientation() (votefile.Orientation, error) {
	switch {
	case f.TeachersInRows && f.QueriesInRows:
		return 0, cli.Usagef("--teachers-in-rows and --queries-in-rows: give one, the axis that holds the teachers")
	case f.TeachersInRows:
		return votefile.TeachersInRows, nil
	case f.QueriesInRows:
		return votefile.QueriesInRows, nil
	}
	return 0, nil // unstated
}

// voteFormat is --input-format: a file's format, or counts, its layout.
type voteFormat struct {
	format votefile.Format
	layout votefile.Layout
}

// MarshalText returns "counts" or the format's name.
func (f voteFormat) MarshalText() ([]byte, error) {
	if f.layout == votefile.LayoutCounts {
		return []byte("counts"), nil
	}
	return f.format.MarshalText()
}

// UnmarshalText reads "counts" or a format's name.
func (f *voteFormat) UnmarshalText(b []byte) error {
	if strings.EqualFold(string(b), "counts") {
		*f = voteFormat{layout: votefile.LayoutCounts}
		return nil
	}
	var x votefile.Format
	if err := x.UnmarshalText(b); err != nil {
		return fmt.Errorf("format %q: must be auto, csv, jsonl, counts or npy", b)
	}
	*f = voteFormat{format: x}
	return nil
}

// OpenVotes opens the vote file name (- for standard input), which role
// names on the command line ("VOTES", "--votes"), with --array the array
// of that name in the .npz archive name, and reads it as the flags and its
// header say (votefile.Open), with the header of its sidecar if it has one
// (--meta, or the file beside it: votefile.SidecarPath), telling on stderr
// which sidecar it read and what the reader decided that nothing said.
// What the header states is checked (provenance.CheckHeader) before
// anything uses it, once: the header checked is the flags' (header).
// Close the Closer it returns after reading.
func (f *VoteFlags) OpenVotes(cmd *cobra.Command, role, name string) (votefile.Reader, io.Closer, error) {
	r, opts, done, err := f.Input(cmd, role, name)
	if err != nil {
		return nil, nil, err
	}
	sc, err := f.sidecar(cmd, name)
	if err != nil {
		done.Close()
		return nil, nil, err
	}
	opts.In = r
	again := f.noted == name
	note := func(n string) {
		if !again {
			cliout.Note(cmd.ErrOrStderr())(n)
		}
	}
	opts.Note = func(n string) {
		note(fmt.Sprintf("%v (as --input-format counts says; docs/aggregate.md, \"Vote counts without a flag\")", n))
	}
	if sc != nil {
		defer sc.Close()
		opts.MetaIn, opts.MetaFile = sc, sc.name
	}
	in, err := votefile.Open(cli.InputName(name), opts)
	var se *votefile.SidecarError
	if errors.As(err, &se) {
		done.Close()
		return nil, nil, fmt.Errorf("%s: %w", sc.role, se.Err)
	}
	if sc != nil {
		// The header a release binds to a ledger is never taken silently.
		f.headerFile = sc.name
		note(fmt.Sprintf("%s: metadata header from %s (%s)", cli.InputName(name), sc.name, sc.why))
	}
	if err == nil {
		// What the header states is checked before anything else uses it,
		// and refused at its place.
		if f.header, err = provenance.CheckHeader(in.Meta()); err != nil {
			err = in.HeaderError(err)
		}
	}
	if err != nil {
		done.Close()
		return nil, nil, err
	}
	f.noted = name
	return in, done, nil
}

// Input opens the vote file name (- for standard input), which role
// names on the command line, with --array the array of that name in the
// .npz archive name, and returns what to read it from, the options that
// read it as the flags say (votefile.Options, without a header of their
// own), and what to close after reading.
func (f *VoteReadFlags) Input(cmd *cobra.Command, role, name string) (io.Reader, votefile.Options, io.Closer, error) {
	fs := cmd.Flags()
	if err := votefile.CheckClasses(f.Classes); fs.Changed("classes") && err != nil {
		return nil, votefile.Options{}, nil, cli.Usagef("--%v", err)
	}
	orientation, err := f.orientation()
	if err != nil {
		return nil, votefile.Options{}, nil, err
	}
	file, err := OpenInput(cmd, role, name, wantVotes)
	if err != nil {
		return nil, votefile.Options{}, nil, err
	}
	opts := votefile.Options{Format: f.InFormat.format, Layout: f.InFormat.layout, Classes: f.Classes, Header: f.Header, ID: f.ID,
		Orientation: orientation, Size: max(cli.InputSize(name), 0), Array: f.Array}
	if k := fs.Lookup("K"); k != nil && k.Changed {
		opts.K, _ = fs.GetInt("K")
	}
	var done io.Closer = file
	var r io.Reader = file
	if f.Array != "" || opts.Size > 0 {
		// A file is read from an *os.File: an archive from its end, and a
		// NumPy array of which a query is a column in place
		// (votefile.Options.Size).
		zf, err := openInPlace(name, f.Array)
		if err != nil {
			file.Close()
			return nil, votefile.Options{}, nil, err
		}
		r, done = zf, closers{zf, file}
		if st, err := zf.Stat(); err == nil {
			opts.Size = st.Size()
		}
	}
	return r, opts, done, nil
}

// sidecarFile is the file that a vote file takes its metadata header
// from, open for reading: its name, the role that names it on the command
// line (--meta, the sidecar) and why it is read.
type sidecarFile struct {
	io.ReadCloser
	name, role, why string
}

// sidecar opens the file that the vote file name takes its metadata
// header from: --meta, else the sidecar beside it (votefile.SidecarPath),
// when there is one; nil without.
func (f *VoteFlags) sidecar(cmd *cobra.Command, name string) (*sidecarFile, error) {
	path, role, why := f.Meta, "--meta", "--meta"
	if path == "" {
		if name == cli.Std {
			return nil, nil
		}
		path, role, why = votefile.SidecarPath(name), "the sidecar", "the sidecar beside the votes; --meta names another"
	}
	if path != cli.Std {
		// A sidecar is read whole, at once: a FIFO is not waited on, nor a
		// device read (as a ledger's file).
		st, err := os.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && role == "the sidecar":
			return nil, nil
		case err != nil && role == "the sidecar":
			return nil, cli.Usagef("%s %v", role, err)
		case err == nil && !st.Mode().IsRegular():
			return nil, cli.Usagef("%s %s is %s, not a regular file: a vote file's metadata header is a file of its own (--meta - reads it from standard input)", role, path, fileType(st.Mode()))
		}
	}
	file, err := OpenInput(cmd, role, path, wantSidecar)
	if err != nil {
		return nil, err
	}
	return &sidecarFile{ReadCloser: file, name: cli.InputName(path), role: role, why: why}, nil
}

// openInPlace opens the vote file path, or the .npz archive path whose
// array --array names, for reading at any offset.
func openInPlace(path, array string) (*os.File, error) {
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

// fileType names the type of a file that is not a regular one.
func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}
