// Package teachers trains an ensemble of K teachers on disjoint, equal
// shares of a two-class training set (privately with DP-SGD, or with plain
// SGD), saves and loads it in a checksummed file with its id and each
// teacher's guarantee, and collects its votes, as a vote file with the
// metadata header that states them (ensemble.VoteMeta).
package teachers

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"sync"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/datasets"
	"github.com/darrm/darrm/dpsgd"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/nn"
)

// Version is the version of the ensemble file format. Version 2 added the
// ensemble's metadata (Ensemble.Meta).
const Version = 2

// Config is how an ensemble is trained.
type Config struct {
	Dataset string `json:"dataset"`
	K       int    `json:"K"`
	Filters int    `json:"filters"`
	Private bool   `json:"private"`
	// DP is the DP-SGD run of each private teacher.
	DP dpsgd.Config `json:"dp_sgd"`
	// Delta and Conversion state a private teacher's guarantee: the
	// accountant converts its DP-SGD run to (ε, Delta)-DP by Conversion.
	Delta      float64               `json:"Delta,omitempty"`
	Conversion accountant.Conversion `json:"conversion"`
	// Epochs, Batch and LR are the SGD run of each non-private teacher.
	Epochs int     `json:"epochs"`
	Batch  int     `json:"batch"`
	LR     float64 `json:"lr"`
	// Seed, if set, makes training reproducible: an experiment. Without
	// it every teacher's randomness comes from crypto/rand.
	Seed *uint64 `json:"seed,omitempty"`
}

// Key identifies the configuration, for caching.
func (c Config) Key() string {
	b, _ := json.Marshal(c)
	s := sha256.Sum256(b)
	return c.Dataset + "-" + hex.EncodeToString(s[:8])
}

func (c Config) check() error {
	if c.K < 1 || c.K%2 == 0 {
		return fmt.Errorf("teachers: K = %d: must be odd and >= 1", c.K)
	}
	if c.Filters < 1 {
		return fmt.Errorf("teachers: %d filters: must be >= 1", c.Filters)
	}
	if !c.Private && (c.Epochs < 1 || c.Batch < 1 || !(c.LR > 0)) {
		return fmt.Errorf("teachers: SGD with epochs = %d, batch = %d, learning rate = %v: need epochs, batch >= 1 and a rate > 0", c.Epochs, c.Batch, c.LR)
	}
	if c.Private && !(c.Delta > 0 && c.Delta < 1) {
		return fmt.Errorf("teachers: Delta = %v: a private teacher's guarantee needs Delta in (0, 1)", c.Delta)
	}
	return nil
}

// partition is how Train splits the training set: consecutive shares.
const partition = ensemble.FilePosition

