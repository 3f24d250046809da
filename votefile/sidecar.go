package votefile

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/darrm/darrm/internal/atomicfile"
)

// WriteSidecar writes m, the metadata header of the vote file votes, to
// path, the file of its own that readers take it from (its sidecar,
// SidecarPath, or Options.MetaFile): it validates m (Meta.Validate) and
// reads every query of votes with it as a reader will (Open, with m as
// their header and opts but the K, classes, layout and orientation that
// m states; name names the votes in errors), so that no header the votes
// contradict is written (their K, classes, layout or orientation, or any
// row), then writes its JSON object, as Open reads it, atomically. A file at path is refused, with an error that is
// fs.ErrExist, unless replace; path may never be the vote file (an
// *os.File). ctx's end stops the reading. It returns the number of
// queries read.
func (m *Meta) WriteSidecar(ctx context.Context, path string, votes io.Reader, name string, opts Options, replace bool) (int, error) {
	if err := m.Validate(); err != nil {
		return 0, err
	}
	st, err := os.Lstat(path)
	switch {
	case err == nil && !replace:
		return 0, fmt.Errorf("sidecar %s: %w (a sidecar is replaced only on purpose)", path, fs.ErrExist)
	case err == nil:
		if f, ok := votes.(*os.File); ok {
			if vst, err := f.Stat(); err == nil && os.SameFile(st, vst) {
				return 0, fmt.Errorf("sidecar %s: the vote file itself", path)
			}
		}
	}
	opts.Meta, opts.MetaFile = m, path
	opts.K, opts.Classes, opts.Layout, opts.Orientation = 0, 0, LayoutVotes, orientationUnstated
	in, _, err := readVotes(votes, name, opts)
	if err != nil {
		return 0, err
	}
	n := 0
	for in.Next() {
		if n++; ctx.Err() != nil {
			return n, ctx.Err()
		}
	}
	if err := in.Err(); err != nil {
		return n, err
	}
	b, err := m.MarshalJSON()
	if err != nil {
		return n, err
	}
	write := atomicfile.WriteNew
	if replace {
		write = atomicfile.Write
	}
	return n, write(path, 0o644, func(f *os.File) error {
		_, err := f.Write(append(b, '\n'))
		return err
	})
}
