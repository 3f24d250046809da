package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/ctxio"
	"github.com/darrm/darrm/internal/param"
)

// Std is the name that stands for standard input or output.
const Std = "-"

// OpenInputContext opens the named file, or stdin for Std. A file that
// cannot be opened, or a directory, is a usage error "NAME: reason" (a
// caller may put the flag or argument that named it before it); for a
// file that does not exist, the reason suggests the paths close to the
// name (Near). A FIFO or a device is opened and read so that ctx's end
// stops an open or a read that blocks (a FIFO with no writer yet, or with
// one that sends nothing); an open that has not returned after fifoNotice
// says on notices that it waits, and for what (a run on a FIFO that no
// process writes would wait in silence).
func OpenInputContext(ctx context.Context, stdin io.Reader, notices io.Writer, name string) (io.ReadCloser, error) {
	if name == Std {
		return io.NopCloser(stdin), nil
	}
	st, err := os.Stat(name)
	switch {
	case err != nil:
		return nil, pathError(name, err)
	case st.IsDir():
		return nil, Usagef("%s: is a directory, not a file", name)
	case st.Mode().IsRegular():
		f, err := os.Open(name)
		if err != nil {
			return nil, pathError(name, err)
		}
		return f, nil
	}
	said := make(chan struct{})
	notice := time.AfterFunc(fifoNotice, func() {
		defer close(said)
		if notices != nil {
			// Wrapped to cliout.Width, as darrm's other messages are.
			cliout.Note(notices)(name + ": waiting for a process to open it for writing (a FIFO); SIGINT or SIGTERM stops")
		}
	})
	f, err := ctxio.OpenFile(ctx, name, os.O_RDONLY, 0)
	if !notice.Stop() {
		<-said // the notice is written before anything else is
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, pathError(name, err)
	}
	return readCloser{ctx, ctxio.NewReader(ctx, f), f}, nil
}

// fifoNotice is how long the open of a FIFO waits for a writer before it
// says so.
const fifoNotice = time.Second

// pathError is the usage error "NAME: reason" for a file name that could
// not be opened, without the system call's name; a missing file's reason
// suggests the paths close to name.
func pathError(name string, err error) error {
	err = unwrapPath(err)
	hint := ""
	if errors.Is(err, fs.ErrNotExist) {
		hint = didYouMean("", Near(name))
	}
	return &UsageError{fmt.Errorf("%s: %w%s", name, err, hint)}
}

// maxListed bounds the entries of a folder that Near compares, so that a
// typo next to a huge folder costs little.
const maxListed = 10000

