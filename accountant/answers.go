package accountant

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/darrm/darrm/internal/atomicfile"
)

// A budgeted release of one-bit labels asks the exact composition of its
// pairs the same questions run after run: whether its count fits and the
// count above does not, the total at its count, the totals of the labels
// released. Each answer the process lacks costs a transform of up to
// 2^19 points (about 0.05 s), and a count's search asks at its count
// when the coarse composition that guides it (coarseRun) is right, and
// at the next when the lower bound (lowerBitDelta) does not show that it
// does not fit.
// A Memo with a Dir keeps the answers in that folder: it reads the
// answers of a set of pairs when it first composes them and writes those
// it added (Save), so that a release asked again composes nothing. An
// answer kept is the value the composition computed, its bits written as
// they are: a count found from kept answers is the count found without
// them, its last count fitting and the next not by the same evaluations.
// A file is read only when its HMAC-SHA256 under the Memo's Secret is the
// one the Memo computes (Memo).

// answersVersion names the composition that computed the answers a file
// keeps. It is part of every file's key, with the constants that shape
// the composition, so that answers of another composition are never
// read: change it whenever a one-bit composition can answer differently
// (TestAnswersTripwire fails until it is).
const answersVersion = 2

// maxAnswersBytes bounds an answers file: maxBitAnswers answers of each
// kind, under 150 bytes each.
const maxAnswersBytes = 2 * maxBitAnswers * 150

// minAnswersSecret is the least length of a Memo's Secret.
const minAnswersSecret = 16

