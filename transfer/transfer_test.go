package transfer

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/datasets"
	"github.com/darrm/darrm/dpsgd"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/teachers"
)

// TestRunSynthetic runs the protocol on generated images with K = 11
// small teachers; γ_Sub stands in for γ_opt (this package has no solver).
func TestRunSynthetic(t *testing.T) {
	b := datasets.SyntheticBinary(550, 120, 3)
	seed := uint64(5)
	priv, pub := TeacherConfigs("synthetic", 50, &seed)
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
	sub := func(_ context.Context, p constraints.Params) (gamma.Gamma, error) { return gamma.Sub(p.K, int(p.M)) }
	res, err := Run(ctx, b.Test, tt, Params{M: 3, Queries: []int{20, 50}, Redraws: 4, Seed: 1}, sub)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2*len(Mechanisms) {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if r.AccuracyMean < 0 || r.AccuracyMean > 1 || r.QueryEps != 0.30000000000000004 && r.QueryEps != 0.3 {
			t.Errorf("%+v", r)
		}
		total, _ := accountant.ComposeGeneral(accountant.Guarantee{Eps: r.QueryEps, Delta: r.QueryDelta}, r.Queries, DeltaPrime)
		if r.TotalEps != total.Eps || r.TotalDelta != total.Delta {
			t.Errorf("%s Q=%d: total (%v, %v), general composition gives %v", r.Mechanism, r.Queries, r.TotalEps, r.TotalDelta, total)
		}
		if (r.Mechanism == "gnmax") != (r.Relation == "one-vote") {
			t.Errorf("%s: relation %s", r.Mechanism, r.Relation)
		}
	}
	if _, err := Run(ctx, b.Test, tt, Params{M: 3, Queries: []int{121}, Redraws: 1}, sub); err == nil {
		t.Error("more queries than the public set accepted")
	}
	if _, err := Run(ctx, b.Test, tt, Params{M: 12, Queries: []int{10}, Redraws: 1}, sub); err == nil {
		t.Error("m > K accepted")
	}
}

// TestTeacherGuarantee checks the thesis' teachers: an expected batch of
// 30 of 1,024 (MNIST) gives ε within 1% of the thesis' 0.0892.
func TestTeacherGuarantee(t *testing.T) {
	priv, _ := TeacherConfigs("mnist58", 11272/K, nil)
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
		{func(p *Params) { p.Queries = []int{20, 101} }, "queries"},
		{func(p *Params) { p.Queries = []int{0} }, "queries"},
	} {
		p := good
		p.Queries = slices.Clone(good.Queries)
		tc.mod(&p)
		var pe *accountant.ParamError
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
		tt, err := TrainTeachers(ctx, tc.dir, b, &seed, func(s string) { notes = append(notes, s) })
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		priv, pub := TeacherConfigs(b.Name, b.Train.Len()/K, &seed)
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
