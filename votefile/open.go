package votefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"unicode/utf8"
)

// File is a vote file that Open opened: the reader of its queries and the
// file its metadata header came from when not the vote file itself
// (HeaderFile: its sidecar, or Options.MetaFile). Close it after reading.
type File struct {
	Reader
	HeaderFile string
	file       *os.File
}

// Close closes the vote file, if Open opened it (not Options.In).
func (f *File) Close() error {
	if f.file == nil {
		return nil
	}
	return f.file.Close()
}

// SidecarError is an error of reading the sidecar that Open took a vote
// file's metadata header from, File; Err names the file.
type SidecarError struct {
	File string
	Err  error
}

// Error returns Err's message.
func (e *SidecarError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *SidecarError) Unwrap() error { return e.Err }

// Open opens the vote file path, or reads it from opts.In (path then
// names it), and reads its start: its metadata header and first data row.
// It returns the reader of its queries: of 0/1 votes of two classes, or of
// vote counts or class indices of C classes (Reader.ManyClasses), as the
// header, the options and, where neither says, the rows decide
// (docs/aggregate.md, "Vote counts without a flag"), telling opts.Note
// what it so decided. A NumPy array (.npy, or with opts.Array an .npz
// archive's) is recognised by its start. A malformed file, or options it
// contradicts, is an error with BadInput() true.
//
// A file that holds no header takes the one of its sidecar: opts.Meta if
// set, else the one opts.MetaIn holds if set, else the file opts.MetaFile
// names if set, else, for a file that Open opens, the file beside path
// (SidecarPath) when there is one. A sidecar holds the header's JSON
// object, as a vote file's first line does, and nothing else but blanks
// (it may span lines); the same rules apply (Meta.Validate). A sidecar
// file is read whole and must be a regular file (a FIFO is not waited on,
// nor a device read); one that is not is an error naming it, as is a
// sidecar beside a file that holds a header of its own. An error reading
// the sidecar is a *SidecarError. A NumPy array of which a query is a
// column is read in place, in bounded memory (Options.Size).
func Open(path string, opts Options) (*File, error) {
	f := &File{}
	if opts.Meta == nil {
		m, sidecar, err := opts.sidecar(path)
		if err != nil {
			return nil, &SidecarError{File: sidecar, Err: err}
		}
		if m != nil {
			opts.Meta, opts.MetaFile, f.HeaderFile = m, sidecar, sidecar
		}
	} else {
		f.HeaderFile = opts.MetaFile
	}
	r := opts.In
	if r == nil {
		file, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		if st, err := file.Stat(); err == nil && st.Mode().IsRegular() {
			opts.Size = st.Size()
		}
		r, f.file = file, file
	}
	in, notes, err := readVotes(r, path, opts)
	if opts.Note != nil {
		for _, n := range notes {
			opts.Note(n.String())
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	f.Reader = in
	return f, nil
}

// sidecar reads the metadata header that the vote file path takes from a
// sidecar, as Open says, and returns it with the sidecar's name; nil
// when there is none.
func (opts Options) sidecar(path string) (*Meta, string, error) {
	switch {
	case opts.MetaIn != nil:
		m, err := readSidecar(opts.MetaIn, opts.MetaFile)
		return m, opts.MetaFile, err
	case opts.MetaFile != "":
		m, err := readSidecarFile(opts.MetaFile, true)
		return m, opts.MetaFile, err
	case opts.In != nil:
		return nil, "", nil
	}
	sidecar := SidecarPath(path)
	m, err := readSidecarFile(sidecar, false)
	return m, sidecar, err
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
	return readSidecar(file, path)
}

// readSidecar reads a sidecar from r (Open); name is used in errors,
// which are format errors.
func readSidecar(r io.Reader, name string) (*Meta, error) {
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

// SidecarPath returns the name of the sidecar of the vote file path: the
// file beside it that holds its metadata header (Open), path with
// ".meta.json" added, as in votes.npy.meta.json.
func SidecarPath(path string) string { return path + ".meta.json" }
