package shuffleg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestStreamNormalMatchesMathRand checks Stream.NormFloat64 against
// math/rand/v2's NormFloat64 reading the same words: the draws must be
// identical, tail strip and rejections included.
func TestStreamNormalMatchesMathRand(t *testing.T) {
	fast := newStream([32]byte{9})
	ref := rand.New(newStream([32]byte{9}))
	tail := 0
	for i := range 1_000_000 {
		a, b := fast.NormFloat64(), ref.NormFloat64()
		if a != b {
			t.Fatalf("draw %d: Stream %v, math/rand %v", i, a, b)
		}
		if math.Abs(a) > zigR {
			tail++
		}
	}
	if tail == 0 {
		t.Fatal("no draw in the tail strip: the test did not cover it")
	}
}

// TestStreamMoments is a sanity check of the Gaussian draws: mean 0,
// variance 1 and kurtosis 3 within five standard errors.
func TestStreamMoments(t *testing.T) {
	s := newStream([32]byte{3})
	const n = 1 << 20
	var m1, m2, m4 float64
	for range n {
		x := s.NormFloat64()
		m1 += x
		m2 += x * x
		m4 += x * x * x * x
	}
	m1, m2, m4 = m1/n, m2/n, m4/n
	if math.Abs(m1) > 5/math.Sqrt(n) || math.Abs(m2-1) > 5*math.Sqrt(2.0/n) || math.Abs(m4-3) > 5*math.Sqrt(96.0/n) {
		t.Fatalf("mean %v, variance %v, fourth moment %v", m1, m2, m4)
	}
}

func TestStreamKeys(t *testing.T) {
	a, b, c := newStream([32]byte{1}), newStream([32]byte{1}), newStream([32]byte{2})
	same, diff := true, 0
	for range 1000 {
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		same = same && x == y
		if x != z {
			diff++
		}
	}
	if !same || diff < 990 {
		t.Fatalf("equal keys equal: %v; different keys differ in %d of 1000 words", same, diff)
	}
}
