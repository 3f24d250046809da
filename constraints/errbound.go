package constraints

import "github.com/darrm/darrm/accountant"

// unitRoundoff is 2^-53, the relative rounding error of float64 arithmetic.
const unitRoundoff = 0x1p-53

// ErrBound returns a bound on |computed f - exact f| for every multiset, as
// Separate computes f, plus |Budget() - exact budget|, where "exact" means
// the real-number value at the float64 inputs K, m, eps, Delta, delta and
// gamma, m·eps being MEps() (docs/solve.md, "The rounding bound", derives
// it). With u = 2^-53, E = e^{m·eps} and B the budget:
//
//   - a corner coordinate a takes at most 6 roundings (exp, two products,
//     two sums, a quotient): |â - a| <= 6u;
//   - each of the K teachers updates each side's correlation vector, whose
//     values stay in [-1, 1] (gamma in [0, 1]), by c + â·(c' - c): 3
//     roundings of quantities at most 2 in magnitude (5u), plus
//     |â - a|·|c' - c| <= 12u; a convex combination never amplifies the
//     errors already there, so each side is within 17Ku;
//   - Ê = exp(m·eps) is within (m·eps + 1)u relative (the exponential's
//     error, with room for a rounding of m·eps that MEps no longer makes);
//     the product Ê·C_q adds E·(17K + m·eps + 2)u and the final
//     subtraction u·(1 + E);
//   - Budget() = expm1(m·eps) + 2·delta is within (E·(m·eps + 1) + B)u.
//
// Go's exp and expm1 err by up to about an ulp, 2u relative, more than the
// (m·eps + 1)u above when m·eps < 1; the two bullets together allot them
// 2E(m·eps + 1)u, which covers 2uE + 2u(E - 1), since E·m·eps >= E - 1.
//
// The sum, u·((1+E)(17K+1) + E(2m·eps+3) + B), is raised by 2^-20 relative
// for the second-order terms.
//
// In the one-vote relation the costs are single inequalities and the bound
// is errBoundOneVote's.
func (p Problem) ErrBound() float64 {
	if p.Relation == accountant.OneVote {
		return p.errBoundOneVote()
	}
	return p.roundingSum() * (1 + 0x1p-20)
}

// roundingSum is ErrBound's sum of first-order terms,
// u·((1+E)(17K+1) + E(2m·eps+3) + B), before its raise for the rest.
func (p Problem) roundingSum() float64 {
	e, me := p.E(), p.MEps()
	k := float64(p.K)
	return ((1+e)*(17*k+1) + e*(2*me+3) + p.Budget()) * unitRoundoff
}
