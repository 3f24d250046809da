package pate

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/votefile"
)

// AccountOptions are what an account of GNMax, Confident-GNMax or LNMax
// needs besides the votes.
type AccountOptions struct {
	// Mechanism is gnmax, confident-gnmax or lnmax; GNMax holds the
	// settings of the first two (and the noise the release drew), LNMax
	// the scale of the third.
	Mechanism votefile.MechanismName
	GNMax     noisymax.ConfidentGNMax
	LNMax     noisymax.LNMax
	// Delta is the δ of the (ε, δ) reported, Orders the Rényi orders (nil:
	// noisymax.DefaultOrders), Conversion the conversion of Rényi DP
	// to (ε, δ).
	Delta      float64
	Orders     []float64
	Conversion accountant.Conversion
	// Directions says which divergences the data-dependent bound covers:
	// both (the zero value, a guarantee) or one-sided (the PATE paper's).
	Directions noisymax.Directions
	// Labels, if set, are the release's labels: the account is then of
	// its queries as answered and withheld. Their rows must be the
	// votes', in order.
	Labels *votefile.LabelReader
	// Smooth sets the smooth-sensitivity release of the data-dependent
	// cost.
	Smooth SmoothParams
	// Recorded, if set, are the releases a privacy ledger charged: the
	// reference for the header of Labels, which must be of the ledger's
	// ensemble and state the mechanism and per-label (ε, δ) of one of
	// them, with at most the labels it charged.
	Recorded *Recorded
}

// Recorded are the releases that the privacy ledger Ledger, bound to
// Ensemble, has charged (ledger.Ledger.Runs).
type Recorded struct {
	Ledger, Ensemble string
	Releases         []RecordedRelease
}

// RecordedRelease is one release a ledger charged: its mechanism, the
// guarantee of each label and how many labels it charged.
type RecordedRelease struct {
	Mechanism votefile.MechanismName
	PerQuery  accountant.Guarantee
	Labels    int
}

// charged returns the most labels that a release recorded in r with the
// mechanism and per-label guarantee of the header m charged, and whether
// there is one.
func (r *Recorded) charged(m *votefile.LabelMeta) (int, bool) {
	most, found := 0, false
	for _, x := range r.Releases {
		if x.Mechanism == m.Mechanism && x.PerQuery == m.PerQuery {
			most, found = max(most, x.Labels), true
		}
	}
	return most, found
}

// AccountResult is PATE's account of the queries of a vote file: for lnmax
// its data-independent guarantee (LNMax), for the GNMax family the
// data-independent and data-dependent bounds (Result) with the
// smooth-sensitivity release of the latter (Smooth).
type AccountResult struct {
	Options  AccountOptions
	Teachers int
	Classes  int
	LNMax    *noisymax.LNMaxResult
	Result   noisymax.Result
	Smooth   Smooth
	// Realised says that the account is of a release's labels.
	Realised bool
	// Votes is the SHA-256 of what the account read (K, C, every query's
	// counts in order and, with labels, which were answered), in hex:
	// the same for the same votes in any file format, the key of a
	// release's record (Draws).
	Votes string
	// Binding is what the votes' header states of their ensemble, which
	// a ledger charged for a release must be bound to.
	Binding votefile.Binding
	// Draws counts the draws of this smooth-sensitivity release (these
	// votes and settings) that were released: 1 for a draw of Account,
	// every recorded one after ReleaseOnce.
	Draws int
}

