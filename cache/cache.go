// Package cache stores certified optimal noise functions on disk, keyed by
// the problem (K, m, eps, Delta, delta, and the neighbouring relation when
// it is not DaRRM's) and the prior, so that a gamma is solved once.
//
// One JSON file per key, written atomically. Every entry carries a SHA-256
// checksum of its content and the certificate it was stored with; Get
// rejects an entry whose checksum, key or gamma does not hold up, or whose
// stored certificate is not a certified one at the key's budget, so a
// corrupt entry is reported and recomputed, never used. Get does not run
// the exhaustive certificate again, and the checksum is no signature: a
// gamma read from the cache is certified anew before any use
// (optimal.Source), and the optimality bound an entry states is as stored.
//
// Reference: Shuli Jiang, "Communication Efficient and Differentially
// Private Optimization", PhD thesis, Carnegie Mellon University,
// CMU-RI-TR-25-46, 2025 ("the thesis": lemma, section, table and figure
// numbers are its own). Its Chapter 3 and Appendix B are based
// on Jiang, Zhang and Joshi, "Optimized Tradeoffs for Private Prediction
// with Majority Ensembling", TMLR 2024.
package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/cachedir"
	"github.com/darrm/darrm/internal/param"
)

// version is the format of the entries and of the solver that wrote them.
// It is part of every key, so an entry of another version is never found:
// its gamma is solved again and stored under the new key, and Put removes
// the earlier versions' files for that key. Version 3: gamma_opt is the
// canonical one (optimal.Solve's tie-break), where entries of version 2
// hold an optimal gamma that depends on the solver's path. Version 4: the
// budget is that of m·eps as the decimals multiply (Problem.MEps), where
// the certificates of version 3 are of the float64 product. Version 5: at
// m = 1 the bound is the LP's and gamma_opt the LP's where gamma_Sub is
// not within its tolerance, where entries of version 4 hold gamma_Sub
// with its own utility as the bound.
const version = 5

// Key identifies a gamma table.
type Key struct {
	Problem constraints.Problem
	Prior   string
}

// String is the canonical form of the key; floats are written in their
// shortest round-trip form, so distinct parameters never share a key.
func (k Key) String() string { return k.at(version) }

// at is the key's form in version v. A problem in the one-vote relation
// ends in " relation=one-vote"; one in DaRRM's relation states none, so
// that the keys, and the files, of the entries stored before the relation
// was a parameter stay what they were.
func (k Key) at(v int) string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	p := k.Problem
	s := fmt.Sprintf("darrm-gamma/v%d K=%d m=%s eps=%s Delta=%s delta=%s prior=%s",
		v, p.K, f(p.M), f(p.Eps), f(p.Delta), f(p.TargetDelta), k.Prior)
	if p.Relation != accountant.PrivateTeachers {
		s += " relation=" + p.Relation.String()
	}
	return s
}

// file is the entry's file name in version v: a digest of the key
// (cachedir.Entry).
func (k Key) file(v int) string { return cachedir.Entry(k.at(v)) }

// Entry is a stored gamma table with its certificate and solve statistics.
type Entry struct {
	Key         string  `json:"key"`
	K           int     `json:"K"`
	M           float64 `json:"m"`
	Eps         float64 `json:"eps"`
	Delta       float64 `json:"Delta"`
	TargetDelta float64 `json:"delta"`
	// Relation is the neighbouring relation; omitted for DaRRM's,
	// private-teachers, as in the entries written before it was stored.
	Relation       accountant.Relation `json:"relation,omitempty"`
	Prior          string              `json:"prior"`
	Gamma          []float64           `json:"gamma"`
	Certificate    gamma.Certificate   `json:"certificate"`
	Utility        float64             `json:"utility"`
	SurrogateError float64             `json:"surrogate_error"`
	UpperBound     float64             `json:"upper_bound"` // see optimal.Result
	Gap            float64             `json:"gap"`
	Scale          float64             `json:"scale"`
	Seconds        float64             `json:"seconds"` // time of the original solve
	LPSolves       int                 `json:"lp_solves"`
	Rows           int                 `json:"rows"`
	Passes         int                 `json:"passes"`
	TieBroken      bool                `json:"tie_broken"`        // the canonical gamma_opt (optimal.Result.TieBroken); only such entries are stored
	Stalled        bool                `json:"stalled,omitempty"` // the solve stopped closing its gap (optimal.Result.Stalled); never stored
	Created        time.Time           `json:"created"`
}

// stored is the on-disk form: the entry and a checksum of its JSON.
type stored struct {
	Entry    json.RawMessage `json:"entry"`
	Checksum string          `json:"sha256"`
}

// Dir is a cache directory.
type Dir struct{ path string }

