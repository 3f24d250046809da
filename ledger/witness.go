package ledger

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/votefile"
)

// A Witness is a state that an ensemble's ledger had, kept outside its
// store and outside your records: a checkpoint file (Options.Checkpoint),
// which a team keeps elsewhere (its repository, another machine), or the
// header of a label file charged to the ledger, which states the line
// that reserved its labels (votefile.LabelMeta.LedgerLines). A ledger
// must still hold that state: have the witnessed line, with the
// witnessed hash, where the witness saw it. A chain of hashes shows that
// lines were changed, not that a whole ledger was replaced by an older
// or a parallel one (a backup restored, an export imported again, a
// ledger made again or put in another's place); a witness of a later
// state shows it, whoever runs the next release. Your own record
// (Record) is a witness of the same kind, kept in your state folder.
type Witness struct {
	// File is where the witness was read (ReadWitness), for messages.
	File string
	// Record is the state witnessed: Ensemble, LedgerID, Lines, Size and
	// Head; from a checkpoint also the ledger's location (Path, without
	// a password) and when it was taken (Updated).
	Record Record
	// Labels, for a label file, is the number of labels it holds, which
	// the run that reserved them (the run of its line Record.Lines) must
	// count: a ledger that settles that run below them was lowered after
	// the labels left. 0 for a checkpoint, which witnesses every
	// settlement up to its line by that line's hash.
	Labels int
	// Units, for a label file of a release charged per draw, whose run's
	// lines count units of a Gaussian-DP charge rather than labels, is
	// its last row's units (votefile.LabelMeta.LedgerUnits): those its
	// run's draws had taken when that label was written, each reserved
	// before it was drawn, which the run must count instead of Labels. 0
	// for a file without the units column (charged per query, or written
	// by an earlier darrm), whose run must count its Labels.
	Units int
}

// checkpointKey is the key that makes a JSON object a checkpoint file;
// its value is the format's version.
const checkpointKey = "darrm-checkpoint"

// checkpointVersion is the version of the checkpoint files this darrm
// writes, and the only one it reads.
const checkpointVersion = 1

// maxCheckpointBytes bounds a checkpoint file: it is a few hundred bytes.
const maxCheckpointBytes = 64 << 10

// checkpoint is a checkpoint file's JSON object.
type checkpoint struct {
	Version  int       `json:"darrm-checkpoint"`
	Ensemble string    `json:"ensemble"`
	LedgerID string    `json:"ledger_id"`
	Lines    int       `json:"lines"`
	Size     int64     `json:"size"`
	Head     string    `json:"head"`
	Path     string    `json:"path"`
	Time     time.Time `json:"time"`
}

// witnessError is a file given as a witness that is none, or one of
// another ensemble than the ledger's; with Out, a file that a checkpoint
// would be written over and that is none.
type witnessError struct {
	File, Reason string
	Out          bool
}

func (e *witnessError) Error() string {
	if e.Out {
		return fmt.Sprintf("checkpoint %s: %s", printable(e.File), e.Reason)
	}
	return fmt.Sprintf("witness %s: %s", printable(e.File), e.Reason)
}

// printable returns s as a message shows it: as it is, or, when it holds
// a control character (an escape sequence a terminal would act on, a
// NUL), quoted with the character escaped.
func printable(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 && utf8.ValidString(s) {
		return s
	}
	return strconv.Quote(s)
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *witnessError) BadInput() bool { return true }

// ReadWitness reads the witness in the file at path: a checkpoint
// (Options.Checkpoint) or a label file of darrm aggregate charged to a
// ledger (CSV or JSON lines, whose metadata header states the ledger's
// line that reserved its labels, and whose rows, of a release charged
// per draw, the units its draws had taken: Witness.Units), recognised by
// their content; a label file whose last line was cut part-way (a stream
// stopped mid-write) witnesses the rows before it. A file
// that is neither, or one that witnesses no ledger (labels charged to
// none, or written by a darrm whose header does not state the line), is
// an error naming path.
func ReadWitness(path string) (Witness, error) {
	w, _, err := readWitness(path)
	return w, err
}

