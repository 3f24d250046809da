package transfer

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/dpsgd"
	"github.com/darrm/darrm/experiments/teachers"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/votefile"
)

// synthetic holds the generated images of TestRunSynthetic and
// TestRunEqual and the teachers trainSynthetic trained on them, by
// setting: both tests ask for the disjoint ones, the same seed on the same
// images, which a second training would give again bit for bit.
var synthetic struct {
	once    sync.Once
	b       *datasets.Binary
	mu      sync.Mutex
	trained map[accountant.Shares]*Teachers
}

// syntheticImages returns the generated images of TestRunSynthetic and
// TestRunEqual, made once.
func syntheticImages() *datasets.Binary {
	synthetic.once.Do(func() { synthetic.b = datasets.SyntheticBinary(550, 120, 3) })
	return synthetic.b
}

// trainSynthetic returns K = 11 small private teachers in setting and
// non-private ones trained on syntheticImages, trained at the first call.
func trainSynthetic(t *testing.T, setting accountant.Shares) *Teachers {
	t.Helper()
	synthetic.mu.Lock()
	defer synthetic.mu.Unlock()
	if tt := synthetic.trained[setting]; tt != nil {
		return tt
	}
	b := syntheticImages()
	seed := uint64(5)
	priv, pub := Thesis(setting).Configs("synthetic", b.Train.Len(), &seed)
	priv.Filters, pub.Filters = 2, 2
	priv.DP = dpsgd.Config{Epochs: 3, Rate: 0.2, Clip: 1, Sigma: 1, LR: 0.2}
	ctx := context.Background()
	pe, err := teachers.Train(ctx, b, priv)
	if err != nil {
		t.Fatal(err)
	}
	ne, err := teachers.Train(ctx, b, pub)
	if err != nil {
		t.Fatal(err)
	}
	tt := &Teachers{Private: pe, NonPrivate: ne, Guarantee: accountant.Guarantee{Eps: 0.1, Delta: TeacherDelta}}
	if synthetic.trained == nil {
		synthetic.trained = map[accountant.Shares]*Teachers{}
	}
	synthetic.trained[setting] = tt
	return tt
}

