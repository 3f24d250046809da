package pate

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
)

// SmoothParams are the parameters of a smooth-sensitivity release of the
// data-dependent cost (the PATE paper, Section 4): its Rényi order, the
// smoothness β and the noise multiplier σ_ss. Each left 0 is set by
// withDataFree, which sees no vote, unless FromVotes asks for the PATE
// authors' choice: the data-dependent optimum as the order, β and σ_ss by
// chooseGNSS. That choice looks at the votes, so the ε it
// releases is not for publication.
type SmoothParams struct {
	Order, Beta, Sigma float64
	FromVotes          bool
}

// publishable reports whether no parameter is chosen from the votes: the
// released ε is then a private release.
func (p SmoothParams) publishable() bool {
	return !p.FromVotes || p.Order != 0 && p.Beta != 0 && p.Sigma != 0
}

// The constants of withDataFree. They were set on the Confident-GNMax
// votes of 250 teachers on Fashion-MNIST (T = 200, σ1 = 150, σ2 = 40; the
// first 640, 2,000 and 5,000 queries), which neither darrm pate's
// MNIST experiment nor a user's votes are (darrm pate --dataset
// fashion-mnist is, and says so): there the data-dependent optimum
// λ satisfied λ - 1 ≈ 2(λ_I - 1) for the data-independent optimum λ_I, and
// the smooth sensitivity at β = 0.4/λ was 0.0066 to 0.0085 of the
// data-independent total at λ.
const (
	ruleOrderFactor = 2
	ruleBeta        = 0.4
	ruleSSShare     = 1.0 / 128
)

// withDataFree sets the parameters p leaves 0 by darrm's rule for a
// smooth-sensitivity release that sees no vote. Its inputs are the
// data-independent bound indep of the queries (a function of the
// mechanism, of the number of queries and, for a release, of how many
// were answered, which its labels show) and the mechanism's σ2, noise and
// number of classes C:
//
//   - the order λ: the first of 1 + 2(λ_I - 1), λ_I = indep.Order, and of
//     1 + 2(λ_I - 1)·2^{-k/2} (k = 1, 2, ..., rounded down to a multiple
//     of 1/4) at which conditions C5 and C6 hold for σ2 and C;
//   - β = 0.4/λ, the middle of the PATE authors' grid 0.30/λ..0.49/λ;
//   - σ_ss = (λe^{2β}/S)^{1/3}, the PATE authors' choice with the smooth
//     sensitivity replaced by S = F(λ)/128, F(λ) = λ·indep.RDP/indep.Order
//     the data-independent total at λ.
//
// The released ε is then a function of the release's outputs and of
// parameters fixed before the votes were seen: publishable.
func (p SmoothParams) withDataFree(mo *memo, indep orderEps, sigma2 float64, noise noisymax.Noise, classes int) (SmoothParams, error) {
	slope, err := independentSlope(indep)
	if err != nil {
		return p, err
	}
	if p.Order == 0 {
		if p.Order, err = ruleOrder(mo, indep.Order, sigma2, noise, classes); err != nil {
			return p, err
		}
	}
	if p.Beta == 0 {
		p.Beta = ruleBeta / p.Order
	}
	if p.Sigma == 0 {
		p.Sigma = ruleSigma(p.Beta, slope)
	}
	return p, nil
}

// independentSlope returns the data-independent Rényi DP per unit of
// order of indep (the curve is linear in the order).
func independentSlope(indep orderEps) (float64, error) {
	if !(indep.Order > 1 && indep.RDP > 0) {
		return 0, fmt.Errorf("smooth sensitivity: no data-independent cost to fix the parameters by (order %v, Renyi DP %v)", indep.Order, indep.RDP)
	}
	return indep.RDP / indep.Order, nil
}

