package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

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
	prior        string
	gammaFile    string
	noSolve      bool
	rrMethod     string
	rrDeltaPrime float64
	gnmaxSigma   string
	workers      int
}

func (f *mechanismFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.prior, "prior", "uniform", "darrm: prior of gamma_opt: uniform (mean 0.75), tp (mean 0.85), a mean in (0.5, 1], or K comma-separated means")
	fs.StringVar(&f.gammaFile, "gamma", "", "darrm: use the noise function in this file (solve's JSON, a JSON array or a list) instead of gamma_opt; it must pass the certificate")
	fs.BoolVar(&f.noSolve, "no-solve", false, "darrm: take gamma_opt from the cache only, fail if it is not there")
	fs.StringVar(&f.rrMethod, "rr-method", "simple", "rr: composition giving the majority's (tau·eps, lambda) in Lemma B.1.1: simple, general or optimal")
	fs.Float64Var(&f.rrDeltaPrime, "rr-delta-prime", 1e-5, "rr with --rr-method general or optimal: the composition's slack delta'")
	fs.StringVar(&f.gnmaxSigma, "gnmax-sigma", "grid", "gnmax: calibration of sigma: grid (the paper's search, App. B.4.1) or exact")
	fs.IntVar(&f.workers, "workers", 0, "goroutines for the exhaustive certificates (default: all cores)")
}

// mechanismSetup is the checked form of mechanismFlags.
type mechanismSetup struct {
	flags     *mechanismFlags
	prior     gamma.Prior
	rrMethod  accountant.Method
	sigma     ensemble.SigmaMethod
	table     *gamma.Table // --gamma
	tableName string
}

func (f *mechanismFlags) parse(cmd *cobra.Command) (mechanismSetup, error) {
	s := mechanismSetup{flags: f}
	var err error
	if s.prior, err = gamma.ParsePrior(f.prior); err != nil {
		return s, usageErrorf("--prior: %v", err)
	}
	if s.rrMethod, err = accountant.ParseMethod(f.rrMethod); err != nil {
		return s, usageErrorf("--rr-method: %v", err)
	}
	if s.sigma, err = ensemble.ParseSigmaMethod(f.gnmaxSigma); err != nil {
		return s, usageErrorf("--gnmax-sigma: %v", err)
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

// onlyFor refuses flags that configure none of the mechanisms in use,
// rather than ignore them.
func (s mechanismSetup) onlyFor(names []string) error {
	fs := []struct {
		flag, mech string
		set        bool
	}{
		{"--gamma", "darrm", s.table != nil},
		{"--no-solve", "darrm", s.flags.noSolve},
	}
	for _, f := range fs {
		if f.set && !slices.Contains(names, f.mech) {
			return usageErrorf("%s applies to the %s mechanism, which is not in use", f.flag, f.mech)
		}
	}
	return nil
}

// newAggregator builds the named aggregator for problem p; label describes
// it for people.
func newAggregator(cmd *cobra.Command, name string, p constraints.Params, s mechanismSetup, cf *cacheFlags) (agg ensemble.Aggregator, label string, err error) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	var g gamma.Gamma
	var origin string
	if name == "darrm" {
		if g, origin, err = darrmGamma(ctx, cmd, p, s, cf); err != nil {
			return nil, "", err
		}
	}
	prog := cliout.NewProgress(cmd.ErrOrStderr(), 100, fmt.Sprintf("certifying %s for K=%d m=%g", name, p.K, p.M))
	opts := ensemble.Options{Workers: s.flags.workers, Progress: func(x float64) { prog.Set(int64(100 * x)) }}
	defer prog.Done()
	switch name {
	case "darrm":
		d, err := ensemble.NewDaRRM(ctx, p, g, opts)
		if err != nil {
			return nil, "", aggregatorError(err)
		}
		return d, "DaRRM with " + origin, nil
	case "rr":
		r, err := ensemble.NewRR(ctx, p, s.rrMethod, s.flags.rrDeltaPrime, opts)
		if err != nil {
			return nil, "", aggregatorError(err)
		}
		return r, fmt.Sprintf("randomized response with p_const = %.6g (Algorithm 7, Lemma B.1.1, %v composition)", r.PConst(), s.rrMethod), nil
	case "subsample":
		sub, err := ensemble.NewSubsample(ctx, p, opts)
		if err != nil {
			return nil, "", aggregatorError(err)
		}
		return sub, fmt.Sprintf("subsampling: majority of %d of the %d teachers, drawn without replacement (Algorithm 8)", sub.Size(), p.K), nil
	case "dsub":
		sub, err := ensemble.NewDoubleSubsample(ctx, p, opts)
		if err != nil {
			return nil, "", aggregatorError(err)
		}
		return sub, fmt.Sprintf("subsampling: majority of %d of the %d teachers, 2m-1 of Theorem 3.5.1", sub.Size(), p.K), nil
	case "gnmax":
		g, err := ensemble.NewGNMax(p, s.sigma)
		if err != nil {
			return nil, "", aggregatorError(err)
		}
		sigma, _ := g.Sigma()
		return g, fmt.Sprintf("GNMax: Gaussian noise with sigma = %.4g on the two class counts (%v calibration)", sigma, s.sigma), nil
	}
	return nil, "", usageErrorf("--mechanism %q: must be one of %s", name, strings.Join(mechanismNames, ", "))
}

// aggregatorError maps a constructor's error to darrm's exit codes: a
// noise function that fails its certificate is exit 3, like darrm verify;
// anything else is a parameter the mechanism cannot serve (exit 2).
func aggregatorError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ensemble.ErrNotCertified):
		return withCode(exitNotCertified, err)
	}
	return usageErrorf("%v", err)
}