// TestRunSynthetic runs the protocol on generated images with K = 11
// small teachers in both settings, γ_opt solved without a cache (at K =
// 11 in a fraction of a second; the one-vote relation's is the greatest
// private gamma). Each total is the tighter of the composition over the
// queries and the teachers' cap: on disjoint keyed-hash shares the cap is
// the teachers' own guarantee and wins at every Q; on shared data it is
// their 11-fold composition, which the composition of few queries beats.
func TestRunSynthetic(t *testing.T) {
	b := syntheticImages()
	ctx := context.Background()
	var src optimal.Source // gamma_opt solved without a cache
	teacher := accountant.Guarantee{Eps: 0.1, Delta: TeacherDelta}
	sharedCap, _ := accountant.TeacherCap(teacher, K, accountant.Shared, DeltaPrime)
	// Under -short Q 1 and 4 (a total by the queries, then, from the
	// crossover at 4, by the cap on shared data); each further Q composes
	// the one-bit runs afresh (4 by one transform, 20 by five).
	queries := []int{1, 20, 50}
	if testing.Short() {
		queries = []int{1, 4}
	}
	var disjoint *Teachers
	for _, setting := range []accountant.Shares{accountant.Disjoint, accountant.Shared} {
		tt := trainSynthetic(t, setting)
		if setting == accountant.Disjoint {
			disjoint = tt
		}
		out, err := Run(ctx, b.Test, tt, Params{M: 3, Queries: queries, Redraws: 4, Seed: 1, Memo: testMemo}, src)
		if err != nil {
			t.Fatal(err)
		}
		wantCap := sharedCap
		if setting == accountant.Disjoint {
			wantCap = accountant.Cap{Guarantee: teacher}
		}
		if len(out.Results) != len(queries)*len(Mechanisms) || out.Cap == nil || out.Cap.Guarantee != wantCap.Guarantee {
			t.Fatalf("%v: %d results, cap %+v, want %v", setting, len(out.Results), out.Cap, wantCap.Guarantee)
		}
		for _, r := range out.Results {
			perQuery := accountant.Guarantee{Eps: 3 * 0.1, Delta: 3 * TeacherDelta}
			if r.Mechanism == "majority" {
				perQuery = sharedCap.Guarantee // the teachers' 11-fold composition
			}
			if r.AccuracyMean < 0 || r.AccuracyMean > 1 || math.Abs(r.QueryEps-perQuery.Eps) > 1e-12 || math.Abs(r.QueryDelta-perQuery.Delta) > 1e-15 {
				t.Errorf("%v: %+v", setting, r)
			}
			comp, _ := accountant.Composition{Method: accountant.General, DeltaPrime: DeltaPrime}.Compose(accountant.Guarantee{Eps: r.QueryEps, Delta: r.QueryDelta}, r.Queries)
			c := out.Cap
			if nonPrivate(r.Mechanism) {
				c = nil
			}
			if r.CompositionEps != comp.Eps || r.CompositionDelta != comp.Delta {
				t.Errorf("%v %s Q=%d: composition (%v, %v), want %v", setting, r.Mechanism, r.Queries, r.CompositionEps, r.CompositionDelta, comp)
			}
			// The total: the private teachers' labels by the general
			// composition of their guarantee against the cap (the tighter
			// of the two); the non-private teachers' (GNMax,
			// darrm-one-vote) by the exact composition of their pairs, at
			// most optimal composition of their guarantee, below it from
			// Q = 2 on.
			opt, _ := accountant.Composition{Method: accountant.Optimal, DeltaPrime: DeltaPrime}.Compose(accountant.Guarantee{Eps: r.QueryEps, Delta: r.QueryDelta}, r.Queries)
			if total, bound := c.Total(comp); !nonPrivate(r.Mechanism) && (r.TotalEps != total.Eps || r.TotalDelta != total.Delta || r.TotalBound != bound || r.TotalMethod != "general") {
				t.Errorf("%v %s Q=%d: total (%v, %v) by %s (%v); want %v by %v", setting, r.Mechanism, r.Queries, r.TotalEps, r.TotalDelta, r.TotalMethod, r.TotalBound, total, bound)
			}
			if nonPrivate(r.Mechanism) && (r.Queries > 1 && r.TotalMethod != "exact" || r.TotalBound != accountant.QueriesBound || r.TotalDelta != comp.Delta || r.TotalEps > opt.Eps || r.Queries > 1 && !(r.TotalEps < opt.Eps)) {
				t.Errorf("%v %s Q=%d: total (%v, %v) by %s (%v), optimal composition %v", setting, r.Mechanism, r.Queries, r.TotalEps, r.TotalDelta, r.TotalMethod, r.TotalBound, opt)
			}
			if nonPrivate(r.Mechanism) != (r.Relation == "one-vote") {
				t.Errorf("%s: relation %s", r.Mechanism, r.Relation)
			}
			if setting == accountant.Disjoint && c != nil && r.TotalBound != accountant.TeachersBound {
				t.Errorf("disjoint %s Q=%d: total by %v", r.Mechanism, r.Queries, r.TotalBound)
			}
			if c != nil && r.TotalBound != accountant.TeachersBound {
				t.Errorf("%v %s Q=%d: total by %v, want the cap, the only bound of fixed teachers", setting, r.Mechanism, r.Queries, r.TotalBound)
			}
			// The noise pays where the total beats the noise-free
			// majority's: never for the private teachers, fixed models
			// whose only bound is their cap (accountant.Cap; on shared
			// data it paid for the first query while per-query guarantees
			// were composed for them), always for the non-private
			// teachers' mechanisms (no cap), never for the majority (no
			// noise).
			wantPays := nonPrivate(r.Mechanism)
			if r.NoisePays != wantPays {
				t.Errorf("%v %s Q=%d: noise pays %v", setting, r.Mechanism, r.Queries, r.NoisePays)
			}
		}
		if out.SharedCap == nil || out.SharedCap.Guarantee != sharedCap.Guarantee {
			t.Errorf("%v: shared cap %+v, want %v", setting, out.SharedCap, sharedCap.Guarantee)
		}
		// The crossover: the composition up to CapFrom - 1 queries, the cap
		// from CapFrom on.
		for i, c := range out.CapFrom {
			if c.Mechanism != Mechanisms[i] || nonPrivate(c.Mechanism) != (c.CapFrom == 0) {
				t.Errorf("%v: crossover %+v", setting, c)
				continue
			}
			// Up to which Q the noise pays: GNMax always (-1), the majority
			// never (no noise); the others up to the crossover, on these
			// teachers and on shared data, found here by a linear scan.
			wantPays, wantShared := c.CapFrom-1, 0
			for q := 1; q < 100; q++ {
				comp, _ := accountant.Composition{Method: accountant.General, DeltaPrime: DeltaPrime}.Compose(accountant.Guarantee{Eps: 0.30000000000000004, Delta: 3 * TeacherDelta}, q)
				if _, b := sharedCap.Total(comp); b == accountant.QueriesBound {
					wantShared = q
				}
			}
			switch {
			case c.CapFrom == 0:
				wantPays, wantShared = -1, -1
			case c.Mechanism == "majority":
				wantPays, wantShared = 0, 0
			}
			if c.NoisePaysUpTo != wantPays || c.SharedNoisePaysUpTo != wantShared || setting == accountant.Shared && c.NoisePaysUpTo != c.SharedNoisePaysUpTo {
				t.Errorf("%v %s: noise pays up to %d (shared %d), want %d (%d)", setting, c.Mechanism, c.NoisePaysUpTo, c.SharedNoisePaysUpTo, wantPays, wantShared)
			}
			if c.CapFrom == 0 {
				continue
			}
			perQuery := accountant.Guarantee{Eps: 0.30000000000000004, Delta: 3 * TeacherDelta}
			if c.Mechanism == "majority" {
				perQuery = sharedCap.Guarantee
			}
			for q, want := range map[int]accountant.Bound{c.CapFrom - 1: accountant.QueriesBound, c.CapFrom: accountant.TeachersBound, 10 * c.CapFrom: accountant.TeachersBound} {
				if q == 0 {
					continue
				}
				comp, _ := accountant.Composition{Method: accountant.General, DeltaPrime: DeltaPrime}.Compose(perQuery, q)
				if _, got := out.Cap.Total(comp); got != want {
					t.Errorf("%v %s: crossover %d, but at Q = %d the total is by %v", setting, c.Mechanism, c.CapFrom, q, got)
				}
			}
			if c.CapFrom != 1 {
				t.Errorf("%v %s: the cap from Q = %d", setting, c.Mechanism, c.CapFrom)
			}
		}
	}
	if _, err := Run(ctx, b.Test, disjoint, Params{M: 3, Queries: []int{121}, Redraws: 1}, src); err == nil {
		t.Error("more queries than the public set accepted")
	}
	if _, err := Run(ctx, b.Test, disjoint, Params{M: 12, Queries: []int{10}, Redraws: 1}, src); err == nil {
		t.Error("m > K accepted")
	}
}