// readWitness is ReadWitness, and reports whether the file is a
// checkpoint.
func readWitness(path string) (w Witness, isCheckpoint bool, err error) {
	bad := func(reason string, args ...any) (Witness, bool, error) {
		return Witness{}, false, &witnessError{File: path, Reason: fmt.Sprintf(reason, args...)}
	}
	// Not blocking on a FIFO, which the check below then refuses.
	f, err := os.OpenFile(path, os.O_RDONLY|oNonBlock, 0)
	if err != nil {
		return Witness{}, false, fmt.Errorf("witness: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Witness{}, false, fmt.Errorf("witness: %w", err)
	}
	if !st.Mode().IsRegular() {
		return bad("not a regular file: a witness is a checkpoint file (darrm ledger checkpoint) or a label file")
	}
	br := bufio.NewReader(f)
	start, _ := br.Peek(512)
	switch t := bytes.TrimLeft(start, " \t\r\n"); {
	case bytes.HasPrefix(start, []byte("\x93NUMPY")):
		return bad("a NumPy label file has no metadata header, so it cannot say where its labels were charged: keep a checkpoint of the ledger (darrm ledger checkpoint) instead")
	case len(t) > 0 && t[0] == '{':
		b, err := io.ReadAll(io.LimitReader(br, maxCheckpointBytes+1))
		if err != nil {
			return Witness{}, false, fmt.Errorf("witness %s: %w", path, err)
		}
		if len(b) > maxCheckpointBytes {
			return bad("not a checkpoint (larger than %d bytes) nor a label file with a metadata header", maxCheckpointBytes)
		}
		r, err := parseCheckpoint(b)
		if err != nil {
			return bad("%v", err)
		}
		return Witness{File: path, Record: r}, true, nil
	}
	w, err = labelWitness(br, path)
	if err != nil {
		// A stream that stopped while a flush was being written (the run
		// killed blocked on a pipe, its reader gone, its disk full) ends
		// in a row cut part-way: the rows before it left whole, and
		// witness the run as far as they go (the cut row's label, counted
		// by the run, only adds to what they witness).
		if end, cut, cerr := lastLineEnd(f, st.Size()); cerr == nil && cut && end > 0 {
			if _, serr := f.Seek(0, io.SeekStart); serr == nil {
				if whole, werr := labelWitness(bufio.NewReader(io.LimitReader(f, end)), path); werr == nil {
					return whole, false, nil
				}
			}
		}
		return Witness{}, false, err
	}
	return w, false, nil
}

// labelWitness reads the witness of the label file r (its metadata
// header and rows); path names it in errors (*witnessError).
func labelWitness(r io.Reader, path string) (Witness, error) {
	bad := func(reason string, args ...any) (Witness, error) {
		return Witness{}, &witnessError{File: path, Reason: fmt.Sprintf(reason, args...)}
	}
	lr, err := votefile.NewLabelReader(r, path)
	if err != nil {
		return bad("neither a checkpoint (darrm ledger checkpoint) nor a label file: %v", err)
	}
	m := lr.Meta()
	switch {
	case m == nil:
		return bad("a label file without a metadata header: it does not say which ledger its labels were charged to")
	case m.Ledger == "":
		return bad("its header names no ledger: its labels were released without one, or by a darrm before label files named theirs, so it witnesses none: keep a checkpoint of the ledger (darrm ledger checkpoint) instead")
	case m.LedgerLines == 0:
		return bad("its header names ledger %s but not the line that reserved its labels (written by an earlier darrm): keep a checkpoint of the ledger (darrm ledger checkpoint) instead", short(m.Ledger))
	case m.Ensemble == "":
		return bad("its header names ledger %s but no ensemble", short(m.Ledger))
	case checkName(m.Ensemble) != nil:
		return bad("its header's ensemble %s has control characters: it is no ensemble a ledger keeps", param.Quote(m.Ensemble))
	}
	labels, units := 0, 0
	for lr.Next() {
		labels, units = labels+1, lr.Row().Units
	}
	if err := lr.Err(); err != nil {
		return bad("a label file whose labels cannot all be read, so it cannot say how many its run released: %v", err)
	}
	return Witness{File: path, Labels: labels, Units: units, Record: Record{Version: recordVersion, Ensemble: m.Ensemble, LedgerID: m.Ledger,
		Lines: m.LedgerLines, Size: m.LedgerSize, Head: m.LedgerHead}}, nil
}

// lastLineEnd returns the bytes of the file f (of size bytes) up to and
// with its last line end, and whether its last line has none (it was cut
// part-way); end is 0 when no line ends.
func lastLineEnd(f *os.File, size int64) (end int64, cut bool, err error) {
	buf := make([]byte, 4096)
	for at := size; at > 0; {
		n := min(int64(len(buf)), at)
		at -= n
		if _, err := f.ReadAt(buf[:n], at); err != nil {
			return 0, false, err
		}
		if at+n == size && buf[n-1] == '\n' {
			return size, false, nil
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return at + int64(i) + 1, true, nil
		}
	}
	return 0, size > 0, nil
}

// parseCheckpoint reads a checkpoint file's content b: one JSON object of
// known keys, of this version, each field in its domain.
func parseCheckpoint(b []byte) (Record, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	c := checkpoint{Version: -1}
	if err := dec.Decode(&c); err != nil {
		return Record{}, fmt.Errorf("not a checkpoint (darrm ledger checkpoint) nor a label file with a metadata header: %v", param.CutJSON(err))
	}
	if dec.More() {
		return Record{}, errors.New("not a checkpoint: more than one JSON object")
	}
	field := func(name string, v any, rule string) error {
		return fmt.Errorf("checkpoint %s = %v: %s", name, v, rule)
	}
	switch {
	case c.Version == -1:
		return Record{}, fmt.Errorf("not a checkpoint (no %q key) nor a label file with a metadata header", checkpointKey)
	case c.Version != checkpointVersion:
		return Record{}, field(checkpointKey, c.Version, fmt.Sprintf("this darrm reads version %d", checkpointVersion))
	case c.Ensemble == "":
		return Record{}, field("ensemble", `""`, "must name the ensemble")
	case checkName(c.Ensemble) != nil:
		return Record{}, field("ensemble", param.Quote(c.Ensemble), "control characters are not allowed")
	case strings.IndexFunc(c.Path, unicode.IsControl) >= 0 || !utf8.ValidString(c.Path):
		return Record{}, field("path", param.Quote(c.Path), "control characters are not allowed")
	case !isHex(c.LedgerID, 32):
		return Record{}, field("ledger_id", param.Quote(c.LedgerID), "must be a ledger's id, 32 hexadecimal digits")
	case c.Lines < 1:
		return Record{}, field("lines", c.Lines, "must be >= 1")
	case c.Size < 1:
		return Record{}, field("size", c.Size, "must be >= 1")
	case !isHex(c.Head, 64):
		return Record{}, field("head", param.Quote(c.Head), "must be a line's SHA-256, 64 hexadecimal digits")
	}
	return Record{Version: recordVersion, Ensemble: c.Ensemble, LedgerID: c.LedgerID, Path: c.Path,
		Lines: c.Lines, Size: c.Size, Head: c.Head, Updated: c.Time}, nil
}

// isHex reports whether s is n lower-case hexadecimal digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// checkWitness checks the ledger against the witness w: a witness of
// another ensemble is bad input (*witnessError); a witness of another
// ledger of the ensemble (but the one this one was upgraded from), or of
// more lines than the ledger has, or of a line that the ledger does not
// hold where the witness saw it, is a *RecordError. The ledger extends
// the witness when it holds the witnessed line, and, for a label file,
// when it counts the file's labels in that line's run.
func (l *Ledger) checkWitness(ctx context.Context, w Witness) error {
	r := w.Record
	if r.Ensemble != l.header.Ensemble {
		return &witnessError{File: w.File, Reason: fmt.Sprintf("it witnesses a ledger of ensemble %s, and ledger %s is of ensemble %s: give witnesses of this ledger's ensemble", printable(r.Ensemble), l.path, l.header.Ensemble)}
	}
	e := &RecordError{Path: l.path, Ensemble: l.header.Ensemble, Record: r, File: w.File, Lines: l.chain.n, Witness: true}
	if ok, err := l.continues(ctx, &r, e); ok {
		return err
	}
	switch {
	case r.LedgerID != l.header.ID:
		e.kind, e.ID = secondLedger, l.header.ID
	case !l.readOnly && IsURL(r.Path) && !IsURL(l.path):
		// As your record refuses it (checkRecord): a file copy (an
		// archive) of a ledger the team keeps in PostgreSQL, imported
		// into a second database by an analyst with no record of the
		// ensemble, made a second live copy of its spends.
		e.kind, e.archive = moved, l.isArchive()
	case r.Lines > l.chain.n:
		e.kind = behind
	default:
		held, err := l.holds(ctx, r.Lines, r.Size, r.Head)
		switch {
		case err != nil:
			return err
		case !held.held:
			e.kind = diverged
		case w.Labels == 0 && w.Units == 0:
			return nil
		default:
			least := w.Labels
			if w.Units > 0 {
				least = w.Units
			}
			if held.labels >= least {
				return nil
			}
			e.Run, e.Counted = held.run, held.labels
			e.kind, e.Labels, e.Units = lowered, w.Labels, w.Units
		}
	}
	return e
}

// witnessLine is what a ledger holds of a witness's line (Ledger.holds).
type witnessLine struct {
	held bool   // the line is where the witness saw it, with its hash
	run  string // the run of its spend ("" for another line)
	// labels is what the last line of that run counts.
	labels int
}

// holds reports whether the ledger's line n ends at byte size and has
// the hash head, in the chain that the ledger's totals were read from,
// and the run of that line and the labels the run's last line counts.
// It reads line n alone (store.lineAt: in a file, it counts the line
// ends between it and the nearest line the ledger knows the number of),
// then the lines after it up to the last one the ledger read, each
// checked to follow the one before it, the line its record vouches for
// (l.vouched) and the last one checked to have the hashes the ledger
// read them with. A release that resumed from its record did not read
// the lines before the vouched one, and its totals are that line's: a
// line before it changed in place, its own hash redone (a settlement
// of 0 raised to its run's count once a release had read the 0), would
// otherwise witness what the totals do not hold. The chain is broken
// then at the line after it, a *CorruptError. The links alone tie the
// lines read to the last line's hash; the two anchors hold them to the
// lines read at open, against a change made while darrm reads.
func (l *Ledger) holds(ctx context.Context, n int, size int64, head string) (witnessLine, error) {
	first := pos{n: 1, off: int64(len(l.headerLine)) + 1}
	switch {
	case n == 1:
		// The header, which the ledger read (resume vouches for it): a
		// witness of it alone holds no spend.
		return witnessLine{held: size == first.off && head == l.headerHash}, nil
	case n < 1 || n > l.chain.n || size < first.off || size > l.size:
		return witnessLine{}, nil
	}
	known := first
	for _, k := range []pos{l.vouched, {n: l.chain.n, off: l.size}} {
		if k.n > 0 && abs64(k.off-size) < abs64(known.off-size) {
			known = k
		}
	}
	b, ok, err := l.store.lineAt(ctx, pos{n: n, off: size}, known)
	if err != nil {
		return witnessLine{}, fmt.Errorf("ledger %s: read line %d: %w", l.path, n, err)
	}
	if !ok {
		return witnessLine{}, nil
	}
	_, hash, s, spend, err := parseChained(l.version, b)
	switch {
	case err != nil, hash != head:
		return witnessLine{}, nil
	case n == l.vouched.n && hash != l.recHash, n == l.chain.n && hash != l.chain.head:
		return witnessLine{}, &CorruptError{Path: l.path, Line: n, Reason: changedWhileRead}
	}
	w := witnessLine{held: true}
	if spend {
		w.run, w.labels = s.Run, s.Queries
	}
	inRun := spend
	k := n
	last := pos{n: l.chain.n, off: l.size}
	_, _, err = l.store.lines(ctx, pos{n: n, off: size}, last, func(b []byte) error {
		k++
		corrupt := func(reason string) error { return &CorruptError{Path: l.path, Line: k, Reason: reason} }
		prev, h, s, spend, err := parseChained(l.version, b)
		switch {
		case err != nil:
			return corrupt(err.Error())
		case prev != hash:
			return corrupt(chainBroken(k - 1))
		case k == l.vouched.n && h != l.recHash, k == last.n && h != l.chain.head:
			return corrupt(changedWhileRead)
		}
		hash = h
		inRun = inRun && spend && s.Run == w.run
		if inRun {
			w.labels = s.Queries
		}
		return nil
	})
	if err = l.readErr(k+1, err); err != nil {
		return witnessLine{}, err
	}
	if k != last.n {
		return witnessLine{}, &CorruptError{Path: l.path, Line: k, Reason: fmt.Sprintf("the ledger ends at line %d, where darrm read %d lines when it opened it: the ledger was changed while darrm read it", k, last.n)}
	}
	return w, nil
}

// parseChained reads b, a chained line of any kind of a ledger of the
// given version: its prev and its hash, checked against its content,
// and its spend when it is a spend line (spend).
func parseChained(version int, b []byte) (prev, hash string, s Spend, spend bool, err error) {
	switch {
	case isEndLine(b):
		prev, _, hash, err = parseEndLine(version, b)
	case isPastLine(b):
		// A line that a ledger continuing another carries of it: where
		// an upgrade of a ledger without runs leaves the checkpoint.
		prev, _, hash, err = parsePastLine(version, b)
	default:
		prev, s, hash, err = parseSpendLine(version, b)
		spend = err == nil
	}
	return prev, hash, s, spend, err
}

// Checkpoint reads the ledger at location whole, every line checked, as
// ReadOnly reads it (with opts's witnesses), and writes its state now to
// the checkpoint file at path, for a team to keep where the ledger's
// store cannot reach (its repository, another machine) and to give to
// releases as a witness (Options.Witnesses, ReadWitness). A file at path
// must be a checkpoint of the same ledger that the ledger extends (a
// checkpoint is only ever moved on): it is then replaced, atomically;
// anything else there is refused. A file ledger that a run holds is
// refused, as the line it writes may not yet be on disk. It returns the
// witness written.
func (opts Options) Checkpoint(ctx context.Context, location, path string) (Witness, error) {
	unlock, err := lockFolder(ctx, path)
	if err != nil {
		return Witness{}, fmt.Errorf("checkpoint: %w", err)
	}
	defer unlock()
	old, isCheckpoint, err := readWitness(path)
	var we *witnessError
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case errors.As(err, &we) || err == nil && !isCheckpoint:
		return Witness{}, &witnessError{File: path, Out: true, Reason: "exists already and is no checkpoint: a checkpoint is written to a new file, or over an earlier checkpoint of the same ledger, never over another file"}
	case err != nil:
		return Witness{}, err
	default:
		opts.Witnesses = append(append([]Witness(nil), opts.Witnesses...), old)
	}
	l, settled, err := opts.open(ctx, location, true)
	if err != nil {
		return Witness{}, err
	}
	defer l.store.close()
	if _, err := l.load(ctx, opts, settled, false); err != nil {
		return Witness{}, err
	}
	if !settled {
		return Witness{}, fmt.Errorf("ledger %s: a run holds it, and the line it is writing may not be on disk yet: take the checkpoint when the run has ended", l.path)
	}
	where, _, _, err := l.store.where()
	if err != nil {
		return Witness{}, err
	}
	r := newRecord(l.header, l.headerHash, where, 0, 0, l.chain.n, l.size, l.chain.head)
	c := checkpoint{Version: checkpointVersion, Ensemble: r.Ensemble, LedgerID: r.LedgerID, Lines: r.Lines, Size: r.Size, Head: r.Head, Path: r.Path, Time: r.Updated}
	b, err := json.Marshal(c)
	if err != nil {
		return Witness{}, err
	}
	fill := func(f *os.File) error {
		_, err := f.Write(append(b, '\n'))
		return err
	}
	if old.File != "" {
		err = atomicfile.Write(path, 0o644, fill)
	} else {
		err = atomicfile.WriteNew(path, 0o644, fill)
	}
	if err != nil {
		return Witness{}, fmt.Errorf("checkpoint: %w", err)
	}
	return Witness{File: path, Record: r}, nil
}

// abs64 returns |x|.
func abs64(x int64) int64 { return max(x, -x) }
