package pate

import (
	"context"
	"errors"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
)

// AccountOptions are what an account of GNMax, Confident-GNMax or LNMax
// needs besides the votes.
type AccountOptions struct {
	// Mechanism is gnmax, confident-gnmax or lnmax; GNMax holds the
	// settings of the first two (and the noise the release drew), LNMax
	// the scale of the third.
	Mechanism string
	GNMax     accountant.ConfidentGNMax
	LNMax     accountant.LNMax
	// Delta is the δ of the (ε, δ) reported, Orders the Rényi orders (nil:
	// accountant.DefaultPATEOrders), Conversion the conversion of Rényi DP
	// to (ε, δ).
	Delta      float64
	Orders     []float64
	Conversion accountant.Conversion
	// Labels, if set, are the release's labels: the account is then of
	// its queries as answered and withheld. Their rows must be the
	// votes', in order.
	Labels *ensemble.LabelReader
	// Smooth sets the smooth-sensitivity release of the data-dependent
	// cost.
	Smooth SmoothParams
}

// SmoothParams are the parameters of a smooth-sensitivity release: its
// order (0: the order of the data-dependent bound), and β and σ_ss (both
// 0: chosen from the votes, as the PATE authors do).
type SmoothParams struct {
	Order, Beta, Sigma float64
}

// Fixed reports whether the parameters were fixed in advance (the order,
// β and σ_ss), as a publishable release of the data-dependent ε needs.
func (p SmoothParams) Fixed() bool { return p.Order != 0 && p.Beta != 0 }

// Smooth is a release of the data-dependent Rényi DP by smooth
// sensitivity (the PATE paper, Section 4 and Theorem 23): the
// β-smooth sensitivity SS of the cost at Order, Margin added for the
// evaluation's rounding, the GNSS noise σ_ss and its Deviation, the
// release's own cost GNSS, the noisy cost Released drawn on the lattice
// accountant.GNSSLattice, and Eps, their sum converted to (ε, δ). Error
// says why it was not computed, when the analysis does not apply.
type Smooth struct {
	Order                              float64
	Beta, SS, Margin, Sigma, Deviation float64
	GNSS, Released, Eps                float64
	Fixed                              bool
	Error                              string
}

// ReleaseSmooth draws the smooth-sensitivity release of acct's
// data-dependent Rényi DP at p.Order (the data-dependent bound's order
// when 0) with p's β and σ_ss, or the PATE authors' choice of them from
// the votes (accountant.ChooseGNSS), and converts it at delta by c. A
// bound that does not apply to the votes is said in the result's Error.
func ReleaseSmooth(acct *accountant.PATEAccount, dependent accountant.OrderEps, p SmoothParams, delta float64, c accountant.Conversion, src *ensemble.Source) (Smooth, error) {
	s := Smooth{Order: p.Order, Fixed: p.Fixed()}
	if s.Order == 0 {
		s.Order = dependent.Order
	}
	named := func(err error) error {
		return rename(err, map[string]string{"alpha": "ss order", "order": "ss order", "sigma": "sigma ss"})
	}
	ls, err := acct.LocalSensitivity(s.Order)
	if err != nil {
		s.Error = err.Error()
		return s, nil
	}
	rdp, err := acct.RDPDependent(s.Order)
	if err != nil {
		return s, named(err)
	}
	if s.Margin, err = acct.EvalMargin(s.Order); err != nil {
		return s, err
	}
	var ch accountant.GNSSChoice
	if p.Beta != 0 || p.Sigma != 0 {
		ch = accountant.GNSSChoice{Beta: p.Beta, Sigma: p.Sigma}
		if ch.SS, err = accountant.SmoothSensitivity(ls, p.Beta); err == nil {
			_, err = accountant.GNSSRDP(p.Beta, p.Sigma, s.Order)
		}
	} else {
		ch, err = accountant.ChooseGNSS(rdp, ls, s.Order)
	}
	if err != nil {
		return s, named(err)
	}
	s.Beta, s.SS, s.Sigma = ch.Beta, ch.SS, ch.Sigma
	if s.GNSS, err = accountant.GNSSLatticeRDP(ch.Beta, ch.Sigma, s.Order); err != nil {
		return s, named(err)
	}
	if s.Deviation, err = accountant.GNSSDeviation(ch.SS+s.Margin, ch.Sigma, s.Order); err != nil {
		return s, err
	}
	if s.Released, err = ensemble.LatticeGaussian(src, rdp, s.Deviation, accountant.GNSSLattice); err != nil {
		return s, err
	}
	if s.Eps, err = accountant.ConvertRDP(max(0, s.Released)+s.GNSS, s.Order, delta, c); err != nil {
		return s, err
	}
	return s, nil
}