// ruleOrder is withDataFree's order for the data-independent optimum
// independent, GNMax's noise of deviation sigma2 on C classes.
func ruleOrder(mo *memo, independent, sigma2 float64, noise noisymax.Noise, classes int) (float64, error) {
	top := ruleOrderFactor * (independent - 1)
	order := 1 + top
	for k := 1; ; k++ {
		if smoothConditionsHold(mo, sigma2, classes, order, noise) {
			return order, nil
		}
		if order = 1 + math.Floor(4*top*math.Pow(2, -float64(k)/2))/4; order <= 1 {
			return 0, fmt.Errorf("smooth sensitivity: conditions C5 and C6 fail at sigma2 = %v, C = %d at every order the data-free rule tries (%v down to 1): fix the order", sigma2, classes, 1+top)
		}
	}
}

// ruleSigma is withDataFree's σ_ss at β for a data-independent cost of
// slope per unit of order: (λe^{2β}/S)^{1/3} with S = λ·slope/128.
func ruleSigma(beta, slope float64) float64 {
	return math.Cbrt(math.Exp(2*beta) / (ruleSSShare * slope))
}

// smooth is a release of the data-dependent Rényi DP by smooth
// sensitivity (the PATE paper, Section 4; its cost by gnssRDP): the
// β-smooth sensitivity SS of the cost at Order, Margin added for the
// evaluation's rounding, the GNSS noise σ_ss and its Deviation, the
// release's own cost GNSS, the noisy cost Released drawn on the lattice
// gnssLattice, and Eps, their sum converted to (ε, δ). Error
// says why it was not computed, when the analysis does not apply.
// FromVotes says that a parameter was chosen from the votes (the PATE
// authors' choice): the release and its error, which names the order,
// are then not for publication.
//
// Eps is an estimate of the data-dependent cost, not a bound on it: the
// noise that makes it private is as likely to lower it as to raise it, so
// about half of the draws are below the cost they estimate (the PATE
// paper, Section 4). The guarantee is the data-independent bound.
//
// prepareSmooth computes everything but the draw; Draw draws it, Recall
// shows a draw recorded before (DESIGN "Drawn once": a draw is a release,
// drawn once per votes and settings).
type smooth struct {
	Order                              float64
	Beta, SS, Margin, Sigma, Deviation float64
	GNSS, Released, Eps                float64
	FromVotes                          bool
	Error                              string
	// Drawn says that Released and Eps are set, by Draw or Recall.
	Drawn bool

	// center is the data-dependent Rényi DP the draw is centred at (a
	// function of the votes: never printed); delta and conv convert the
	// draw.
	center float64
	delta  float64
	conv   accountant.Conversion
}

// releaseSmooth draws the smooth-sensitivity release of acct's
// data-dependent Rényi DP (prepareSmooth, then smooth.Draw from src).
func releaseSmooth(ctx context.Context, acct *rdpAccount, res bounds, p SmoothParams, delta float64, c accountant.Conversion, src *noise.Source) (smooth, error) {
	s, err := prepareSmooth(ctx, acct, res, p, delta, c)
	if err != nil || s.Error != "" {
		return s, err
	}
	return s, s.Draw(src)
}

