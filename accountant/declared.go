package accountant

import (
	"math/big"

	"github.com/darrm/darrm/internal/outward"
)

// Declared returns s and points of its privacy profile as a ledger
// declares them before its first run (a declared use, composed exactly in
// advance): each quantity of s that an exact composition takes from its
// description moved by buildMargin towards less privacy (a sampling rate
// and each pair's larger probability raised, each continuous noise scale
// and pair's smaller probability lowered). The step that a release
// computes on another build of darrm, whose last digits differ
// (buildMargin), then lies within it (Declares), and what the declaration
// composes bounds that release's privacy.
//
// A pair's probabilities move by the margin of the nearer of 0 and 1, so
// that neither it nor its complement, which the composition also uses,
// reaches 0 (near 1 that is a unit in the last place). The (ε, δ) of s,
// which simple compositions add up to the budget, is kept, so that a
// design at exactly the budget's share keeps its count, and so is the
// discrete Gaussian's σ, a flag's, whose δ is not monotone in it. Each
// point of a one-bit step's profile is raised to at least its widened
// pairs' δ there (bitProfile, the pairs kept ordered larger first); a step whose noise was widened keeps no point, which
// only its own σ made valid.
func (s Spend) Declared(profile []Guarantee) (Spend, []Guarantee) {
	d := s
	d.Q = min(margined(s.Q), 1)
	d.Sigma = lowered(s.Sigma)
	if s.Gaussian != nil && !s.Discrete {
		d.Gaussian = make([]GaussianPart, len(s.Gaussian))
		for i, p := range s.Gaussian {
			d.Gaussian[i] = GaussianPart{Sigma: lowered(p.Sigma), Coords: p.Coords}
		}
	}
	if s.Laplace != nil {
		d.Laplace = &LaplacePart{Scale: lowered(s.Laplace.Scale), Coords: s.Laplace.Coords}
	}
	if s.Bits != nil {
		d.Bits = make([]BitPair, len(s.Bits))
		for i, b := range s.Bits {
			hi, lo := max(b.P, b.Q), min(b.P, b.Q)
			d.Bits[i] = BitPair{
				P: min(outward.AddUp(hi, outward.MulUp(min(hi, 1-hi), buildMargin)), 1),
				Q: max(outward.AddDown(lo, -outward.MulUp(min(lo, 1-lo), buildMargin)), 0),
			}
		}
	}
	var points []Guarantee
	switch d.Kind {
	case ApproxSpend, PureSpend:
		points = profile
	case OneBitSpend:
		for _, p := range profile {
			p.Delta = min(max(p.Delta, bitProfile(d.Bits, p.Eps)), 1)
			points = append(points, p)
		}
	}
	return d, points
}

// lowered returns x lowered by buildMargin, at least 0.
func lowered(x float64) float64 { return max(outward.MulDown(x, 1-buildMargin), 0) }

// Declares reports whether d, a step declared before the first run
// (Declared), holds a release whose step is s: s is of d's kind and no
// less private in any quantity (dominated: its (ε, δ) at most d's, each
// of its pairs, ordered larger first, a post-processing of one of d's),
// so that what d composes bounds s; and d is s but for the margins
// (another build's last digits, and Declared's), so that a release with
// other settings, even a more private one, is not taken for the one
// declared. A ledger's step declared before Declared existed holds the
// same build's steps, which are equal.
func (d Spend) Declares(s Spend) bool {
	if d.Check() != nil || s.Check() != nil {
		return false
	}
	wide, _ := s.Declared(nil)
	wide, _ = wide.Declared(nil)
	return dominated(s, d) && dominated(d, wide)
}

// dominated reports whether s is of d's kind and no less private than d
// in any quantity it states: its (ε, δ) and sampling rate at most d's, its
// continuous noise at least d's, its discrete Gaussian noise d's, each of
// its pairs a post-processing of one of d's.
func dominated(s, d Spend) bool {
	if s.Kind != d.Kind || s.Eps > d.Eps || s.Delta > d.Delta || s.Discrete != d.Discrete ||
		s.Q > d.Q || s.Sigma < d.Sigma || len(s.Gaussian) != len(d.Gaussian) || (s.Laplace == nil) != (d.Laplace == nil) {
		return false
	}
	for i, p := range s.Gaussian {
		// The discrete Gaussian's δ is not monotone in σ: only its own
		// σ bounds it.
		if p.Coords != d.Gaussian[i].Coords || p.Sigma < d.Gaussian[i].Sigma || s.Discrete && p.Sigma != d.Gaussian[i].Sigma {
			return false
		}
	}
	if s.Laplace != nil && (s.Laplace.Coords != d.Laplace.Coords || s.Laplace.Scale < d.Laplace.Scale) {
		return false
	}
	for _, b := range s.Bits {
		if !containsPair(d.Bits, max(b.P, b.Q), min(b.P, b.Q)) {
			return false
		}
	}
	return true
}

// containsPair reports whether one of bits dominates the pair (hi, lo),
// hi >= lo: its release is a post-processing of that pair's (Blackwell),
// so its privacy profile is at most the pair's. For pairs (P, Q) ordered
// larger first that is hi/lo <= P/Q and (1-lo)/(1-hi) <= (1-Q)/(1-P):
// the two likelihood ratios of its outputs are within the pair's. A pair
// near the diagonal, whose probabilities another build may compute to
// other digits than its last, is dominated by any pair further apart.
// The products are compared exactly.
func containsPair(bits []BitPair, hi, lo float64) bool {
	h, l := new(big.Rat).SetFloat64(hi), new(big.Rat).SetFloat64(lo)
	one := big.NewRat(1, 1)
	hc, lc := new(big.Rat).Sub(one, h), new(big.Rat).Sub(one, l)
	x, y := new(big.Rat), new(big.Rat)
	for _, b := range bits {
		p, q := new(big.Rat).SetFloat64(max(b.P, b.Q)), new(big.Rat).SetFloat64(min(b.P, b.Q))
		if x.Mul(h, q).Cmp(y.Mul(p, l)) > 0 {
			continue
		}
		pc, qc := new(big.Rat).Sub(one, p), new(big.Rat).Sub(one, q)
		if x.Mul(lc, pc).Cmp(y.Mul(qc, hc)) <= 0 {
			return true
		}
	}
	return false
}