// meta returns the metadata header of teachers trained with c whose
// parameters are params: an id from their SHA-256, and each teacher's
// guarantee as the accountant computes it from the DP-SGD run, or none for
// SGD teachers (who are private only in the one-vote relation, for GNMax).
func (c Config) meta(params [][]float64) (*ensemble.VoteMeta, error) {
	h := sha256.New()
	var b [8]byte
	for _, p := range params {
		for _, v := range p {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	m := &ensemble.VoteMeta{
		Ensemble: fmt.Sprintf("%s-k%d-%s", c.Dataset, c.K, hex.EncodeToString(h.Sum(nil)[:8])),
		K:        c.K, Classes: 2, Layout: ensemble.LayoutVotes, Relation: ensemble.OneVote,
		Kind: ensemble.Fixed, Partition: partition,
		Teachers: []ensemble.TeacherGroup{{Count: c.K, Origin: ensemble.NonPrivate}},
	}
	if c.Private {
		run := &ensemble.DPSGDRun{SGM: accountant.SGM{Q: c.DP.Rate, Sigma: c.DP.Sigma, Steps: c.DP.Steps()}, Conversion: c.Conversion, Delta: c.Delta}
		g, err := run.Guarantee()
		if err != nil {
			return nil, fmt.Errorf("teachers: guarantee: %w", err)
		}
		m.Relation = ensemble.PrivateTeachers
		m.Teachers[0] = ensemble.TeacherGroup{Count: c.K, Guarantee: g, Origin: ensemble.FromDPSGD, DPSGD: run}
	}
	return m, m.Validate()
}

// Ensemble is K trained teachers.
type Ensemble struct {
	Config Config `json:"config"`
	// Params holds each teacher's network parameters.
	Params [][]float64 `json:"params"`
	// Accuracy is each teacher's accuracy on the test set.
	Accuracy []float64 `json:"accuracy"`
	// ShareSize is the number of training images of each teacher.
	ShareSize int `json:"share_size"`
	// Meta is the ensemble's metadata header: its id (from the trained
	// parameters), each teacher's guarantee and how it was obtained.
	Meta *ensemble.VoteMeta `json:"meta"`
}

// Train trains cfg.K teachers, teacher i on the i-th of K disjoint equal
// shares of b.Train (the last n mod K images are unused), in parallel.
func Train(ctx context.Context, b *datasets.Binary, cfg Config) (*Ensemble, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	share := b.Train.Len() / cfg.K
	if share < 1 {
		return nil, fmt.Errorf("teachers: %d training images for K = %d teachers", b.Train.Len(), cfg.K)
	}
	e := &Ensemble{Config: cfg, Params: make([][]float64, cfg.K), Accuracy: make([]float64, cfg.K), ShareSize: share}
	errs := make([]error, cfg.K)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range cfg.K {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r, err := stream(cfg.Seed, uint64(i))
			if err != nil {
				errs[i] = err
				return
			}
			d := b.Train.D
			data := &datasets.Dataset{D: d, X: b.Train.X[i*share*d : (i+1)*share*d], Y: b.Train.Y[i*share : (i+1)*share]}
			net, err := nn.New(cfg.Filters, r)
			if err != nil {
				errs[i] = err
				return
			}
			if cfg.Private {
				_, err = dpsgd.Private(ctx, net, data, cfg.DP, r)
			} else {
				err = dpsgd.SGD(ctx, net, data, cfg.Epochs, cfg.Batch, cfg.LR, r)
			}
			if err != nil {
				errs[i] = fmt.Errorf("teacher %d: %w", i, err)
				return
			}
			e.Params[i] = net.Params
			e.Accuracy[i] = dpsgd.Accuracy(net, b.Test)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var err error
	e.Meta, err = cfg.meta(e.Params)
	return e, err
}

// stream returns teacher i's random stream: ChaCha8 keyed by the seed and
// i, or by 32 bytes from crypto/rand.
func stream(seed *uint64, i uint64) (*rand.Rand, error) {
	var key [32]byte
	if seed == nil {
		if _, err := crand.Read(key[:]); err != nil {
			return nil, fmt.Errorf("teachers: crypto/rand: %w", err)
		}
	} else {
		binary.LittleEndian.PutUint64(key[:8], *seed)
		binary.LittleEndian.PutUint64(key[8:16], i)
		copy(key[16:], "darrm-teachers")
	}
	return rand.New(rand.NewChaCha8(key)), nil
}

// Votes returns each teacher's vote (0 or 1) on each image of x: row q
// holds the K votes on image q.
func (e *Ensemble) Votes(x *datasets.Dataset) [][]byte {
	votes := make([][]byte, x.Len())
	flat := make([]byte, x.Len()*e.Config.K)
	for q := range votes {
		votes[q] = flat[q*e.Config.K : (q+1)*e.Config.K]
	}
	var wg sync.WaitGroup
	for t := range e.Config.K {
		wg.Add(1)
		go func() {
			defer wg.Done()
			net := &nn.Net{F: e.Config.Filters, Params: e.Params[t]}
			ws := net.NewWorkspace()
			for q := range votes {
				votes[q][t] = net.Predict(x.Row(q), ws)
			}
		}()
	}
	wg.Wait()
	return votes
}

// WriteVotes writes the teachers' votes on the images of x as a vote file
// (ensemble.WriteVotes) with the ensemble's metadata header, whose ids are
// the images' indices in x.
func (e *Ensemble) WriteVotes(w io.Writer, x *datasets.Dataset) error {
	votes := e.Votes(x)
	ids := make([]string, len(votes))
	for q := range ids {
		ids[q] = strconv.Itoa(q)
	}
	return ensemble.WriteVotes(w, e.Meta, ids, votes)
}

// stored is the file: the ensemble's JSON and its SHA-256.
type stored struct {
	Version  int             `json:"version"`
	Ensemble json.RawMessage `json:"ensemble"`
	SHA256   string          `json:"sha256"`
}

// Save writes e to path atomically.
func (e *Ensemble) Save(path string) error {
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	s := sha256.Sum256(raw)
	b, err := json.Marshal(stored{Version: Version, Ensemble: raw, SHA256: hex.EncodeToString(s[:])})
	if err != nil {
		return err
	}
	return atomicfile.Write(path, 0o644, func(f *os.File) error {
		_, err := f.Write(b)
		return err
	})
}

// ErrNotFound is returned by Load when there is no file.
var ErrNotFound = errors.New("teachers: no saved ensemble")

// CorruptError reports a saved ensemble that cannot be used.
type CorruptError struct {
	Path, Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("teachers file %s: %s", e.Path, e.Reason)
}

// Load reads the ensemble saved at path and checks that it was trained
// with want: a different version, checksum, configuration, shape, or an id
// and guarantee other than those of its parameters and training
// (recomputed) is a *CorruptError.
func Load(path string, want Config) (*Ensemble, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	corrupt := func(format string, args ...any) error {
		return &CorruptError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	var s stored
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, corrupt("not JSON: %v", err)
	}
	if s.Version != Version {
		return nil, corrupt("version %d, want %d", s.Version, Version)
	}
	if sum := sha256.Sum256(s.Ensemble); hex.EncodeToString(sum[:]) != s.SHA256 {
		return nil, corrupt("the checksum does not match the content")
	}
	var e Ensemble
	if err := json.Unmarshal(s.Ensemble, &e); err != nil {
		return nil, corrupt("%v", err)
	}
	if e.Config.Key() != want.Key() {
		return nil, corrupt("trained with another configuration (%s, want %s)", e.Config.Key(), want.Key())
	}
	if len(e.Params) != want.K || len(e.Accuracy) != want.K {
		return nil, corrupt("%d teachers, want %d", len(e.Params), want.K)
	}
	for i, p := range e.Params {
		if len(p) != nn.NumParams(want.Filters) {
			return nil, corrupt("teacher %d has %d parameters, want %d", i, len(p), nn.NumParams(want.Filters))
		}
	}
	meta, err := want.meta(e.Params)
	if err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(e.Meta, meta) {
		return nil, corrupt("the recorded id and guarantee are not those of the teachers and their training")
	}
	return &e, nil
}

// Cached returns the ensemble cfg describes from the folder dir, where it
// is saved as cfg.Key() + ".json", or trains it (Train) and saves it there;
// cached says which. A file that cannot be used (*CorruptError) is
// replaced; a save that fails leaves the trained ensemble usable. note, if
// set, hears of both and of the training. With dir "" nothing is read or
// saved.
func Cached(ctx context.Context, dir string, b *datasets.Binary, cfg Config, note func(string)) (e *Ensemble, cached bool, err error) {
	say := func(format string, args ...any) {
		if note != nil {
			note(fmt.Sprintf(format, args...))
		}
	}
	path := filepath.Join(dir, cfg.Key()+".json")
	if dir != "" {
		e, err := Load(path, cfg)
		var ce *CorruptError
		switch {
		case err == nil:
			return e, true, nil
		case errors.As(err, &ce):
			say("%v; retraining", err)
		case !errors.Is(err, ErrNotFound):
			return nil, false, err
		}
	}
	kind := "non-private"
	if cfg.Private {
		kind = "private"
	}
	say("training %d %s teachers on %s", cfg.K, kind, cfg.Dataset)
	if e, err = Train(ctx, b, cfg); err != nil {
		return nil, false, err
	}
	if dir != "" {
		err := os.MkdirAll(dir, 0o755)
		if err == nil {
			err = e.Save(path)
		}
		if err != nil {
			say("warning: teachers not cached: %v", err)
		}
	}
	return e, false, nil
}