// prepareSmooth computes the smooth-sensitivity release of acct's
// data-dependent Rényi DP with parameters p, all but its draw: those p
// leaves 0 set by withDataFree from res's data-independent bound or,
// with p.FromVotes, as the PATE authors choose them from the votes (the
// order of res's data-dependent bound, β and σ_ss by
// chooseGNSS); the draw is converted at delta by c. res is
// acct's result at delta by c. A bound that does not apply is said in the
// result's Error.
func prepareSmooth(ctx context.Context, acct *rdpAccount, res bounds, p SmoothParams, delta float64, c accountant.Conversion) (smooth, error) {
	s := smooth{Order: p.Order, Beta: p.Beta, Sigma: p.Sigma, FromVotes: !p.publishable()}
	// fail reports a parameter out of its domain as the caller's, named
	// as such, or, where the caller set none of them, in Error: the
	// analysis does not apply at the parameters a rule chose.
	fail := func(err error) (smooth, error) {
		if p.Order == 0 && p.Beta == 0 && p.Sigma == 0 {
			s.Error = err.Error()
			return s, nil
		}
		return s, rename(err, map[string]string{"alpha": "ss order", "order": "ss order", "sigma": "sigma ss"})
	}
	switch {
	case p.FromVotes && (p.Beta == 0) != (p.Sigma == 0):
		return s, errors.New("smooth sensitivity: beta and sigma ss are chosen together from the votes: fix both, or neither")
	case p.FromVotes && s.Order == 0:
		s.Order = res.Dependent.Order
	case !p.FromVotes:
		q, err := p.withDataFree(acct.mo, res.Independent, acct.mech.Sigma2, acct.mech.Noise, res.Classes)
		if err != nil {
			s.Error = err.Error()
			return s, nil
		}
		s.Order, s.Beta, s.Sigma = q.Order, q.Beta, q.Sigma
	}
	ls, err := acct.localSensitivity(ctx, s.Order)
	if ctx.Err() != nil {
		return s, ctx.Err()
	}
	if err != nil {
		s.Error = err.Error()
		return s, nil
	}
	rdp, err := acct.rdpDependent(s.Order)
	if err != nil {
		return fail(err)
	}
	if s.Margin, err = acct.margin(s.Order); err != nil {
		return s, err
	}
	if s.Beta != 0 {
		if s.SS, err = smoothSensitivity(ls, s.Beta); err == nil {
			_, err = gnssRDP(s.Beta, s.Sigma, s.Order)
		}
	} else {
		var ch gnssChoice
		ch, err = chooseGNSS(rdp, ls, s.Order)
		s.Beta, s.SS, s.Sigma = ch.Beta, ch.SS, ch.Sigma
	}
	if err != nil {
		return fail(err)
	}
	if s.GNSS, err = gnssLatticeRDP(s.Beta, s.Sigma, s.Order); err != nil {
		return fail(err)
	}
	if s.Deviation, err = gnssDeviation(s.SS+s.Margin, s.Sigma, s.Order); err != nil {
		return s, err
	}
	if s.Deviation >= gnssMaxDeviation {
		s.Error = fmt.Sprintf("smooth sensitivity: the noise's deviation %v, sigma ss times the smooth sensitivity, is 2^62 or more steps of the lattice 2^-40 the release is drawn on: a smaller sigma ss", s.Deviation)
		return s, nil
	}
	s.center, s.delta, s.conv = rdp, delta, c
	return s, nil
}

// errNotPrepared is a draw of a release that prepareSmooth did not
// compute, or could not.
var errNotPrepared = errors.New("smooth sensitivity: no release prepared to draw")

// Draw draws the release from src, on the lattice gnssLattice,
// and converts it: a new release of the votes.
func (s *smooth) Draw(src *noise.Source) error {
	if s.Deviation == 0 || s.Error != "" {
		return errNotPrepared
	}
	r, err := discrete.LatticeGaussian(src, s.center, s.Deviation, gnssLattice)
	if err != nil {
		return err
	}
	return s.Recall(r)
}

// Recall sets the release to released, the value a draw of the same
// release gave before, and converts it: showing it again is
// post-processing, no new release.
func (s *smooth) Recall(released float64) error {
	if s.Deviation == 0 || s.Error != "" {
		return errNotPrepared
	}
	eps, err := s.conv.ConvertRDP(max(0, released)+s.GNSS, s.Order, s.delta)
	if err != nil {
		return err
	}
	s.Released, s.Eps, s.Drawn = released, eps, true
	return nil
}

// Cost returns the (ε, δ) of the release itself (its GNSS cost at its
// order, converted at the δ of its ε), which a ledger charges per draw.
func (s *smooth) Cost() (accountant.Guarantee, error) {
	if s.Deviation == 0 || s.Error != "" {
		return accountant.Guarantee{}, errNotPrepared
	}
	eps, err := s.conv.ConvertRDP(s.GNSS, s.Order, s.delta)
	return accountant.Guarantee{Eps: eps, Delta: s.delta}, err
}

// rename returns err with its parameter error renamed by names,
// so that a parameter of the smooth-sensitivity release is not taken for
// the account's own of the same name.
func rename(err error, names map[string]string) error {
	var pe *param.Error
	if !errors.As(err, &pe) {
		return err
	}
	to, ok := names[pe.Name]
	if !ok {
		return err
	}
	c := *pe
	c.Name = to
	return fmt.Errorf("smooth sensitivity: %w", &c)
}
