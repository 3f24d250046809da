package main

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

func init() { subcommands = append(subcommands, subcommand{"ledger", newLedgerCmd}) }

func newLedgerCmd() *cobra.Command {
	return newGroupCmd("ledger", "A persistent privacy budget for one teacher ensemble, across runs",
		newLedgerInitCmd(), newLedgerShowCmd(), newLedgerVerifyCmd(), newLedgerAdoptCmd(), newLedgerUpgradeCmd(),
		newLedgerExportCmd(), newLedgerImportCmd(), newLedgerCheckpointCmd())
}

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

// ensembleFlags state the parameters of a teacher ensemble that a ledger
// binds, but its relation.
type ensembleFlags struct {
	Ensemble  string               `flag:"ensemble" help:"id of the teacher ensemble the budget is for"`
	K         int                  `flag:"K"`
	Eps       float64              `flag:"eps"`
	Delta     float64              `flag:"Delta"`
	Kind      provenance.Kind      `flag:"kind" help:"teachers: fixed (models) or per-query (mechanisms)"`
	Partition provenance.Partition `flag:"partition" help:"data split: keyed-hash, file-position or shared"`
}

// stated returns the parameters the flags state; those not given are
// left unstated (the teachers' guarantee needs --eps and --Delta both).
func (f *ensembleFlags) stated(cmd *cobra.Command) (provenance.Binding, error) {
	b := provenance.Binding{Ensemble: f.Ensemble, Teachers: provenance.Teachers{K: f.K, Kind: f.Kind, Partition: f.Partition}}
	eps, delta := cli.Given(cmd.Flags(), "eps", f.Eps), cli.Given(cmd.Flags(), "Delta", f.Delta)
	if (eps == nil) != (delta == nil) {
		return b, cli.Usagef("--eps and --Delta go together: they are each teacher's guarantee")
	}
	if eps != nil {
		b.Each = accountant.Guarantee{Eps: *eps, Delta: *delta}
	}
	return b, nil
}

func newLedgerInitCmd() *cobra.Command {
	f := ledgerInitFlags{Relation: accountant.PrivateTeachers}
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
			}
			h := ledger.NewHeader(b, budget, f.DeltaPrime, filter)
			// A declared mechanism fixes every step's privacy before the
			// first: the ledger composes its steps exactly, as one run,
			// unless --filter opens it to any use.
			if use != nil && use.Run != nil {
				uh, err := ledger.NewUseHeader(cmd.Context(), setup.Memo(cmd), b, budget, f.DeltaPrime, []ledger.UseRun{*use.Run})
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
	setup.BindFlags(cmd, &f.use)
	cmd.Flags().Lookup("classes").Usage = "classes C of --votes' class indices, or of --mechanism's votes"
	cmd.Flags().StringVar((*string)(&f.use.Mechanism), "mechanism", "", "declare the labels to pay for: their aggregator, as aggregate takes it")
	// The ensemble is --votes' header's, or given in full: no default.
	cli.SetDefaultText(cmd.Flags(), "--votes'", "eps", "Delta", "kind", "partition")
	for _, n := range initAsAggregate {
		cmd.Flags().MarkHidden(n)
	}
	return cmd
}

// readFlags are the flags that say how to read --votes.
var readFlags = []string{"input-format", "header", "id", "teachers-in-rows", "queries-in-rows", "array", "meta"}

// initAsAggregate are the flags of ledger init that aggregate takes too,
// with the same meaning and help: how to read --votes, a declared
// mechanism's settings, the cache and workers of its gamma_opt, and the
// accounting and proposal of a use of PTR releases. Its
// help names them in groups (help/ledger-init.txt) rather than one line
// each, so that the flags of the ledger itself stand out.
var initAsAggregate = append(slices.Clone(readFlags), "threshold", "sigma1", "sigma2", "levels", "kappa", "give-up", "laplace-scale", "m", "delta", "target-eps",
	"gamma", "gnmax-search", "prior", "no-solve", "rr-composition", "rr-delta-prime", "cache-dir", "no-cache", "workers",
	"accounting", "max-queries")

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
		required := []string{"ensemble", "K", "eps", "Delta", "kind", "partition"}
		if f.Relation == accountant.OneVote {
			// Non-private teachers: one record changes one vote whatever
			// they are, so no guarantee of theirs is needed.
			required = []string{"ensemble", "K", "kind", "partition"}
		}
		if err := cli.RequireFlags(cmd, required...); err != nil {
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
		return provenance.Binding{}, nil, cli.Usagef("--votes %s has no metadata header: state it in a sidecar beside the votes (%s, or --meta FILE: the header's JSON object, docs/aggregate.md) or give the ensemble's parameters as flags", name, votefile.SidecarPath(name))
	}
	s.Calibrated = ensemble.Mechanisms().Calibrated(meta)
	b, err := provenance.Check(meta, s)
	if err != nil {
		return b, nil, fmt.Errorf("--votes %s: %w", name, in.HeaderError(err))
	}
	return b, &votesRead{Input: in.Input(), Classes: in.Classes()}, nil
}