// Open returns the cache in directory path, creating it if needed; ""
// is the default directory: $DARRM_CACHE_DIR if set, else
// $XDG_CACHE_HOME/darrm, else ~/.cache/darrm.
func Open(path string) (*Dir, error) {
	if path == "" {
		var err error
		if path, err = cachedir.Default(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return &Dir{path: path}, nil
}

// Path returns the file that holds key's entry.
func (d *Dir) Path(k Key) string { return filepath.Join(d.path, k.file(version)) }

// Folder returns the subfolder name of the cache's folder, where another
// cache (the trained teachers') keeps its files; "" (no cache) when d is
// nil, as with --no-cache.
func (d *Dir) Folder(name string) string {
	if d == nil {
		return ""
	}
	return filepath.Join(d.path, name)
}

// ErrNotFound is returned by Get when the cache has no entry for the key.
var ErrNotFound = errors.New("cache: no entry")

// CorruptError describes an entry that exists but cannot be trusted.
type CorruptError struct {
	Path   string
	Reason string
}

// Error names the entry's file and says why it is corrupt.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("cache entry %s is corrupt: %s", e.Path, e.Reason)
}

// maxEntryBytes bounds the file of an entry for K teachers: its K+1 gamma
// values, each on a line of at most 64 bytes, and a few KiB of the rest,
// with room to spare. Get reads no more than that of a file.
func maxEntryBytes(k int) int64 { return 1<<20 + 64*int64(k+1) }

// Get returns the entry for k. It returns ErrNotFound if there is none, a
// *CorruptError if the file fails any check (checksum, key, gamma, or the
// stored certificate against the key's budget), and other errors if the
// file cannot be read.
func (d *Dir) Get(k Key) (*Entry, error) {
	path := d.Path(k)
	corrupt := func(format string, args ...any) error {
		return &CorruptError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	b, err := atomicfile.ReadFile(path, maxEntryBytes(k.Problem.K))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, ErrNotFound
	case errors.Is(err, atomicfile.ErrNotRegular), errors.Is(err, atomicfile.ErrTooLarge):
		return nil, corrupt("%v", errors.Unwrap(err))
	case err != nil:
		return nil, fmt.Errorf("cache: read %s: %w", path, err)
	}
	var s stored
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, corrupt("not valid JSON: %v", param.CutJSON(err))
	}
	if got := checksum(s.Entry); got != s.Checksum {
		return nil, corrupt("sha256 = %s, content hashes to %q: must match", param.Quote(s.Checksum), got)
	}
	var e Entry
	if err := json.Unmarshal(s.Entry, &e); err != nil {
		return nil, corrupt("entry: %v", param.CutJSON(err))
	}
	if e.Key != k.String() {
		return nil, corrupt("key = %s, want %q", param.Quote(e.Key), k.String())
	}
	if err := e.certifies(k.Problem); err != nil {
		return nil, corrupt("%v", err)
	}
	return &e, nil
}

// certifies checks that e holds a gamma of p's K whose stored
// certificate certifies p's budget: Get's check of what it read, and
// Put's of what it writes.
func (e *Entry) certifies(p constraints.Problem) error {
	if err := gamma.Gamma(e.Gamma).CheckFor(p.K); err != nil {
		return err
	}
	c := e.Certificate
	if b := p.Budget(); c.Status != gamma.Certified || c.Budget != b || !(c.MaxF+c.ErrBound <= b) {
		return fmt.Errorf("certificate (status %v, max f %v, error bound %v, budget %v) does not certify the budget %v", c.Status, c.MaxF, c.ErrBound, c.Budget, b)
	}
	return nil
}

// Put stores e under its key, atomically replacing any previous entry.
// It refuses an entry of a problem out of range, and one whose gamma is
// not of the problem's K or whose certificate does not certify the
// problem's budget, as Get refuses to read one: a zero Entry passed, its
// status the zero value, Certified.
func (d *Dir) Put(e *Entry) error {
	p := constraints.Problem{K: e.K, M: e.M, Eps: e.Eps, Delta: e.Delta, TargetDelta: e.TargetDelta, Relation: e.Relation}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("cache: refusing to store an entry: %w", err)
	}
	if err := e.certifies(p); err != nil {
		return fmt.Errorf("cache: refusing to store an entry: %w", err)
	}
	k := Key{Problem: p, Prior: e.Prior}
	e.Key = k.String()
	raw, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	b, err := json.MarshalIndent(stored{Entry: raw, Checksum: checksum(raw)}, "", " ")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if err := atomicfile.Write(d.Path(k), 0o644, func(f *os.File) error {
		_, err := f.Write(append(b, '\n'))
		return err
	}); err != nil {
		return err
	}
	// The entries of earlier versions for this key are replaced. They are
	// never read (their keys differ), so one that cannot be removed is
	// only wasted space.
	for v := 1; v < version; v++ {
		_ = os.Remove(filepath.Join(d.path, k.file(v)))
	}
	return nil
}

// checksum hashes the compact form of a JSON value, so that re-indenting
// the file does not change it.
func checksum(b []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return "invalid JSON"
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}
