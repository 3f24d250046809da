package ensemble

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
)

// chiSquare tests draws against a probability mass function on the
// integers in [lo, hi], the tails pooled at lo-1 and hi+1 (mass is the
// exact pmf, summed over a range wide enough to hold all but a negligible
// part). It fails at a threshold that a correct sampler exceeds with
// probability about 1e-6.
func chiSquare(t *testing.T, name string, draws []int64, pmf func(int64) float64, lo, hi, far int64) {
	t.Helper()
	var norm float64
	for z := lo - far; z <= hi+far; z++ {
		norm += pmf(z)
	}
	hist := map[int64]int{}
	for _, z := range draws {
		hist[max(lo-1, min(hi+1, z))]++
	}
	var chi float64
	n := float64(len(draws))
	for z := lo - 1; z <= hi+1; z++ {
		var p float64
		switch {
		case z == lo-1:
			for y := lo - far; y < lo; y++ {
				p += pmf(y)
			}
		case z == hi+1:
			for y := hi + 1; y <= hi+far; y++ {
				p += pmf(y)
			}
		default:
			p = pmf(z)
		}
		e := p / norm * n
		d := float64(hist[z]) - e
		chi += d * d / e
	}
	df := float64(hi - lo + 2)
	if limit := df + 5*math.Sqrt(2*df) + 25; chi > limit {
		t.Errorf("%s: chi-square %.1f over %v degrees of freedom (limit %.1f)", name, chi, df, limit)
	}
}

func TestDiscreteLaplaceDistribution(t *testing.T) {
	for _, b := range []float64{0.3, 2.5, 20} {
		l, err := NewDiscreteLaplace(b)
		if err != nil {
			t.Fatal(err)
		}
		src := NewSeededSource(11)
		draws := make([]int64, 100000)
		for i := range draws {
			draws[i] = l.Sample(src)
		}
		w := int64(math.Ceil(4 * b))
		chiSquare(t, fmt.Sprintf("b = %v", b), draws, func(z int64) float64 { return math.Exp(-math.Abs(float64(z)) / b) }, -w, w, int64(60*b)+10)
	}
	// A scale below 2^-9 takes the big-integer path: Pr[Y != 0] < 2e-4343.
	tiny, _ := NewDiscreteLaplace(1e-4)
	src := NewSeededSource(1)
	for range 1000 {
		if y := tiny.Sample(src); y != 0 {
			t.Fatalf("scale 1e-4 drew %d", y)
		}
	}
	for _, b := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := NewDiscreteLaplace(b); err == nil {
			t.Errorf("scale %v accepted", b)
		}
	}
}

// The lattice Gaussian's draws, in lattice steps, follow
// exp(-(k - μ)²/(2σ²)) for centres off the lattice; far finer lattices
// keep the mean and the deviation.
func TestLatticeGaussianDistribution(t *testing.T) {
	for _, c := range []struct{ center, dev, h float64 }{{0.3, 2.5, 1}, {-7.75, 0.6, 0.5}, {1e3 + 0.1, 4, 0.25}} {
		src := NewSeededSource(5)
		draws := make([]int64, 60000)
		for i := range draws {
			v, err := LatticeGaussian(src, c.center, c.dev, c.h)
			if err != nil {
				t.Fatal(err)
			}
			k := v / c.h
			if k != math.Trunc(k) {
				t.Fatalf("%v is not on the lattice %v·Z", v, c.h)
			}
			draws[i] = int64(k)
		}
		mu, sigma := c.center/c.h, c.dev/c.h
		pmf := func(k int64) float64 { d := float64(k) - mu; return math.Exp(-d * d / (2 * sigma * sigma)) }
		lo, hi := int64(math.Floor(mu-3*sigma)), int64(math.Ceil(mu+3*sigma))
		chiSquare(t, "lattice", draws, pmf, lo, hi, int64(40*sigma)+10)
	}
	src := NewSeededSource(9)
	const n = 20000
	var sum, sq float64
	for range n {
		v, err := LatticeGaussian(src, 3.25, 1e-3, 0x1p-40)
		if err != nil {
			t.Fatal(err)
		}
		sum += v - 3.25
		sq += (v - 3.25) * (v - 3.25)
	}
	if mean := sum / n; math.Abs(mean) > 5e-3/math.Sqrt(n) {
		t.Errorf("mean off by %v", mean)
	}
	if sd := math.Sqrt(sq / n); math.Abs(sd/1e-3-1) > 0.05 {
		t.Errorf("deviation %v, want 1e-3", sd)
	}
	for _, bad := range [][3]float64{{0, 0, 1}, {0, 1, 0}, {math.NaN(), 1, 1}, {0, math.Inf(1), 1}, {0, 1, 0x1p-70}} {
		if _, err := LatticeGaussian(src, bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("center %v, deviation %v, spacing %v accepted", bad[0], bad[1], bad[2])
		}
	}
}

