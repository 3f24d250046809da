// Package constraints builds the privacy constraints of the DaRRM noise
// function LP (thesis Sections 3.4.3 and 3.6.3) and solves its separation
// problem exactly.
//
// A noise function gamma makes DaRRM (m·eps, delta)-DP if and only if the
// privacy cost f(p, p'; gamma) <= e^{m·eps} - 1 + 2·delta for every choice of
// the teachers' output probabilities (Lemma 3.4.4). f is multilinear in each
// teacher's pair (p_i, p'_i), so the worst case sits at corners of the
// teachers' feasible regions, and f depends only on how many teachers sit at
// each corner (Lemma 3.6.1): C(K+7, 7) corner multisets, or C(K+3, 3) when
// Delta = 0.
//
// Reference: Shuli Jiang, "Communication Efficient and Differentially
// Private Optimization", PhD thesis, Carnegie Mellon University,
// CMU-RI-TR-25-46, 2025 ("the thesis": lemma, section, table and figure
// numbers are its own). Its Chapter 3 and Appendix B are based
// on Jiang, Zhang and Joshi, "Optimized Tradeoffs for Private Prediction
// with Majority Ensembling", TMLR 2024.
package constraints

import (
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/param"
)

// Limits on K. The exhaustive certificate costs about K^3/12 steps when
// Delta = 0; when Delta > 0 it bounds whole families of multisets in about
// 1.5·K^3 steps and scores the few that reach the budget (docs/solve.md,
// "The family bound"). Beyond these sizes a solve would take hours.
const (
	maxKApprox = 2001  // largest K when Delta > 0
	maxKPure   = 10001 // largest K when Delta = 0
)

// Problem is a private majority problem (Problem 3.1.1): K teachers,
// each (Eps, Delta)-DP, whose majority must be released
// (M·Eps, TargetDelta)-DP. New fills in the thesis' default TargetDelta;
// a Problem literal must state it (0 is a valid value for pure DP, not
// "unset").
//
// In the one-vote relation (Relation OneVote, built by NewOneVote) the
// teachers need not be private: M is 1, Delta is 0, and Eps is the
// release's eps.
type Problem struct {
	K           int     // number of teachers, odd
	M           float64 // privacy allowance, 1 <= M <= K (need not be an integer); 1 in the one-vote relation
	Eps         float64 // each teacher's eps > 0; the release's in the one-vote relation
	Delta       float64 // each teacher's Delta, 0 <= Delta < 1; 0 in the one-vote relation
	TargetDelta float64 // the release's delta, Delta <= TargetDelta < 1
	// Relation is the neighbouring relation; the zero value is DaRRM's,
	// PrivateTeachers.
	Relation accountant.Relation
}

// New returns the problem of k teachers, each (eps, Delta)-DP with
// Delta = teacherDelta, whose majority is released (m·eps, delta)-DP with
// the thesis' default delta = DefaultTargetDelta(teacherDelta, m)
// (Section 3.7.1). Set TargetDelta on the result for another release
// delta. The problem is not validated here; Validate, and every solver
// and certificate, do that.
func New(k int, m, eps, teacherDelta float64) Problem {
	return Problem{K: k, M: m, Eps: eps, Delta: teacherDelta, TargetDelta: DefaultTargetDelta(teacherDelta, m)}
}

// DefaultTargetDelta returns the release's delta = 1 - (1-Delta)^m for
// teachers' Delta = teacherDelta, the thesis' choice in Section 3.7.1
// (m-fold general composition).
func DefaultTargetDelta(teacherDelta, m float64) float64 {
	return -math.Expm1(m * math.Log1p(-teacherDelta))
}

// fieldError is a problem parameter out of its domain, an
// parameter error under the name the thesis writes it by, with the
// field of Problem that holds it.
type fieldError struct {
	field string // "K", "M", "Eps", "Delta", "TargetDelta" or "Relation"
	err   *param.Error
}

func (e *fieldError) Error() string {
	if e.field != "TargetDelta" {
		return e.err.Error()
	}
	// The release's delta and the teachers' Delta differ only in case:
	// name the field, and say how to get the default when it was left out.
	msg := fmt.Sprintf("%s (the release's delta, Problem.%s) = %v: %s", e.err.Name, e.field, e.err.Value, e.err.Rule)
	if e.err.Value == 0.0 {
		msg += "; constraints.New fills in the thesis' default 1-(1-Delta)^m"
	}
	return msg
}

func (e *fieldError) Unwrap() error { return e.err }

// ProblemField names the field of Problem out of its domain, for a caller
// that reports Problem's fields by their Go names.
func (e *fieldError) ProblemField() string { return e.field }

