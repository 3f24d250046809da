package discrete

import (
	"math"
	"testing"

	"github.com/darrm/darrm/noise"
)

func TestThresholdIsExact(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want uint64
	}{
		{0, 0},
		{1, Unit53},
		{0.5, Unit53 / 2},
		{math.Nextafter(1, 0), Unit53 - 1},
		{1.0 / 3, 3002399751580330}, // floor(2^53/3)
		{1e-300, 0},
		{0x1p-53, 1},
		{0x1.8p-53, 1}, // 1.5·2^-53 rounds down
	} {
		if got := Threshold(tc.p); got != tc.want {
			t.Errorf("Threshold(%v) = %d, want %d", tc.p, got, tc.want)
		}
		if r := Realised(tc.want); r > tc.p || tc.p-r >= 0x1p-53 {
			t.Errorf("Realised(Threshold(%v)) = %v: want within 2^-53 below", tc.p, r)
		}
	}
}

func TestBernoulliComparesTop53Bits(t *testing.T) {
	th := Threshold(0.3)
	// A word's top 53 bits are the uniform integer U; the draw is U < t.
	// Three sources of one seed give the same words: the first tells U,
	// the others draw at thresholds around it and at 0.3's.
	words, at, below := noise.NewSeededSource(4), noise.NewSeededSource(4), noise.NewSeededSource(4)
	for i := range 5000 {
		u := words.Uint64() >> 11
		if !Bernoulli(at, u+1) || Bernoulli(below, u) {
			t.Fatalf("draw %d: U = %d is not drawn as below U+1 and not below U", i, u)
		}
	}
	words, draws := noise.NewSeededSource(5), noise.NewSeededSource(5)
	for i := range 5000 {
		if want := words.Uint64()>>11 < th; Bernoulli(draws, th) != want {
			t.Fatalf("draw %d: Bernoulli = %v, want %v", i, !want, want)
		}
	}
	if Bernoulli(draws, 0) || !Bernoulli(draws, Unit53) {
		t.Error("threshold 0 drew true or threshold 2^53 drew false")
	}
}
