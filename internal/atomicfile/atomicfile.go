// Package atomicfile writes files so that readers see either the old content
// or the complete new content, never a partial file: darrm never leaves a
// half-written output, cache entry or plot behind.
//
// The temporary file that becomes the file has no name in its folder
// while it is written where the system allows (Linux's O_TMPFILE, named
// by linkat once complete), so that no other process (an indexer, a sync
// daemon, tail -f) can open a part of it; elsewhere it is a hidden file
// beside the target, and Output.Private says that what was written there
// may have been read.
//
// Write replaces a file that darrm owns (a cache entry, a ledger's record)
// under its own name; Replace does so as one step of its caller's protocol
// (a ledger's upgrade), and WriteNew creates one where there is none.
// Create and WriteOutput write an output that the user named: a symbolic
// link is followed and its target replaced; a device, a FIFO or a socket
// is written through (it cannot be replaced, and what is written reaches
// its reader at once, so that output is not atomic); a directory is
// refused.
package atomicfile

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/darrm/darrm/internal/ctxio"
)

// Write creates path by calling fill on a temporary file in the same
// directory and renaming it over path when fill succeeds. On any error the
// temporary file is removed and path is left untouched. path itself is
// replaced, whatever it is (a symbolic link is not followed).
func Write(path string, perm os.FileMode, fill func(f *os.File) error) (err error) {
	tmp, err := createTemp(path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.remove()
		}
	}()
	if err = fill(tmp.f); err != nil {
		return err
	}
	return tmp.commit(path, perm)
}

// Replace replaces path as Write does, for a file whose replacement is
// one step of its caller's protocol (a ledger's upgrade): once fill has
// written the temporary file, and it is synced and given perm, prepare
// (if not nil) takes the steps that must come after the new content is
// durable and before it takes path's place; then the file is renamed over
// path and the folder synced. An error of fill, of prepare (returned as
// it is) or of the rename leaves path untouched. Unlike Write, an error of
// the folder's fsync is returned: path is replaced, but a crash may bring
// the old file back.
func Replace(path string, perm os.FileMode, fill func(f *os.File) error, prepare func() error) (err error) {
	tmp, err := createTemp(path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.remove()
		}
	}()
	if err = fill(tmp.f); err != nil {
		return err
	}
	if err = tmp.complete(path, perm); err != nil {
		return err
	}
	if prepare != nil {
		if err = prepare(); err != nil {
			return err
		}
	}
	if err = tmp.rename(path); err != nil {
		return err
	}
	if serr := SyncDir(path); serr != nil {
		return fmt.Errorf("write %s: %w", path, serr)
	}
	return nil
}

// tryAnonymous says to try a temporary file without a name first; tests
// clear it to take the fallback.
var tryAnonymous = true

// temp is a temporary file in the folder dir that becomes a file there,
// named name, or "" while it has none (openAnonymous).
type temp struct {
	f         *os.File
	dir, base string
	name      string
	renamed   bool // name is now the file's: remove leaves it
}

// createTemp creates the temporary file that becomes path: without a name
// where the system allows, else a hidden file beside path.
func createTemp(path string) (*temp, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if tryAnonymous {
		// Any failure (a file system without O_TMPFILE, a folder that is
		// missing) takes the named file, whose error says why.
		if f, err := openAnonymous(dir); err == nil {
			return &temp{f: f, dir: dir, base: base}, nil
		}
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		// The temporary file's name means nothing to the user: the
		// reason (a folder that does not exist, a permission) is the
		// folder's.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("write %s: folder %s: %w", path, dir, err)
	}
	return &temp{f: f, dir: dir, base: base, name: f.Name()}, nil
}

// link gives a temporary file without a name one, hidden, beside its
// target, once it is complete: the name a rename can move.
func (t *temp) link() error {
	for range 100 {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return err
		}
		name := filepath.Join(t.dir, "."+t.base+".tmp-"+hex.EncodeToString(r[:]))
		err := linkAnonymous(t.f, name)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			t.name = name
		}
		return err
	}
	return errors.New("no free name for the temporary file")
}

// remove gives the temporary file up.
func (t *temp) remove() {
	t.f.Close()
	if t.name != "" && !t.renamed {
		os.Remove(t.name)
	}
}

// commit makes the complete temporary file the file path.
func (t *temp) commit(path string, perm os.FileMode) error {
	if err := t.complete(path, perm); err != nil {
		return err
	}
	if err := t.rename(path); err != nil {
		return err
	}
	// The rename is durable once the directory is: a crash after this
	// cannot bring the old file back.
	SyncDir(path)
	return nil
}

