package optimal

import (
	"context"
	"errors"
	"time"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// Cached returns the certified optimal gamma for problem p and prior: from
// the cache when it holds a valid entry, otherwise computed by Solve
// and stored. A corrupt entry is passed to onCorrupt (if not nil), then
// recomputed and replaced. d may be nil, which disables the cache. cached
// reports whether the entry came from disk; a failure to store a fresh
// entry is returned as storeErr beside a valid result.
func Cached(ctx context.Context, d *cache.Dir, p constraints.Params, prior gamma.Prior, opts Options, onCorrupt func(error)) (e *cache.Entry, cached bool, storeErr, err error) {
	key := cache.Key{Params: p, Prior: prior.String()}
	if d != nil {
		e, err := d.Get(key)
		var ce *cache.CorruptError
		switch {
		case err == nil:
			return e, true, nil, nil
		case errors.As(err, &ce):
			if onCorrupt != nil {
				onCorrupt(err)
			}
		case !errors.Is(err, cache.ErrNotFound):
			return nil, false, nil, err
		}
	}
	r, err := Solve(ctx, p, prior, opts)
	if err != nil {
		return nil, false, nil, err
	}
	e = &cache.Entry{
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
