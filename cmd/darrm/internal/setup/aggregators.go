package setup

// This file builds the aggregators of darrm's commands from their flags:
// the mechanisms named, the gamma each samples (a --gamma file, or
// gamma_opt from the cache, solved on demand), RR's composition, with the
// solve and the certificate shown on standard error.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// MechanismConfig configures the aggregators of aggregate and simulate.
type MechanismConfig struct {
	Cache       CacheFlags
	Workers     int                  `flag:"workers"`
	Prior       gamma.Prior          `flag:"prior"`
	RRComp      RRMethod             `flag:"rr-composition"`
	RRDelta     float64              `flag:"rr-delta-prime"`
	GNMaxSearch noisymax.GNMaxSearch `flag:"gnmax-search"`
	GammaFile   string               `flag:"gamma" help:"a gamma file to use instead of gamma_opt"`
	NoSolve     bool                 `flag:"no-solve" help:"gamma_opt from the cache only"`
	// table is the --gamma file, read by Check, and tableName its name.
	table     *gamma.Table
	tableName string
}

// GammaTable returns the --gamma file that Check read, and its name; nil
// without one.
func (f *MechanismConfig) GammaTable() (*gamma.Table, string) { return f.table, f.tableName }

// RRComposition returns the composition of randomized response's p_const
// that --rr-composition (m) and --rr-delta-prime give for teachers whose
// guarantee has this Delta.
func RRComposition(m RRMethod, deltaPrime, teacherDelta float64) accountant.Composition {
	return accountant.Composition{Method: m.For(teacherDelta), DeltaPrime: deltaPrime}
}

// Parse checks the flags for the two-class mechanisms of ms names,
// which flag gave, and returns the mechanisms (ms.CheckInUse, Check).
func (f *MechanismConfig) Parse(cmd *cobra.Command, ms *Mechanisms, flag string, names []provenance.MechanismName) ([]MechanismInfo, error) {
	infos := make([]MechanismInfo, len(names))
	for i, n := range names {
		// Each mechanism once: a repeat would be built, run and printed
		// again, and a long list of them held the run past SIGTERM.
		if slices.Contains(names[:i], n) {
			return nil, cli.Usagef("--%s %q: given twice: name each mechanism once", flag, n)
		}
		var err error
		if infos[i], err = ms.Lookup(n, votefile.TwoClass); err != nil {
			return nil, cli.Usagef("--%s %q: must be one of %s", flag, n, ms.Names(ofKind(votefile.TwoClass), ", "))
		}
	}
	if err := ms.CheckInUse(cmd, flag, infos...); err != nil {
		return nil, err
	}
	return infos, f.Check(cmd, ms, infos...)
}

// Check checks the flags for the two-class mechanisms infos of ms, and
// reads the --gamma file.
func (f *MechanismConfig) Check(cmd *cobra.Command, ms *Mechanisms, infos ...MechanismInfo) error {
	var sampling []MechanismInfo // the mechanisms that sample a gamma
	for _, info := range infos {
		if info.Uses.Gamma {
			sampling = append(sampling, info)
		}
	}
	if err := CheckWorkers(f.Workers); err != nil {
		return err
	}
	if (f.GammaFile != "" || f.NoSolve) && len(sampling) == 0 {
		flag := "--gamma"
		if f.GammaFile == "" {
			flag = "--no-solve"
		}
		return cli.Usagef("%s applies to the mechanisms that sample a gamma (%s), none of which is in use", flag, ms.Names(func(info MechanismInfo) bool { return info.Uses.Gamma }, ", "))
	}
	if f.GammaFile != "" {
		if f.NoSolve {
			return cli.Usagef("--gamma and --no-solve exclude each other: --no-solve reads gamma_opt from the cache")
		}
		tab, err := ReadTable(cmd, "--gamma", f.GammaFile, 0)
		if err != nil {
			return err
		}
		f.table, f.tableName = &tab, cli.InputName(f.GammaFile)
		// A gamma is private only in the relation it was certified in.
		return tableRelation(ms, f.tableName, tab.InRelation(), sampling)
	}
	return nil
}

// tableRelation returns nil when one of the mechanisms infos releases in
// rel, the relation of the gamma of the file name, and otherwise a usage
// error naming the mechanism that samples a gamma in rel.
func tableRelation(ms *Mechanisms, name string, rel accountant.Relation, infos []MechanismInfo) error {
	names := make([]provenance.MechanismName, len(infos))
	for i, info := range infos {
		if info.Relation == rel {
			return nil
		}
		names[i] = info.Name
	}
	release := accountant.OneVote
	if rel == accountant.OneVote {
		release = accountant.PrivateTeachers
	}
	var use provenance.MechanismName // the last that samples a gamma in rel
	for _, m := range ms.All() {
		if m.Uses.Gamma && m.Relation == rel {
			use = m.Name
		}
	}
	return cli.Usagef("--gamma %s is a gamma for the %v relation (%s); %s releases in the %v relation: use --mechanism %s, or a gamma that darrm solve wrote for the %v relation",
		name, rel, rel.Describe(), provenance.JoinMechanisms(names, " and "), release, use, release)
}

