package optimal

import (
	"context"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/param"
)

// TestSourceLoad runs a Source through its cases in order, on one cache:
// a given gamma, bad fields, gamma_opt solved without and with a cache,
// then read from it, and a tampered entry, which a CacheOnly source
// refuses and any other source reports and replaces.
func TestSourceLoad(t *testing.T) {
	ctx, d := context.Background(), tempCache(t)
	p, prior := constraints.New(5, 2, 0.1, 1e-5), gamma.UniformPrior()
	path := d.Path(cache.Key{Problem: p, Prior: prior.String()})
	given := gamma.Gamma(slices.Repeat([]float64{0.5}, p.K+1))
	var threePriors gamma.Prior
	if err := threePriors.UnmarshalText([]byte("0.6,0.7,0.8")); err != nil {
		t.Fatal(err)
	}
	tamper := func() {
		e, err := d.Get(cache.Key{Problem: p, Prior: prior.String()})
		if err != nil {
			t.Fatal(err)
		}
		putTampered(t, d, e)
	}
	var corrupt []error
	for _, tc := range []struct {
		name   string
		before func()
		src    Source
		origin string // "given", "solved" or "cached"
		path   string
		field  string // the field of a *SourceError, and
		is     error  // what it wraps, or
		as     any    // its type
		says   string
	}{
		{name: "given", src: Source{Given: given, Cache: d, CacheOnly: true}, origin: "given"},
		{name: "given, wrong K", src: Source{Given: given[:4]}, field: "Given", says: "has 4 values, want K+1 = 6"},
		{name: "prior not set", src: Source{Cache: d}, field: "Prior", says: "prior is not set"},
		{name: "prior of another K", src: Source{Cache: d, Prior: threePriors}, field: "Prior"},
		{name: "cache only, no cache", src: Source{Prior: prior, CacheOnly: true}, field: "CacheOnly", is: ErrNoCache},
		{name: "cache only, not cached", src: Source{Cache: d, Prior: prior, CacheOnly: true}, field: "CacheOnly", is: cache.ErrNotFound,
			says: "the cache has no gamma_opt for K=5 m=2 eps=0.1 Delta=1e-05 delta=1.99999e-05 prior uniform (" + path + ")"},
		{name: "no cache", src: Source{Prior: prior}, origin: "solved"},
		{name: "solved and stored", src: Source{Cache: d, Prior: prior}, origin: "solved", path: path},
		{name: "cached", src: Source{Cache: d, Prior: prior}, origin: "cached", path: path},
		{name: "cache only, cached", src: Source{Cache: d, Prior: prior, CacheOnly: true}, origin: "cached", path: path},
		{name: "cache only, tampered", before: tamper, src: Source{Cache: d, Prior: prior, CacheOnly: true}, field: "CacheOnly", as: new(*cache.CorruptError), says: "violated"},
		{name: "tampered, solved again", src: Source{Cache: d, Prior: prior, OnCorrupt: func(err error) { corrupt = append(corrupt, err) }}, origin: "solved", path: path},
	} {
		if tc.before != nil {
			tc.before()
		}
		l, err := tc.src.Load(ctx, p)
		var se *SourceError
		switch {
		case tc.field != "":
			if !errors.As(err, &se) || se.Field != tc.field || tc.is != nil && !errors.Is(err, tc.is) || tc.as != nil && !errors.As(err, tc.as) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%s: %v, want a *SourceError for %s saying %q", tc.name, err, tc.field, tc.says)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case originOf(l) != tc.origin || l.Path != tc.path || l.StoreErr != nil:
			t.Errorf("%s: origin %v, path %q, store error %v; want %v, %q", tc.name, originOf(l), l.Path, l.StoreErr, tc.origin, tc.path)
		case tc.origin == "given" && (!slices.Equal(l.Gamma, given) || l.Entry != nil):
			t.Errorf("%s: %v, entry %v; want the given gamma", tc.name, l.Gamma, l.Entry)
		case tc.origin != "given" && (l.Entry == nil || l.Entry.Certificate.Status != gamma.Certified || !slices.Equal(l.Gamma, l.Entry.Gamma)):
			t.Errorf("%s: gamma %v, entry %+v; want certified gamma_opt", tc.name, l.Gamma, l.Entry)
		}
	}
	var ce *cache.CorruptError
	if len(corrupt) != 1 || !errors.As(corrupt[0], &ce) {
		t.Errorf("OnCorrupt told of %v, want the tampered entry", corrupt)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("gamma_opt was not stored: %v", err)
	}
}

// tempCache is an empty cache for a test.
func tempCache(t *testing.T) *cache.Dir {
	t.Helper()
	d, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// putTampered stores e, with its checksum and certificate, but the exact
// majority for its gamma: an entry whose file is intact and whose gamma
// is not private.
func putTampered(t *testing.T, d *cache.Dir, e *cache.Entry) {
	t.Helper()
	tampered := *e
	tampered.Gamma = slices.Repeat([]float64{1}, len(e.Gamma))
	if err := d.Put(&tampered); err != nil {
		t.Fatal(err)
	}
}

// TestSourceLoadValidatesFirst: a problem out of range is refused before
// anything sized by K is computed (the prior's K+1 coefficients at K =
// 1e9 were 8 GB), in either relation.
func TestSourceLoadValidatesFirst(t *testing.T) {
	for _, p := range []constraints.Problem{constraints.New(999999999, 2, 0.1, 0), constraints.NewOneVote(999999999, 1, 0)} {
		_, err := Source{Prior: gamma.UniformPrior()}.Load(context.Background(), p)
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != "K" {
			t.Errorf("K = %d, %v: %v, want a ParamError on K", p.K, p.Relation, err)
		}
	}
}

// TestSolveChecksOptions: options out of their domain are refused,
// naming the field: a CutsPerPass of MaxInt overflowed the count of rows
// a separation returns and panicked, and a NaN Tol returned another
// gamma.
func TestSolveChecksOptions(t *testing.T) {
	p := constraints.New(11, 3, 0.1, 1e-5)
	for _, tc := range []struct {
		opts Options
		name string
	}{
		{Options{CutsPerPass: math.MaxInt}, "CutsPerPass"},
		{Options{CutsPerPass: -1}, "CutsPerPass"},
		{Options{Tol: math.NaN()}, "Tol"},
		{Options{Tol: -1}, "Tol"},
		{Options{Tol: math.Inf(1)}, "Tol"},
		{Options{MaxCoefficients: -1}, "MaxCoefficients"},
		{Options{Workers: -1}, "workers"},
	} {
		_, err := Solve(context.Background(), p, gamma.UniformPrior(), tc.opts)
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != tc.name {
			t.Errorf("%+v: %v, want a ParamError on %s", tc.opts, err, tc.name)
		}
	}
}

// originOf says where l came from: "given", "solved" or "cached".
func originOf(l Loaded) string {
	switch {
	case l.Cached:
		return "cached"
	case l.Entry != nil:
		return "solved"
	}
	return "given"
}