// Save writes, to m's Dir, the answers of each set of pairs m keeps to
// which it added answers since it read or wrote them, beside those the
// folder kept (a folder shared by processes keeps the answers of each);
// nothing without a Dir, or when m is nil.
func (m *Memo) Save() error {
	if m == nil || m.Dir == "" {
		return nil
	}
	if len(m.Secret) < minAnswersSecret {
		return fmt.Errorf("one-bit answers: a secret of %d bytes: needs at least %d", len(m.Secret), minAnswersSecret)
	}
	m.bits.Lock()
	recent := slices.Clone(m.bits.recent)
	m.bits.Unlock()
	var errs []error
	for _, c := range recent {
		if err := c.save(m.Dir, m.Secret); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// answersFile is the stored form of a set of pairs' answers: each answer
// is its step count and the bits of its float64s (math.Float64bits), so
// that what is read is what was computed, bit for bit.
type answersFile struct {
	Version int    `json:"darrm-onebit-answers"`
	Key     string `json:"key"`
	// Deltas are δ(ε) of k steps composed for total δ y on a window of
	// w points: k, ε, y, δ, w.
	Deltas [][5]uint64 `json:"deltas"`
	// Inverse are the least ε at δ of k steps searched up from hi on a
	// window of w points: k, δ, hi, ε, 1 when there is one (else 0), w.
	Inverse [][6]uint64 `json:"inverse"`
	Sum     string      `json:"sum"`
}

// answersKey returns the key of pairs' answers: a SHA-256 of the
// composition's version and constants and of the pairs' bits, in hex.
func answersKey(pairs []BitPair) string {
	h := sha256.New()
	fmt.Fprintf(h, "darrm one-bit answers %d: window %d, tails %d, direct %d, answers %d, pairs %d\n", answersVersion, maxBitWindow, bitTails, maxDirect, maxBitAnswers, len(pairs))
	var b [16]byte
	for _, p := range pairs {
		binary.LittleEndian.PutUint64(b[:8], math.Float64bits(p.P))
		binary.LittleEndian.PutUint64(b[8:], math.Float64bits(p.Q))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// answersPath returns the file of the answers of key in dir.
func answersPath(dir, key string) string {
	return filepath.Join(dir, key[:32]+".json")
}

// sum returns the HMAC-SHA256 of f's key and answers under secret.
func (f answersFile) sum(secret []byte) string {
	f.Sum = ""
	b, _ := json.Marshal(f)
	m := hmac.New(sha256.New, secret)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
}

// readAnswers returns the answers of key kept in dir; none when there is
// no file, or when it is not one of these pairs' answers intact.
func readAnswers(dir, key string, secret []byte) (answersFile, bool) {
	b, err := atomicfile.ReadFile(answersPath(dir, key), maxAnswersBytes)
	if err != nil {
		return answersFile{}, false
	}
	var f answersFile
	if json.Unmarshal(b, &f) != nil || f.Version != answersVersion || f.Key != key || !hmac.Equal([]byte(f.Sum), []byte(f.sum(secret))) {
		return answersFile{}, false
	}
	return f, true
}

// load adds to c's answers those kept in dir, unless c has read them
// there already.
func (c *bitCurves) load(dir string, secret []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if dir == "" || c.readFrom == dir {
		return
	}
	c.readFrom = dir
	f, ok := readAnswers(dir, c.key(), secret)
	if !ok {
		return
	}
	for _, a := range f.Deltas {
		if len(c.deltas) >= maxBitAnswers {
			break
		}
		q := bitQuery{k: int(a[0]), window: int(a[4]), x: math.Float64frombits(a[1]), y: math.Float64frombits(a[2])}
		if _, have := c.deltas[q]; !have {
			c.deltas[q] = math.Float64frombits(a[3])
		}
	}
	for _, a := range f.Inverse {
		if len(c.inverse) >= maxBitAnswers {
			break
		}
		q := bitQuery{k: int(a[0]), window: int(a[5]), x: math.Float64frombits(a[1]), y: math.Float64frombits(a[2])}
		if _, have := c.inverse[q]; !have {
			c.inverse[q] = bitAnswer{eps: math.Float64frombits(a[3]), ok: a[4] == 1}
		}
	}
}

// key returns answersKey of c's pairs, computed once (c.mu held).
func (c *bitCurves) key() string {
	if c.answersKey == "" {
		c.answersKey = answersKey(c.pairs)
	}
	return c.answersKey
}

// save writes c's answers to dir, with those kept there, when c added
// some since it read or wrote them.
func (c *bitCurves) save(dir string, secret []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.added {
		return nil
	}
	key := c.key()
	f := answersFile{Version: answersVersion, Key: key}
	for q, v := range c.deltas {
		f.Deltas = append(f.Deltas, [5]uint64{uint64(q.k), math.Float64bits(q.x), math.Float64bits(q.y), math.Float64bits(v), uint64(q.window)})
	}
	for q, a := range c.inverse {
		ok := uint64(0)
		if a.ok {
			ok = 1
		}
		f.Inverse = append(f.Inverse, [6]uint64{uint64(q.k), math.Float64bits(q.x), math.Float64bits(q.y), math.Float64bits(a.eps), ok, uint64(q.window)})
	}
	slices.SortFunc(f.Deltas, func(a, b [5]uint64) int { return slices.Compare(a[:], b[:]) })
	slices.SortFunc(f.Inverse, func(a, b [6]uint64) int { return slices.Compare(a[:], b[:]) })
	// What another process kept meanwhile, up to the bound.
	if old, ok := readAnswers(dir, key, secret); ok {
		seen := map[[4]uint64]bool{}
		for _, a := range f.Deltas {
			seen[[4]uint64{a[0], a[1], a[2], a[4]}] = true
		}
		for _, a := range old.Deltas {
			if len(f.Deltas) < maxBitAnswers && !seen[[4]uint64{a[0], a[1], a[2], a[4]}] {
				f.Deltas = append(f.Deltas, a)
			}
		}
		seen = map[[4]uint64]bool{}
		for _, a := range f.Inverse {
			seen[[4]uint64{a[0], a[1], a[2], a[5]}] = true
		}
		for _, a := range old.Inverse {
			if len(f.Inverse) < maxBitAnswers && !seen[[4]uint64{a[0], a[1], a[2], a[5]}] {
				f.Inverse = append(f.Inverse, a)
			}
		}
	}
	f.Sum = f.sum(secret)
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("one-bit answers: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("one-bit answers: %w", err)
	}
	err = atomicfile.Write(answersPath(dir, key), 0o644, func(w *os.File) error {
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return fmt.Errorf("one-bit answers: %w", err)
	}
	c.added, c.readFrom = false, dir
	return nil
}