// NewAggregator builds the two-class aggregator of mechanism info, one
// that the flags were checked for (Check), for problem p (ensemble.New), with the settings of the
// flags and, for a mechanism that samples a gamma, its gamma; label
// describes it for people.
func (s *MechanismConfig) NewAggregator(cmd *cobra.Command, info MechanismInfo, p constraints.Problem) (ensemble.Aggregator, string, error) {
	var src optimal.Source
	if info.Uses.Gamma {
		var err error
		if src, err = s.Source(Memo(cmd), info); err != nil {
			return nil, "", err
		}
	}
	lines := cliout.NewStages(cmd.ErrOrStderr())
	opts := s.Watch(cmd, &src, info, p, lines)
	var notStored error
	src.OnNotStored = func(err error) { notStored = err }
	m := info.With(cmd.Flags(), s.Settings(p, src))
	agg, label, err := ensemble.New(cmd.Context(), m, p.K, 2, accountant.Guarantee{Eps: p.Eps, Delta: p.Delta}, opts)
	lines.Done()
	WarnNotStored(cmd, notStored)
	if err != nil {
		return nil, "", s.ReleaseError(err, "")
	}
	return agg.(ensemble.Aggregator), label, nil
}

// Watch shows on lines the solve of gamma_opt that src may run for
// mechanism info held to p, and the certificate of the aggregator, whose
// options it returns.
func (s *MechanismConfig) Watch(cmd *cobra.Command, src *optimal.Source, info MechanismInfo, p constraints.Problem, lines *cliout.Stages) ensemble.Options {
	q := p
	if info.Relation == accountant.OneVote {
		q = constraints.NewOneVote(p.K, p.MEps(), p.TargetDelta)
	}
	what := Solving(q)
	WatchSolve(cmd, src, what, func() *cliout.Progress { return lines.At(what, -1) })
	cert := certifying(info.Name, p)
	return ensemble.Options{Workers: s.Workers, Progress: func(x float64) { lines.At(cert, 100).Set(int64(100 * x)) }, Memo: Memo(cmd)}
}

// Settings returns the two-class settings of the flags for problem p (its
// m and per-query delta as given) with the gamma source src.
func (s *MechanismConfig) Settings(p constraints.Problem, src optimal.Source) MechanismValues {
	return MechanismValues{"m": p.M, "target-eps": p.MEps(), "delta": p.TargetDelta, "gamma": src, "rr-composition": RRComposition(s.RRComp, s.RRDelta, p.Delta)}
}

// certifying describes the certificate of mechanism name for p in a
// progress line.
func certifying(name provenance.MechanismName, p constraints.Problem) string {
	return fmt.Sprintf("certifying %s for K=%d m=%g", name, p.K, p.M)
}

// ReleaseError says an error of ensemble.Release or ensemble.New in the
// command's terms, by the step that failed; input names the votes of a
// release.
func (s *MechanismConfig) ReleaseError(err error, input string) error {
	var re *ensemble.ReleaseError
	if !errors.As(err, &re) {
		return err
	}
	switch err = re.Err; re.Step {
	case ensemble.StepGamma:
		return GammaError(err, s.tableName)
	case ensemble.StepBuild:
		// A certificate failure exits 3; any other error is a parameter
		// the mechanism cannot serve (exit 2).
		if !errors.Is(err, gamma.ErrNotCertified) && !errors.Is(err, context.Canceled) {
			err = cli.AsUsage(Flagged(err, BudgetFlags))
		}
	case ensemble.StepBinding:
		err = fmt.Errorf("%s: %w (--mechanism)", input, err)
	case ensemble.StepAccounting:
		err = cli.AsUsage(err)
	case ensemble.StepLedger:
		err = LedgerError(err)
	}
	return err
}

// Source returns where the gamma of mechanism info comes from: the
// --gamma file, when it is for the mechanism's relation, else gamma_opt
// from the cache, solved on demand unless --no-solve, the cache keeping
// memo's one-bit answers (CacheFlags.Open).
func (s *MechanismConfig) Source(memo *accountant.Memo, info MechanismInfo) (optimal.Source, error) {
	src := optimal.Source{Prior: s.Prior, CacheOnly: s.NoSolve, Options: optimal.Options{Workers: s.Workers}}
	var err error
	if s.table != nil && s.table.InRelation() == info.Relation {
		src.Given, src.Name = s.table.Gamma, "the gamma of "+s.tableName
	} else {
		src.Cache, err = s.Cache.Open(memo)
	}
	return src, err
}

// PlanSource returns where a plan's mechanism takes its noise function
// for each problem the plan tries: gamma_opt from the cache, solved on
// demand unless --no-solve, its solves shown on lines
// (PlanGamma), named "gamma_opt" in its descriptions, cached or solved
// alike. A --gamma file is refused: it is for one problem, and a plan
// tries many.
func (s *MechanismConfig) PlanSource(cmd *cobra.Command, lines *cliout.Stages) (optimal.Source, error) {
	if s.table != nil {
		return optimal.Source{}, cli.Usagef("--gamma: a plan solves gamma_opt for each value it tries; leave --gamma out")
	}
	src := optimal.Source{Prior: s.Prior, CacheOnly: s.NoSolve, Options: optimal.Options{Workers: s.Workers}}
	var err error
	if src.Cache, err = s.Cache.Open(Memo(cmd)); err != nil {
		return src, err
	}
	PlanGamma(cmd, &src, lines)
	return src, nil
}

// PlanGamma gives s the gamma source of mechanism info when it samples
// one: once the flags are checked for it, the source of a plan
// (PlanSource), whose solves lines show.
func (f *MechanismConfig) PlanGamma(cmd *cobra.Command, ms *Mechanisms, info MechanismInfo, s MechanismValues, lines *cliout.Stages) (err error) {
	if info.Uses.Gamma {
		if err = f.Check(cmd, ms, info); err == nil {
			s["gamma"], err = f.PlanSource(cmd, lines)
		}
	}
	return err
}