func TestLNMax(t *testing.T) {
	g, err := NewLNMax(accountant.LNMax{Scale: 2}, 50, 4)
	if err != nil {
		t.Fatal(err)
	}
	if p := g.Privacy(); p.Eps != 1 || p.Delta != 0 || p.Relation != OneVote {
		t.Errorf("privacy %+v, want (2/b, 0) = (1, 0) in the one-vote relation", p)
	}
	src := NewSeededSource(2)
	for range 200 {
		if l, ans, err := g.Label([]int{2, 45, 3, 0}, src); err != nil || !ans || l != 1 {
			t.Fatalf("label %d answered %v err %v, want class 1", l, ans, err)
		}
	}
	seen := map[int]int{}
	for range 4000 {
		l, _, _ := g.Label([]int{25, 25, 0, 0}, src)
		seen[l]++
	}
	if seen[0] < 1800 || seen[1] < 1800 || seen[0]+seen[1] != 4000 {
		t.Errorf("tied classes 0 and 1: %v", seen)
	}
	// With noise comparable to the gap the runner-up wins at the rate the
	// difference of two discrete Laplace draws gives.
	g1, _ := NewLNMax(accountant.LNMax{Scale: 1}, 3, 2)
	wins := 0
	const n = 40000
	for range n {
		if l, _, _ := g1.Label([]int{2, 1}, src); l == 1 {
			wins++
		}
	}
	// Pr[1 + Y1 > 2 + Y0] + Pr[tie]/2 with Y ~ discrete Laplace(1).
	var p float64
	norm := (1 + math.Exp(-1)) / (1 - math.Exp(-1))
	for y0 := -40; y0 <= 40; y0++ {
		for y1 := -40; y1 <= 40; y1++ {
			q := math.Exp(-math.Abs(float64(y0))-math.Abs(float64(y1))) / (norm * norm)
			switch d := 1 + y1 - (2 + y0); {
			case d > 0:
				p += q
			case d == 0:
				p += q / 2
			}
		}
	}
	if got := float64(wins) / n; math.Abs(got-p) > 5*math.Sqrt(p*(1-p)/n) {
		t.Errorf("runner-up wins %v, want %v", got, p)
	}
	var ce *CountsError
	if _, _, err := g.Label([]int{25, 24, 0, 0}, src); !errors.As(err, &ce) {
		t.Errorf("counts summing to 49 for K = 50: %v", err)
	}
	if _, err := NewLNMax(accountant.LNMax{Scale: 0}, 50, 4); err == nil {
		t.Error("scale 0 accepted")
	}
	if _, err := NewLNMax(accountant.LNMax{Scale: 1}, 50, 1); err == nil {
		t.Error("C = 1 accepted")
	}
}

// A header in the private-teachers relation is refused before any label;
// a one-vote header binds its ensemble, and its teachers' common
// guarantee when they have one.
func TestReleaseBindingMulti(t *testing.T) {
	agg, _ := NewLNMax(accountant.LNMax{Scale: 20}, 4, 3)
	read := func(head string) *MultiReader {
		t.Helper()
		in, err := NewMultiReader(strings.NewReader(head+"3,1,0\n0,0,4\n"), "v.csv", MultiOptions{Input: InputCounts})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	b, err := ReleaseBinding(read(""), agg)
	if err != nil || b != (Binding{K: 4, Relation: OneVote}) {
		t.Errorf("no header: %+v, %v", b, err)
	}
	b, err = ReleaseBinding(read(countsHead), agg)
	if err != nil || b != (Binding{Ensemble: "pate-test", K: 4, Relation: OneVote, Kind: Fixed, Partition: KeyedHash}) {
		t.Errorf("non-private teachers: %+v, %v", b, err)
	}
	private := strings.Replace(countsHead, `{"count":4,"source":{"method":"none"}}`, `{"count":4,"eps":0.5,"Delta":0.00001,"source":{"method":"stated"}}`, 1)
	b, err = ReleaseBinding(read(private), agg)
	if err != nil || b.Teachers != (accountant.Guarantee{Eps: 0.5, Delta: 1e-5}) {
		t.Errorf("private teachers: %+v, %v", b, err)
	}
	shared := strings.NewReplacer(`"relation":"one-vote"`, `"relation":"private-teachers"`, `"partition":"keyed-hash"`, `"partition":"shared"`).Replace(private)
	in := read(shared)
	var te *TeachersError
	if _, err := ReleaseBinding(in, agg); !errors.As(err, &te) || te.Field != "relation" || te.Header != "private-teachers" {
		t.Errorf("private-teachers header: %v", err)
	}
	var buf strings.Builder
	if _, err := ReleaseTo(t.Context(), in, agg, NewSource(), LabelSink{Stdout: &buf, Format: FormatCSV}, -1, ReleaseOptions{}); !errors.As(err, &te) || buf.Len() != 0 {
		t.Errorf("release from a private-teachers header: %v, wrote %q", err, buf.String())
	}
	other, _ := NewLNMax(accountant.LNMax{Scale: 20}, 5, 3)
	if _, err := ReleaseBinding(read(""), other); err == nil {
		t.Error("an aggregator for K = 5 accepted votes of 4")
	}
	// Against a header, K and the classes are the one check's.
	five, _ := NewLNMax(accountant.LNMax{Scale: 20}, 4, 5)
	for _, tc := range []struct {
		agg   *LNMax
		field string
	}{{other, "K"}, {five, "classes"}} {
		if _, err := ReleaseBinding(read(countsHead), tc.agg); !errors.As(err, &te) || te.Field != tc.field || te.By != "the lnmax mechanism" {
			t.Errorf("an aggregator for K = %d, %d classes on the header of K = 4, 3 classes: %v", tc.agg.K(), tc.agg.Classes(), err)
		}
	}
}