// TestTeacherGuarantee checks the thesis' teachers: an expected batch of
// 30 of 1,024 (MNIST) gives ε within 1% of the thesis' 0.0892.
func TestTeacherGuarantee(t *testing.T) {
	priv, _ := Thesis(accountant.Disjoint).Configs("mnist58", 11272, nil)
	g, _, err := TeacherGuarantee(priv.DP)
	if err != nil {
		t.Fatal(err)
	}
	if g.Delta != 1e-4 || g.Eps < 0.0892*0.99 || g.Eps > 0.0892*1.01 {
		t.Errorf("teacher guarantee %v, thesis (0.0892, 1e-4)", g)
	}
}

func TestAgree(t *testing.T) {
	a := Agree([][]byte{{1, 1, 1}, {1, 0, 0}})
	if a.Unanimous != 0.5 || math.Abs(a.WithMajority-5.0/6) > 1e-15 {
		t.Errorf("%+v", a)
	}
}

// TestParamsValidate names the field of each bad protocol.
func TestParamsValidate(t *testing.T) {
	good := Params{M: 3, Queries: []int{20, 100}, Redraws: 2}
	if err := good.Validate(100); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mod  func(*Params)
		name string
	}{
		{func(p *Params) { p.M = 0.5 }, "m"},
		{func(p *Params) { p.M = K + 1 }, "m"},
		{func(p *Params) { p.M = math.NaN() }, "m"},
		{func(p *Params) { p.Redraws = 0 }, "redraws"},
		{func(p *Params) { p.Redraws = math.MaxInt }, "redraws"},
		{func(p *Params) { p.Queries = []int{20, 101} }, "queries"},
		{func(p *Params) { p.Queries = []int{0} }, "queries"},
	} {
		p := good
		p.Queries = slices.Clone(good.Queries)
		tc.mod(&p)
		var pe *param.Error
		if err := p.Validate(100); !errors.As(err, &pe) || pe.Name != tc.name {
			t.Errorf("%+v: %v, want a ParamError for %s", p, err, tc.name)
		}
	}
}