// Account accounts for the queries of in (any vote file, read as counts)
// under opts, drawing the smooth-sensitivity release from src, or, with
// src nil, preparing it only (PrepareSmooth), for the caller to draw once
// (AccountResult.ReleaseOnce) or to recall. The votes
// must be in the one-vote relation, the relation of every mechanism here
// (votefile.Check); labels with a metadata header must be of this
// mechanism and its settings (else a *votefile.SettingError), K and C, and
// of the votes' ensemble; every label row must name its query.
func Account(ctx context.Context, in votefile.Reader, opts AccountOptions, src *noise.Source) (*AccountResult, error) {
	if err := accountant.CheckDelta("delta", opts.Delta); err != nil {
		return nil, err
	}
	oneVote := accountant.OneVote
	b, err := votefile.Check(in.Meta(), votefile.Stated{By: "the " + string(opts.Mechanism) + " mechanism", Relation: &oneVote})
	if err != nil {
		return nil, err
	}
	out := &AccountResult{Options: opts, Teachers: in.K(), Classes: in.Classes(), Realised: opts.Labels != nil, Binding: b}
	if err := checkLabels(in, opts); err != nil {
		return nil, err
	}
	if opts.Mechanism == votefile.LNMax {
		n, err := count(ctx, in)
		if err != nil {
			return nil, err
		}
		res, err := noisymax.LNMaxAccount(opts.LNMax, n, opts.Delta, opts.Orders, opts.Conversion)
		out.LNMax = &res
		return out, err
	}
	acct, err := noisymax.NewAccountWith(opts.GNMax, in.K(), in.Classes(), noisymax.Options{Orders: opts.Orders, Directions: opts.Directions})
	if err != nil {
		return nil, err
	}
	queries := 0
	h := newContentHash(in.K(), in.Classes(), out.Realised)
	for n := 1; in.Next(); n++ {
		queries = n
		q := in.Query()
		a := noisymax.AnswerUnknown
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
			a = noisymax.NotAnswered
			if row.Answered {
				a = noisymax.Answered
			}
		}
		if cast := castVotes(q.Counts); cast < in.K() {
			return nil, &AbstainError{Query: n, Cast: cast, K: in.K()}
		}
		if err := acct.Add(q.Counts, a); err != nil {
			return nil, fmt.Errorf("query %d: %w", n, err)
		}
		h.add(q.Counts, a == noisymax.Answered)
		// A query's data-dependent bound at every order takes up to a
		// tenth of a millisecond at K = 250.
		if n%(1<<8) == 0 && ctx.Err() != nil {
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
	if r, lr := opts.Recorded, opts.Labels; r != nil && lr != nil && lr.Meta() != nil {
		if most, _ := r.charged(lr.Meta()); queries > most {
			return nil, lr.HeaderErrorf("the file holds %d labels, but the releases of %s at %v per label that ledger %s records charged at most %d: the labels are not all charged", queries, lr.Meta().Mechanism, lr.Meta().PerQuery, r.Ledger, most)
		}
	}
	out.Votes = h.sum()
	if out.Result, err = acct.Result(opts.Delta, opts.Conversion); err != nil {
		return nil, err
	}
	if out.Smooth, err = PrepareSmooth(acct, out.Result, opts.Smooth, opts.Delta, opts.Conversion); err != nil || src == nil || out.Smooth.Error != "" {
		return out, err
	}
	out.Draws = 1
	return out, out.Smooth.Draw(src)
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
	if _, err := s.Agree(m); err != nil {
		return err
	}
	if err := checkStated(lr, m, g); err != nil {
		return err
	}
	if r := opts.Recorded; r != nil {
		if m.Ensemble != r.Ensemble {
			return lr.HeaderErrorf("labels of ensemble %q, but ledger %s is bound to ensemble %q", m.Ensemble, r.Ledger, r.Ensemble)
		}
		if _, ok := r.charged(m); !ok {
			return lr.HeaderErrorf("it states %s at %v per label, but ledger %s records no release of that mechanism at that guarantee: the header does not describe a release the ledger charged", m.Mechanism, m.PerQuery, r.Ledger)
		}
	}
	return nil
}

// checkStated checks that the settings g of the header m of a multi-class
// release's labels give the per-label (ε, δ) the header states, as the
// release computed it (ensemble.NewClassGNMax at the stated δ): a header
// that contradicts itself is damaged, and its settings cannot be trusted
// for an account (a σ2 edited from 40 to 400 would report a tenth of the
// cost). The threshold plays no part in the per-label guarantee, so an
// edited threshold is not found here. Two-class GNMax labels (continuous
// noise, σ calibrated to the target) are not rebuilt.
func checkStated(lr *votefile.LabelReader, m *votefile.LabelMeta, g noisymax.ConfidentGNMax) error {
	if m.Classes == 2 && g.Noise == noisymax.ContinuousNoise {
		return nil
	}
	agg, err := ensemble.NewClassGNMax(g, m.K, m.Classes, m.PerQuery.Delta)
	if err != nil {
		return lr.HeaderErrorf("its settings are not those of a release: %v", err)
	}
	if got := agg.Privacy().Guarantee; got != m.PerQuery {
		settings := fmt.Sprintf("sigma2 = %v", g.Sigma2)
		if g.Confident() {
			settings = fmt.Sprintf("sigma1 = %v, %s", g.Sigma1, settings)
		}
		return lr.HeaderErrorf("it states eps = %v per label at delta = %v, but its settings (%s, noise %v) give eps = %v: the header contradicts itself (damaged or edited), so its settings cannot be accounted",
			m.PerQuery.Eps, m.PerQuery.Delta, settings, g.Noise, got.Eps)
	}
	return nil
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
func MechanismOf(s votefile.Settings) votefile.MechanismName {
	switch {
	case s.LaplaceScale != nil:
		return votefile.LNMax
	case s.Threshold != nil || s.Sigma1 != nil:
		return votefile.ConfidentGNMax
	}
	return votefile.GNMax
}

// Guarantee returns the bound to publish for what the account printed
// that may be published, and what it covers (guarantee). Smooth.Eps is an
// estimate, not a bound: this is the guarantee.
func (a *AccountResult) Guarantee() (eps float64, covers string, err error) {
	if a.LNMax != nil {
		return a.LNMax.Eps, "the queries, data-independent", nil
	}
	return guarantee(a.Result, a.Smooth, a.Draws, a.Options.Delta, a.Options.Conversion)
}

// guarantee returns the bound on the queries of r: the accountant's
// data-independent total (r.Run: the exact composition of their noise or
// its RDP, through accountant.ComposeRun) and, when the
// smooth-sensitivity release s was drawn with parameters fixed without the
// votes (so that it may be published), on its draws too (one kept among
// several is a function of them all), composed with the queries'
// data-independent Rényi DP (Papernot et al. 2018, Proposition 8) at its
// order (Mironov 2017, Proposition 1; its cost by the PATE paper's
// Theorem 23), converted at delta by c; and what it covers.
func guarantee(r noisymax.Result, s Smooth, draws int, delta float64, c accountant.Conversion) (float64, string, error) {
	if !s.Drawn || s.FromVotes {
		return r.Run.Guarantee.Eps, "the queries, data-independent", nil
	}
	slope, err := independentSlope(r.Independent)
	if err != nil {
		return 0, "", err
	}
	n := max(1, draws)
	// Three roundings (the slope, two products) and a sum: raised by 8 ulps.
	rdp := (slope*s.Order + float64(n)*s.GNSS) * (1 + 0x1p-49)
	eps, err := accountant.ConvertRDP(rdp, s.Order, delta, c)
	what := "its draw"
	if n > 1 {
		what = fmt.Sprintf("its %d draws", n)
	}
	return eps, fmt.Sprintf("the queries, data-independent, and the smooth-sensitivity release (%s), composed at its order %v", what, s.Order), err
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
