package pate

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/noise"
)

// votesKey hashes the private votes as the multiset of their rows of
// counts: the same whatever the rows' order, the file's name, format,
// header or id column, the labels and the settings of an account. A draw
// of the smooth-sensitivity release is a release of the votes, whatever
// else it depends on, so this is the key of the record of draws.
type votesKey struct {
	rows [][sha256.Size]byte
	buf  []byte
}

// add hashes one row of counts.
func (k *votesKey) add(counts []int) {
	k.buf = binary.AppendUvarint(k.buf[:0], uint64(len(counts)))
	for _, n := range counts {
		k.buf = binary.AppendUvarint(k.buf, uint64(n))
	}
	k.rows = append(k.rows, sha256.Sum256(k.buf))
}

// sum returns the hash of the rows' digests in sorted order, in hex: equal
// multisets of rows give equal multisets of digests.
func (k *votesKey) sum() string {
	slices.SortFunc(k.rows, func(a, b [sha256.Size]byte) int { return bytes.Compare(a[:], b[:]) })
	h := sha256.New()
	h.Write([]byte("darrm-pate-votes/2\n"))
	for _, r := range k.rows {
		h.Write(r[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// legacyHash is the key under which darrm recorded draws before the
// record was keyed by the multiset of rows: K, C, whether the answers are
// a release's, and each query's counts and answer, in order. Draws
// recorded under it for the votes as read are still counted.
type legacyHash struct {
	h   hash.Hash
	buf []byte
}

func newLegacyHash(k, classes int, realised bool) *legacyHash {
	c := &legacyHash{h: sha256.New()}
	fmt.Fprintf(c.h, "darrm-pate-votes/1\n%d %d %t\n", k, classes, realised)
	return c
}

// add hashes one query's counts and whether it was answered.
func (c *legacyHash) add(counts []int, answered bool) {
	c.buf = binary.AppendUvarint(c.buf[:0], uint64(len(counts)))
	for _, n := range counts {
		c.buf = binary.AppendUvarint(c.buf, uint64(n))
	}
	if answered {
		c.buf = append(c.buf, 1)
	} else {
		c.buf = append(c.buf, 0)
	}
	c.h.Write(c.buf)
}

func (c *legacyHash) sum() string { return hex.EncodeToString(c.h.Sum(nil)) }

// settings returns the settings of the account's smooth-sensitivity
// release, as a record compares them to show a draw again: the
// mechanism, its settings, δ, the orders, the conversion, the directions,
// the smooth-sensitivity parameters as given (those left open are
// functions of these and of the votes) and, for a release's labels, which
// queries they answered (the release's realised cost is another quantity
// than the expected one). They select the draw shown; every draw on the
// votes, whatever its settings, is counted (AccountResult.Draws).
func (a *AccountResult) settings() string {
	o, g, p := a.Options, a.Options.GNMax(), a.Options.Smooth
	s := fmt.Sprintf("mechanism=%s threshold=%v sigma1=%v sigma2=%v noise=%s delta=%v orders=%v conversion=%s directions=%s ss-order=%v beta=%v sigma-ss=%v from-votes=%t",
		o.Mechanism.Name(), g.Threshold, g.Sigma1, g.Sigma2, g.Noise, o.Delta, o.Orders, o.Conversion, o.Directions, p.Order, p.Beta, p.Sigma, p.FromVotes)
	if a.Realised {
		s += " answers=" + a.answers
	}
	return s
}

// drawRecord is the record of the smooth-sensitivity releases drawn on
// this machine (a draw is a release of the votes: recorded, and counted in
// every total of them after it): a folder per votes,
// dir/pate-draws/<AccountResult.Votes>/, with one file per draw, numbered
// from 1, holding its settings, parameters and value. A draw's file is
// written in full and synced before it is linked to its number, which
// fails if another run took that number: so two runs at once never lose
// a draw, and a draw that is not recorded is never shown.
type drawRecord struct{ dir string }

// draw is one draw: its settings (AccountResult.Settings), the
// parameters it was drawn with (which give its cost at every order), the
// value drawn (Smooth.Released, a release: no function of the votes
// beyond it), when, and the ledger its cost was charged to (an absolute
// path), if any.
type draw struct {
	Version     int                   `json:"version"`
	Votes       string                `json:"votes"`
	Settings    string                `json:"settings"`
	Order       float64               `json:"ss_order"`
	Beta        float64               `json:"beta"`
	Sigma       float64               `json:"sigma_ss"`
	RDPReleased float64               `json:"rdp_released"`
	Time        time.Time             `json:"time"`
	Ledger      string                `json:"ledger,omitempty"`
	Charged     *accountant.Guarantee `json:"charged,omitempty"`
}

const (
	// drawsVersion is the version of a draw's file; version 1 is the
	// same file under the legacy key (legacyHash).
	drawsVersion = 2
	// maxDrawBytes bounds a draw's file: a draw is a few hundred bytes.
	maxDrawBytes = 64 << 10
)

// Path returns the folder of the draws on the votes of key votes.
func (d drawRecord) path(votes string) string {
	return filepath.Join(d.dir, "pate-draws", votes)
}

// file returns the file of the n-th draw on votes.
func (d drawRecord) file(votes string, n int) string {
	return filepath.Join(d.path(votes), fmt.Sprintf("%06d.json", n))
}

// read returns the draws recorded under the key votes, in order.
func (d drawRecord) read(votes string) ([]draw, error) {
	var out []draw
	for n := 1; ; n++ {
		path := d.file(votes, n)
		b, err := atomicfile.ReadFile(path, maxDrawBytes)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return out, nil
		case err != nil:
			return nil, fmt.Errorf("record of smooth-sensitivity draws: %w", err)
		}
		var dr draw
		if err := json.Unmarshal(b, &dr); err != nil || dr.Version < 1 || dr.Version > drawsVersion || dr.Votes != votes || !(dr.Order > 1 && dr.Beta > 0 && dr.Sigma > 0) {
			return nil, fmt.Errorf("record of smooth-sensitivity draws %s: damaged (version %d, votes %.12s, order %v, beta %v, sigma_ss %v, %v): darrm wrote no such record; its draws were releases of the votes, which every total of them must count: restore it from a copy",
				path, dr.Version, dr.Votes, dr.Order, dr.Beta, dr.Sigma, err)
		}
		out = append(out, dr)
	}
}

// add records dr as the n-th draw on its votes, and reports false if
// another run recorded an n-th draw first.
func (d drawRecord) add(dr draw, n int) (bool, error) {
	dir := d.path(dr.Votes)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("record of smooth-sensitivity draws: %w", err)
	}
	b, err := json.Marshal(dr)
	if err != nil {
		return false, err
	}
	err = atomicfile.WriteNew(d.file(dr.Votes, n), 0o600, func(f *os.File) error {
		_, err := f.Write(append(b, '\n'))
		return err
	})
	switch {
	case errors.Is(err, fs.ErrExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("record of smooth-sensitivity draws: %w", err)
	}
	return true, nil
}

// Once says what AccountResult.ReleaseOnce does with the
// smooth-sensitivity release.
type Once struct {
	// Dir is the folder that keeps the record of the draws on this
	// machine, in Dir/pate-draws/<AccountResult.Votes>/, one file per
	// draw: a draw's file is written in full before it takes its number,
	// so two runs at once never lose a draw, and a draw that is not
	// recorded is never shown.
	Dir string
	// New asks for a new draw, a release of the votes; without it the
	// record is only read. The first draw on the votes needs no Charge;
	// each later one does.
	New bool
	// Experiment makes the new draw an experiment, drawn from a seeded
	// source: neither recorded nor charged, and counted in the total as a
	// release would be (the output is not for release).
	Experiment bool
	// Charge, if set, charges a new draw's cost (Smooth.Cost) to the
	// ledger Ledger (an absolute path, as the record names it) before it
	// is drawn; its error stops the draw.
	Charge func(cost accountant.Guarantee) error
	Ledger string
}

// DrawState says which draws the account counts and which it shows.
type DrawState struct {
	// Shown says that a draw is shown (Smooth.Drawn); Recorded that it
	// was recorded before (at Time), else it was drawn now; Experiment
	// that it was drawn from a seeded source, and not recorded.
	Shown, Recorded, Experiment bool
	Time                        time.Time
	// Charged is the shown draw's cost as charged to Ledger (nil:
	// charged nowhere).
	Charged *accountant.Guarantee
	Ledger  string
	// Record is the record's folder; Draws counts the draws recorded on
	// the votes, with any settings (the account covers them, and an
	// experiment's: AccountResult.Draws).
	Record string
	Draws  int
}

// AgainError is a new draw asked for votes on which a draw is recorded,
// without a ledger to charge it to.
type AgainError struct {
	// Draws is the number of draws recorded on the votes, Last the time
	// of the latest.
	Draws int
	Last  time.Time
}

// Error says how many draws are recorded on the votes, the latest when,
// and why another is refused.
func (e *AgainError) Error() string {
	return fmt.Sprintf("%s on these votes %s recorded (the latest at %s, with any settings): another draw is another release of the votes, which only a ledger that charges it may take",
		plural.Of(e.Draws, "smooth-sensitivity draw", "smooth-sensitivity draws"), plural.Word(e.Draws, "is", "are"), e.Last.Format(time.RFC3339))
}

// BadInput reports that the request, not the data, is at fault.
func (*AgainError) BadInput() bool { return true }

// noDrawError is a draw asked where there is nothing publishable to draw.
type noDrawError string

func (e noDrawError) Error() string { return string(e) }
func (noDrawError) BadInput() bool  { return true }

// record is the record of draws in o.Dir.
func (o Once) record() drawRecord { return drawRecord{dir: o.Dir} }

// ReleaseOnce settles the draws of the account's prepared
// smooth-sensitivity release (DESIGN "Every draw counted": a draw is a
// release of the votes, drawn on request, recorded, and counted in every
// total of them after it). It reads every draw recorded on the votes, with
// any settings, into a.Draws; without o.New it shows the latest of these
// settings, if any, again (post-processing: no new release); with o.New
// it draws anew from src, charged first (o.Charge) and recorded, which
// needs o.Charge when a draw is recorded already (else an *AgainError),
// or, with o.Experiment, draws from src without recording or charging.
// A release with parameters chosen from the votes is not publishable and
// is drawn only as an experiment. LNMax has no release: nil, nil.
func (a *AccountResult) ReleaseOnce(o Once, src *noise.Source) (*DrawState, error) {
	s := &a.Smooth
	if a.LNMax != nil {
		return nil, nil
	}
	ours, err := o.record().read(a.Votes)
	if err != nil {
		return nil, err
	}
	var legacy []draw
	if a.legacy != "" {
		if legacy, err = o.record().read(a.legacy); err != nil {
			return nil, err
		}
	}
	recorded := append(slices.Clip(legacy), ours...)
	a.Draws = recorded
	st := &DrawState{Record: o.record().path(a.Votes), Draws: len(recorded)}
	settings := a.settings()
	if !o.New {
		return st, a.recall(o.record(), recorded, settings, st)
	}
	switch {
	case s.Error != "" || s.Deviation == 0:
		return nil, noDrawError("no smooth-sensitivity release to draw: its analysis does not apply to these votes and settings (run without a draw to see why: smooth_sensitivity_error)")
	case s.FromVotes && !o.Experiment:
		return nil, noDrawError("the smooth-sensitivity parameters are chosen from the votes (from-votes), so a draw is not for publication: draw it as a seeded experiment, or fix the order, beta and sigma_ss")
	case o.Experiment:
		if err := s.Draw(src); err != nil {
			return nil, err
		}
		if !s.FromVotes {
			a.Draws = append(slices.Clip(a.Draws), a.draw(settings, time.Time{}, "", nil))
		}
		st.Shown, st.Experiment = true, true
		return st, nil
	case len(recorded) > 0 && o.Charge == nil:
		return nil, &AgainError{Draws: len(recorded), Last: recorded[len(recorded)-1].Time}
	}
	if o.Charge != nil {
		cost, err := s.Cost()
		if err != nil {
			return nil, err
		}
		if err := o.Charge(cost); err != nil {
			return nil, err
		}
		st.Charged, st.Ledger = &cost, o.Ledger
	}
	if err := s.Draw(src); err != nil {
		return nil, err
	}
	st.Time = time.Now().UTC().Truncate(time.Second)
	dr := a.draw(settings, st.Time, st.Ledger, st.Charged)
	for n := len(ours) + 1; ; n++ {
		ok, err := o.record().add(dr, n)
		if err == nil && !ok && o.Charge == nil {
			// Another run recorded a draw meanwhile: this one would be a
			// second, uncharged.
			var again []draw
			if again, err = o.record().read(a.Votes); err == nil {
				err = &AgainError{Draws: len(legacy) + len(again), Last: again[len(again)-1].Time}
			}
		}
		if err != nil {
			s.Released, s.Eps, s.Drawn = 0, 0, false // a draw that is not recorded is not shown
			return nil, err
		}
		if ok {
			break
		}
	}
	a.Draws = append(slices.Clip(recorded), dr)
	st.Shown, st.Draws = true, len(a.Draws)
	return st, nil
}

// draw returns the record of the account's drawn release.
func (a *AccountResult) draw(settings string, at time.Time, ledger string, charged *accountant.Guarantee) draw {
	s := a.Smooth
	return draw{Version: drawsVersion, Votes: a.Votes, Settings: settings, Order: s.Order, Beta: s.Beta, Sigma: s.Sigma, RDPReleased: s.Released, Time: at, Ledger: ledger, Charged: charged}
}

// recall shows the latest of draws made with settings, if any, in st.
func (a *AccountResult) recall(rec drawRecord, draws []draw, settings string, st *DrawState) error {
	s := &a.Smooth
	for i := len(draws) - 1; i >= 0; i-- {
		d := draws[i]
		if d.Settings != settings {
			continue
		}
		if d.Order != s.Order || d.Beta != s.Beta || d.Sigma != s.Sigma {
			return fmt.Errorf("record %s: the draw of %v was made at order %v, beta %v, sigma_ss %v, but these settings give %v, %v, %v now: the record is of another darrm",
				rec.path(d.Votes), d.Time, d.Order, d.Beta, d.Sigma, s.Order, s.Beta, s.Sigma)
		}
		st.Shown, st.Recorded, st.Time, st.Charged, st.Ledger = true, true, d.Time, d.Charged, d.Ledger
		return s.Recall(d.RDPReleased)
	}
	return nil
}

// LedgerCovers reports whether the total of the ledger at path (absolute,
// as the record of draws names it) covers everything the account's totals
// do, and so is the one to publish, as it is for the release it charged
// (aggregate's): the account is of labels whose header that ledger's
// records vouch for (AccountOptions.Recorded: Account refuses a header
// that names another ledger as the one the labels were charged to), and
// it charged every draw the account counts.
func (a *AccountResult) LedgerCovers(path string) bool {
	o := a.Options
	if o.Recorded == nil || o.Labels == nil || o.Labels.Meta() == nil {
		return false
	}
	for _, d := range a.Draws {
		if d.Ledger != path || d.Charged == nil {
			return false
		}
	}
	return true
}
