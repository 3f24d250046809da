package noise

import (
	"encoding/binary"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// fixedSource returns a Source that yields words, then panics.
func fixedSource(words ...uint64) *Source {
	b := make([]byte, 8*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return &Source{buf: b, fill: func([]byte) { panic("fixedSource exhausted") }}
}

func TestIntNUniform(t *testing.T) {
	src := NewSeededSource(7)
	const n, draws = 7, 70000
	counts := make([]float64, n)
	for range draws {
		counts[src.IntN(n)]++
	}
	var chi2 float64
	for _, c := range counts {
		chi2 += (c - draws/n) * (c - draws/n) / (draws / n)
	}
	if pv := (distuv.ChiSquared{K: n - 1}).Survival(chi2); pv < 1e-4 {
		t.Errorf("IntN(%d): chi-square %v, p-value %v", n, chi2, pv)
	}
	for range 100 {
		if v := src.IntN(1); v != 0 {
			t.Fatalf("IntN(1) = %d", v)
		}
	}
	// Rejection: with n = 3·2^61, a word whose low product is below
	// 2^64 mod n = 2^62 (here the word 0) is redrawn; 2^63+1 then gives n/2.
	big := 3 << 61
	if v := fixedSource(0, 1<<63|1).IntN(big); v != big/2 {
		t.Errorf("IntN after a rejection = %d, want %d", v, big/2)
	}
}

func TestSources(t *testing.T) {
	a, b, c := NewSeededSource(1), NewSeededSource(1), NewSeededSource(2)
	same, differ := true, false
	for range 5000 { // crosses a block boundary
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		same = same && x == y
		differ = differ || x != z
	}
	if !same || !differ {
		t.Errorf("seeded sources: same seed equal %v, different seeds differ %v", same, differ)
	}
	if s, ok := a.Seeded(); !ok || s != 1 {
		t.Errorf("Seeded() = %v, %v", s, ok)
	}
	if NewSeededStream(1, 1).Uint64() == NewSeededSource(1).Uint64() {
		t.Error("streams 0 and 1 of a seed start alike")
	}
	cr := NewSource()
	if _, ok := cr.Seeded(); ok {
		t.Error("crypto source reports seeded")
	}
	seen := map[uint64]bool{}
	for range 5000 {
		seen[cr.Uint64()] = true
	}
	if len(seen) < 4999 {
		t.Errorf("crypto source repeated words: %d distinct of 5000", len(seen))
	}
}

// TestZeroSource: the zero Source reads from crypto/rand, as NewSource's
// does, and is not seeded, where its first draw was a nil dereference.
func TestZeroSource(t *testing.T) {
	var s Source
	seen := map[uint64]bool{}
	for range 3 * sourceBlock / 8 {
		seen[s.Uint64()] = true
	}
	if len(seen) < 3*sourceBlock/8-1 {
		t.Errorf("%d distinct words of %d", len(seen), 3*sourceBlock/8)
	}
	if _, ok := s.Seeded(); ok {
		t.Error("the zero Source says it is seeded")
	}
	var z Source
	if v := z.IntN(10); v < 0 || v >= 10 {
		t.Errorf("IntN(10) = %d", v)
	}
}

// TestIntNEmptyRange: a bound of no integers panics, as math/rand/v2's
// does, where IntN(-5) returned 6.7e18 and Uint64N(0) returned 0, a value
// outside [0, n).
func TestIntNEmptyRange(t *testing.T) {
	for _, tc := range []struct {
		name string
		draw func(*Source)
	}{
		{"IntN(0)", func(s *Source) { s.IntN(0) }},
		{"IntN(-5)", func(s *Source) { s.IntN(-5) }},
		{"Uint64N(0)", func(s *Source) { s.Uint64N(0) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", tc.name)
				}
			}()
			tc.draw(NewSeededSource(1))
		}()
	}
}
