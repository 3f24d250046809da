package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/cli"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/report"
	"github.com/darrm/darrm/ledger"
)

func init() { subcommands = append(subcommands, newLedgerCmd) }

func newLedgerCmd() *cobra.Command {
	return newGroupCmd("ledger", "A persistent privacy budget for one teacher ensemble, across runs",
		newLedgerInitCmd(), newLedgerShowCmd())
}

// ledgerInitFlags are the budget of a new ledger and the parameters of
// the ensemble it binds, from a vote file's metadata header (--votes) or
// from the flags.
type ledgerInitFlags struct {
	Votes       string             `flag:"votes" help:"take the ensemble's parameters from this vote file's metadata header (flags given as well must agree with it)"`
	Ensemble    string             `flag:"ensemble" help:"id of the teacher ensemble the budget is for"`
	K           int                `flag:"K"`
	Eps         float64            `flag:"eps"`
	Delta       float64            `flag:"Delta"`
	Relation    ensemble.Relation  `flag:"relation" help:"neighbouring relation: private-teachers (DaRRM, RR, subsampling) or one-vote (GNMax)"`
	Kind        ensemble.Kind      `flag:"kind" help:"the teachers are fixed models (fixed) or a fresh mechanism per query (per-query)"`
	Partition   ensemble.Partition `flag:"partition" help:"how the teachers' training data were split: keyed-hash, file-position or shared"`
	BudgetEps   float64            `flag:"budget-eps" required:""`
	BudgetDelta float64            `flag:"budget-delta" required:""`
	DeltaPrime  float64            `flag:"delta-prime"`
}

func newLedgerInitCmd() *cobra.Command {
	f := ledgerInitFlags{Relation: ensemble.PrivateTeachers}
	return newCmd("ledger-init", &cobra.Command{
		Use:   "init LEDGER (--votes VOTES | --ensemble ID --K K --eps E --Delta D --kind KIND --partition RULE) --budget-eps E --budget-delta D",
		Short: "Create a ledger with a total budget, bound to one teacher ensemble",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := f.binding(cmd)
			if err != nil {
				return err
			}
			budget := accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}
			if err := ledger.Init(args[0], ledger.NewHeader(b, budget, f.DeltaPrime)); err != nil {
				return cli.AsUsage(err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "ledger %s: bound to %v; budget %v (delta' = %g)\n", args[0], b, budget, f.DeltaPrime)
			return err
		},
	}, &f, nil)
}

// binding returns the ensemble's parameters: the vote file's header and
// the flags, which must agree with it, or the flags alone, which must then
// state every parameter (the relation defaults to private-teachers).
func (f *ledgerInitFlags) binding(cmd *cobra.Command) (ensemble.Binding, error) {
	fs := cmd.Flags()
	given := ensemble.Binding{Ensemble: f.Ensemble, K: f.K, Relation: f.Relation, Kind: f.Kind, Partition: f.Partition}
	eps, delta := cli.Given(fs, "eps", f.Eps), cli.Given(fs, "Delta", f.Delta)
	if f.Votes == "" {
		if err := cli.RequireFlags(cmd, "ensemble", "K", "eps", "Delta", "kind", "partition"); err != nil {
			return given, cli.Usagef("%v (or take them from a vote file's header with --votes)", err)
		}
		given.Teachers = accountant.Guarantee{Eps: f.Eps, Delta: f.Delta}
		return given, cli.AsUsage(given.Validate())
	}
	file, err := cli.OpenInput(cmd.InOrStdin(), f.Votes)
	if err != nil {
		return given, err
	}
	defer file.Close()
	vf, err := ensemble.OpenVoteFile(file, cli.InputName(f.Votes), ensemble.FormatAuto)
	if err != nil {
		return given, cli.Usagef("--votes: %v", err)
	}
	meta := vf.Meta()
	if meta == nil {
		return given, cli.Usagef("--votes %s has no metadata header: give the ensemble's parameters as flags", cli.InputName(f.Votes))
	}
	var t ensemble.TeacherGuarantee
	if meta.MultiClass() && !meta.Private() {
		// The multi-class mechanisms are private in the one-vote relation
		// whatever the teachers' own guarantee: non-private teachers have
		// none to bind.
		if eps != nil || delta != nil {
			return given, cli.Usagef("--eps, --Delta: %s holds multi-class votes of non-private teachers, whose releases bind no teachers' guarantee", cli.InputName(f.Votes))
		}
	} else if t, err = ensemble.ReleaseTeachers(meta, eps, delta); err != nil {
		return given, fmt.Errorf("--votes %s: %w (--eps, --Delta)", cli.InputName(f.Votes), err)
	}
	b := meta.Binding(t)
	if !fs.Changed("relation") {
		given.Relation = b.Relation
	}
	if d := b.Diff(given); len(d) > 0 {
		return b, cli.Usagef("--%s %s contradicts the metadata header of %s, which states %s", d[0].Field, d[0].B, cli.InputName(f.Votes), d[0].A)
	}
	return b, nil
}

func newLedgerShowCmd() *cobra.Command {
	var f struct {
		Format cliout.Format `flag:"format"`
	}
	return newCmd("", &cobra.Command{
		Use:   "show LEDGER",
		Short: "Print a ledger's budget, releases and total",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := openLedgerFile(args[0])
			if err != nil {
				return err
			}
			defer l.Close()
			doc, err := report.NewLedgerShow(args[0], l)
			if err != nil {
				return err
			}
			return doc.Write(cmd.OutOrStdout(), f.Format)
		},
	}, &f, nil)
}

// openLedgerFile opens a ledger; a corrupt one is bad input (exit 2).
func openLedgerFile(path string) (*ledger.Ledger, error) {
	l, err := ledger.Open(path)
	var ce *ledger.CorruptError
	if errors.As(err, &ce) {
		return nil, cli.AsUsage(err)
	}
	if err != nil {
		return nil, cli.Usagef("--ledger: %v", err)
	}
	return l, nil
}