// Near returns the existing paths close to path, which does not exist: the
// first of its components that does not exist is compared with the names
// in the folder above it (as unknown flags are: another case, a few
// edits, a prefix), and each close name that, with the components after
// it, leads to an existing path is returned, spelt as path is (at most
// three, closest first).
func Near(path string) []string {
	dir, rest := filepath.Clean(path), []string(nil)
	for {
		if _, err := os.Stat(dir); err == nil {
			break
		}
		up := filepath.Dir(dir)
		if up == dir {
			return nil
		}
		rest = append([]string{filepath.Base(dir)}, rest...)
		dir = up
	}
	if len(rest) == 0 {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	names, _ := f.Readdirnames(maxListed)
	f.Close()
	var out []string
	for _, n := range suggest(rest[0], names) {
		p := filepath.Join(append([]string{dir, n}, rest[1:]...)...)
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// checkParent refuses an output file whose folder does not exist (with
// the close names Near finds) or is not a folder: a file cannot be
// created there, and saying so names the folder rather than a temporary
// file.
func checkParent(path string) error { return folderProblem(filepath.Dir(path), " (create it first)") }

// CheckFolder refuses, as a usage error naming the flag, a folder to read
// from that does not exist (with the close names, Near) or is not a
// folder; "" (the default) passes.
func CheckFolder(flag, path string) error {
	if path == "" {
		return nil
	}
	if err := folderProblem(path, ""); err != nil {
		return Usagef("--%s %s: %v", flag, path, err)
	}
	return nil
}

// folderProblem says why dir is no folder: it does not exist (then advice
// and the close names follow), it is something else, or it cannot be
// looked at; nil for a folder.
func folderProblem(dir, advice string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("folder %s does not exist%s%s", dir, advice, didYouMean("", Near(dir)))
	case err != nil:
		return fmt.Errorf("folder %s: %w", dir, unwrapPath(err))
	case !st.IsDir():
		return fmt.Errorf("%s is not a folder", dir)
	}
	return nil
}

// unwrapPath returns the reason of a *fs.PathError, without the system
// call and the path, which the caller names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readCloser reads a FIFO or a device f through r, which returns at
// ctx's end (ctxio.Reader). Close closes f and ends r's helper goroutine,
// which would otherwise wait for another read as long as the process
// runs; once ctx is done it leaves the helper be, as ctxio leaves a read
// it abandoned: a decoder left to its goroutine (DecodeJSON) may still
// be reading r.
type readCloser struct {
	ctx context.Context
	r   *ctxio.Reader
	f   *os.File
}

func (rc readCloser) Read(p []byte) (int, error) { return rc.r.Read(p) }

func (rc readCloser) Close() error {
	if rc.ctx.Err() == nil {
		rc.r.Close()
	}
	return rc.f.Close()
}

// InputArg is the input that a command's optional argument names: the
// first argument, or Std when there is none (MaxArgs(1) checks there is
// no more).
func InputArg(args []string) string {
	if len(args) == 0 {
		return Std
	}
	return args[0]
}

// InputSize returns the size in bytes of the input name, or -1 for
// standard input and for anything but a regular file (a pipe, a device),
// whose size is not known in advance.
func InputSize(name string) int64 {
	if name == Std {
		return -1
	}
	st, err := os.Stat(name)
	if err != nil || !st.Mode().IsRegular() {
		return -1
	}
	return st.Size()
}

// InputName names an input for people: "standard input" for Std.
func InputName(name string) string {
	if name == Std {
		return "standard input"
	}
	return name
}

// IsStdout reports whether an output path stands for standard output: Std
// or empty.
func IsStdout(path string) bool { return path == "" || path == Std }

// OutputName names an output for people: "standard output" for IsStdout.
func OutputName(path string) string {
	if IsStdout(path) {
		return "standard output"
	}
	return path
}

// Protected is a file, or files in a folder, that an output must never
// replace: a command's input, a ledger, a cache's entries.
type Protected struct {
	// What names it in the error, e.g. "the vote file".
	What string
	Path string
	// Info is the file itself when it has no path (standard input,
	// StdinProtected).
	Info fs.FileInfo
	// Dir protects files in the folder Path, at any depth: those that
	// Owns accepts (given their path relative to Path), or all if Owns
	// is nil.
	Dir  bool
	Owns func(rel string) bool
	// Named protects Path before it exists too, by its name in its
	// folder: a vote file's sidecar, which an output written there would
	// become, for every later read of the votes.
	Named bool
}

// CheckOutput refuses, as a usage error naming the flag, an output path
// that cannot be written (a directory, a file in a folder that does not
// exist, a loop of symbolic links, a path that cannot be looked at) or
// that leads to one of protect, before any work is done. Files are compared by identity (device and inode) after
// following symbolic links, so neither another name, a hard link nor a
// link to a protected file passes. Standard output passes (CheckStreams
// checks it); protected paths that do not exist, and Std, are skipped.
func CheckOutput(flag, path string, protect ...Protected) error {
	return CheckOutputNamed("--"+flag, path, protect...)
}

// CheckOutputNamed is CheckOutput for an output that what names on the
// command line: a flag ("--out") or an argument ("LEDGER").
func CheckOutputNamed(what, path string, protect ...Protected) error {
	if IsStdout(path) {
		return nil
	}
	if err := checkParent(path); err != nil {
		return Usagef("%s %s: %v", what, path, err)
	}
	t, err := atomicfile.Resolve(path)
	if err != nil {
		return Usagef("%s %s: %v", what, path, err)
	}
	if !t.Through && t.Path != path { // a symbolic link: its target's folder
		if err := checkParent(t.Path); err != nil {
			return Usagef("%s %s: %v", what, path, err)
		}
	}
	return checkTarget(fmt.Sprintf("%s %s", what, path), t, protect)
}

// CheckStreams refuses, as a usage error, a standard output or standard
// error that is one of protect, as CheckOutput refuses an output path: a
// shell redirection such as >> LEDGER or 2>> LEDGER would write into the
// ledger (or a vote file, a cache entry, a record) what darrm prints.
// Only a regular file can be one; its folder, for protected folders, is
// found where the system tells the path of an open file (Linux's
// /proc/self/fd), else only files are compared. Standard error is checked
// first, and its refusal is a *SilentError: its message would go into
// the file too.
func CheckStreams(stdout, stderr io.Writer, protect ...Protected) error {
	if err := checkStream("standard error", stderr, protect); err != nil {
		return &SilentError{err}
	}
	return checkStream("standard output", stdout, protect)
}

// checkStream refuses the stream w, named name, when it is one of
// protect (CheckStreams).
func checkStream(name string, w io.Writer, protect []Protected) error {
	f := fileOf(w)
	if f == nil {
		return nil
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	path, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil || !filepath.IsAbs(path) {
		path = ""
	}
	if path != "" {
		name = fmt.Sprintf("%s (%s)", name, path)
	}
	return checkTarget(name, atomicfile.Target{Path: path, Info: st}, protect)
}

// SilentError is an error that Execute does not print on standard error,
// because standard error is a file that darrm keeps (CheckStreams): the
// message would damage it. Its exit status is its cause's.
type SilentError struct{ Err error }

func (e *SilentError) Error() string { return e.Err.Error() }
func (e *SilentError) Unwrap() error { return e.Err }

// StdinProtected returns standard input as a protected input named what,
// when it is a regular file (a shell redirection < FILE): an output must
// not replace it either. ok is false otherwise.
func StdinProtected(stdin io.Reader, what string) (p Protected, ok bool) {
	f := fileOf(stdin)
	if f == nil {
		return p, false
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return p, false
	}
	return Protected{What: what + " (standard input)", Info: st}, true
}

// checkTarget refuses target t, named name in the error, when it is one
// of protect or a file in a protected folder.
func checkTarget(name string, t atomicfile.Target, protect []Protected) error {
	var dirs []folder // the folders that would hold the output
	if !t.Through && t.Path != "" {
		dirs = ancestors(filepath.Dir(t.Path))
	}
	for _, p := range protect {
		st := p.Info
		if st == nil {
			if p.Path == "" || p.Path == Std {
				continue
			}
			var err error
			if st, err = os.Stat(p.Path); err != nil {
				if p.Named && len(dirs) > 0 && filepath.Base(p.Path) == filepath.Base(t.Path) {
					if pd, err := os.Stat(filepath.Dir(p.Path)); err == nil && os.SameFile(pd, dirs[0].info) {
						return Usagef("%s is %s (%s): write it elsewhere", name, p.What, p.Path)
					}
				}
				continue
			}
		}
		if p.Dir {
			for _, d := range dirs {
				if !os.SameFile(d.info, st) {
					continue
				}
				rel, err := filepath.Rel(d.path, filepath.Join(dirs[0].path, filepath.Base(t.Path)))
				if err == nil && (p.Owns == nil || p.Owns(rel)) {
					return Usagef("%s is a file of %s (%s): write it elsewhere", name, p.What, p.Path)
				}
			}
			continue
		}
		if t.Info != nil && os.SameFile(t.Info, st) && p.Path == "" {
			return Usagef("%s is %s: write it elsewhere", name, p.What)
		} else if t.Info != nil && os.SameFile(t.Info, st) {
			return Usagef("%s is %s (%s): write it elsewhere", name, p.What, p.Path)
		}
	}
	return nil
}

// folder is a folder, by its path with symbolic links resolved.
type folder struct {
	path string
	info fs.FileInfo
}

// ancestors returns the folder dir, with its symbolic links resolved, and
// every folder above it.
func ancestors(dir string) []folder {
	d, err := filepath.EvalSymlinks(dir)
	if err == nil {
		d, err = filepath.Abs(d)
	}
	if err != nil {
		return nil
	}
	var out []folder
	for {
		if st, err := os.Stat(d); err == nil {
			out = append(out, folder{d, st})
		}
		up := filepath.Dir(d)
		if up == d {
			return out
		}
		d = up
	}
}

// IsStdoutFile reports whether path names the file that stdout writes to
// (e.g. /dev/stdout, or the file standard output was redirected to), so
// that writing to it is writing to stdout rather than replacing a file
// under stdout's feet. stdout is looked into through writers that Unwrap.
func IsStdoutFile(path string, stdout io.Writer) bool {
	f := fileOf(stdout)
	if f == nil || IsStdout(path) {
		return false
	}
	a, errA := os.Stat(path)
	b, errB := f.Stat()
	return errA == nil && errB == nil && os.SameFile(a, b)
}

// fileOf returns the file under v, a writer or a reader, looked into
// through writers and readers that Unwrap; nil if there is none.
func fileOf(v any) *os.File {
	for {
		switch x := v.(type) {
		case *os.File:
			return x
		case interface{ Unwrap() io.Writer }:
			v = x.Unwrap()
		case interface{ Unwrap() io.Reader }:
			v = x.Unwrap()
		default:
			return nil
		}
	}
}

// WriteOutput calls write on stdout when path stands for standard output
// (IsStdout, IsStdoutFile), and otherwise on the output path
// (atomicfile.WriteOutput: a file is replaced atomically when write
// succeeds, and a failed write leaves none; a device or a FIFO is written
// through).
func WriteOutput(ctx context.Context, path string, stdout io.Writer, write func(io.Writer) error) error {
	if IsStdout(path) || IsStdoutFile(path, stdout) {
		return write(stdout)
	}
	return atomicfile.WriteOutput(ctx, path, 0o644, write)
}

// MaxJSONBytes bounds what DecodeJSON reads of one input: far more than
// any document of darrm, and far less than memory.
const MaxJSONBytes = 256 << 20

// DecodeJSON decodes the JSON document r holds into a T; one that does not
// decode is a usage error saying that the input named name (InputName) is
// not what (e.g. "a JSON result of darrm"). If ctx is done first, it
// returns ctx's error at once: a document near MaxJSONBytes takes a minute
// to decode (an array of a hundred million zeros), and encoding/json
// checks nothing while it turns the bytes read into a T, but SIGTERM may
// wait a second at most. The decoding is then left to its goroutine, as
// ctxio leaves a blocked read: darrm exits soon after.
func DecodeJSON[T any](ctx context.Context, r io.Reader, name, what string) (T, error) {
	return decodeJSON[T](ctx, r, name, what, MaxJSONBytes)
}

// decodeJSON is DecodeJSON reading at most limit bytes: a document cut
// there is refused as too large, not as one that ends too soon.
func decodeJSON[T any](ctx context.Context, r io.Reader, name, what string, limit int64) (T, error) {
	type decoded struct {
		v   T
		err error
	}
	done := make(chan decoded, 1) // the abandoned goroutine does not block
	go func() {
		var d decoded
		in := &arrayBound{r: io.LimitReader(r, limit+1)}
		if d.err = json.NewDecoder(in).Decode(&d.v); d.err != nil && in.off > limit {
			most := fmt.Sprintf("%d bytes", limit)
			if limit%(1<<20) == 0 {
				most = fmt.Sprintf("%d MiB", limit>>20)
			}
			d.err = fmt.Errorf("it holds more than %s, the most darrm reads of one document", most)
		}
		done <- d
	}()
	select {
	case d := <-done:
		if d.err != nil {
			return d.v, Usagef("%s: not %s: %v", InputName(name), what, param.CutJSON(d.err))
		}
		return d.v, nil
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// maxJSONArray bounds the values of one array that DecodeJSON reads: four
// times the longest of darrm's results (a shuffleg curve of --epochs+1
// values, at most 2^20+1), far fewer than the 134 million zeros that
// MaxJSONBytes holds. encoding/json grows an array's slice by doubling,
// and each growth clears the new slice's tail in one call that nothing
// preempts: seconds at a gigabyte on a slow machine, while no garbage
// collection ends and no signal is handled (SIGTERM waited 8.8 s). At this
// bound a growth clears at most 32 MiB of a slice of float64.
const maxJSONArray = 1 << 22

// maxJSONDepth is encoding/json's bound on nesting, which arrayBound
// tracks arrays to: the decoder refuses deeper documents.
const maxJSONDepth = 10000

// arrayBound passes the JSON text r holds through, refusing an array of
// more than maxJSONArray values before the decoder builds it: the decoder
// reads a document whole before decoding any of it.
type arrayBound struct {
	r      io.Reader
	off    int64 // bytes passed
	str    bool  // within a string
	esc    bool  // after a backslash within a string
	depth  int   // arrays and objects open
	commas []int // each open array's commas (-1: an object), to maxJSONDepth
}

func (a *arrayBound) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	for i, c := range p[:n] {
		switch {
		case a.str:
			a.str = a.esc || c != '"'
			a.esc = !a.esc && c == '\\'
		case c == '"':
			a.str = true
		case c == '[' || c == '{':
			if a.depth++; a.depth <= maxJSONDepth {
				a.commas = append(a.commas, 0)
				if c == '{' {
					a.commas[len(a.commas)-1] = -1
				}
			}
		case c == ']' || c == '}':
			if a.depth > 0 && a.depth <= maxJSONDepth {
				a.commas = a.commas[:len(a.commas)-1]
			}
			a.depth = max(a.depth-1, 0)
		case c == ',' && a.depth > 0 && a.depth <= maxJSONDepth && a.commas[len(a.commas)-1] >= 0:
			if a.commas[len(a.commas)-1]++; a.commas[len(a.commas)-1] >= maxJSONArray {
				return 0, fmt.Errorf("an array of more than %d values (at byte %d): at most %d, far more than any result of darrm holds", maxJSONArray, a.off+int64(i)+1, maxJSONArray)
			}
		}
	}
	a.off += int64(n)
	return n, err
}