func newLedgerShowCmd() *cobra.Command {
	return newLedgerReadCmd("ledger-show", "show LEDGER", "Print a ledger's budget, releases and total (it only reads the ledger)",
		func(cmd *cobra.Command, err error) error {
			fmt.Fprintf(cmd.ErrOrStderr(), "darrm: warning: %v\n", err)
			return nil
		},
		func(cmd *cobra.Command, path string, l *ledger.Ledger) (report.Document, error) {
			return report.NewLedgerShow(cmd.Context(), path, l)
		})
}

func newLedgerVerifyCmd() *cobra.Command {
	return newLedgerReadCmd("ledger-verify", "verify LEDGER", "Check every line of a ledger, its hash chain and totals, against your record",
		func(_ *cobra.Command, err error) error { return setup.LedgerError(err) },
		func(_ *cobra.Command, path string, l *ledger.Ledger) (report.Document, error) {
			return report.NewLedgerVerify(path, l)
		})
}

// newLedgerReadCmd is a command that reads a ledger without writing it
// and prints the document newDoc makes of it. A ledger its user's record
// refuses is passed to onRecordErr: reading needs no record, so show
// warns and goes on, while verify, which vouches for the ledger, fails.
// A ledger that a --witness refuses fails both: the check was asked for.
func newLedgerReadCmd(help, use, short string, onRecordErr func(*cobra.Command, error) error, newDoc func(*cobra.Command, string, *ledger.Ledger) (report.Document, error)) *cobra.Command {
	var f struct {
		Format      cliout.Format `flag:"format"`
		LockTimeout time.Duration `flag:"lock-timeout"`
	}
	cmd := newCmd(help, &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := setup.ReadLedger(cmd, args[0])
			if err != nil {
				return err
			}
			defer l.Close()
			if err := l.RecordErr(); err != nil {
				if err := onRecordErr(cmd, err); err != nil {
					return err
				}
			}
			doc, err := newDoc(cmd, ledger.Redact(args[0]), l)
			if err != nil {
				return err
			}
			return doc.Write(cmd.OutOrStdout(), f.Format)
		},
	}, &f)
	setup.AddWitnessFlag(cmd)
	return cmd
}

func newLedgerAdoptCmd() *cobra.Command {
	var f struct {
		LockTimeout time.Duration `flag:"lock-timeout"`
	}
	return newCmd("ledger-adopt", &cobra.Command{
		Use:   "adopt LEDGER",
		Short: "Record a ledger, as it is, as its ensemble's (to resolve a refusal on purpose)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prev, l, err := setup.LedgerOptions(cmd).Adopt(cmd.Context(), args[0])
			if err != nil {
				return setup.LedgerError(err)
			}
			defer l.Close()
			setup.PrintLedgerNotes(cmd.ErrOrStderr(), args[0], l.Notes())
			return report.LedgerAdopted(cmd.OutOrStdout(), args[0], l, prev)
		},
	}, &f)
}

func newLedgerUpgradeCmd() *cobra.Command {
	var f struct {
		ensembleFlags
		Replace     bool          `flag:"replace" help:"record the upgraded ledger as the ensemble's over another"`
		LockTimeout time.Duration `flag:"lock-timeout"`
	}
	cmd := newCmd("ledger-upgrade", &cobra.Command{
		Use:   "upgrade LEDGER",
		Short: "Turn a version-3 ledger into a version-4 one, keeping its spends",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := f.stated(cmd)
			if err != nil {
				return err
			}
			res, err := setup.LedgerOptions(cmd).Upgrade(cmd.Context(), args[0], b, f.Replace)
			if err != nil {
				return setup.LedgerError(err)
			}
			return report.LedgerUpgraded(cmd.OutOrStdout(), args[0], res)
		},
	}, &f)
	// The flags may only repeat the old ledger's binding.
	cli.SetDefaultText(cmd.Flags(), "the ledger's", "eps", "Delta", "kind", "partition")
	return cmd
}