// rename returns err with its *accountant.ParamError renamed by names,
// so that a parameter of the smooth-sensitivity release is not taken for
// the account's own of the same name.
func rename(err error, names map[string]string) error {
	var pe *accountant.ParamError
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

// Accounting is PATE's account of the queries of a vote file: for lnmax
// its data-independent guarantee (LNMax), for the GNMax family the
// data-independent and data-dependent bounds (Result) with the
// smooth-sensitivity release of the latter (Smooth).
type Accounting struct {
	Options  AccountOptions
	Teachers int
	Classes  int
	LNMax    *accountant.LNMaxResult
	Result   accountant.PATEResult
	Smooth   Smooth
	// Realised says that the account is of a release's labels.
	Realised bool
}

// Account accounts for the queries of in (any vote file, read as counts)
// under opts, drawing the smooth-sensitivity release from src. The votes
// must be in the one-vote relation, the relation of every mechanism here
// (ensemble.Check); labels with a metadata header must be of this
// mechanism and its settings (else a *ensemble.SettingError), K and C, and
// of the votes' ensemble; every label row must name its query.
func Account(ctx context.Context, in ensemble.Reader, opts AccountOptions, src *ensemble.Source) (*Accounting, error) {
	oneVote := ensemble.OneVote
	if _, err := ensemble.Check(in.Meta(), ensemble.Stated{By: "the " + opts.Mechanism + " mechanism", Relation: &oneVote}); err != nil {
		return nil, err
	}
	out := &Accounting{Options: opts, Teachers: in.K(), Classes: in.Classes(), Realised: opts.Labels != nil}
	if err := checkLabels(in, opts); err != nil {
		return nil, err
	}
	if opts.Mechanism == "lnmax" {
		n, err := count(ctx, in)
		if err != nil {
			return nil, err
		}
		res, err := accountant.LNMaxAccount(opts.LNMax, n, opts.Delta, opts.Orders, opts.Conversion)
		out.LNMax = &res
		return out, err
	}
	acct, err := accountant.NewPATEAccount(opts.GNMax, in.K(), in.Classes(), opts.Orders)
	if err != nil {
		return nil, err
	}
	for n := 1; in.Next(); n++ {
		q := in.Query()
		a := accountant.AnswerUnknown
		if lr := opts.Labels; lr != nil {
			if !lr.Next() {
				if err := lr.Err(); err != nil {
					return nil, err
				}
				return nil, lr.Errorf("%d rows, but the votes have query %d and more", n-1, n)
			}
			row := lr.Row()
			if row.ID != q.Key() {
				return nil, lr.Errorf("row %d: id %q, but query %d of the votes has id %q: the labels are of other votes", row.Index, row.ID, n, q.Key())
			}
			a = accountant.NotAnswered
			if row.Answered {
				a = accountant.Answered
			}
		}
		if err := acct.Add(q.Counts, a); err != nil {
			return nil, fmt.Errorf("query %d: %w", n, err)
		}
		if n%(1<<16) == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if err := in.Err(); err != nil {
		return nil, err
	}
	if lr := opts.Labels; lr != nil && lr.Next() {
		return nil, lr.Errorf("row %d: more rows than the votes have queries", lr.Row().Index)
	} else if lr != nil && lr.Err() != nil {
		return nil, lr.Err()
	}
	if out.Result, err = acct.Result(opts.Delta, opts.Conversion); err != nil {
		return nil, err
	}
	out.Smooth, err = ReleaseSmooth(acct, out.Result.Dependent, opts.Smooth, opts.Delta, opts.Conversion, src)
	return out, err
}

// checkLabels checks that the header of opts.Labels, if any, is of the
// account's mechanism and of the votes of in.
func checkLabels(in ensemble.Reader, opts AccountOptions) error {
	if opts.Labels == nil {
		return nil
	}
	lr, m := opts.Labels, opts.Labels.Meta()
	switch {
	case opts.Mechanism == "lnmax":
		return lr.Errorf("lnmax is accounted data-independently only, which needs no release")
	case m == nil:
		return nil
	case m.Mechanism != opts.Mechanism:
		return lr.Errorf("made by %s, but the account is of %s", m.Mechanism, opts.Mechanism)
	case m.K != in.K() || m.Classes != in.Classes():
		return lr.Errorf("labels of K = %d teachers over %d classes, but the votes have K = %d over %d", m.K, m.Classes, in.K(), in.Classes())
	case m.Ensemble != "" && in.Meta() != nil && m.Ensemble != in.Meta().Ensemble:
		return lr.Errorf("labels of ensemble %s, but the votes are of ensemble %s", m.Ensemble, in.Meta().Ensemble)
	}
	g := opts.GNMax
	s := ensemble.Settings{Sigma2: &g.Sigma2, Noise: &g.Noise}
	if g.Confident() {
		s.Threshold, s.Sigma1 = &g.Threshold, &g.Sigma1
	}
	_, err := s.Agree(m)
	return err
}

// count reads every query of in, checking it, and returns how many
// there are.
func count(ctx context.Context, in ensemble.Reader) (int, error) {
	n := 0
	for in.Next() {
		if n++; n%(1<<16) == 0 && ctx.Err() != nil {
			return n, ctx.Err()
		}
	}
	return n, in.Err()
}

// MechanismOf returns the mechanism whose settings s holds: lnmax with a
// Laplace scale, confident-gnmax with a threshold step (a threshold or
// sigma1), gnmax otherwise.
func MechanismOf(s ensemble.Settings) string {
	switch {
	case s.LaplaceScale != nil:
		return "lnmax"
	case s.Threshold != nil || s.Sigma1 != nil:
		return "confident-gnmax"
	}
	return "gnmax"
}
