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
func (a *AccountResult) Settings() string {
	o, g, p := a.Options, a.Options.GNMax, a.Options.Smooth
	return fmt.Sprintf("mechanism=%s threshold=%v sigma1=%v sigma2=%v noise=%s delta=%v orders=%v conversion=%s directions=%s ss-order=%v beta=%v sigma-ss=%v from-votes=%t",
		o.Mechanism, g.Threshold, g.Sigma1, g.Sigma2, g.Noise, o.Delta, o.Orders, o.Conversion, o.Directions, p.Order, p.Beta, p.Sigma, p.FromVotes)
}

// GNSSMechanism names a smooth-sensitivity draw where a ledger charges
// it.
const GNSSMechanism votefile.MechanismName = "gnss"

// Draws is the record of the smooth-sensitivity releases drawn on this
// machine (DESIGN "Drawn once": a draw is a release, drawn once per votes
// and settings, recorded; showing it again is free, drawing again is
// another charge): a folder per votes, Dir/pate-draws/<AccountResult.Votes>/,
// with one file per draw, numbered from 1, holding its settings and value.
// A draw's file is written in full under a temporary name and then linked
// to its number, which fails if another run took that number: so two runs
// at once never lose a draw, and a run that finds the draw of its settings
// taken meanwhile shows that one instead of its own.
type Draws struct{ Dir string }

// Draw is one recorded draw: its settings (AccountResult.Settings), the
// parameters it was drawn with, the value drawn (Smooth.Released, a
// release: no function of the votes beyond it), when, and the ledger its
// cost was charged to, if any.
type Draw struct {
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
	drawsVersion = 1
	// maxDrawBytes bounds a draw's file: a draw is a few hundred bytes.
	maxDrawBytes = 64 << 10
)

// Path returns the folder of the draws on the votes of hash votes.
func (d Draws) Path(votes string) string {
	return filepath.Join(d.Dir, "pate-draws", votes)
}

// file returns the file of the n-th draw on votes.
func (d Draws) file(votes string, n int) string {
	return filepath.Join(d.Path(votes), fmt.Sprintf("%06d.json", n))
}

// read returns the draws recorded on votes, in order.
func (d Draws) read(votes string) ([]Draw, error) {
	var out []Draw
	for n := 1; ; n++ {
		path := d.file(votes, n)
		b, err := atomicfile.ReadFile(path, maxDrawBytes)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return out, nil
		case err != nil:
			return nil, fmt.Errorf("record of smooth-sensitivity draws: %w", err)
		}
		var dr Draw
		if err := json.Unmarshal(b, &dr); err != nil || dr.Version != drawsVersion || dr.Votes != votes {
			return nil, fmt.Errorf("record of smooth-sensitivity draws %s: damaged (version %d, votes %.12s, %v): darrm wrote no such record; move it away to draw again, knowing that its draws were releases",
				path, dr.Version, dr.Votes, err)
		}
		out = append(out, dr)
	}
}

// add records dr as the n-th draw on its votes, and reports false if
// another run recorded an n-th draw first.
func (d Draws) add(dr Draw, n int) (bool, error) {
	dir := d.Path(dr.Votes)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("record of smooth-sensitivity draws: %w", err)
	}
	b, err := json.Marshal(dr)
	if err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(dir, ".draw-*")
	if err != nil {
		return false, fmt.Errorf("record of smooth-sensitivity draws: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), d.file(dr.Votes, n))
	}
	switch {
	case errors.Is(err, fs.ErrExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("record of smooth-sensitivity draws: %w", err)
	}
	return true, nil
}

// Once says how AccountResult.ReleaseOnce releases the smooth-sensitivity
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
	// (AccountResult.Draws).
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
func (a *AccountResult) ReleaseOnce(o Once, src *noise.Source) (*DrawState, error) {
	s := &a.Smooth
	if a.LNMax != nil || s.Error != "" || s.Deviation == 0 {
		return nil, nil
	}
	if o.Again && o.Charge == nil {
		return nil, againError{}
	}
	draws, err := o.Record.read(a.Votes)
	if err != nil {
		return nil, err
	}
	settings := a.Settings()
	if !o.Again {
		if st, err := a.recall(o.Record, draws, settings); st != nil || err != nil {
			return st, err
		}
	}
	st := &DrawState{Record: o.Record.Path(a.Votes)}
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
	dr := Draw{Version: drawsVersion, Votes: a.Votes, Settings: settings, Order: s.Order, Beta: s.Beta, Sigma: s.Sigma, RDPReleased: s.Released, Time: st.Time, Ledger: st.Ledger, Charged: st.Charged}
	for {
		ok, err := o.Record.add(dr, len(draws)+1)
		if err != nil {
			s.Released, s.Eps, s.Drawn = 0, 0, false // a draw that is not recorded is not shown
			return nil, err
		}
		if ok {
			draws = append(draws, dr)
			break
		}
		// Another run recorded a draw meanwhile: if it is of these
		// settings and no new draw was asked, it is the one to show.
		if draws, err = o.Record.read(a.Votes); err != nil {
			return nil, err
		}
		if !o.Again {
			if shown, err := a.recall(o.Record, draws, settings); shown != nil || err != nil {
				return shown, err
			}
		}
	}
	st.Draws, st.Same = len(draws), same(draws, settings)
	a.Draws = st.Same
	return st, nil
}

// same counts the draws of settings.
func same(draws []Draw, settings string) int {
	n := 0
	for _, d := range draws {
		if d.Settings == settings {
			n++
		}
	}
	return n
}

// recall shows the last of draws of settings, if any (nil if none).
func (a *AccountResult) recall(rec Draws, draws []Draw, settings string) (*DrawState, error) {
	s := &a.Smooth
	for i := len(draws) - 1; i >= 0; i-- {
		d := draws[i]
		if d.Settings != settings {
			continue
		}
		if d.Order != s.Order || d.Beta != s.Beta || d.Sigma != s.Sigma {
			return nil, fmt.Errorf("record %s: the draw of %v was made at order %v, beta %v, sigma_ss %v, but these settings give %v, %v, %v now: the record is of another darrm",
				rec.file(a.Votes, i+1), d.Time, d.Order, d.Beta, d.Sigma, s.Order, s.Beta, s.Sigma)
		}
		st := &DrawState{Recorded: true, Time: d.Time, Charged: d.Charged, Ledger: d.Ledger, Record: rec.Path(a.Votes), Draws: len(draws), Same: same(draws, settings)}
		a.Draws = st.Same
		return st, s.Recall(d.RDPReleased)
	}
	return nil, nil
}
