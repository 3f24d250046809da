package accountant

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestAnswersKept: a count and its total found from the answers a folder
// keeps are those found by composing, bit for bit, and composing nothing
// (no run's transform is made); a file altered, signed under another
// secret or of other pairs is not read; a secret too short is refused.
// Each Memo is a process of its own: the second reads what the first
// saved.
func TestAnswersKept(t *testing.T) {
	dir := t.TempDir()
	secret := []byte("0123456789abcdef0123456789abcdef")
	if err := (&Memo{Dir: dir, Secret: secret[:8]}).Save(); err == nil {
		t.Error("Save took a secret of 8 bytes")
	}
	pairs := testBits()["pure"]
	a := Account{Step: oneBitSpend(pairs), Budget: &Budget{Guarantee{Eps: 4, Delta: 1e-6}}}
	count := func(m *Memo) (int, Total) {
		t.Helper()
		n, tot, err := a.MaxSteps(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		return n, tot
	}
	composed := func(m *Memo) bool {
		c := m.bits.of(pairs)
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, r := range c.runs {
			if r.p != nil {
				return true
			}
		}
		return false
	}
	first := &Memo{Dir: dir, Secret: secret}
	n, tot := count(first)
	if !composed(first) {
		t.Fatal("the first count composed nothing: the test asks nothing of the kept answers")
	}
	if err := first.Save(); err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Fatalf("%d steps fit: the count asks no transform", n)
	}
	again := &Memo{Dir: dir, Secret: secret}
	if m, tot2 := count(again); m != n || tot2 != tot || composed(again) {
		t.Errorf("from the kept answers: %d steps, %v (composed: %v); composing: %d, %v", m, tot2, composed(again), n, tot)
	}

	key := answersKey(pairs)
	f, ok := readAnswers(dir, key, secret)
	if !ok || len(f.Deltas) == 0 || len(f.Inverse) == 0 {
		t.Fatalf("the file holds %d and %d answers (read: %v)", len(f.Deltas), len(f.Inverse), ok)
	}
	if _, ok := readAnswers(dir, key, []byte("another secret, 32 bytes long...")); ok {
		t.Error("read under another secret")
	}
	if _, ok := readAnswers(dir, answersKey(pairs[1:]), secret); ok {
		t.Error("read as the answers of other pairs")
	}
	altered := f
	altered.Deltas = append([][5]uint64(nil), f.Deltas...)
	altered.Deltas[0][3] = math.Float64bits(math.Float64frombits(altered.Deltas[0][3]) / 2)
	b, err := json.Marshal(altered)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(answersPath(dir, key), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := readAnswers(dir, key, secret); ok {
		t.Error("read an altered answer")
	}
	altered2 := &Memo{Dir: dir, Secret: secret}
	if m, tot2 := count(altered2); m != n || tot2 != tot || !composed(altered2) {
		t.Errorf("beside an altered file: %d steps, %v (composed: %v); want %d, %v, composed", m, tot2, composed(altered2), n, tot)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "*")); len(matches) != 1 {
		t.Errorf("the folder holds %v, want one file", matches)
	}
}

// TestAnswersTripwire: an answer of the one-bit composition, as this
// version composes it. A change that moves it changes what the kept
// answers would say: bump answersVersion (so that no process reads the
// answers of the composition before) and set the value here.
func TestAnswersTripwire(t *testing.T) {
	r := newRunCurves(new(Memo), oneBitSpend(testBits()["pure"]), 20, 1e-6)
	if r.bits == nil {
		t.Fatal("no one-bit composition")
	}
	if b, _ := r.bits.run(nil, 20, 1e-6); b.grid.direct || b.lambda == 0 {
		t.Fatalf("20 steps composed directly (%v) or untilted (%v): the answer does not exercise the transform", b.grid.direct, b.lambda)
	}
	eps, ok := r.exactEps(1e-6, 1)
	const want = 0x4009647994f00000
	if got := math.Float64bits(eps); !ok || got != want {
		t.Errorf("the least eps at delta 1e-6 of 20 steps is %v (%#x, %v), answersVersion %d holds %v (%#x): bump answersVersion", eps, got, ok, answersVersion, math.Float64frombits(want), uint64(want))
	}
}
