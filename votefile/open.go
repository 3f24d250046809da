package votefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// File is a vote file that Open opened: the reader of its queries, the
// file its metadata header came from when not the vote file itself
// (HeaderFile: its sidecar, or Options.MetaFile), and what Read decided
// that neither the options nor the header said (Notes, for the caller to
// tell its user). Close it after reading.
type File struct {
	Reader
	HeaderFile string
	Notes      []string
	file       *os.File
}

// Close closes the vote file.
func (f *File) Close() error { return f.file.Close() }

// Open opens the vote file path and reads it as Read does, with the
// metadata header of its sidecar when it holds none: opts.Meta if set,
// else the file opts.MetaFile names if set, else the file beside path
// (SidecarPath) when there is one. A sidecar is read whole and must be a
// regular file (a FIFO is not waited on, nor a device read); one that is
// not is an error naming it, as is a sidecar beside a file that holds a
// header of its own. A NumPy array of which a query is a column is read
// in place, in bounded memory (Options.Size), and opts.Array names the
// array of an .npz archive.
func Open(path string, opts Options) (*File, error) {
	f := &File{}
	if opts.Meta == nil {
		sidecar, given := opts.MetaFile, opts.MetaFile != ""
		if !given {
			sidecar = SidecarPath(path)
		}
		m, err := readSidecarFile(sidecar, given)
		if err != nil {
			return nil, err
		}
		if m != nil {
			opts.Meta, opts.MetaFile, f.HeaderFile = m, sidecar, sidecar
		}
	} else {
		f.HeaderFile = opts.MetaFile
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if st, err := file.Stat(); err == nil && st.Mode().IsRegular() {
		opts.Size = st.Size()
	}
	in, notes, err := Read(file, path, opts)
	if err != nil {
		file.Close()
		return nil, err
	}
	for _, n := range notes {
		f.Notes = append(f.Notes, n.String())
	}
	f.Reader, f.file = in, file
	return f, nil
}

// readSidecarFile reads the sidecar at path: nil when there is none and
// it was not given, an error when it is not a regular file.
func readSidecarFile(path string, given bool) (*Meta, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !given:
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("sidecar %v", err)
	case !st.Mode().IsRegular():
		return nil, &formatError{File: path, Msg: "not a regular file: a vote file's metadata header is a file of its own"}
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sidecar %v", err)
	}
	defer file.Close()
	return ReadSidecar(file, path)
}
