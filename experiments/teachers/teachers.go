// Package teachers trains an ensemble of K teachers on a two-class
// training set (privately with DP-SGD, or with plain SGD), each on its
// share of the data or all on the whole set, saves and loads it in a
// versioned, checksummed file with its id and each teacher's guarantee,
// and collects its votes, as a vote file with the metadata header that
// states them (votefile.Meta). PATE's ensembles of non-private
// teachers voting among C classes train on disjoint shares of a C-class
// image set (CachedClasses), and keep their votes on the public queries
// with them, written as a counts file (WriteCounts).
//
// It serves the thesis' experiments, which darrm's command runs, and is no
// part of darrm's library API: Go lets another module import it, but its
// names change with the experiments, without notice (docs/design.md,
// "Packages and layering").
//
// Disjoint shares are cut by a keyed hash of each record (Share): a
// record's teacher depends on that record and the key alone, so adding or
// removing a record changes one teacher's share and no other's, and the
// ensemble of (ε, Δ)-DP teachers is (ε, Δ)-DP for add/remove neighbours
// (parallel composition). A substitution is a removal and an addition,
// which may touch two teachers.
package teachers

import (
	"context"
	"crypto/hmac"
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
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"sync"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/dpsgd"
	"github.com/darrm/darrm/experiments/nn"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Version is the version of the ensemble file format. Version 2 added the
// ensemble's metadata (Ensemble.Meta); version 3 the setting, the
// partition (rule and key) and each share's size. A file of another
// version is not read (Cached retrains).
const Version = 3

// Partition is how an ensemble's training data were split: the rule
// (provenance.KeyedHash for disjoint shares, provenance.SharedData for shared
// data, the names vote-file headers use) and, for the keyed hash, the key (hex),
// stored so that the same records go to the same teachers when the data
// change and the teachers are retrained.
type Partition struct {
	Rule provenance.Partition `json:"rule"`
	Key  string               `json:"key,omitempty"`
}

// Share returns the teacher, in [0, k), of the record whose identity is
// id: the first 8 bytes of HMAC-SHA256(key, id), as a big-endian integer
// h, mapped to floor(h·k/2^64). It depends on the record and the key alone.
func Share(key, id []byte, k int) int {
	m := hmac.New(sha256.New, key)
	m.Write(id)
	hi, _ := bits.Mul64(binary.BigEndian.Uint64(m.Sum(nil)), uint64(k))
	return int(hi)
}

// RecordID returns the identity of record i of d that Share hashes: its
// label and its features, as IEEE 754 bits, little-endian. Two records
// with the same content have the same identity.
func RecordID(d *datasets.Dataset, i int) []byte {
	id := make([]byte, 0, 8*(d.D+1))
	id = binary.LittleEndian.AppendUint64(id, math.Float64bits(d.Y[i]))
	for _, v := range d.Row(i) {
		id = binary.LittleEndian.AppendUint64(id, math.Float64bits(v))
	}
	return id
}

// recordShares returns the records of d in each of k shares cut by Share with
// key, each in d's order (sharesOf).
func recordShares(ctx context.Context, key []byte, d *datasets.Dataset, k int) ([][]int, error) {
	return sharesOf(ctx, key, d.Len(), func(i int) []byte { return RecordID(d, i) }, k)
}

// sharesOf returns the records 0..n-1 in each of k shares cut by Share
// with key, record i's identity being id(i), each in order; ctx's error
// once ctx is done (hashing sixty thousand images takes a second).
func sharesOf(ctx context.Context, key []byte, n int, id func(i int) []byte, k int) ([][]int, error) {
	out := make([][]int, k)
	for i := range n {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		t := Share(key, id(i), k)
		out[t] = append(out[t], i)
	}
	return out, nil
}

// ImageID returns the identity of image i of im: RecordID of the image as
// a Dataset row (its label and its pixels scaled to [0, 1]), so an image
// has the same share whichever form it is read in.
func ImageID(im *datasets.Images, i int) []byte {
	return RecordID(im.Dataset([]int{i}), 0)
}

// Config is how an ensemble is trained.
type Config struct {
	Dataset string `json:"dataset"`
	K       int    `json:"K"`
	Filters int    `json:"filters"`
	Private bool   `json:"private"`
	// Setting is how the teachers' training data relate:
	// accountant.Disjoint gives each teacher its share, cut by a keyed
	// hash of each record (Share), the thesis' setting (Section 3.7.2) and
	// PATE's; accountant.Shared trains every teacher on the whole training
	// set, each with its own randomness (Problem 3.1.1's K mechanisms of
	// one dataset).
	Setting accountant.Shares `json:"setting"`
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
	// it every teacher's randomness and the partition key come from
	// crypto/rand.
	Seed *uint64 `json:"seed,omitempty"`
	// Classes is 0 for two-class teachers (one logit each); C >= 2 for
	// PATE's teachers, a softmax over C classes (trainClasses), which are
	// non-private, on disjoint shares, and keep their votes on the first
	// Queries test images.
	Classes int `json:"classes,omitempty"`
	Queries int `json:"queries,omitempty"`
	// Progress, if set, hears how many of the K teachers are trained:
	// 0 when the training starts, then after each one. It is not part of
	// the configuration: Key ignores it.
	Progress func(done, total int) `json:"-"`
}

// withoutHooks returns c without Progress, as an ensemble records it.
func (c Config) withoutHooks() Config {
	c.Progress = nil
	return c
}

// Key identifies the configuration, for caching.
func (c Config) Key() string {
	b, _ := json.Marshal(c)
	s := sha256.Sum256(b)
	return c.Dataset + "-" + hex.EncodeToString(s[:8])
}

// maxTeachers bounds K, the teachers a Config trains: each is a network
// and a share of the training set, sized before any is trained.
const maxTeachers = 1 << 16

// Validate checks the configuration: a value out of its range is a
// parameter error that names its field (K, epochs, batch, lr).
func (c Config) Validate() error {
	if c.K > maxTeachers {
		return fmt.Errorf("teachers: %w", &param.Error{Name: "K", Value: c.K, Rule: fmt.Sprintf("must be at most %d (each teacher is a network trained on its own share)", maxTeachers)})
	}
	if c.Classes != 0 {
		switch {
		case c.Classes < 2 || c.Classes > 256:
			return fmt.Errorf("teachers: %d classes: must be in [2, 256] (or 0 for two-class teachers)", c.Classes)
		case c.Private || c.Setting != accountant.Disjoint:
			return fmt.Errorf("teachers: %d-class teachers are PATE's: non-private, on disjoint shares (GNMax's one-vote relation)", c.Classes)
		case c.K < 1:
			return fmt.Errorf("teachers: %w", &param.Error{Name: "K", Value: c.K, Rule: "must be >= 1"})
		case c.Queries < 1:
			return fmt.Errorf("teachers: %d queries: the teachers' votes are kept on >= 1 public images", c.Queries)
		}
	} else if c.Queries != 0 {
		return fmt.Errorf("teachers: two-class teachers keep no votes (queries = %d)", c.Queries)
	} else if c.K < 1 || c.K%2 == 0 {
		return fmt.Errorf("teachers: K = %d: must be odd and >= 1", c.K)
	}
	if c.Filters < 1 {
		return fmt.Errorf("teachers: %d filters: must be >= 1", c.Filters)
	}
	if c.Setting != accountant.Disjoint && c.Setting != accountant.Shared {
		return fmt.Errorf("teachers: setting %v: must be disjoint or shared", c.Setting)
	}
	if !c.Private && c.Setting == accountant.Shared {
		return fmt.Errorf("teachers: non-private teachers on shared data: a record would change every vote, and no guarantee applies")
	}
	// A non-private teacher's SGD run (a private one's is DP's).
	sgd := func(name string, v float64, rule string) error {
		return fmt.Errorf("teachers: SGD: %w", &param.Error{Name: name, Value: v, Rule: rule})
	}
	switch {
	case c.Private:
	case c.Epochs < 1:
		return sgd("epochs", float64(c.Epochs), "must be >= 1")
	case c.Batch < 1:
		return sgd("batch", float64(c.Batch), "must be >= 1")
	case !(c.LR > 0):
		return sgd("lr", c.LR, "must be > 0")
	}
	if c.Private && !(c.Delta > 0 && c.Delta < 1) {
		return fmt.Errorf("teachers: Delta = %v: a private teacher's guarantee needs Delta in (0, 1)", c.Delta)
	}
	return nil
}

// partition is the rule that splits the training set in setting s.
func partition(s accountant.Shares) provenance.Partition {
	if s == accountant.Shared {
		return provenance.SharedData
	}
	return provenance.KeyedHash
}

// meta returns the metadata header of teachers trained with c whose
// parameters are params: an id from their SHA-256, and each teacher's
// guarantee as the accountant computes it from the DP-SGD run, or none for
// SGD teachers (who are private only in the one-vote relation, for GNMax).
func (c Config) meta(params [][]float64) (*votefile.Meta, error) {
	b := provenance.Binding{Ensemble: c.id(params), Teachers: provenance.Teachers{K: c.K, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: partition(c.Setting)}}
	var groups []votefile.TeacherGroup // none: non-private teachers
	if c.Private {
		g, err := c.run().Teachers(c.K)
		if err != nil {
			return nil, fmt.Errorf("teachers: guarantee: %w", err)
		}
		groups, b.Relation = append(groups, g), accountant.PrivateTeachers
	}
	m := b.Header(max(2, c.Classes), votefile.LayoutVotes, groups...)
	if err := m.Validate(); err != nil {
		return nil, err
	}
	_, err := provenance.Check(m, provenance.Stated{})
	return m, err
}

// id returns the id of the ensemble trained with c whose parameters are
// params: the data set, K and the first 8 bytes of a SHA-256, that of
// the parameters (the same models, the same id) when their training drew
// its randomness from crypto/rand, which no one can replay. A seeded
// ensemble's parameters are a function of the private training data and
// the seed, so the hash of them, which every vote and label file states,
// would let whoever knows the seed test a guess of the data by training
// again: its id hashes its configuration instead (Key: the seed and every
// setting of the training, the same models again).
func (c Config) id(params [][]float64) string {
	if c.Seed != nil {
		s := sha256.Sum256([]byte("darrm-ensemble " + c.Key()))
		return fmt.Sprintf("%s-k%d-%s", c.Dataset, c.K, hex.EncodeToString(s[:8]))
	}
	h := sha256.New()
	var b [8]byte
	for _, p := range params {
		for _, v := range p {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	return fmt.Sprintf("%s-k%d-%s", c.Dataset, c.K, hex.EncodeToString(h.Sum(nil)[:8]))
}

// run returns the DP-SGD run of each private teacher of c.
func (c Config) run() *provenance.DPSGDRun {
	return &provenance.DPSGDRun{SGM: accountant.SGM{Q: c.DP.Rate, Sigma: c.DP.Sigma, Steps: c.DP.Steps()}, Conversion: c.Conversion, Delta: c.Delta}
}

// checkMeta checks the metadata header that e's votes are written with
// against what e states of itself (provenance.Check, the check of every
// release): the id of its parameters, K, the classes, the relation
// (private-teachers for DP-SGD teachers, one-vote for SGD ones), the kind
// (fixed models), the partition it was trained on, and each teacher's
// guarantee as the accountant computes it from its DP-SGD run, or none.
func (e *Ensemble) checkMeta() error {
	if e.Meta == nil {
		return fmt.Errorf("teachers: the ensemble has no metadata header (Train, CachedClasses and Load record it)")
	}
	c := e.Config
	rel := accountant.OneVote
	s := provenance.Stated{By: "the ensemble's training", Ensemble: c.id(e.Params), K: len(e.Params), Classes: max(2, c.Classes),
		Relation: &rel, Kind: provenance.Fixed, Partition: e.Partition.Rule, NonPrivate: !c.Private}
	if c.Private {
		g, err := c.run().Guarantee()
		if err != nil {
			return fmt.Errorf("teachers: guarantee: %w", err)
		}
		rel, s.Eps, s.Delta = accountant.PrivateTeachers, &g.Eps, &g.Delta
	}
	_, err := provenance.Check(e.Meta, s)
	return err
}

// Ensemble is K trained teachers.
type Ensemble struct {
	Config Config `json:"config"`
	// Params holds each teacher's network parameters.
	Params [][]float64 `json:"params"`
	// Accuracy is each teacher's accuracy on the test set.
	Accuracy []float64 `json:"accuracy"`
	// Partition is how the training set was split, and ShareSizes the
	// number of training records of each teacher.
	Partition  Partition `json:"partition"`
	ShareSizes []int     `json:"share_sizes"`
	// Meta is the ensemble's metadata header: its id (Config.id), each
	// teacher's guarantee and how it was obtained, and the partition
	// rule.
	Meta *votefile.Meta `json:"meta"`
	// QueryVotes holds, for C-class teachers, each teacher's class on
	// each of the first Config.Queries test images (Accuracy is theirs);
	// nil for two-class teachers, whose votes Votes computes.
	QueryVotes [][]byte `json:"votes,omitempty"`
}

// Train trains cfg.K teachers on b.Train, in parallel: on disjoint shares,
// teacher i on share i of recordShares with a key drawn from crypto/rand (or,
// with a seed, derived from it); on shared data, every teacher on all of
// it.
// Each teacher draws its randomness from its own stream.
func Train(ctx context.Context, b *datasets.Binary, cfg Config) (*Ensemble, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Ensemble{Config: cfg.withoutHooks(), Params: make([][]float64, cfg.K), Accuracy: make([]float64, cfg.K), ShareSizes: make([]int, cfg.K)}
	data := make([]*datasets.Dataset, cfg.K)
	switch cfg.Setting {
	case accountant.Shared:
		e.Partition = Partition{Rule: provenance.SharedData}
		for i := range data {
			data[i] = b.Train
		}
	case accountant.Disjoint:
		key, err := partitionKey(cfg.Seed)
		if err != nil {
			return nil, err
		}
		e.Partition = Partition{Rule: provenance.KeyedHash, Key: hex.EncodeToString(key)}
		shares, err := recordShares(ctx, key, b.Train, cfg.K)
		if err != nil {
			return nil, err
		}
		for i, idx := range shares {
			if len(idx) == 0 {
				return nil, fmt.Errorf("teachers: %w", &param.Error{Name: "K", Value: cfg.K, Rule: fmt.Sprintf("teacher %d has no training images of the %d: too many teachers for the training set", i, b.Train.Len())})
			}
			data[i] = datasets.Subset(b.Train, idx)
		}
	}
	err := trainEach(ctx, cfg, func(i int, r *rand.Rand) error {
		net, err := nn.New(cfg.Filters, r)
		if err != nil {
			return err
		}
		if cfg.Private {
			_, err = dpsgd.Private(ctx, net, data[i], cfg.DP, r)
		} else {
			err = dpsgd.SGD(ctx, net, data[i], cfg.Epochs, cfg.Batch, cfg.LR, r)
		}
		if err != nil {
			return err
		}
		e.Params[i] = net.Params
		e.Accuracy[i] = dpsgd.Accuracy(net, b.Test)
		e.ShareSizes[i] = data[i].Len()
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.Meta, err = cfg.meta(e.Params)
	return e, err
}

// trainEach calls train(i, r) for each of the cfg.K teachers, on every
// core, with r teacher i's own random stream (stream); an error names its
// teacher.
func trainEach(ctx context.Context, cfg Config, train func(i int, r *rand.Rand) error) error {
	errs := make([]error, cfg.K)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	if cfg.Progress != nil {
		cfg.Progress(0, cfg.K)
	}
	for i := range cfg.K {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r, err := stream(cfg.Seed, uint64(i))
			if err == nil {
				err = train(i, r)
			}
			if err != nil {
				errs[i] = fmt.Errorf("teacher %d: %w", i, err)
			}
			if cfg.Progress != nil {
				mu.Lock()
				done++
				cfg.Progress(done, cfg.K)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// trainClasses trains cfg.K non-private C-class teachers (cfg.Classes) on
// disjoint shares of m.Train cut by a keyed hash of each image (Share of
// ImageID, the key from crypto/rand or, with a seed, derived from it), in
// parallel, each with plain SGD on its share, and records each teacher's
// class on the first cfg.Queries images of m.Test and its accuracy on
// them.
func trainClasses(ctx context.Context, m *datasets.MNIST, cfg Config) (*Ensemble, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Classes != m.Classes {
		return nil, fmt.Errorf("teachers: %d classes, but %s has %d", cfg.Classes, m.Name, m.Classes)
	}
	if cfg.Queries > m.Test.Len() {
		return nil, fmt.Errorf("teachers: %d queries, but %s has %d test images", cfg.Queries, m.Name, m.Test.Len())
	}
	key, err := partitionKey(cfg.Seed)
	if err != nil {
		return nil, err
	}
	e := &Ensemble{Config: cfg.withoutHooks(), Params: make([][]float64, cfg.K), Accuracy: make([]float64, cfg.K), ShareSizes: make([]int, cfg.K),
		Partition: Partition{Rule: provenance.KeyedHash, Key: hex.EncodeToString(key)}, QueryVotes: make([][]byte, cfg.K)}
	shares, err := sharesOf(ctx, key, m.Train.Len(), func(i int) []byte { return ImageID(m.Train, i) }, cfg.K)
	if err != nil {
		return nil, err
	}
	for i, idx := range shares {
		if len(idx) == 0 {
			return nil, fmt.Errorf("teachers: %w", &param.Error{Name: "K", Value: cfg.K, Rule: fmt.Sprintf("teacher %d has no training images of the %d: too many teachers for the training set", i, m.Train.Len())})
		}
	}
	queries := m.Test.Dataset(datasets.Range(0, cfg.Queries))
	err = trainEach(ctx, cfg, func(i int, r *rand.Rand) error {
		net, err := nn.NewClasses(cfg.Filters, cfg.Classes, r)
		if err != nil {
			return err
		}
		if err := dpsgd.SGD(ctx, net, m.Train.Dataset(shares[i]), cfg.Epochs, cfg.Batch, cfg.LR, r); err != nil {
			return err
		}
		e.Params[i], e.ShareSizes[i] = net.Params, len(shares[i])
		e.QueryVotes[i] = make([]byte, cfg.Queries)
		ws := net.NewWorkspace()
		right := 0
		for q := range cfg.Queries {
			e.QueryVotes[i][q] = net.Predict(queries.Row(q), ws)
			if float64(e.QueryVotes[i][q]) == queries.Y[q] {
				right++
			}
		}
		e.Accuracy[i] = float64(right) / float64(cfg.Queries)
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.Meta, err = cfg.meta(e.Params)
	return e, err
}

// Counts returns, for C-class teachers, the vote counts of each of their
// queries: row q holds the C counts on test image q.
func (e *Ensemble) Counts() [][]int {
	counts := make([][]int, e.Config.Queries)
	flat := make([]int, e.Config.Queries*e.Config.Classes)
	for q := range counts {
		counts[q] = flat[q*e.Config.Classes : (q+1)*e.Config.Classes]
		for _, v := range e.QueryVotes {
			counts[q][v[q]]++
		}
	}
	return counts
}

// WriteCounts writes the C-class teachers' votes on their queries as a
// counts file (votefile.WriteCounts) with the ensemble's metadata header
// in layout counts, whose ids are the images' indices in the test set. A
// header that contradicts the ensemble (checkMeta) is a
// *provenance.TeachersError, and nothing is written.
func (e *Ensemble) WriteCounts(w io.Writer) error {
	if e.Config.Classes == 0 {
		return fmt.Errorf("teachers: two-class teachers: write their votes with WriteVotes")
	}
	if err := e.checkMeta(); err != nil {
		return err
	}
	meta := *e.Meta
	meta.Layout = votefile.LayoutCounts
	ids := make([]string, e.Config.Queries)
	for q := range ids {
		ids[q] = strconv.Itoa(q)
	}
	return votefile.WriteCounts(w, &meta, ids, e.Counts())
}

// partitionKey returns the key of the keyed-hash partition: 32 bytes from
// crypto/rand, or, for a seeded experiment, the SHA-256 of the seed.
func partitionKey(seed *uint64) ([]byte, error) {
	if seed == nil {
		key := make([]byte, 32)
		if _, err := crand.Read(key); err != nil {
			return nil, fmt.Errorf("teachers: crypto/rand: %w", err)
		}
		return key, nil
	}
	s := sha256.Sum256(binary.LittleEndian.AppendUint64([]byte("darrm-partition"), *seed))
	return s[:], nil
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
// (votefile.WriteVotes) with the ensemble's metadata header, whose ids are
// the images' indices in x. A header that contradicts the ensemble
// (checkMeta) is a *provenance.TeachersError, and nothing is written.
func (e *Ensemble) WriteVotes(w io.Writer, x *datasets.Dataset) error {
	if err := e.checkMeta(); err != nil {
		return err
	}
	votes := e.Votes(x)
	ids := make([]string, len(votes))
	for q := range ids {
		ids[q] = strconv.Itoa(q)
	}
	return votefile.WriteVotes(w, e.Meta, ids, votes)
}

// stored is the file: the ensemble's JSON and its SHA-256.
type stored struct {
	Version  int             `json:"version"`
	Ensemble json.RawMessage `json:"ensemble"`
	SHA256   string          `json:"sha256"`
}

// Save writes e to path atomically, readable by its owner alone: the
// teachers' parameters, their votes and the partition key are of the
// private training data.
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
	return atomicfile.Write(path, 0o600, func(f *os.File) error {
		_, err := f.Write(b)
		return err
	})
}

// maxFileBytes bounds the file of an ensemble of configuration c: each
// teacher's parameters at 32 bytes a number, and room for the rest. Load
// reads no more than that of a file.
func maxFileBytes(c Config) int64 {
	params := nn.NumParams(max(c.Filters, 0))
	if c.Classes > 0 {
		params = nn.NumParamsClasses(max(c.Filters, 0), c.Classes)
	}
	return 1<<20 + int64(max(c.K, 0))*(int64(params+8)*32+int64(max(c.Queries, 0))*2)
}

// ErrNotFound is returned by Load when there is no file.
var ErrNotFound = errors.New("teachers: no saved ensemble")

// CorruptError reports a saved ensemble that cannot be used.
type CorruptError struct {
	Path, Reason string
}

// Error names the file and why it cannot be used.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("teachers file %s: %s", e.Path, e.Reason)
}

// Load reads the ensemble saved at path and checks that it was trained
// with want: a different version, checksum, configuration, partition,
// shape, or an id and guarantee other than those of its parameters and
// training (recomputed) is a *CorruptError.
func Load(path string, want Config) (*Ensemble, error) {
	corrupt := func(format string, args ...any) error {
		return &CorruptError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	b, err := atomicfile.ReadFile(path, maxFileBytes(want))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, ErrNotFound
	case errors.Is(err, atomicfile.ErrNotRegular), errors.Is(err, atomicfile.ErrTooLarge):
		return nil, corrupt("%v", errors.Unwrap(err))
	case err != nil:
		return nil, err
	}
	var s stored
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, corrupt("not JSON: %v", param.CutJSON(err))
	}
	if s.Version != Version {
		return nil, corrupt("version %d, want %d", s.Version, Version)
	}
	if sum := sha256.Sum256(s.Ensemble); hex.EncodeToString(sum[:]) != s.SHA256 {
		return nil, corrupt("the checksum does not match the content")
	}
	var e Ensemble
	if err := json.Unmarshal(s.Ensemble, &e); err != nil {
		return nil, corrupt("%v", param.CutJSON(err))
	}
	if e.Config.Key() != want.Key() {
		return nil, corrupt("trained with another configuration (%s, want %s)", e.Config.Key(), want.Key())
	}
	if len(e.Params) != want.K || len(e.Accuracy) != want.K || len(e.ShareSizes) != want.K {
		return nil, corrupt("%d teachers, want %d", len(e.Params), want.K)
	}
	if wantRule := partition(want.Setting); e.Partition.Rule != wantRule {
		return nil, corrupt("partition %v, want %v", e.Partition.Rule, wantRule)
	}
	if _, err := hex.DecodeString(e.Partition.Key); err != nil || (e.Partition.Rule == provenance.KeyedHash) != (e.Partition.Key != "") {
		return nil, corrupt("partition key %s", param.Quote(e.Partition.Key))
	}
	n := nn.NumParams(want.Filters)
	if want.Classes > 0 {
		n = nn.NumParamsClasses(want.Filters, want.Classes)
	}
	for i, p := range e.Params {
		if len(p) != n {
			return nil, corrupt("teacher %d has %d parameters, want %d", i, len(p), n)
		}
	}
	if want.Classes == 0 && e.QueryVotes != nil {
		return nil, corrupt("two-class teachers with recorded votes")
	}
	if want.Classes > 0 {
		if len(e.QueryVotes) != want.K {
			return nil, corrupt("votes of %d teachers, want %d", len(e.QueryVotes), want.K)
		}
		for i, v := range e.QueryVotes {
			if len(v) != want.Queries {
				return nil, corrupt("teacher %d has %d votes, want %d", i, len(v), want.Queries)
			}
			for _, c := range v {
				if int(c) >= want.Classes {
					return nil, corrupt("teacher %d votes for class %d of %d", i, c, want.Classes)
				}
			}
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
	return cachedOr(dir, cfg, note, func() (*Ensemble, error) { return Train(ctx, b, cfg) })
}

// CachedClasses is Cached for C-class teachers, trained non-privately on
// disjoint shares of m.Train cut by a keyed hash of each image.
func CachedClasses(ctx context.Context, dir string, m *datasets.MNIST, cfg Config, note func(string)) (e *Ensemble, cached bool, err error) {
	return cachedOr(dir, cfg, note, func() (*Ensemble, error) { return trainClasses(ctx, m, cfg) })
}

// cachedOr loads the ensemble of cfg from dir, or trains it with train and
// saves it there.
func cachedOr(dir string, cfg Config, note func(string), train func() (*Ensemble, error)) (e *Ensemble, cached bool, err error) {
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
	if e, err = train(); err != nil {
		return nil, false, err
	}
	if dir != "" {
		err := os.MkdirAll(dir, 0o700)
		if err == nil {
			err = e.Save(path)
		}
		if err != nil {
			say("warning: teachers not cached: %v", err)
		}
	}
	return e, false, nil
}