// Validate checks the parameters and names the first one that is out of
// range, as a parameter error.
func (p Problem) Validate() error {
	fields := map[string]string{"K": "K", "m": "M", "eps": "Eps", "Delta": "Delta", "delta": "TargetDelta", "relation": "Relation"}
	bad := func(name string, v any, rule string, args ...any) error {
		pe := &param.Error{Name: name, Value: v, Rule: fmt.Sprintf(rule, args...)}
		if f, ok := fields[name]; ok {
			return &fieldError{field: f, err: pe}
		}
		return pe
	}
	// Each parameter's own rule first, by the one function that checks it
	// wherever it is given (K, eps, m; Delta and delta in [0, 1), the
	// domain of the solver and the certificate, of which darrm's commands
	// take [0, 0.5]), then the rules of the problem that
	// relate them.
	field := func(err error) error {
		var pe *param.Error
		if errors.As(err, &pe) {
			if f, ok := fields[pe.Name]; ok {
				return &fieldError{field: f, err: pe}
			}
		}
		return err
	}
	oneVote := p.Relation == accountant.OneVote
	if p.Relation != accountant.PrivateTeachers && !oneVote {
		return bad("relation", p.Relation, "must be %v or %v", accountant.PrivateTeachers, accountant.OneVote)
	}
	for _, err := range []error{param.Teachers(p.K, true), param.Positive("eps", p.Eps), param.Delta("Delta", p.Delta), param.M(p.M, p.K), param.Delta("delta", p.TargetDelta)} {
		if err != nil {
			return field(err)
		}
	}
	switch {
	case oneVote && p.Delta != 0:
		return bad("Delta", p.Delta, "must be 0 in the one-vote relation (the teachers need no guarantee; eps and delta are the release's)")
	case oneVote && p.M != 1:
		return bad("m", p.M, "must be 1 in the one-vote relation (eps is the release's own)")
	case p.TargetDelta < p.Delta:
		return bad("delta", p.TargetDelta, "must be >= Delta = %v: DaRRM's problem holds a release to at least its teachers' delta", p.Delta)
	case p.MEps() > param.MaxMEps:
		return bad("m·eps", p.MEps(), "must be <= %v (e^{m·eps} overflows and the guarantee is vacuous)", param.MaxMEps)
	case p.Delta > 0 && p.K > maxKApprox:
		return bad("K", p.K, "must be <= %d when Delta > 0 (a solve would take hours beyond it)", maxKApprox)
	case p.K > maxKPure:
		return bad("K", p.K, "must be <= %d (the exhaustive certificate costs about K^3/12 steps)", maxKPure)
	}
	return nil
}

// H returns (K+1)/2, the smallest vote count whose majority is 1.
func (p Problem) H() int { return (p.K + 1) / 2 }

// MEps returns m·eps, the eps of each release of p: the product of M and
// Eps as the decimals they print as (decimal.Mul), so that m = 3 and
// eps = 0.1 give 0.3, not the float64 product 0.30000000000000004. It is
// the target itself, not a bound of a product: E, Budget and the
// certificate hold a noise function to exactly this eps, so the guarantee
// a release states is the one proven. In the one-vote relation (m = 1) it
// is Eps.
func (p Problem) MEps() float64 { return decimal.Mul(p.M, p.Eps) }

// E returns e^{m·eps}.
func (p Problem) E() float64 { return math.Exp(p.MEps()) }

// Budget returns e^{m·eps} - 1 + 2·delta, the bound on the privacy cost f
// (Lemma 3.4.4).
func (p Problem) Budget() float64 { return math.Expm1(p.MEps()) + 2*p.TargetDelta }

// Corner is a vertex (P, Q) = (Pr[M_i(D) = 1], Pr[M_i(D') = 1]) of a
// teacher's feasible region.
type Corner struct {
	P float64 `json:"p"`
	Q float64 `json:"p_prime"`
}

// Corners returns the corners of an (eps, Delta)-DP teacher's feasible
// region (Lemma 3.6.1), in a fixed order: (0,0), (1,1), (0,Delta),
// (Delta,0), (1-Delta,1), (1,1-Delta), ((e+Delta)/(e+1), (1-Delta)/(e+1)),
// ((1-Delta)/(e+1), (e+Delta)/(e+1)) with e = e^eps; when Delta = 0 the four
// (0,0), (1,1), (e/(e+1), 1/(e+1)), (1/(e+1), e/(e+1)).
//
// In the one-vote relation they are the votes of a teacher on the two vote
// vectors: (0,0), (1,1), (1,0) and (0,1), the last two for the one teacher
// whose vote changes.
func (p Problem) Corners() []Corner {
	if p.Relation == accountant.OneVote {
		return []Corner{{0, 0}, {1, 1}, {1, 0}, {0, 1}}
	}
	hi, lo := epsCorner(p.Eps, p.Delta)
	if p.Delta == 0 {
		return []Corner{{0, 0}, {1, 1}, {hi, lo}, {lo, hi}}
	}
	d := p.Delta
	return []Corner{{0, 0}, {1, 1}, {0, d}, {d, 0}, {1 - d, 1}, {1, 1 - d}, {hi, lo}, {lo, hi}}
}

// epsCorner returns (e+Delta)/(e+1) and (1-Delta)/(e+1), written with e^-eps
// so that they stay finite for any eps.
func epsCorner(eps, delta float64) (hi, lo float64) {
	ei := math.Exp(-eps)
	return (1 + delta*ei) / (1 + ei), (1 - delta) * ei / (1 + ei)
}

// NumConfigs returns the number of corner multisets of size K: C(K+7, 7),
// or C(K+3, 3) when Delta = 0; in the one-vote relation 2K, the pairs of
// vote vectors that differ in one vote.
func (p Problem) NumConfigs() *big.Int {
	if p.Relation == accountant.OneVote {
		return big.NewInt(2 * int64(p.K))
	}
	c := int64(len(p.Corners()))
	return new(big.Int).Binomial(int64(p.K)+c-1, c-1)
}
