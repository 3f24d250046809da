package constraints

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// mirrorPairs are the corners (P, Q) and (Q, P) of each problem kind, by
// index into Corners: with Delta > 0, (0, Delta) and (Delta, 0),
// (1-Delta, 1) and (1, 1-Delta), and the two e^eps corners; with Delta = 0
// the two e^eps corners.
func mirrorPairs(p Problem) [][2]int {
	if p.Delta == 0 {
		return [][2]int{{2, 3}}
	}
	return [][2]int{{2, 3}, {4, 5}, {6, 7}}
}

// reduced reports whether c has no teacher at an e^eps corner while
// another is at the other: the multisets Separate scores.
func reduced(p Problem, c Config) bool {
	i := mirrorPairs(p)[len(mirrorPairs(p))-1]
	return c[i[0]] == 0 || c[i[1]] == 0
}

// TestMirrorCouples checks, in 200-bit arithmetic, the identity Separate
// rests on: a multiset c with a teacher at a corner (a, b) and another at
// its mirror (b, a) has the cost
//
//	f(c) = (1-a)(1-b)·f(c0) + (a(1-b) + b(1-a))·f(c1) + ab·f(c2),
//
// where cj replaces the couple by j teachers at (1, 1) and 2-j at (0, 0),
// since the couple's vote sum has the same law on both sides. So f(c) is
// at most the largest f(cj), and the exact maximum over every multiset is
// the maximum over the reduced ones.
func TestMirrorCouples(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	tol := new(big.Float).SetMantExp(big.NewFloat(1), -150)
	trials := 12
	if testing.Short() {
		trials = 4
	}
	for trial := range trials {
		k := 2*r.IntN(3) + 3
		delta := 0.0
		if trial%3 > 0 {
			delta = []float64{1e-5, 0.05, 0.3}[r.IntN(3)]
		}
		m := 1 + float64(k-1)*r.Float64()
		p := Problem{K: k, M: m, Eps: 0.05 + 2*r.Float64(), Delta: delta, TargetDelta: DefaultTargetDelta(delta, m)}
		g := randomGamma(k, r)
		corners := exactCorners(p)
		maxAll, maxReduced := new(big.Float).SetInf(true), new(big.Float).SetInf(true)
		p.AllConfigs(func(c Config) bool {
			f := exactF(p, c, g, corners)
			if f.Cmp(maxAll) > 0 {
				maxAll = f
			}
			if reduced(p, c) && f.Cmp(maxReduced) > 0 {
				maxReduced = f
			}
			for _, mp := range mirrorPairs(p) {
				if c[mp[0]] == 0 || c[mp[1]] == 0 {
					continue
				}
				a, b := corners[mp[0]][0], corners[mp[0]][1]
				notA := new(big.Float).SetPrec(prec).Sub(bfl(1), a)
				notB := new(big.Float).SetPrec(prec).Sub(bfl(1), b)
				w := [3]*big.Float{
					new(big.Float).SetPrec(prec).Mul(notA, notB),
					new(big.Float).SetPrec(prec).Add(new(big.Float).SetPrec(prec).Mul(a, notB), new(big.Float).SetPrec(prec).Mul(b, notA)),
					new(big.Float).SetPrec(prec).Mul(a, b),
				}
				sum := bfl(0)
				for j := range 3 {
					cj := append(Config(nil), c...)
					cj[mp[0]]--
					cj[mp[1]]--
					cj[1] += j
					cj[0] += 2 - j
					fj := exactF(p, cj, g, corners)
					sum.Add(sum, new(big.Float).SetPrec(prec).Mul(w[j], fj))
				}
				if d := new(big.Float).Sub(f, sum); d.Abs(d).Cmp(tol) > 0 {
					t.Fatalf("%+v, multiset %v, couple %v: f = %v, the mixture of its parts %v", p, c, mp, f, sum)
				}
			}
			return true
		})
		if d := new(big.Float).Sub(maxAll, maxReduced); d.Abs(d).Cmp(tol) > 0 {
			t.Errorf("%+v: exact maximum %v over every multiset, %v over the reduced ones", p, maxAll, maxReduced)
		}
	}
}