// complete makes the temporary file that becomes path durable, with
// permissions perm, and closes it, named.
func (t *temp) complete(path string, perm os.FileMode) error {
	if err := t.f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := t.f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if t.name == "" {
		if err := t.link(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := t.f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// rename makes the complete temporary file path.
func (t *temp) rename(path string) error {
	if err := os.Rename(t.name, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	t.renamed = true
	return nil
}

// SyncDir makes a file created or renamed in path's folder durable; a
// file system that cannot sync a folder (EINVAL) has nothing to make so.
func SyncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// maxLinks bounds the symbolic links followed to an output's target, as
// the kernel bounds them (ELOOP).
const maxLinks = 40

// Target is where an output path leads.
type Target struct {
	// Path is the file that is written: the final target of path's
	// symbolic links (which need not exist yet) for a file that is
	// replaced, path itself for one that is written through.
	Path string
	// Through is true for a device, a FIFO or a socket: it is opened and
	// written in place, not replaced.
	Through bool
	// Info describes the file at Path, or is nil if there is none yet.
	Info fs.FileInfo
}

// Resolve returns the target of the output path: a directory is an error.
func Resolve(path string) (Target, error) {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return Target{}, fmt.Errorf("%s is a directory: give a file name", path)
	case err == nil && !st.Mode().IsRegular():
		// Devices, FIFOs and sockets, also behind a link (/dev/stdout
		// leads to /proc/self/fd/1, whose "target" is no path).
		return Target{Path: path, Through: true, Info: st}, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return Target{}, err
	}
	p := path
	for range maxLinks {
		lst, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return Target{Path: p}, nil
		}
		if err != nil {
			return Target{}, err
		}
		if lst.Mode()&fs.ModeSymlink == 0 {
			return Target{Path: p, Info: lst}, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return Target{}, err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = link
	}
	return Target{}, fmt.Errorf("%s: more than %d levels of symbolic links", path, maxLinks)
}

// Output is an output file open for writing (Create).
type Output struct {
	name    string
	target  Target
	f       *os.File      // the file written through
	through *ctxio.Writer // its writer, whose helper goroutine Commit and Abort end
	tmp     *temp         // the temporary file, else
	w       io.Writer
	perm    os.FileMode
	done    bool
}

// Create opens the output path for writing: a temporary file beside its
// target, which Commit renames over it, or, for a device, a FIFO or a
// socket, the file itself (waiting, until ctx is done, for a FIFO's
// reader). Every Output must end with Commit or Abort.
func Create(ctx context.Context, path string, perm os.FileMode) (*Output, error) {
	t, err := Resolve(path)
	if err != nil {
		return nil, err
	}
	o := &Output{name: path, target: t, perm: perm}
	if t.Through {
		if o.f, err = ctxio.OpenFile(ctx, path, os.O_WRONLY, 0); err != nil {
			return nil, err
		}
		o.through = ctxio.NewWriter(ctx, o.f)
		o.w = o.through
		return o, nil
	}
	if o.tmp, err = createTemp(t.Path); err != nil {
		return nil, err
	}
	o.w = o.tmp.f
	return o, nil
}

// Atomic reports whether the output appears only at Commit: false for one
// written through, whose bytes leave as they are written.
func (o *Output) Atomic() bool { return !o.target.Through }

// Private reports whether no other process can have read what was written
// to the output: true for a temporary file that has had no name (O_TMPFILE)
// until Commit named it; false for a named temporary file (the fallback),
// which any process of the user can open while it is written, and for an
// output written through. A process that can open this one's files by
// /proc/PID/fd can also read its memory: that is not counted as a reader.
func (o *Output) Private() bool { return o.tmp != nil && o.tmp.name == "" }

// Write writes to the output.
func (o *Output) Write(p []byte) (int, error) { return o.w.Write(p) }

// Commit completes the output: the temporary file replaces the target, or
// the file written through is closed.
func (o *Output) Commit() error {
	if o.done {
		return errors.New("atomicfile: output already committed or aborted")
	}
	o.done = true
	if o.target.Through {
		o.through.Close()
		if err := o.f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", o.name, err)
		}
		return nil
	}
	if err := o.tmp.commit(o.target.Path, o.perm); err != nil {
		o.tmp.remove()
		return err
	}
	return nil
}

// Abort gives the output up: the temporary file is removed and the target
// left as it was. What was written through stays written.
func (o *Output) Abort() {
	if o.done {
		return
	}
	o.done = true
	if o.target.Through {
		o.through.Close()
		o.f.Close()
		return
	}
	o.tmp.remove()
}

// WriteOutput writes the output path (Create) with fill, and commits it
// when fill succeeds.
func WriteOutput(ctx context.Context, path string, perm os.FileMode, fill func(w io.Writer) error) error {
	o, err := Create(ctx, path, perm)
	if err != nil {
		return err
	}
	if err := fill(o); err != nil {
		o.Abort()
		return err
	}
	return o.Commit()
}

// ErrNotRegular is returned by ReadFile for a path that is not a regular
// file (a directory, a device, a FIFO, or a link to one).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned by ReadFile for a file larger than its bound.
var ErrTooLarge = errors.New("larger than its format allows")

// ReadFile reads a file that darrm wrote (a cache entry, a record): a
// regular file of at most max bytes. It neither waits on a FIFO nor reads
// a device, and reads at most max+1 bytes of anything larger; a missing
// file is an error that is fs.ErrNotExist.
func ReadFile(path string, max int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() { // replaced since
		return nil, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: %w (%d bytes)", path, ErrTooLarge, max)
	}
	return b, nil
}
