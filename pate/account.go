package pate

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/votefile"
)

// AccountOptions are what an account of GNMax, Confident-GNMax or LNMax
// needs besides the votes.
type AccountOptions struct {
	// Mechanism is gnmax, confident-gnmax or lnmax; GNMax holds the
	// settings of the first two (and the noise the release drew), LNMax
	// the scale of the third.
	Mechanism votefile.Mechanism
	GNMax     accountant.ConfidentGNMax
	LNMax     accountant.LNMax
	// Delta is the δ of the (ε, δ) reported, Orders the Rényi orders (nil:
	// accountant.DefaultPATEOrders), Conversion the conversion of Rényi DP
	// to (ε, δ).
	Delta      float64
	Orders     []float64
	Conversion accountant.Conversion
	// Directions says which divergences the data-dependent bound covers:
	// both (the zero value, a guarantee) or one-sided (the PATE paper's).
	Directions accountant.PATEDirections
	// Labels, if set, are the release's labels: the account is then of
	// its queries as answered and withheld. Their rows must be the
	// votes', in order.
	Labels *votefile.LabelReader
	// Smooth sets the smooth-sensitivity release of the data-dependent
	// cost.
	Smooth SmoothParams
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
// (votefile.Check); labels with a metadata header must be of this
// mechanism and its settings (else a *votefile.SettingError), K and C, and
// of the votes' ensemble; every label row must name its query.
func Account(ctx context.Context, in votefile.Reader, opts AccountOptions, src *noise.Source) (*Accounting, error) {
	oneVote := accountant.OneVote
	if _, err := votefile.Check(in.Meta(), votefile.Stated{By: "the " + string(opts.Mechanism) + " mechanism", Relation: &oneVote}); err != nil {
		return nil, err
	}
	out := &Accounting{Options: opts, Teachers: in.K(), Classes: in.Classes(), Realised: opts.Labels != nil}
	if err := checkLabels(in, opts); err != nil {
		return nil, err
	}
	if opts.Mechanism == votefile.LNMax {
		n, err := count(ctx, in)
		if err != nil {
			return nil, err
		}
		res, err := accountant.LNMaxAccount(opts.LNMax, n, opts.Delta, opts.Orders, opts.Conversion)
		out.LNMax = &res
		return out, err
	}
	acct, err := accountant.NewPATEAccountWith(opts.GNMax, in.K(), in.Classes(), accountant.PATEOptions{Orders: opts.Orders, Directions: opts.Directions})
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
		if cast := castVotes(q.Counts); cast < in.K() {
			return nil, &AbstainError{Query: n, Cast: cast, K: in.K()}
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
	out.Smooth, err = ReleaseSmooth(acct, out.Result, opts.Smooth, opts.Delta, opts.Conversion, src)
	return out, err
}

// checkLabels checks that the header of opts.Labels, if any, is of the
// account's mechanism and of the votes of in.
func checkLabels(in votefile.Reader, opts AccountOptions) error {
	if opts.Labels == nil {
		return nil
	}
	lr, m := opts.Labels, opts.Labels.Meta()
	switch {
	case opts.Mechanism == votefile.LNMax:
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
	s := votefile.Settings{Sigma2: &g.Sigma2, Noise: &g.Noise}
	if g.Confident() {
		s.Threshold, s.Sigma1 = &g.Threshold, &g.Sigma1
	}
	_, err := s.Agree(m)
	return err
}

// count reads every query of in, checking it, and returns how many
// there are.
func count(ctx context.Context, in votefile.Reader) (int, error) {
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
func MechanismOf(s votefile.Settings) votefile.Mechanism {
	switch {
	case s.LaplaceScale != nil:
		return votefile.LNMax
	case s.Threshold != nil || s.Sigma1 != nil:
		return votefile.ConfidentGNMax
	}
	return votefile.GNMax
}

// AbstainError reports a query in which teachers abstained, which the
// data-dependent account does not take: its bound (Papernot et al. 2018,
// Theorem 6 with the smooth sensitivity of its Proposition 7 bound)
// ranges over neighbours that move one vote from a class to another,
// every teacher voting, not over those that withdraw or cast one.
type AbstainError struct{ Query, Cast, K int }

func (e *AbstainError) Error() string {
	return fmt.Sprintf("query %d: %d of K = %d teachers voted: the data-dependent account assumes every teacher votes (its neighbours move a vote between classes, never withdraw one), so it does not take abstentions; the data-independent guarantee of a release from these votes holds (darrm aggregate, docs/pate.md, \"Abstaining teachers\")", e.Query, e.Cast, e.K)
}

// BadInput reports that the votes, the caller's input, are at fault.
func (e *AbstainError) BadInput() bool { return true }

// castVotes returns the votes in counts: K less the teachers that
// abstained.
func castVotes(counts []int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
