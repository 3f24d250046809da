package ensemble

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

func TestClassGNMaxLabels(t *testing.T) {
	m := ConfidentGNMax{Sigma2: 1, Noise: noisymax.DiscreteNoise}
	g, err := newClassGNMax(m, 50, 4, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	src := noise.NewSeededSource(1)
	for range 100 {
		l, ans, err := g.Answer(&votefile.Query{Counts: []int{2, 45, 3, 0}}, src)
		if err != nil || !ans || l != 1 {
			t.Fatalf("label %d answered %v err %v, want class 1", l, ans, err)
		}
	}
	// A tie is broken uniformly.
	seen := map[int]int{}
	for range 2000 {
		l, _, _ := g.Answer(&votefile.Query{Counts: []int{25, 25, 0, 0}}, src)
		seen[l]++
	}
	if seen[0] < 800 || seen[1] < 800 || seen[0]+seen[1] != 2000 {
		t.Errorf("tied classes 0 and 1: %v", seen)
	}
	if _, _, err := g.Answer(&votefile.Query{Counts: []int{25, 26, 0, 0}}, src); err == nil {
		t.Error("counts summing to 51 accepted for K = 50")
	}
	if _, _, err := g.Answer(&votefile.Query{Counts: []int{25, 24, 0, 0}}, src); err != nil {
		t.Errorf("counts summing to 49 for K = 50, one teacher abstaining: %v", err)
	}
	c := ConfidentGNMax{Threshold: 40, Sigma1: 1, Sigma2: 1, Noise: noisymax.DiscreteNoise}
	cg, err := newClassGNMax(c, 50, 4, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if _, ans, _ := cg.Answer(&votefile.Query{Counts: []int{20, 20, 10, 0}}, src); ans {
		t.Error("largest count 20 answered at threshold 40 with sigma1 = 1")
	}
	if l, ans, _ := cg.Answer(&votefile.Query{Counts: []int{48, 2, 0, 0}}, src); !ans || l != 0 {
		t.Error("largest count 48 withheld at threshold 40")
	}
	if _, err := newClassGNMax(ConfidentGNMax{Sigma2: 1, Noise: noisymax.ContinuousNoise}, 50, 4, 1e-5); err == nil {
		t.Error("continuous noise accepted for a release")
	}
}

func TestReleaseMulti(t *testing.T) {
	in, err := votefile.Open("v", votefile.Options{In: strings.NewReader("id,a,b,c\nx,10,0,0\ny,4,3,3\n"), Layout: votefile.LayoutCounts})
	if err != nil {
		t.Fatal(err)
	}
	g, err := newClassGNMax(ConfidentGNMax{Threshold: 8, Sigma1: 0.6, Sigma2: 0.6, Noise: noisymax.DiscreteNoise}, 10, 3, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := releaseOut(t, in, g, noise.NewSeededSource(3), -1, ReleaseOptions{Partition: provenance.KeyedHash}, votefile.FormatCSV); !errors.Is(err, errSeededRelease) || out != "" {
		t.Fatalf("seeded release without Experiment: %v, wrote %q", err, out)
	}
	out, res, err := releaseOut(t, in, g, noise.NewSeededSource(3), -1, ReleaseOptions{Experiment: true, Partition: provenance.KeyedHash}, votefile.FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	head := `# {"darrm-labels":1,"mechanism":"confident-gnmax","K":10,"classes":3,"relation":"one-vote","partition":"keyed-hash","threshold":8,"sigma1":0.6,"sigma2":0.6,"noise":"discrete","eps":`
	if !strings.HasPrefix(out, notForRelease+"\n"+head) || labelsOf(out) != "id,label,answered\nx,0,1\ny,,0\n" || res.Released != 2 || res.Withheld != 1 {
		t.Errorf("got %q %+v", out, res)
	}
}

// TestMaxClasses: the aggregators refuse more classes than MaxClasses
// before they allocate anything per class, and take that many.
func TestMaxClasses(t *testing.T) {
	m := ConfidentGNMax{Sigma2: 40, Noise: noisymax.DiscreteNoise}
	for _, c := range []int{votefile.MaxClasses + 1, 4_000_000_000, 9_000_000_000_000_000_000} {
		want := fmt.Sprintf("classes = %d: must be an integer in [2, 524288]", c)
		if _, err := newClassGNMax(m, 3, c, 1e-5); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("gnmax with %d classes: %v", c, err)
		}
		if _, err := newLNMax(20, 3, c); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("lnmax with %d classes: %v", c, err)
		}
	}
	if _, err := newLNMax(20, 3, votefile.MaxClasses); err != nil {
		t.Errorf("lnmax with MaxClasses classes: %v", err)
	}
	// A row of MaxClasses counts fits in a line, one more does not.
	row := strings.Repeat("0,", votefile.MaxClasses-1) + "3\n"
	r, err := votefile.Open("v.csv", votefile.Options{In: strings.NewReader(row), Layout: votefile.LayoutCounts})
	if err != nil || !r.Next() || r.Classes() != votefile.MaxClasses {
		t.Errorf("a row of %d counts: %v", votefile.MaxClasses, err)
	}
	if _, err := votefile.Open("v.csv", votefile.Options{In: strings.NewReader("0," + row), Layout: votefile.LayoutCounts}); err == nil {
		t.Errorf("a row of %d counts was read", votefile.MaxClasses+1)
	}
}

// TestClassGNMaxBit: on two classes GNMax's label is one bit, described by
// its pairs of output probabilities (noisymax.GNMaxBitPairs) beside its
// noise, and the sampler draws it with those probabilities
// (noisymax.GNMaxBitProbs: label frequencies at every vote count (K - l, l)
// within 5 standard deviations, at a σ where ties are frequent); its exact
// total over 20 queries is below its noise's. Three classes, or the
// threshold step, keep the noise.
func TestClassGNMaxBit(t *testing.T) {
	const n = 2000
	for _, c := range []struct {
		k     int
		sigma float64
	}{{3, 0.8}, {11, 4.6}} {
		m := ConfidentGNMax{Sigma2: c.sigma, Noise: noisymax.DiscreteNoise}
		g, err := newClassGNMax(m, c.k, 2, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		curve := g.Privacy().Spend
		want, err := noisymax.GNMaxBitPairs(c.sigma, c.k, noisymax.DiscreteNoise)
		if err != nil {
			t.Fatal(err)
		}
		if curve.Kind != accountant.OneBitSpend || !slices.Equal(curve.Bits, want) || len(curve.Gaussian) != 1 || !curve.Discrete {
			t.Fatalf("%+v: curve %+v", c, curve)
		}
		if c.k > 3 {
			continue
		}
		probs, err := noisymax.GNMaxBitProbs(c.sigma, c.k, noisymax.DiscreteNoise)
		if err != nil {
			t.Fatal(err)
		}
		src := noise.NewSeededSource(5)
		for l := range c.k + 1 {
			ones := 0
			for range n {
				label, _, err := g.Answer(&votefile.Query{Counts: []int{c.k - l, l}}, src)
				if err != nil {
					t.Fatal(err)
				}
				ones += label
			}
			p := probs[l]
			if f := float64(ones) / n; math.Abs(f-p) > 5*math.Sqrt(p*(1-p)/n)+1e-9 {
				t.Errorf("%+v, l = %d: label 1 in %v of %d draws, Pr %v", c, l, f, n, p)
			}
		}
	}
	const k, sigma = 11, 4.6
	m := ConfidentGNMax{Sigma2: sigma, Noise: noisymax.DiscreteNoise}
	g, err := newClassGNMax(m, k, 2, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	bit, err := accountant.ComposeRun(testMemo, g.Privacy().Spend, 20, 1e-5, 1e-5, accountant.ImprovedConversion)
	if err != nil {
		t.Fatal(err)
	}
	gauss := g.Privacy().Spend
	gauss.Kind, gauss.Bits = accountant.GaussianSpend, nil
	noiseTotals, err := accountant.ComposeRun(testMemo, gauss, 20, 1e-5, 1e-5, accountant.ImprovedConversion)
	if err != nil {
		t.Fatal(err)
	}
	if b, n := bit[len(bit)-1], noiseTotals[len(noiseTotals)-1]; b.Method != accountant.Exact || n.Method != accountant.Exact || b.Guarantee.Eps >= n.Guarantee.Eps {
		t.Errorf("20 queries: the bit's total %v, the noise's %v", b, n)
	}
	for _, c := range []struct {
		m       ConfidentGNMax
		classes int
	}{{m, 3}, {ConfidentGNMax{Threshold: 8, Sigma1: 3, Sigma2: sigma, Noise: noisymax.DiscreteNoise}, 2}} {
		g, err := newClassGNMax(c.m, k, c.classes, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if kind := g.Privacy().Spend.Kind; kind != accountant.GaussianSpend {
			t.Errorf("%v over %d classes: curve %v", g.Name(), c.classes, kind)
		}
	}
}

// TestRunSlope: the slope of a run of Q threshold steps and N label steps
// is N/σ2² + Q/(2σ1²), rounded up (GNMax: N/σ2²); one step of each is
// one query's, the slope a release charges; negative counts are refused.
func TestRunSlope(t *testing.T) {
	cg := ConfidentGNMax{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}
	g := ConfidentGNMax{Sigma2: 40, Noise: noisymax.DiscreteNoise}
	for _, tc := range []struct {
		m               ConfidentGNMax
		queries, labels int
		want            float64
	}{
		{cg, 5000, 286, 286/1600.0 + 5000/45000.0},
		{cg, 194, 194, 194/1600.0 + 194/45000.0},
		{cg, 10, 0, 10 / 45000.0},
		{cg, 1, 1, 1/1600.0 + 1/45000.0},
		{g, 5000, 300, 300 / 1600.0},
	} {
		got, err := tc.m.RunSlope(tc.queries, tc.labels)
		if err != nil || got < tc.want || got > tc.want*(1+1e-14) {
			t.Errorf("%+v, %d, %d: %v (%v), want %v rounded up", tc.m, tc.queries, tc.labels, got, err, tc.want)
		}
	}
	if _, err := cg.RunSlope(-1, 0); err == nil {
		t.Error("-1 queries accepted")
	}
	if _, err := (ConfidentGNMax{Sigma2: 40}).RunSlope(1, 1); err == nil {
		t.Error("unset noise accepted")
	}
}

// TestValidateFor: the steps are checked as set (an unset noise is
// refused), GNMax's settings (sigma1 = 0) take no threshold, and for K
// teachers a threshold step's threshold is in [0, K + 10·sigma1]; K = 0,
// not known yet, checks the steps alone. Validate, the mechanism's own
// check, refuses GNMax's settings and needs its delta.
func TestValidateFor(t *testing.T) {
	d := noisymax.DiscreteNoise
	for _, tc := range []struct {
		m        ConfidentGNMax
		teachers int
		bad      string // a word of the error, "" for none
	}{
		{ConfidentGNMax{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: d}, 250, ""},
		{ConfidentGNMax{Threshold: 1750, Sigma1: 150, Sigma2: 40, Noise: d}, 250, ""},
		{ConfidentGNMax{Threshold: 1751, Sigma1: 150, Sigma2: 40, Noise: d}, 250, "K + 10·sigma1"},
		{ConfidentGNMax{Threshold: -1, Sigma1: 150, Sigma2: 40, Noise: d}, 250, "threshold"},
		{ConfidentGNMax{Threshold: 1751, Sigma1: 150, Sigma2: 40, Noise: d}, 0, ""},
		{ConfidentGNMax{Sigma2: 40, Noise: d}, 250, ""},
		{ConfidentGNMax{Threshold: 5, Sigma2: 40, Noise: d}, 250, "needs sigma1"},
		{ConfidentGNMax{Threshold: 200, Sigma1: 150, Sigma2: 40}, 250, "noise"},
		{ConfidentGNMax{Threshold: 200, Sigma1: 0.1, Sigma2: 40, Noise: d}, 250, "sigma1"},
		{ConfidentGNMax{Threshold: 200, Sigma1: 0.1, Sigma2: 40, Noise: noisymax.ContinuousNoise}, 250, ""},
	} {
		err := tc.m.ValidateFor(tc.teachers)
		if (err != nil) != (tc.bad != "") || err != nil && !strings.Contains(err.Error(), tc.bad) {
			t.Errorf("%+v for K = %d: %v, want an error with %q", tc.m, tc.teachers, err, tc.bad)
		}
	}
	gnmax := ConfidentGNMax{Sigma2: 40, Delta: 1e-5}
	if err := gnmax.Validate(); err == nil || !strings.Contains(err.Error(), "sigma1") {
		t.Errorf("GNMax's settings as a mechanism: %v, want sigma1 refused", err)
	}
	if err := (ConfidentGNMax{Threshold: 200, Sigma1: 150, Sigma2: 40}).Validate(); err == nil || !strings.Contains(err.Error(), "delta") {
		t.Errorf("no delta: %v, want delta refused", err)
	}
	if err := (ConfidentGNMax{Threshold: 200, Sigma1: 150, Sigma2: 40, Delta: 1e-5}).Validate(); err != nil {
		t.Errorf("a zero noise is the discrete noise releases draw: %v", err)
	}
}
