package setup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/internal/cachedir"
	"github.com/darrm/darrm/optimal"
)

// CacheFlags select the gamma cache.
type CacheFlags struct {
	Dir     string `flag:"cache-dir"`
	NoCache bool   `flag:"no-cache"`
}

// Open returns the cache, or nil with --no-cache, where memo, the run's
// (Memo), keeps the answers of its one-bit compositions
// (cache.Dir.KeepAnswers; run saves them), so that a budgeted release or
// plan asked again composes nothing; with --no-cache memo keeps them in
// memory only.
func (f *CacheFlags) Open(memo *accountant.Memo) (*cache.Dir, error) {
	if f.NoCache {
		if memo != nil {
			memo.Dir, memo.Secret = "", nil
		}
		return nil, nil
	}
	d, err := cache.Open(f.Dir)
	switch {
	case err == nil:
		if memo != nil {
			d.KeepAnswers(memo)
		}
		return d, nil
	case errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist):
		// A file where the folder, or a folder above it, should be: bad
		// input, as an output into a folder that is a file is.
		what := "--cache-dir " + f.Dir
		if f.Dir == "" {
			dir, _ := cachedir.Default()
			what = fmt.Sprintf("the cache folder %s ($%s, else $XDG_CACHE_HOME/darrm)", dir, cachedir.Env)
		}
		return nil, cli.Usagef("%s: not a folder (it, or a folder above it, is a file): give a folder with --cache-dir, or --no-cache", what)
	}
	return nil, fmt.Errorf("%w (use --cache-dir or --no-cache)", err)
}

// LoadGamma returns the gamma that src gives for p (optimal.Source.LoadGamma),
// with a progress line on a terminal while gamma_opt is solved, and
// warnings for a cache entry that is replaced or that could not be
// stored.
func LoadGamma(ctx context.Context, cmd *cobra.Command, src optimal.Source, p constraints.Problem) (optimal.Loaded, error) {
	prog := cliout.NewProgress(cmd.ErrOrStderr(), -1, Solving(p))
	WatchSolve(cmd, &src, Solving(p), func() *cliout.Progress { return prog })
	l, err := src.Load(ctx, p)
	prog.Done()
	if err == nil {
		WarnNotStored(cmd, l.StoreErr)
	}
	return l, err
}

// Solving describes the solve of gamma_opt for p in a progress line.
func Solving(p constraints.Problem) string {
	if p.Relation == accountant.OneVote {
		return fmt.Sprintf("solving K=%d one-vote eps=%g", p.K, p.Eps)
	}
	return fmt.Sprintf("solving K=%d m=%g", p.K, p.M)
}

// WatchSolve makes src show its solve of gamma_opt, described as what, on the
// progress line prog returns, and tell of a cache entry it replaces.
func WatchSolve(cmd *cobra.Command, src *optimal.Source, what string, prog func() *cliout.Progress) {
	var eta solveETA
	src.Options.Progress = func(s optimal.Progress) {
		pr := prog()
		pr.Describe(what + ": " + eta.describe(time.Now(), s))
		pr.Set(int64(s.Pass))
	}
	src.OnCorrupt = func(err error) { cliout.Note(cmd.ErrOrStderr())(fmt.Sprintf("%v; recomputing it", err)) }
}

// WarnNotStored warns of a gamma_opt solved now that could not be
// stored in the cache: err, the error of its store, if not nil.
func WarnNotStored(cmd *cobra.Command, err error) {
	if err != nil {
		cliout.Note(cmd.ErrOrStderr())(fmt.Sprintf("warning: gamma_opt was not cached: %v", err))
	}
}

// PlanGamma makes src, the gamma source of a plan, named "gamma_opt" in
// its descriptions when it has no name, show on lines its solves of
// gamma_opt for the problems the plan tries, tell of a cache entry it
// replaces and warn of one it could not store (WarnNotStored); the
// caller ends lines when the plan is done.
func PlanGamma(cmd *cobra.Command, src *optimal.Source, lines *cliout.Stages) {
	if src.Name == "" {
		src.Name = "gamma_opt"
	}
	const what = "solving gamma_opt"
	WatchSolve(cmd, src, what, func() *cliout.Progress { return lines.At(what, -1) })
	src.OnNotStored = func(err error) { WarnNotStored(cmd, err) }
}

// GammaError says an optimal.SourceError in terms of the flags that set the
// source's fields: --gamma (the file given), --prior and --no-solve (with --no-cache),
// as usage errors; a cache entry that cannot be read or used keeps its
// error, and its exit status.
func GammaError(err error, given string) error {
	var se *optimal.SourceError
	switch {
	case !errors.As(err, &se):
		return err
	case se.Field == "Given":
		return cli.Usagef("--gamma %s %v", given, se.Err)
	case se.Field == "Prior":
		return cli.Usagef("--prior: %v", se.Err)
	case errors.Is(err, optimal.ErrNoCache):
		return cli.Usagef("--no-solve reads the cache, which --no-cache turns off")
	case errors.Is(err, cache.ErrNotFound):
		return cli.Usagef("--no-solve: %v; run darrm solve with these parameters first", se.Err)
	}
	return fmt.Errorf("--no-solve: %w; run darrm solve with these parameters to replace it", se.Err)
}

// solveETA estimates the time a solve of gamma_opt has left from its
// progress reports, so that a long solve's line moves and says when it
// may end: during an exact separation pass, by the share of the pass
// done; else, while the cutting-plane loop narrows its gap, by the rate
// at which the gap's logarithm has fallen since it was last at its
// largest, to optimal.DefaultTol, where the loop stops. Only an estimate:
// the gap falls unevenly, and more passes may follow.
type solveETA struct {
	at     time.Time // when the gap was gap0
	gap0   float64
	pass   int // the exact pass under way, from passAt
	passAt time.Time
}

// describe returns the state of s at now, with the time left where the
// reports so far give an estimate.
func (e *solveETA) describe(now time.Time, s optimal.Progress) string {
	if s.Pass != e.pass {
		e.pass, e.passAt = s.Pass, now
	}
	// Short, to fit a line of 100 columns with the problem's name and
	// the time so far: the counts of LP solves and rows stay in the JSON.
	if s.Pass > 0 && s.Fraction > 0 && s.Fraction < 1 {
		left := time.Duration(float64(now.Sub(e.passAt)) * (1 - s.Fraction) / s.Fraction)
		return fmt.Sprintf("exact pass %d: %.0f%%, about %v more", s.Pass, 100*s.Fraction, roundLeft(left))
	}
	state := fmt.Sprintf("gap %.2g", s.Gap)
	if !(s.Gap > optimal.DefaultTol) {
		return state
	}
	if s.Gap >= e.gap0 {
		e.at, e.gap0 = now, s.Gap
		return state
	}
	rate := math.Log(e.gap0/s.Gap) / now.Sub(e.at).Seconds()
	if !(rate > 0) || math.IsInf(rate, 0) {
		return state
	}
	left := time.Duration(math.Log(s.Gap/optimal.DefaultTol) / rate * float64(time.Second))
	return state + fmt.Sprintf(", about %v left", roundLeft(left))
}

// roundLeft rounds an estimate of the time left to what it can tell: a
// second under a minute, ten seconds under ten minutes, a minute above.
func roundLeft(d time.Duration) time.Duration {
	switch {
	case d < time.Minute:
		return max(d.Round(time.Second), time.Second)
	case d < 10*time.Minute:
		return d.Round(10 * time.Second)
	}
	return d.Round(time.Minute)
}
