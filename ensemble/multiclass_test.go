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
	m := GNMax{Sigma2: 1, Noise: noisymax.DiscreteNoise}
	g, err := classOf(m, 50, 4, 1e-5)
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
	c := ConfidentGNMax{Threshold: 40, Sigma1: 1, GNMax: GNMax{Sigma2: 1, Noise: noisymax.DiscreteNoise}}
	cg, err := classOf(c, 50, 4, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if _, ans, _ := cg.Answer(&votefile.Query{Counts: []int{20, 20, 10, 0}}, src); ans {
		t.Error("largest count 20 answered at threshold 40 with sigma1 = 1")
	}
	if l, ans, _ := cg.Answer(&votefile.Query{Counts: []int{48, 2, 0, 0}}, src); !ans || l != 0 {
		t.Error("largest count 48 withheld at threshold 40")
	}
	if _, err := classOf(GNMax{Sigma2: 1, Noise: noisymax.ContinuousNoise}, 50, 4, 1e-5); err == nil {
		t.Error("continuous noise accepted for a release")
	}
}

func TestReleaseMulti(t *testing.T) {
	in, err := votefile.Open("v", votefile.Options{In: strings.NewReader("id,a,b,c\nx,10,0,0\ny,4,3,3\n"), Layout: votefile.LayoutCounts})
	if err != nil {
		t.Fatal(err)
	}
	g, err := classOf(ConfidentGNMax{Threshold: 8, Sigma1: 0.6, GNMax: GNMax{Sigma2: 0.6, Noise: noisymax.DiscreteNoise}}, 10, 3, 1e-5)
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
	m := GNMax{Sigma2: 40, Noise: noisymax.DiscreteNoise}
	for _, c := range []int{votefile.MaxClasses + 1, 4_000_000_000, 9_000_000_000_000_000_000} {
		want := fmt.Sprintf("classes = %d: must be an integer in [2, 524288]", c)
		if _, err := classOf(m, 3, c, 1e-5); err == nil || !strings.Contains(err.Error(), want) {
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
		m := GNMax{Sigma2: c.sigma, Noise: noisymax.DiscreteNoise}
		g, err := classOf(m, c.k, 2, 1e-5)
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
	m := GNMax{Sigma2: sigma, Noise: noisymax.DiscreteNoise}
	g, err := classOf(m, k, 2, 1e-5)
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
		m       Mechanism
		classes int
	}{{m, 3}, {ConfidentGNMax{Threshold: 8, Sigma1: 3, GNMax: GNMax{Sigma2: sigma, Noise: noisymax.DiscreteNoise}}, 2}} {
		g, err := classOf(c.m.(interface {
			Mechanism
			Steps() noisymax.Steps
		}), k, c.classes, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if kind := g.Privacy().Spend.Kind; kind != accountant.GaussianSpend {
			t.Errorf("%v over %d classes: curve %v", g.Name(), c.classes, kind)
		}
	}
}

// TestConfidentValidate: Confident-GNMax needs its delta, and its noise
// unset is the discrete noise releases draw.
func TestConfidentValidate(t *testing.T) {
	if err := (ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: GNMax{Sigma2: 40}}).Validate(); err == nil || !strings.Contains(err.Error(), "delta") {
		t.Errorf("no delta: %v, want delta refused", err)
	}
	if err := (ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: GNMax{Target: Target{Delta: 1e-5}, Sigma2: 40}}).Validate(); err != nil {
		t.Errorf("a zero noise is the discrete noise releases draw: %v", err)
	}
}

// classOf is newClassGNMax of m's own steps.
func classOf(m interface {
	Mechanism
	Steps() noisymax.Steps
}, teachers, classes int, delta float64) (*classGNMax, error) {
	return newClassGNMax(m, m.Steps(), teachers, classes, delta)
}
