package cache

import (
	"context"
	"errors"
	"time"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// Solve returns the certified optimal gamma for problem p and prior: from
// the cache when it holds a valid entry, otherwise computed by gamma.Opt
// and stored. A corrupt entry is passed to onCorrupt (if not nil), then
// recomputed and replaced. d may be nil, which disables the cache. cached
// reports whether the entry came from disk; a failure to store a fresh
// entry is returned as storeErr beside a valid result.
func (d *Dir) Solve(ctx context.Context, p constraints.Params, prior gamma.Prior, opts gamma.OptOptions, onCorrupt func(error)) (e *Entry, cached bool, storeErr, err error) {
	key := Key{Params: p, Prior: prior.String()}
	if d != nil {
		e, err := d.Get(key)
		var ce *CorruptError
		switch {
		case err == nil:
			return e, true, nil, nil
		case errors.As(err, &ce):
			if onCorrupt != nil {
				onCorrupt(err)
			}
		case !errors.Is(err, ErrNotFound):
			return nil, false, nil, err
		}
	}
	r, err := gamma.Opt(ctx, p, prior, opts)
	if err != nil {
		return nil, false, nil, err
	}
	e = &Entry{
		Key: key.String(), K: p.K, M: p.M, Eps: p.Eps, Delta: p.Delta, TargetDelta: p.TargetDelta,
		Prior: prior.String(), Gamma: r.Gamma, Certificate: r.Certificate,
		Utility: r.Utility, SurrogateError: r.SurrogateError,
		Seconds: r.Elapsed.Seconds(), LPSolves: r.LPSolves, Rows: r.Rows, Passes: r.Passes, TieBroken: r.TieBroken,
		Created: time.Now().UTC().Truncate(time.Second),
	}
	if d != nil {
		storeErr = d.Put(e)
	}
	return e, false, storeErr, nil
}