// darrmGamma returns DaRRM's noise function: the --gamma file, or gamma_opt
// from the cache, solved on demand unless --no-solve.
func darrmGamma(ctx context.Context, cmd *cobra.Command, p constraints.Params, s mechanismSetup, cf *cacheFlags) (gamma.Gamma, string, error) {
	if s.table != nil {
		if s.table.Gamma.K() != p.K {
			return nil, "", usageErrorf("--gamma %s has %d values, want K+1 = %d", s.tableName, len(s.table.Gamma), p.K+1)
		}
		return s.table.Gamma, "the gamma of " + s.tableName, nil
	}
	if _, err := s.prior.Coefficients(p.K); err != nil {
		return nil, "", usageErrorf("--prior: %v", err)
	}
	dir, err := cf.open()
	if err != nil {
		return nil, "", err
	}
	key := cache.Key{Params: p, Prior: s.prior.String()}
	what := fmt.Sprintf("gamma_opt (prior %s)", s.prior)
	if s.flags.noSolve {
		if dir == nil {
			return nil, "", usageErrorf("--no-solve reads the cache, which --no-cache turns off")
		}
		e, err := dir.Get(key)
		switch {
		case errors.Is(err, cache.ErrNotFound):
			return nil, "", usageErrorf("--no-solve: the cache has no gamma_opt for K=%d m=%g eps=%g Delta=%g delta=%g prior %s (%s); run darrm solve with these parameters first",
				p.K, p.M, p.Eps, p.Delta, p.TargetDelta, s.prior, dir.Path(key))
		case err != nil:
			return nil, "", fmt.Errorf("--no-solve: %w", err)
		}
		return e.Gamma, what + " from the cache", nil
	}
	prog := cliout.NewProgress(cmd.ErrOrStderr(), -1, fmt.Sprintf("solving K=%d m=%g", p.K, p.M))
	opts := optimal.Options{Workers: s.flags.workers, Progress: func(x optimal.Progress) {
		prog.Describe(fmt.Sprintf("solving K=%d m=%g: separation pass %d, %d rows, violation %.2g", p.K, p.M, x.Pass, x.Rows, math.Max(x.Violation, 0)))
		prog.Set(int64(x.Pass))
	}}
	e, cached, storeErr, err := optimal.Cached(ctx, dir, p, s.prior, opts, warnCorrupt(cmd))
	prog.Done()
	if err != nil {
		return nil, "", err // optimal.Solve and the cache name K and m already
	}
	if storeErr != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "darrm: warning: gamma_opt was not cached: %v\n", storeErr)
	}
	if cached {
		return e.Gamma, what + " from the cache", nil
	}
	return e.Gamma, what + ", solved now", nil
}
