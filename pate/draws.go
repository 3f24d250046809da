package pate

import (
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
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/votefile"
)

// contentHash hashes what an account reads, whatever the file's format:
// K, C, whether the answers are a release's, and each query's counts and
// answer, in order.
type contentHash struct {
	h   hash.Hash
	buf []byte
}

func newContentHash(k, classes int, realised bool) *contentHash {
	c := &contentHash{h: sha256.New()}
	fmt.Fprintf(c.h, "darrm-pate-votes/1\n%d %d %t\n", k, classes, realised)
	return c
}

// add hashes one query's counts and whether it was answered.
func (c *contentHash) add(counts []int, answered bool) {
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

func (c *contentHash) sum() string { return hex.EncodeToString(c.h.Sum(nil)) }

// Settings returns the settings of the account's smooth-sensitivity
// release, as a record compares them: the mechanism, its settings, δ, the
// orders, the conversion, the directions and the smooth-sensitivity
// parameters as given (those left open are functions of these and of the
// votes).
func (a *Accounting) Settings() string {
	o, g, p := a.Options, a.Options.GNMax, a.Options.Smooth
	return fmt.Sprintf("mechanism=%s threshold=%v sigma1=%v sigma2=%v noise=%s delta=%v orders=%v conversion=%s directions=%s ss-order=%v beta=%v sigma-ss=%v from-votes=%t",
		o.Mechanism, g.Threshold, g.Sigma1, g.Sigma2, g.Noise, o.Delta, o.Orders, o.Conversion, o.Directions, p.Order, p.Beta, p.Sigma, p.FromVotes)
}

// GNSSMechanism names a smooth-sensitivity draw where a ledger charges
// it.
const GNSSMechanism votefile.Mechanism = "gnss"

// Draws is the record of the smooth-sensitivity releases drawn on this
// machine (DESIGN "Drawn once": a draw is a release, drawn once per votes
// and settings, recorded; showing it again is free, drawing again is
// another charge): one file per votes, Dir/pate-draws/<Accounting.Votes>.json,
// with each draw's settings and value.
type Draws struct{ Dir string }

// Draw is one recorded draw: its settings (Accounting.Settings), the
// parameters it was drawn with, the value drawn (Smooth.Released, a
// release: no function of the votes beyond it), when, and the ledger its
// cost was charged to, if any.
type Draw struct {
	Settings    string                `json:"settings"`
	Order       float64               `json:"ss_order"`
	Beta        float64               `json:"beta"`
	Sigma       float64               `json:"sigma_ss"`
	RDPReleased float64               `json:"rdp_released"`
	Time        time.Time             `json:"time"`
	Ledger      string                `json:"ledger,omitempty"`
	Charged     *accountant.Guarantee `json:"charged,omitempty"`
}

// drawFile is the record of the draws on one votes' content.
type drawFile struct {
	Version int    `json:"version"`
	Votes   string `json:"votes"`
	Draws   []Draw `json:"draws"`
}

const (
	drawsVersion = 1
	// maxDrawsBytes bounds a record: a draw is a few hundred bytes.
	maxDrawsBytes = 16 << 20
)

// Path returns the record of the votes of hash votes.
func (d Draws) Path(votes string) string {
	return filepath.Join(d.Dir, "pate-draws", votes+".json")
}

// read returns the record of votes (empty if there is none).
func (d Draws) read(votes string) (drawFile, error) {
	f := drawFile{Version: drawsVersion, Votes: votes}
	b, err := atomicfile.ReadFile(d.Path(votes), maxDrawsBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil
	case err != nil:
		return f, fmt.Errorf("record of smooth-sensitivity draws: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Version != drawsVersion || f.Votes != votes {
		return f, fmt.Errorf("record of smooth-sensitivity draws %s: damaged (version %d, votes %.12s, %v): darrm wrote no such record; move it away to draw again, knowing that its draws were releases",
			d.Path(votes), f.Version, f.Votes, err)
	}
	return f, nil
}

// write replaces the record of f.Votes by f.
func (d Draws) write(f drawFile) error {
	path := d.Path(f.Votes)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("record of smooth-sensitivity draws: %w", err)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, 0o600, func(w *os.File) error {
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
		return w.Sync()
	})
}

// Once says how Accounting.ReleaseOnce releases the smooth-sensitivity
// draw.
type Once struct {
	// Record keeps the draws.
	Record Draws
	// Again draws anew though a draw is recorded for these votes and
	// settings; it needs Charge.
	Again bool
	// Charge, if set, charges a new draw's cost (Smooth.Cost) to the
	// ledger named Ledger before it is drawn; its error stops the draw.
	Charge func(cost accountant.Guarantee) error
	Ledger string
}

// DrawState says where the release shown comes from.
type DrawState struct {
	// Recorded says that it is a draw recorded before (Time), shown
	// again; else it was drawn now.
	Recorded bool
	Time     time.Time
	// Charged is its cost as charged to Ledger (nil: charged nowhere).
	Charged *accountant.Guarantee
	Ledger  string
	// Record is the record's path; Draws counts the draws it holds for
	// these votes, with any settings, Same those with these settings
	// (Accounting.Draws).
	Record string
	Draws  int
	Same   int
}

// againError is a new draw asked without a ledger to charge it to.
type againError struct{}

func (againError) Error() string {
	return "a new smooth-sensitivity draw is another release of the votes: it must be charged to a ledger"
}
func (againError) BadInput() bool { return true }

// ReleaseOnce releases the account's prepared smooth-sensitivity release
// once per votes and settings: the draw recorded for them, if any, shown
// again; otherwise, or with o.Again, a new draw from src, its cost
// charged first (o.Charge) and the draw recorded. It does nothing when
// there is no release (lnmax, or Smooth.Error) and returns nil then.
func (a *Accounting) ReleaseOnce(o Once, src *noise.Source) (*DrawState, error) {
	s := &a.Smooth
	if a.LNMax != nil || s.Error != "" || s.Deviation == 0 {
		return nil, nil
	}
	if o.Again && o.Charge == nil {
		return nil, againError{}
	}
	f, err := o.Record.read(a.Votes)
	if err != nil {
		return nil, err
	}
	st := &DrawState{Record: o.Record.Path(a.Votes), Draws: len(f.Draws)}
	settings := a.Settings()
	for _, d := range f.Draws {
		if d.Settings == settings {
			st.Same++
		}
	}
	if !o.Again {
		for i := len(f.Draws) - 1; i >= 0; i-- {
			d := f.Draws[i]
			if d.Settings != settings {
				continue
			}
			if d.Order != s.Order || d.Beta != s.Beta || d.Sigma != s.Sigma {
				return nil, fmt.Errorf("record %s: the draw of %v was made at order %v, beta %v, sigma_ss %v, but these settings give %v, %v, %v now: the record is of another darrm",
					st.Record, d.Time, d.Order, d.Beta, d.Sigma, s.Order, s.Beta, s.Sigma)
			}
			st.Recorded, st.Time, st.Charged, st.Ledger = true, d.Time, d.Charged, d.Ledger
			a.Draws = st.Same
			return st, s.Recall(d.RDPReleased)
		}
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
	f.Draws = append(f.Draws, Draw{Settings: settings, Order: s.Order, Beta: s.Beta, Sigma: s.Sigma, RDPReleased: s.Released, Time: st.Time, Ledger: st.Ledger, Charged: st.Charged})
	st.Draws, st.Same = len(f.Draws), st.Same+1
	a.Draws = st.Same
	if err := o.Record.write(f); err != nil {
		s.Released, s.Eps, s.Drawn = 0, 0, false // a draw that is not recorded is not shown
		return nil, err
	}
	return st, nil
}
