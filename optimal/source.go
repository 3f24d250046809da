package optimal

import (
	"context"
	"errors"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// Source says where DaRRM's noise function for a problem comes from: a
// gamma the caller holds (Given), or gamma_opt for Prior from the cache,
// solved and stored when the cache does not hold it, unless CacheOnly.
type Source struct {
	// Given, when not nil, is the gamma to use (one read from a file, say):
	// it is neither solved nor cached, and the other fields are ignored.
	// Its certificate is the business of whoever uses it (an aggregator
	// certifies its gamma when it is built).
	Given gamma.Gamma
	// Name, if not "", is how a description names the gamma this source
	// gives (the file Given was read from, say); "" names it by where it
	// came from.
	Name string
	// Cache holds certified gamma_opt; nil is no cache.
	Cache *cache.Dir
	// Prior is the prior of gamma_opt. Gamma takes a zero Prior as the
	// uniform prior (gamma.UniformPrior); Load refuses it (*SourceError).
	Prior gamma.Prior
	// CacheOnly takes gamma_opt from the cache and never solves: a cache
	// without it, or whose entry fails its checks, is an error.
	CacheOnly bool
	// Options configure a solve; Options.Workers also the exhaustive check
	// of a cached gamma.
	Options Options
	// OnCorrupt, if not nil, is told of a cache entry that is corrupt or
	// fails its check, before gamma_opt is solved again and replaces it.
	OnCorrupt func(error)
	// OnNotStored, if not nil, is told why a gamma_opt solved now could
	// not be stored in the cache (Loaded.StoreErr), for a caller that
	// does not see the Loaded (a plan's probes).
	OnNotStored func(error)
	// Certify, if not nil, is the exhaustive check of a cached gamma in
	// place of gamma.Verify: the user of the gamma passes the certificate
	// of what it will use (an aggregator, of the gamma it samples), so
	// that the gamma is certified once per use. The entry passes only if
	// the certificate's Status is gamma.Certified.
	Certify func(ctx context.Context, p constraints.Problem, g gamma.Gamma) (gamma.Certificate, error)
}

// A certifier returns the certificate of gamma g for problem p by the
// exhaustive check (gamma.Verify, or a check of the gamma as its user
// samples it).
type certifier func(ctx context.Context, p constraints.Problem, g gamma.Gamma) (gamma.Certificate, error)

// Loaded is a gamma for a problem and where it came from: what Source.Load
// returns.
type Loaded struct {
	Gamma gamma.Gamma
	// Cached says that the gamma is a cache entry, certified again now;
	// a gamma_opt not cached was solved now (Entry is not nil), and one
	// without an Entry is Source.Given.
	Cached bool
	// Entry is gamma_opt with its certificate, computed in this call, and
	// the statistics of its solve; nil for a Given gamma.
	Entry *cache.Entry
	// Path is the cache file of gamma_opt ("" for a Given gamma or
	// without a cache).
	Path string
	// StoreErr is a failure to store a gamma_opt solved now, beside a
	// valid result.
	StoreErr error
}

// ErrNoCache is a CacheOnly Source without a cache.
var ErrNoCache = errors.New("no cache to read gamma_opt from")

// A SourceError is a Source that cannot give a gamma for a problem: Field
// names the Source's field at fault (Given, Prior or CacheOnly), and Err
// says why. For CacheOnly, Err is ErrNoCache, an error that is
// cache.ErrNotFound (the cache has no gamma_opt for the problem), or the
// cache's error on reading or checking its entry (a *cache.CorruptError).
type SourceError struct {
	Field string
	Err   error
}

// Error names the field at fault and says why.
func (e *SourceError) Error() string { return fmt.Sprintf("gamma source: %s: %v", e.Field, e.Err) }

// Unwrap returns Err.
func (e *SourceError) Unwrap() error { return e.Err }

// notCached is a CacheOnly Source's cache without gamma_opt for a problem.
type notCached struct {
	key  cache.Key
	path string
}

func (e *notCached) Error() string {
	p := e.key.Problem
	rel := ""
	if p.Relation != accountant.PrivateTeachers {
		rel = " relation " + p.Relation.String()
	}
	return fmt.Sprintf("the cache has no gamma_opt for K=%d m=%g eps=%g Delta=%g delta=%g%s prior %s (%s)",
		p.K, p.M, p.Eps, p.Delta, p.TargetDelta, rel, e.key.Prior, e.path)
}

func (e *notCached) Unwrap() error { return cache.ErrNotFound }

// Load returns the gamma s gives for problem p, which the caller has
// validated: Given, which must have K+1 values; or gamma_opt from the
// cache, certified again now, and otherwise, unless CacheOnly, solved by
// Solve and stored. A cached gamma is trusted for its values only: its
// certificate is computed again in this call by the exhaustive check
// (s.Certify if set, else gamma.Verify), never read from the file, and an entry that is corrupt
// or fails that check is passed to OnCorrupt, then solved again and
// replaced. Only the canonical gamma_opt is stored (Result.TieBroken),
// so that the cache's entries are those of the current solver. An error
// in s is a *SourceError.
func (s Source) Load(ctx context.Context, p constraints.Problem) (Loaded, error) {
	// Before anything sized by K: a prior's coefficients at K = 1e9 are
	// 8 GB.
	if err := p.Validate(); err != nil {
		return Loaded{}, err
	}
	if s.Given != nil {
		if s.Given.K() != p.K {
			return Loaded{}, &SourceError{"Given", fmt.Errorf("has %d values, want K+1 = %d", len(s.Given), p.K+1)}
		}
		return Loaded{Gamma: s.Given}, nil
	}
	if _, err := s.Prior.Coefficients(p.K); err != nil {
		return Loaded{}, &SourceError{"Prior", err}
	}
	if s.CacheOnly {
		if s.Cache == nil {
			return Loaded{}, &SourceError{"CacheOnly", ErrNoCache}
		}
		key := cache.Key{Problem: p, Prior: s.Prior.String()}
		path := s.Cache.Path(key)
		e, err := reverified(ctx, s.Cache, key, s.certifier())
		if errors.Is(err, cache.ErrNotFound) {
			err = &notCached{key, path}
		}
		if err != nil {
			return Loaded{}, &SourceError{"CacheOnly", err}
		}
		return Loaded{Gamma: e.Gamma, Cached: true, Entry: e, Path: path}, nil
	}
	l, err := cached(ctx, s.Cache, p, s.Prior, s.Options, s.OnCorrupt, s.certifier())
	if err == nil && l.StoreErr != nil && s.OnNotStored != nil {
		s.OnNotStored(l.StoreErr)
	}
	return l, err
}

// Gamma returns the gamma s gives for p (Load), certified again by
// certify when it comes from the cache (Certify), and names it for a
// description: Name if set, else by where it came from. A zero Prior is
// the uniform prior (gamma.UniformPrior). It makes s an
// ensemble.GammaSource.
func (s Source) Gamma(ctx context.Context, p constraints.Problem, certify func(context.Context, constraints.Problem, gamma.Gamma) (gamma.Certificate, error)) (gamma.Gamma, string, error) {
	if s.Given == nil && s.Prior.String() == "" {
		s.Prior = gamma.UniformPrior()
	}
	if certify != nil {
		s.Certify = certify
	}
	l, err := s.Load(ctx, p)
	if err != nil {
		return nil, "", err
	}
	switch {
	case s.Name != "":
		return l.Gamma, s.Name, nil
	case l.Cached:
		return l.Gamma, fmt.Sprintf("gamma_opt (prior %s) from the cache", s.Prior), nil
	case l.Entry != nil:
		return l.Gamma, fmt.Sprintf("gamma_opt (prior %s), solved now", s.Prior), nil
	}
	return l.Gamma, "a gamma given", nil
}

// certifier returns s.Certify, else gamma.Verify with s's workers.
func (s Source) certifier() certifier {
	if s.Certify != nil {
		return s.Certify
	}
	return verifier(s.Options.Workers)
}

// verifier is gamma.Verify with workers goroutines.
func verifier(workers int) certifier {
	return func(ctx context.Context, p constraints.Problem, g gamma.Gamma) (gamma.Certificate, error) {
		return gamma.Verify(ctx, p, g, gamma.VerifyOptions{Workers: workers})
	}
}
