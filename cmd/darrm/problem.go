package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/constraints"
)

// problemFlags are the privacy parameters shared by solve, verify and the
// release commands. Defaults are the thesis' main setting (Section 3.7.1).
type problemFlags struct {
	k                     int
	m, eps, delta, target float64
}

func (f *problemFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.IntVar(&f.k, "K", 0, "number of teachers (odd)")
	fs.Float64Var(&f.m, "m", 0, "privacy allowance: the release is (m·eps, delta)-DP, 1 <= m <= K")
	fs.Float64Var(&f.eps, "eps", 0.1, "each teacher's eps")
	fs.Float64Var(&f.delta, "Delta", 1e-5, "each teacher's Delta")
	fs.Float64Var(&f.target, "delta", 0, "the release's delta (default 1-(1-Delta)^m)")
}

// params returns the validated problem. targetDefaulted reports that delta
// took its default, which outputs say.
func (f *problemFlags) params(cmd *cobra.Command) (p constraints.Params, targetDefaulted bool, err error) {
	fs := cmd.Flags()
	if !fs.Changed("K") {
		return p, false, usageErrorf("--K is required (the number of teachers)")
	}
	return f.paramsForK(cmd, f.k)
}

// paramsForK is params with K = k, for commands that take K from their
// input; the caller checks k against a given --K.
func (f *problemFlags) paramsForK(cmd *cobra.Command, k int) (p constraints.Params, targetDefaulted bool, err error) {
	fs := cmd.Flags()
	if !fs.Changed("m") {
		return p, false, usageErrorf("--m is required (the privacy allowance, 1 <= m <= K)")
	}
	p = constraints.Params{K: k, M: f.m, Eps: f.eps, Delta: f.delta, TargetDelta: f.target}
	if !fs.Changed("delta") {
		p.TargetDelta = constraints.DefaultTargetDelta(f.delta, f.m)
		targetDefaulted = true
	}
	if err := p.Validate(); err != nil {
		return p, false, usageErrorf("%v", err)
	}
	return p, targetDefaulted, nil
}

// problemOut is the problem as echoed in JSON outputs.
type problemOut struct {
	K            int     `json:"K"`
	M            float64 `json:"m"`
	Eps          float64 `json:"eps"`
	Delta        float64 `json:"Delta"`
	TargetDelta  float64 `json:"delta"`
	DeltaDefault bool    `json:"delta_is_default"`
}

func newProblemOut(p constraints.Params, deltaDefault bool) problemOut {
	return problemOut{K: p.K, M: p.M, Eps: p.Eps, Delta: p.Delta, TargetDelta: p.TargetDelta, DeltaDefault: deltaDefault}
}

// cacheFlags select the gamma cache.
type cacheFlags struct {
	dir     string
	noCache bool
}

func (f *cacheFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dir, "cache-dir", "", "gamma cache directory (default $"+cache.EnvDir+", else $XDG_CACHE_HOME/darrm or ~/.cache/darrm)")
	cmd.Flags().BoolVar(&f.noCache, "no-cache", false, "neither read nor write the gamma cache")
}

// open returns the cache, or nil with --no-cache.
func (f *cacheFlags) open() (*cache.Dir, error) {
	if f.noCache {
		return nil, nil
	}
	dir := f.dir
	if dir == "" {
		var err error
		if dir, err = cache.DefaultDir(); err != nil {
			return nil, err
		}
	}
	d, err := cache.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("%w (use --cache-dir or --no-cache)", err)
	}
	return d, nil
}

// warnCorrupt reports a corrupt cache entry, which is recomputed.
func warnCorrupt(cmd *cobra.Command) func(error) {
	return func(err error) {
		fmt.Fprintf(cmd.ErrOrStderr(), "darrm: %v; recomputing it\n", err)
	}
}

// openInput opens the named file, or standard input for "-" or "".
func openInput(cmd *cobra.Command, name string) (io.ReadCloser, error) {
	if name == "" || name == "-" {
		return io.NopCloser(cmd.InOrStdin()), nil
	}
	return os.Open(name)
}
