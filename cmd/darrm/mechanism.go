package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/optimal"
)

// mechanismNames are the aggregators darrm offers.
var mechanismNames = []string{"darrm", "subsample", "dsub", "rr", "gnmax"}

// mechanismFlags configure the aggregators of aggregate and simulate.
type mechanismFlags struct {
	cache       cacheFlags
	workers     workersFlag
	prior       string
	gammaFile   string
	noSolve     bool
	rrComp      string
	rrDelta     float64
	gnmaxSearch string
}

func (f *mechanismFlags) add(cmd *cobra.Command) {
	f.cache.add(cmd)
	f.workers.add(cmd)
	fs := cmd.Flags()
	flagPrior.add(fs, &f.prior)
	flagRRComposition.add(fs, &f.rrComp)
	flagRRDeltaPrime.add(fs, &f.rrDelta)
	flagGNMaxSearch.add(fs, &f.gnmaxSearch)
	fs.StringVar(&f.gammaFile, "gamma", "", "darrm: use the noise function in this file (solve's JSON or CSV, a JSON array or a list) instead of gamma_opt; it must pass the certificate")
	fs.BoolVar(&f.noSolve, "no-solve", false, "darrm: take gamma_opt from the cache only, fail if it is not there")
}

// mechanismAliases are the earlier spellings of the mechanism flags.
var mechanismAliases = map[string]string{"rr-method": "rr-composition", "gnmax-sigma": "gnmax-search"}

// mechanisms is the checked form of mechanismFlags.
type mechanisms struct {
	flags     *mechanismFlags
	workers   int
	prior     gamma.Prior
	search    accountant.GNMaxSearch
	table     *gamma.Table // --gamma
	tableName string
}

// parse checks the flags for the mechanisms names, which flag gave.
func (f *mechanismFlags) parse(cmd *cobra.Command, flag string, names []string) (mechanisms, error) {
	s := mechanisms{flags: f}
	var err error
	for _, n := range names {
		if !slices.Contains(mechanismNames, n) {
			return s, usageErrorf("--%s %q: must be one of %s", flag, n, listNames(mechanismNames))
		}
	}
	if s.workers, err = f.workers.get(); err != nil {
		return s, err
	}
	if s.prior, err = gamma.ParsePrior(f.prior); err != nil {
		return s, usageErrorf("--prior: %v", err)
	}
	if s.search, err = accountant.ParseGNMaxSearch(f.gnmaxSearch); err != nil {
		return s, usageErrorf("--gnmax-search: %v", err)
	}
	for flag, set := range map[string]bool{"--gamma": f.gammaFile != "", "--no-solve": f.noSolve} {
		if set && !slices.Contains(names, "darrm") {
			return s, usageErrorf("%s applies to the darrm mechanism, which is not in use", flag)
		}
	}
	if f.gammaFile != "" {
		if f.noSolve {
			return s, usageErrorf("--gamma and --no-solve exclude each other: --no-solve reads gamma_opt from the cache")
		}
		in, err := openInput(cmd, f.gammaFile)
		if err != nil {
			return s, usageErrorf("--gamma: %v", err)
		}
		tab, err := gamma.ReadTable(in)
		in.Close()
		if err != nil {
			return s, usageErrorf("--gamma %s: %v", displayName(f.gammaFile), err)
		}
		s.table, s.tableName = &tab, displayName(f.gammaFile)
	}
	return s, nil
}

