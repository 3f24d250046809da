package main

// This file creates a ledger (ledger init): its budget, the ensemble it
// binds and, declared, the labels it will pay for.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// ledgerInitFlags are the budget of a new ledger and the parameters of
// the ensemble it binds, from a vote file's metadata header (--votes,
// read as aggregate reads it, its header in the file or in a sidecar) or
// from the flags.
type ledgerInitFlags struct {
	Votes string `flag:"votes" help:"take the ensemble's parameters from this vote file's header"`
	setup.VoteFlags
	ensembleFlags
	Relation    accountant.Relation `flag:"relation" help:"private-teachers or one-vote" default:"--votes', else %v"`
	BudgetEps   float64             `flag:"budget-eps" required:""`
	BudgetDelta float64             `flag:"budget-delta" required:""`
	DeltaPrime  float64             `flag:"delta-prime"`
	Filter      accountant.Method   `flag:"filter" help:"filter: gdp-, zcdp-, rdp-, advanced-filter or simple" default:"chosen"`
	Replace     bool                `flag:"replace" help:"record this ledger as the ensemble's over another (on purpose)"`
	Shares      []string            `flag:"share" help:"NAME=FRACTION: an analyst's share of the budget (or of a use's labels)"`
	Schedule    string              `flag:"schedule" help:"a file of runs in order, one per line: --mechanism ... --queries N"`
	LockTimeout time.Duration       `flag:"lock-timeout"`
	use         ledgerUseFlags
}

func newLedgerInitCmd(ms *setup.Mechanisms) *cobra.Command {
	f := ledgerInitFlags{Relation: accountant.PrivateTeachers, use: ledgerUseFlags{ms: ms}}
	cmd := newCmd("ledger-init", &cobra.Command{
		Use:   "init LEDGER (--votes VOTES | --ensemble ...) --budget-eps E --budget-delta D [flags]",
		Short: "Create a ledger with a total budget, bound to one teacher ensemble",
		Args:  cobra.ExactArgs(1),
		// Check checks the ledger to be as an output.
		Annotations: map[string]string{"output": "LEDGER"},
		RunE: func(cmd *cobra.Command, args []string) error {
			budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}}
			if err := budget.Validate(); err != nil {
				return cli.AsUsage(setup.Flagged(err, setup.BudgetFlags))
			}
			b, votes, err := f.binding(cmd)
			if err != nil {
				return err
			}
			f.use.creatable = func() error {
				opts := setup.LedgerOptions(cmd)
				opts.Replace = f.Replace
				return setup.LedgerError(opts.CheckCreate(args[0], b.Ensemble))
			}
			// Before any count: with fixed private teachers no filter
			// and no declared use can hold a label that their cap does
			// not (the same check as the ledger's, ledger.Create).
			if err := ledger.CheckCap(b, budget, f.DeltaPrime); err != nil {
				return err
			}
			filter, err := ledger.DefaultFilter(b, budget)
			if err != nil {
				return cli.AsUsage(setup.Flagged(err, setup.BudgetFlags))
			}
			if f.Schedule != "" {
				return ledgerInitSchedule(cmd, args[0], &f, b, budget, votes)
			}
			use, err := f.use.declared(cmd, b, budget, votes, f.Classes)
			if err != nil {
				return err
			}
			var hint *accountant.Spend
			if use != nil {
				filter, hint = use.Choice.Filter, &use.Step
			}
			named := cmd.Flags().Changed("filter")
			if named {
				if filter, err = ledger.NamedFilter(setup.Memo(cmd), b, budget, hint, f.Filter); err != nil {
					return cli.AsUsage(setup.Flagged(err, map[string]string{"filter": "--filter"}))
				}
				// A filter named for labels it cannot hold would fix, for
				// good, a ledger that refuses every one of them (a
				// ledger's filter never changes): refused, as plan
				// refuses to plan for it.
				if use != nil {
					if err := namedHolds(use, filter); err != nil {
						return err
					}
				}
			}
			h := ledger.NewHeader(b, budget, f.DeltaPrime, filter)
			// A declared mechanism fixes every step's privacy before the
			// first: the ledger composes its steps exactly, as one run,
			// unless --filter opens it to any use.
			if use != nil && use.Run != nil {
				uh, err := ledger.NewUseHeader(cmd.Context(), setup.Memo(cmd), b, budget, f.DeltaPrime, []ledger.UseRun{*use.Run})
				if err != nil && use.filtersErr != nil {
					err = use.filtersErr // of one label, which is what the budget refuses
				}
				if err != nil {
					return cli.AsUsage(setup.Flagged(err, use.Names))
				}
				if use.Run = &uh.Use[0]; !named {
					h = uh
				}
			}
			return initLedger(cmd, args[0], &f, b, h, hint, func() error {
				if use == nil {
					return nil
				}
				c, _, err := b.Cap(f.DeltaPrime)
				if err != nil {
					return err
				}
				return report.FilterChoice{Path: args[0], Labels: use.Labels, Run: use.Run, Choice: use.Choice, Header: h, Cap: c, Named: named, Say: use.say}.Write(cmd.OutOrStdout())
			})
		},
	}, &f)
	f.use.bind(cmd)
	cmd.Flags().Lookup("classes").Usage = "classes C of --votes' class indices, or of --mechanism's votes"
	cmd.Flags().StringVar((*string)(&f.use.Mechanism), "mechanism", "", "declare the labels to pay for: their aggregator, as aggregate takes it")
	// The ensemble is --votes' header's, or given in full: no default.
	cli.SetDefaultText(cmd.Flags(), "--votes'", "eps", "Delta", "kind", "partition")
	for _, n := range initAsAggregate(ms) {
		cmd.Flags().MarkHidden(n)
	}
	return cmd
}

