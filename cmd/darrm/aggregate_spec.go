package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// This file builds the spec of a release from aggregate's flags: its
// votes, its mechanism bound from the flags, its problem, its sink and
// its randomness.

// spec returns the release of the votes of in by mechanism info as the
// flags say, without its budget and its mechanism, whose settings it
// returns: for a two-class one whose target is m·eps of the teachers',
// the problem of the flags, K and the teachers' guarantee of the votes
// (their header, else --eps and --Delta), or, for a mechanism whose
// target is the release's own (--target-eps), the one-vote problem of
// that target; for a multi-class one, or a two-class one that needs
// neither (its guarantee is its settings'), its flags, checked, whose
// noise is the discrete one releases draw. It returns too the report to
// be, which the caller completes.
func (f *aggregateFlags) spec(cmd *cobra.Command, info setup.MechanismInfo, in votefile.Reader, input string) (ensemble.ReleaseSpec, report.Release, setup.MechanismValues, error) {
	rel := report.Release{Mechanism: info.Name, HeaderFile: f.HeaderFile()}
	spec := ensemble.ReleaseSpec{Votes: in, Header: f.CheckedHeader()}
	mech := &f.MechanismConfig
	settings := setup.MechanismValues{"delta": f.Target, "noise": noisymax.DiscreteNoise}
	var err error
	if info.Input == votefile.ManyClasses {
		return spec, rel, settings, nil
	}
	if err = mech.Check(cmd, f.ms, info); err != nil || ownTarget(info) {
		return spec, rel, settings, err
	}
	fs := cmd.Flags()
	if info.Uses.Eps {
		rel.Teachers = provenance.TeacherGuarantee{FromFlags: true}
	} else if rel.Teachers, err = f.CheckedHeader().ReleaseTeachers(provenance.Stated{Eps: cli.Given(fs, "eps", f.Eps), Delta: cli.Given(fs, "Delta", f.Delta),
		Calibrated: f.ms.Registry().Calibrated(in.Meta())}); err != nil {
		return spec, rel, settings, fmt.Errorf("%s: %w (--eps, --Delta)", input, err)
	}
	if rel.Problem, err = f.params(cmd, info, in.K(), input, rel.Teachers); err != nil {
		return spec, rel, settings, err
	}
	p := rel.Problem.Problem
	var src optimal.Source
	if info.Uses.Gamma {
		if src, err = mech.Source(setup.Memo(cmd), info); err != nil {
			return spec, rel, settings, err
		}
	}
	settings = mech.Settings(p, src)
	if !info.Uses.Eps {
		spec.Teachers = &accountant.Guarantee{Eps: p.Eps, Delta: p.Delta}
	}
	return spec, rel, settings, nil
}

// params returns the problem: K from the vote file (which the caller
// checked against --K) and the rest from the flags or, with --gamma, from
// what the gamma file states (as darrm verify does): for a mechanism whose
// target is the release's own, the one-vote problem of --target-eps and
// --delta; otherwise the teachers' eps and Delta of t, with --m and
// --delta.
func (f *aggregateFlags) params(cmd *cobra.Command, info setup.MechanismInfo, k int, input string, t provenance.TeacherGuarantee) (resolve.Resolved, error) {
	line := f.Stated(cmd)
	eps, kName := "--eps", "K of the votes of "+input
	if cmd.Flags().Changed("K") {
		kName = "--K"
	}
	tab, tabName := f.GammaTable()
	if info.Uses.Eps {
		var err error
		if line, err = setup.OneVoteTarget(cmd.Flags(), f.TargetEps, line.TargetDelta); err != nil {
			return resolve.Resolved{}, err
		}
		if line.Eps == nil && (tab == nil || tab.Eps == nil) {
			return resolve.Resolved{}, cli.Usagef("%s needs the release's eps: give --target-eps (and --delta, 0 unless given)", info.Name)
		}
	} else {
		line.Eps, line.Delta = &t.Eps, &t.Delta
		if !t.FromFlags {
			eps = "eps " + cliout.Float(t.Eps) + " of the metadata header of " + input
		}
	}
	if tab != nil {
		if kg := tab.Gamma.K(); kg != k {
			return resolve.Resolved{}, cli.Usagef("--gamma %s is for K = %d teachers but %s has %d votes per row", tabName, kg, input, k)
		}
		return f.ParamsNamed(k, kName, eps, line, resolve.FromTable(*tab))
	}
	return f.ParamsNamed(k, kName, eps, line)
}

// startRelease completes spec with its mechanism, bound once from the
// flags and the settings that values resolves, a multi-class one's own
// settings checked, each named by its flag (charged per draw with
// --accounting gdp-filter), the sink of the labels (in the votes' format
// unless --out-format says), the randomness of a release from name, and
// the progress of each step on lines, the solve of the gamma of the
// source in values for problem p among them, a solve whose result the
// cache did not keep said to notStored.
func (f *aggregateFlags) startRelease(cmd *cobra.Command, name string, info setup.MechanismInfo, spec *ensemble.ReleaseSpec, values setup.MechanismValues, p constraints.Problem, lines *cliout.Stages, notStored func(error)) error {
	own := info.Input == votefile.ManyClasses || ownTarget(info)
	if own {
		p = constraints.Problem{K: spec.Votes.K(), TargetDelta: f.Target}
	}
	src, _ := values["gamma"].(optimal.Source)
	spec.Certificate = f.MechanismConfig.Watch(cmd, &src, info, p, lines)
	src.OnNotStored = notStored
	values["gamma"] = src
	spec.Mechanism = info.With(cmd.Flags(), values)
	if own {
		if err := spec.Mechanism.Validate(); err != nil {
			return setup.Flagged(err, setup.BudgetFlags)
		}
	}
	if f.Accounting == setup.FilterAccounting {
		spec.Mechanism, _ = ensemble.ChargedPerDraw(spec.Mechanism, accountant.Guarantee{}) // checkAccounting: it has one
	}
	spec.Sink = ensemble.LabelSink{Path: f.Out, Stdout: cmd.OutOrStdout(), Format: f.OutFormat}
	if spec.Sink.Format == votefile.FormatAuto {
		spec.Sink.Format = votefile.LabelFormat(f.Out, spec.Votes.Format())
	}
	if seed := cli.Given(cmd.Flags(), "seed", f.Seed); seed != nil {
		spec.Random = noise.NewSeededSource(*seed)
	}
	// The bytes read are the votes' own: of an .npz archive's array they
	// are its uncompressed bytes, which the archive's size does not
	// measure, so its progress counts queries.
	total := cli.InputSize(name)
	if f.Array != "" {
		total = -1
	}
	spec.Options = ensemble.ReleaseOptions{Partition: f.Partition, Experiment: spec.Random != nil, Progress: func(n int, b int64) {
		done := int64(n)
		if total > 0 {
			done = b
		}
		lines.At("releasing labels", total).Set(done)
	}}
	return nil
}

// ownTarget reports whether the two-class mechanism info needs neither
// the teachers' guarantee nor a target eps: its guarantee is its own
// settings', as a multi-class mechanism's is, and no problem is resolved
// for it (a program's own; every two-class mechanism of darrm's needs one
// of them).
func ownTarget(info setup.MechanismInfo) bool {
	return info.Input == votefile.TwoClass && !info.Uses.Teachers && !info.Uses.Eps
}