// TestTrainTeachers trains both ensembles into a teachers' cache, then
// reads them back, and without a cache trains them again.
func TestTrainTeachers(t *testing.T) {
	b := datasets.SyntheticBinary(11*Batch, 20, 4)
	seed := uint64(2)
	dir := t.TempDir()
	ctx := context.Background()
	var notes []string
	for _, tc := range []struct {
		name   string
		dir    string
		cached bool
	}{{"trained", dir, false}, {"from the cache", dir, true}, {"no cache", "", false}} {
		notes = nil
		tt, err := TrainTeachers(ctx, tc.dir, b, Thesis(accountant.Disjoint), &seed, func(s string) { notes = append(notes, s) })
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		priv, pub := Thesis(accountant.Disjoint).Configs(b.Name, b.PublicTrainSize, &seed)
		g, alpha, _ := TeacherGuarantee(priv.DP)
		if tt.Cached != [2]bool{tc.cached, tc.cached} || tt.Guarantee != g || tt.Alpha != alpha ||
			tt.Private.Config.Key() != priv.Key() || tt.NonPrivate.Config.Key() != pub.Key() {
			t.Errorf("%s: cached %v, guarantee %v at %d, configs %s, %s", tc.name, tt.Cached, tt.Guarantee, tt.Alpha, tt.Private.Config.Key(), tt.NonPrivate.Config.Key())
		}
		if trained := len(notes) == 2 && strings.Contains(notes[0], "private") && strings.Contains(notes[1], "non-private"); trained == tc.cached {
			t.Errorf("%s: notes %q", tc.name, notes)
		}
	}
}