// readFlags are the flags that say how to read --votes.
var readFlags = []string{"input-format", "header", "id", "teachers-in-rows", "queries-in-rows", "array", "meta"}

// initAsAggregate returns the flags of ledger init that aggregate takes too,
// with the same meaning and help: how to read --votes, a declared
// mechanism's settings, the cache and workers of its gamma_opt, and the
// accounting and proposal of a use of PTR releases. Its
// help names them in groups (help/ledger-init.txt) rather than one line
// each, so that the flags of the ledger itself stand out.
func initAsAggregate(ms *setup.Mechanisms) []string {
	return append(append(slices.Clone(readFlags), ms.SettingFlags()...), "cache-dir", "no-cache", "workers", "accounting", "max-queries")
}

// requiredFlags returns the flags that state a teacher ensemble without
// --votes in relation r.
func requiredFlags(r accountant.Relation) []string {
	if r == accountant.OneVote {
		// Non-private teachers: one record changes one vote whatever
		// they are, so no guarantee of theirs is needed.
		return []string{"ensemble", "K", "kind", "partition"}
	}
	return []string{"ensemble", "K", "eps", "Delta", "kind", "partition"}
}

// binding returns the ensemble's parameters (provenance.Check) and, with
// --votes, what else aggregate reads of the votes (nil without): the vote
// file's header, which the flags given must agree with, or the flags
// alone, which must then all be given (the relation defaults to
// private-teachers). The vote file is read as aggregate reads it: any
// layout or format, its header in the file or in its sidecar.
func (f *ledgerInitFlags) binding(cmd *cobra.Command) (provenance.Binding, *votesRead, error) {
	fs := cmd.Flags()
	s := provenance.Stated{Ensemble: f.Ensemble, K: f.K, Kind: f.Kind, Partition: f.Partition,
		Eps: cli.Given(fs, "eps", f.Eps), Delta: cli.Given(fs, "Delta", f.Delta)}
	if f.Votes == "" {
		for _, n := range readFlags {
			if fs.Changed(n) {
				return provenance.Binding{}, nil, cli.Usagef("--%s says how to read the --votes file: give --votes, or leave it out", n)
			}
		}
		if err := cli.RequireFlags(cmd, requiredFlags(f.Relation)...); err != nil {
			return provenance.Binding{}, nil, cli.Usagef("%v (or take them from a vote file's header with --votes)", err)
		}
		s.Relation = &f.Relation
		// Without a header the flags are the whole ensemble: every
		// parameter must be in its domain.
		b, err := provenance.Check(nil, s)
		if err == nil {
			err = b.Validate()
		}
		return b, nil, cli.AsUsage(setup.Flagged(err, nil))
	}
	if fs.Changed("relation") {
		s.Relation = &f.Relation
	}
	in, file, err := f.OpenVotes(cmd, "--votes", f.Votes)
	var bad interface{ BadInput() bool }
	if errors.As(err, &bad) && !cli.IsUsage(err) {
		return provenance.Binding{}, nil, fmt.Errorf("--votes: %w", err)
	} else if err != nil {
		return provenance.Binding{}, nil, err
	}
	defer file.Close()
	name := cli.InputName(f.Votes)
	meta := in.Meta()
	if meta == nil {
		return provenance.Binding{}, nil, cli.Usagef("--votes %s has no metadata header: state it in a sidecar beside the votes (%s, or --meta FILE: the header's JSON object, docs/aggregate.md) or, instead of --votes, give the ensemble's parameters as flags (--%s)", name, votefile.SidecarPath(name), strings.Join(requiredFlags(f.Relation), ", --"))
	}
	s.Calibrated = f.use.ms.Registry().Calibrated(meta)
	b, err := f.CheckedHeader().Check(s)
	if err != nil {
		return b, nil, fmt.Errorf("--votes %s: %w", name, in.HeaderError(err))
	}
	return b, &votesRead{Input: in.Input(), Classes: in.Classes()}, nil
}

// namedHolds refuses a filter named by --filter that cannot hold the
// labels declared, or allows none of them (a usage error that says why
// and which filter allows the most): nil when it allows some.
func namedHolds(u *ledgerUse, filter accountant.Filter) error {
	for _, a := range u.Choice.Allowances {
		if a.Filter.Parts[0].Method != filter.Parts[0].Method {
			continue
		}
		switch {
		case a.Err != nil:
			return cli.Usagef("--filter %v cannot hold the labels declared (%s): %s; name a filter that holds them (%v allows the most), or leave --filter out",
				filter.Parts[0].Method, u.Labels, u.say(a.Err), u.Choice.Filter)
		case a.Labels == 0:
			return cli.Usagef("--filter %v allows none of the labels declared (%s) within the budget; name a filter that holds them (%v allows the most), or leave --filter out",
				filter.Parts[0].Method, u.Labels, u.Choice.Filter)
		}
		return nil
	}
	return nil
}
