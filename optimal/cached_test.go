package optimal

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// TestCachedReverifiesTamperedEntry stores, with a valid checksum and the
// original (certified) certificate, an entry whose gamma was replaced by
// the exact majority. Cached must check the gamma itself, report the
// entry, and return and store a recomputed, certified gamma.
func TestCachedReverifiesTamperedEntry(t *testing.T) {
	ctx, d := context.Background(), tempCache(t)
	p, prior := constraints.New(11, 3, 0.1, 1e-5), gamma.UniformPrior()
	first, err := cached(ctx, d, p, prior, Options{}, nil, verifier(0))
	if err != nil {
		t.Fatal(err)
	}
	if first.Cached || first.StoreErr != nil || first.Path != d.Path(cache.Key{Problem: p, Prior: prior.String()}) {
		t.Fatalf("first call: cached %v, store error %v, path %q; want solved and stored", first.Cached, first.StoreErr, first.Path)
	}
	good := first.Entry
	again, err := cached(ctx, d, p, prior, Options{}, nil, verifier(0))
	if err != nil || !again.Cached || !slices.Equal(again.Gamma, good.Gamma) {
		t.Fatalf("second call: cached %v, err %v; want the stored gamma from the cache", again.Cached, err)
	}
	putTampered(t, d, good)
	var reported []error
	l, err := cached(ctx, d, p, prior, Options{}, func(err error) { reported = append(reported, err) }, verifier(0))
	if err != nil {
		t.Fatal(err)
	}
	e, cached := l.Entry, l.Cached
	var ce *cache.CorruptError
	if len(reported) != 1 || !errors.As(reported[0], &ce) || !strings.Contains(ce.Error(), "violated") {
		t.Errorf("tampered entry reported as %v", reported)
	}
	if cached || e.Certificate.Status != gamma.Certified || !slices.Equal(e.Gamma, good.Gamma) {
		t.Errorf("cached %v, status %v, gamma %v; want the recomputed gamma_opt", cached, e.Certificate.Status, e.Gamma)
	}
	if _, err := reverified(ctx, d, cache.Key{Problem: p, Prior: prior.String()}, verifier(0)); err != nil {
		t.Errorf("the entry was not replaced: %v", err)
	}
}

// TestCachedClaimsRecomputed: an entry re-signed with a gamma that is
// still private but not the optimum (zeros, or the optimum scaled down by
// 0.1%) contradicts its stored upper bound and gap and is corrupt; one
// whose stored objective, surrogate error or gap alone was changed is
// returned with them computed again from its gamma; one whose upper bound
// was lowered below its gamma's objective is corrupt.
func TestCachedClaimsRecomputed(t *testing.T) {
	ctx, d := context.Background(), tempCache(t)
	p, prior := constraints.New(11, 3, 0.1, 1e-5), gamma.UniformPrior()
	key := cache.Key{Problem: p, Prior: prior.String()}
	l, err := cached(ctx, d, p, prior, Options{}, nil, verifier(0))
	if err != nil {
		t.Fatal(err)
	}
	good := l.Entry
	for name, c := range map[string]struct {
		edit    func(e *cache.Entry)
		corrupt string // in the error; "" for a valid entry
	}{
		"gamma zeros":        {func(e *cache.Entry) { e.Gamma = make([]float64, len(e.Gamma)) }, "below the stored upper bound"},
		"gamma scaled down":  {func(e *cache.Entry) { e.Gamma = scaled(e.Gamma, 0.999) }, "below the stored upper bound"},
		"upper bound low":    {func(e *cache.Entry) { e.UpperBound = e.Utility * 0.99 }, "exceeds the stored upper bound"},
		"upper bound absent": {func(e *cache.Entry) { e.UpperBound = 0 }, "not a solve's"},
		"claims edited":      {func(e *cache.Entry) { e.Utility, e.SurrogateError, e.Gap = 1, 0, 0.5 }, ""},
	} {
		tampered := *good
		tampered.Gamma = slices.Clone(good.Gamma)
		c.edit(&tampered)
		if err := d.Put(&tampered); err != nil {
			t.Fatal(err)
		}
		e, err := reverified(ctx, d, key, verifier(0))
		var ce *cache.CorruptError
		switch {
		case c.corrupt != "" && (!errors.As(err, &ce) || !strings.Contains(err.Error(), c.corrupt)):
			t.Errorf("%s: %v, want a CorruptError saying %q", name, err, c.corrupt)
		case c.corrupt == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.corrupt == "" && (e.Utility != good.Utility || e.SurrogateError != good.SurrogateError || e.Gap != good.Gap):
			t.Errorf("%s: objective %v, surrogate error %v, gap %v; want %v, %v, %v computed again",
				name, e.Utility, e.SurrogateError, e.Gap, good.Utility, good.SurrogateError, good.Gap)
		}
	}
}

func scaled(g []float64, c float64) []float64 {
	out := make([]float64, len(g))
	for i, v := range g {
		out[i] = c * v
	}
	return out
}