// newAggregator builds the named aggregator for problem p; label describes
// it for people.
func (s mechanisms) newAggregator(cmd *cobra.Command, name string, p constraints.Params) (agg ensemble.Aggregator, label string, err error) {
	ctx := cmd.Context()
	var g gamma.Gamma
	var origin string
	if name == "darrm" {
		if g, origin, err = s.darrmGamma(ctx, cmd, p); err != nil {
			return nil, "", err
		}
	}
	prog := cliout.NewProgress(cmd.ErrOrStderr(), 100, fmt.Sprintf("certifying %s for K=%d m=%g", name, p.K, p.M))
	opts := ensemble.Options{Workers: s.workers, Progress: func(x float64) { prog.Set(int64(100 * x)) }}
	defer prog.Done()
	switch name {
	case "darrm":
		d, err := ensemble.NewDaRRM(ctx, p, g, opts)
		return d, "DaRRM with " + origin, aggregatorError(err)
	case "rr":
		comp, err := rrComposition(s.flags.rrComp, p.Delta)
		if err != nil {
			return nil, "", err
		}
		r, err := ensemble.NewRR(ctx, p, comp, s.flags.rrDelta, opts)
		if err != nil {
			return nil, "", aggregatorError(err)
		}
		return r, fmt.Sprintf("randomized response with p_const = %.6g (Algorithm 7, Lemma B.1.1, %v composition)", r.PConst(), comp), nil
	case "subsample", "dsub":
		newSub := ensemble.NewSubsample
		what := "Algorithm 8"
		if name == "dsub" {
			newSub, what = ensemble.NewDoubleSubsample, "2m-1 of Theorem 3.5.1"
		}
		sub, err := newSub(ctx, p, opts)
		if err != nil {
			return nil, "", aggregatorError(err)
		}
		return sub, fmt.Sprintf("subsampling: majority of %d of the %d teachers, drawn without replacement (%s)", sub.Size(), p.K, what), nil
	}
	g2, err := ensemble.NewGNMax(p, s.search)
	if err != nil {
		return nil, "", aggregatorError(err)
	}
	sigma, _ := g2.Sigma()
	return g2, fmt.Sprintf("GNMax: Gaussian noise with sigma = %.4g on the two class counts (%v search)", sigma, s.search), nil
}

// aggregatorError keeps a certificate failure (exit 3) and makes any other
// constructor error a parameter the mechanism cannot serve (exit 2).
func aggregatorError(err error) error {
	if err == nil || errors.Is(err, ensemble.ErrNotCertified) || errors.Is(err, context.Canceled) {
		return err
	}
	return &usageError{err}
}

// darrmGamma returns DaRRM's noise function: the --gamma file, or gamma_opt
// from the cache, solved on demand unless --no-solve.
func (s mechanisms) darrmGamma(ctx context.Context, cmd *cobra.Command, p constraints.Params) (gamma.Gamma, string, error) {
	if s.table != nil {
		if s.table.Gamma.K() != p.K {
			return nil, "", usageErrorf("--gamma %s has %d values, want K+1 = %d", s.tableName, len(s.table.Gamma), p.K+1)
		}
		return s.table.Gamma, "the gamma of " + s.tableName, nil
	}
	if _, err := s.prior.Coefficients(p.K); err != nil {
		return nil, "", usageErrorf("--prior: %v", err)
	}
	dir, err := s.flags.cache.open()
	if err != nil {
		return nil, "", err
	}
	what := fmt.Sprintf("gamma_opt (prior %s)", s.prior)
	if s.flags.noSolve {
		if dir == nil {
			return nil, "", usageErrorf("--no-solve reads the cache, which --no-cache turns off")
		}
		key := cache.Key{Params: p, Prior: s.prior.String()}
		e, err := optimal.Reverified(ctx, dir, key, s.workers)
		switch {
		case errors.Is(err, cache.ErrNotFound):
			return nil, "", usageErrorf("--no-solve: the cache has no gamma_opt for K=%d m=%g eps=%g Delta=%g delta=%g prior %s (%s); run darrm solve with these parameters first",
				p.K, p.M, p.Eps, p.Delta, p.TargetDelta, s.prior, dir.Path(key))
		case err != nil:
			return nil, "", fmt.Errorf("--no-solve: %w; run darrm solve with these parameters to replace it", err)
		}
		return e.Gamma, what + " from the cache", nil
	}
	e, cached, err := solveGamma(ctx, cmd, p, s.prior, dir, s.workers, false)
	if err != nil {
		return nil, "", err
	}
	if cached {
		return e.Gamma, what + " from the cache", nil
	}
	return e.Gamma, what + ", solved now", nil
}
