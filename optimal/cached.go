package optimal

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// cached returns the certified optimal gamma for problem p and prior: from
// the cache when it holds a valid entry, otherwise computed by Solve
// and stored. A cached gamma is trusted for its values only: its
// certificate is computed again in this call by the exhaustive check
// (gamma.Verify), never read from the file, and the entry returned
// carries the new one. An entry that is corrupt or fails that check is
// passed to onCorrupt (if not nil), then recomputed and replaced. Only the
// canonical gamma_opt is stored (Result.TieBroken): when the tie-break
// fails, the result is returned but not stored, so that a later call
// solves again, and the cache's entries are those of the current solver
// (cache.Version). d may be nil, which disables the cache. The result's
// Cached says whether it came from the cache, its Entry the gamma with its certificate
// and statistics, its Path the cache file (with a cache), and its
// StoreErr a failure to store a fresh entry, beside a valid result.
func cached(ctx context.Context, d *cache.Dir, p constraints.Problem, prior gamma.Prior, opts Options, onCorrupt func(error), certify certifier) (Loaded, error) {
	key := cache.Key{Problem: p, Prior: prior.String()}
	var path string
	if d != nil {
		path = d.Path(key)
		e, err := reverified(ctx, d, key, certify)
		var ce *cache.CorruptError
		switch {
		case err == nil:
			return Loaded{Gamma: e.Gamma, Cached: true, Entry: e, Path: path}, nil
		case errors.As(err, &ce):
			if onCorrupt != nil {
				onCorrupt(err)
			}
		case !errors.Is(err, cache.ErrNotFound):
			return Loaded{}, err
		}
	}
	r, err := Solve(ctx, p, prior, opts)
	if err != nil {
		return Loaded{}, err
	}
	e := &cache.Entry{
		Key: key.String(), K: p.K, M: p.M, Eps: p.Eps, Delta: p.Delta, TargetDelta: p.TargetDelta, Relation: p.Relation,
		Prior: prior.String(), Gamma: r.Gamma, Certificate: r.Certificate,
		Utility: r.Utility, SurrogateError: r.SurrogateError, UpperBound: r.UpperBound, Gap: r.Gap, Scale: r.Scale,
		Seconds: r.Elapsed.Seconds(), LPSolves: r.LPSolves, Rows: r.Rows, Passes: r.Passes, TieBroken: r.TieBroken,
		Stalled: r.Stalled, Created: time.Now().UTC().Truncate(time.Second),
	}
	l := Loaded{Gamma: e.Gamma, Entry: e, Path: path}
	if d != nil && r.TieBroken && !r.Stalled {
		l.StoreErr = d.Put(e)
	}
	return l, nil
}

// reverified returns the cache entry for key with its certificate computed
// now from its gamma's values by the exhaustive check, in place of the
// stored one, and its objective and surrogate error computed from the
// values too (the upper bound, and with it the gap, can only be read: see
// checkClaims). An entry whose gamma does not pass, or whose values
// contradict its stored optimality, is a *cache.CorruptError naming the
// file: a checksum proves only that the file is unchanged since it was
// written, not that what was written is private or optimal.
func reverified(ctx context.Context, d *cache.Dir, key cache.Key, certify certifier) (*cache.Entry, error) {
	e, err := d.Get(key)
	if err != nil {
		return nil, err
	}
	cert, err := certify(ctx, key.Problem, e.Gamma)
	if err != nil {
		return nil, err
	}
	if cert.Status != gamma.Certified {
		return nil, &cache.CorruptError{Path: d.Path(key), Reason: fmt.Sprintf("its gamma, checked again now, is %v: max f / budget = %.15g", cert.Status, cert.Ratio)}
	}
	e.Certificate = cert
	if err := checkClaims(ctx, e, key); err != nil {
		return nil, &cache.CorruptError{Path: d.Path(key), Reason: err.Error()}
	}
	return e, nil
}

// claimSlack is the relative room for rounding when a stored objective or
// gap is compared with one computed again: the same sums in the same
// order agree exactly, so only a changed value is outside it.
const claimSlack = 1e-12

// checkClaims sets e's objective (Utility) and surrogate error from its
// gamma's values under key's prior, and its gap from that objective and
// the stored upper bound, which cannot be computed without the solve; a
// gamma whose objective lies above the upper bound, or below it by more
// than the stored gap, contradicts the stored claims: the entry was
// changed (a gamma of zeros, say, is still private, but far from
// optimal).
func checkClaims(ctx context.Context, e *cache.Entry, key cache.Key) error {
	var prior gamma.Prior
	if err := prior.UnmarshalText([]byte(key.Prior)); err != nil {
		return fmt.Errorf("prior %q: %v", key.Prior, err)
	}
	coeffs, err := prior.Coefficients(key.Problem.K)
	if err != nil {
		return fmt.Errorf("prior %q: %v", key.Prior, err)
	}
	m, err := gamma.Gamma(e.Gamma).Measure(ctx, nil, coeffs, nil)
	if err != nil {
		return err
	}
	u, ub := m.Utility, e.UpperBound
	slack := claimSlack * math.Max(math.Abs(ub), 1)
	switch {
	case !(ub > 0) || math.IsInf(ub, 0) || !(e.Gap >= 0):
		return fmt.Errorf("stored upper bound %v and gap %v: not a solve's", ub, e.Gap)
	case u > ub+slack:
		return fmt.Errorf("its gamma's objective %.15g exceeds the stored upper bound %.15g: the stored optimality does not hold", u, ub)
	case ub-u > e.Gap*ub+slack:
		return fmt.Errorf("its gamma's objective %.15g lies %.3g below the stored upper bound %.15g, more than the stored gap %.3g allows: the gamma is not the one solved", u, (ub-u)/ub, ub, e.Gap)
	}
	e.Utility, e.SurrogateError = u, m.SurrogateError
	e.Gap = math.Max((ub-u)/ub, 0)
	return nil
}