// TestSamplingRateIsPublic: DP-SGD's sampling rate, and with it the
// teachers' guarantee, come from the training set's public size, so that
// datasets that differ by one record get the same mechanism: an expected
// Batch images out of PublicTrainSize/K per step, whatever the number of
// records present.
func TestSamplingRateIsPublic(t *testing.T) {
	b := datasets.SyntheticBinary(11*Batch, 20, 4)
	less := *b
	less.Train = datasets.Subset(b.Train, datasets.Range(0, b.Train.Len()-1))
	seed := uint64(2)
	var rates []float64
	for _, x := range []*datasets.Binary{b, &less} {
		tt, err := TrainTeachers(context.Background(), "", x, Thesis(accountant.Disjoint), &seed, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, _, _ := TeacherGuarantee(tt.Private.Config.DP)
		if tt.Guarantee != g {
			t.Errorf("guarantee %v, the run's %v", tt.Guarantee, g)
		}
		rates = append(rates, tt.Private.Config.DP.Rate)
	}
	if want := float64(Batch) / float64(b.PublicTrainSize/K); rates[0] != want || rates[1] != want {
		t.Errorf("sampling rates %v for %d and %d records, want %v from the public size %d", rates, b.Train.Len(), less.Train.Len(), want, b.PublicTrainSize)
	}
	none := *b
	none.PublicTrainSize = 0
	if _, err := TrainTeachers(context.Background(), "", &none, Thesis(accountant.Disjoint), &seed, nil); err == nil {
		t.Error("a task without a public size trained")
	}
}

// TestMajority: the noise-free majority of an odd number of votes.
func TestMajority(t *testing.T) {
	m, err := newMajority(constraints.Problem{K: 3, M: 1, Eps: 0.1, Delta: 1e-5, TargetDelta: 1e-5}, DeltaPrime)
	if c, _ := accountant.TeacherCap(accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, 3, accountant.Shared, DeltaPrime); err != nil || m.Privacy().Guarantee != c.Guarantee {
		t.Fatalf("majority of 3: %v (%v), want the 3-fold composition %v", m.Privacy().Guarantee, err, c.Guarantee)
	}
	for votes, want := range map[[3]byte]int{{0, 0, 0}: 0, {1, 0, 0}: 0, {1, 0, 1}: 1, {1, 1, 1}: 1} {
		if got, answered, err := m.Answer(&votefile.Query{Votes: votes[:]}, nil); err != nil || got != want || !answered {
			t.Errorf("%v: %v, answered %v (%v), want %v", votes, got, answered, err, want)
		}
	}
	if _, _, err := m.Answer(&votefile.Query{Votes: []byte{1, 0}}, nil); err == nil {
		t.Error("two votes for K = 3 accepted")
	}
}

// TestTuningTasks: four distinct pairs of the classes other than 5 and 8,
// the same on every call and for both sources.
func TestTuningTasks(t *testing.T) {
	m, err := TuningTasks("mnist58")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := TuningTasks("fashion58")
	again, _ := TuningTasks("mnist58")
	if len(m) != TuningPairs || !slices.Equal(m, again) {
		t.Fatalf("tasks %v, then %v", m, again)
	}
	seen := map[string]bool{}
	for i, name := range m {
		pair := strings.TrimPrefix(name, "mnist")
		if len(pair) != 2 || strings.ContainsAny(pair, "58") || pair[0] >= pair[1] || seen[pair] || f[i] != "fashion"+pair {
			t.Errorf("task %q (fashion %q)", name, f[i])
		}
		seen[pair] = true
	}
	if _, err := TuningTasks("mnist39"); err == nil {
		t.Error("a tuning task of a tuning task")
	}
}

// TestTune runs a small grid on generated tasks: every point is tried on
// every task and seed, the choice is the best mean of each stage, and a
// task too small for the shared setting's subsets is an error.
func TestTune(t *testing.T) {
	load := func(name string) (*datasets.Binary, error) {
		b := datasets.SyntheticBinary(700, 60, uint64(len(name)))
		b.Name = name
		return b, nil
	}
	grid := Grid{Filters: []int{1, 2}, LR: []float64{0.01, 0.3}, LRShared: []float64{0.01, 0.1}, LRNonPrivate: []float64{0.1}, Seeds: 2}
	tr := Thesis(accountant.Disjoint)
	tr.K, tr.Epochs = 5, 1
	h, trials, err := Tune(context.Background(), []string{"a", "bb"}, load, "synthetic", 600, tr, grid, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 4+2+1 {
		t.Fatalf("%d trials", len(trials))
	}
	best := map[string]Trial{}
	for _, tr := range trials {
		if len(tr.Accuracy) != 4 || tr.Mean != Mean(tr.Accuracy) {
			t.Errorf("trial %+v", tr)
		}
		if b, ok := best[tr.Stage]; !ok || tr.Mean > b.Mean {
			best[tr.Stage] = tr
		}
		if tr.Stage != "private" && tr.Filters != h.Filters {
			t.Errorf("%s trial at %d filters, chosen %d", tr.Stage, tr.Filters, h.Filters)
		}
	}
	want := Hyper{Filters: best["private"].Filters, LR: best["private"].LR, LRShared: best["shared"].LR, LRNonPrivate: best["nonprivate"].LR}
	if h != want {
		t.Errorf("chose %+v, best %+v", h, want)
	}
	if _, _, err := Tune(context.Background(), []string{"a"}, load, "synthetic", 800, tr, grid, nil); err == nil {
		t.Error("subsets larger than the task accepted")
	}
}

// testMemo is the memo the package's tests share (accountant.Memo): the
// settings' runs of TestRunSynthetic compose the non-private teachers'
// totals alike.
var testMemo = new(accountant.Memo)
