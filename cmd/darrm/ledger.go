package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/inputs"
	"github.com/darrm/darrm/cmd/darrm/internal/ledgernotes"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/votefile"
)

func init() { subcommands = append(subcommands, newLedgerCmd) }

func newLedgerCmd() *cobra.Command {
	return newGroupCmd("ledger", "A persistent privacy budget for one teacher ensemble, across runs",
		newLedgerInitCmd(), newLedgerShowCmd(), newLedgerVerifyCmd(), newLedgerAdoptCmd(), newLedgerUpgradeCmd())
}

// ledgerInitFlags are the budget of a new ledger and the parameters of
// the ensemble it binds, from a vote file's metadata header (--votes) or
// from the flags.
type ledgerInitFlags struct {
	Votes string `flag:"votes" help:"take the ensemble's parameters from this vote file's metadata header (flags given as well must agree with it)"`
	ensembleFlags
	Relation    accountant.Relation `flag:"relation" help:"neighbouring relation: private-teachers (DaRRM, RR, subsampling) or one-vote (GNMax)"`
	BudgetEps   float64             `flag:"budget-eps" required:""`
	BudgetDelta float64             `flag:"budget-delta" required:""`
	DeltaPrime  float64             `flag:"delta-prime"`
	Filter      accountant.Method   `flag:"filter" help:"how the runs, chosen one after the other, are held to the budget: zcdp-filter (Feldman-Zrnic; GNMax family, LNMax, pure-DP labels) or simple (any (eps, delta) labels); default zcdp-filter for a one-vote ledger with budget-delta > 0, else simple"`
	Replace     bool                `flag:"replace" help:"record this ledger as the ensemble's even though your record names another: the ensemble's budget starts again (only on purpose)"`
}

// ensembleFlags state the parameters of a teacher ensemble that a ledger
// binds, but its relation.
type ensembleFlags struct {
	Ensemble  string             `flag:"ensemble" help:"id of the teacher ensemble the budget is for"`
	K         int                `flag:"K"`
	Eps       float64            `flag:"eps"`
	Delta     float64            `flag:"Delta"`
	Kind      votefile.Kind      `flag:"kind" help:"the teachers are fixed models (fixed) or a fresh mechanism per query (per-query)"`
	Partition votefile.Partition `flag:"partition" help:"how the teachers' training data were split: keyed-hash, file-position or shared (the one-vote relation holds on keyed-hash only)"`
}

// stated returns the parameters the flags state; those not given are
// left unstated (the teachers' guarantee needs --eps and --Delta both).
func (f *ensembleFlags) stated(cmd *cobra.Command) (votefile.Binding, error) {
	b := votefile.Binding{Ensemble: f.Ensemble, K: f.K, Kind: f.Kind, Partition: f.Partition}
	eps, delta := cli.Given(cmd.Flags(), "eps", f.Eps), cli.Given(cmd.Flags(), "Delta", f.Delta)
	if (eps == nil) != (delta == nil) {
		return b, cli.Usagef("--eps and --Delta go together: they are each teacher's guarantee")
	}
	if eps != nil {
		b.Teachers = accountant.Guarantee{Eps: *eps, Delta: *delta}
	}
	return b, nil
}

func newLedgerInitCmd() *cobra.Command {
	f := ledgerInitFlags{Relation: accountant.PrivateTeachers}
	return newCmd("ledger-init", &cobra.Command{
		Use:   "init LEDGER (--votes VOTES | --ensemble ID --K K (--eps E --Delta D | --relation one-vote) --kind KIND --partition RULE) --budget-eps E --budget-delta D",
		Short: "Create a ledger with a total budget, bound to one teacher ensemble",
		Args:  cobra.ExactArgs(1),
		// outputs.Check checks the ledger to be as an output.
		Annotations: map[string]string{"output": "LEDGER"},
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := f.binding(cmd)
			if err != nil {
				return err
			}
			budget := accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}
			filter := ledger.DefaultFilter(b, budget)
			if cmd.Flags().Changed("filter") {
				filter = f.Filter
			}
			opts := ledger.InitOptions{Options: ledger.Options{Waiting: ledgernotes.Waiting(cmd)}, Replace: f.Replace}
			h := ledger.NewHeader(b, budget, f.DeltaPrime, filter)
			prev, err := ledger.Init(cmd.Context(), args[0], h, opts)
			if err != nil {
				return ledgernotes.Error(err)
			}
			return ledgernotes.Initialized(cmd.OutOrStdout(), args[0], b, h, prev)
		},
	}, &f)
}

// binding returns the ensemble's parameters (ledger.Bind): the vote
// file's header, which the flags given must agree with, or the flags
// alone, which must then all be given (the relation defaults to
// private-teachers).
func (f *ledgerInitFlags) binding(cmd *cobra.Command) (votefile.Binding, error) {
	fs := cmd.Flags()
	s := votefile.Stated{Ensemble: f.Ensemble, K: f.K, Kind: f.Kind, Partition: f.Partition,
		Eps: cli.Given(fs, "eps", f.Eps), Delta: cli.Given(fs, "Delta", f.Delta), Calibrated: ensemble.Calibrated}
	if f.Votes == "" {
		required := []string{"ensemble", "K", "eps", "Delta", "kind", "partition"}
		if f.Relation == accountant.OneVote {
			// Non-private teachers: one record changes one vote whatever
			// they are, so no guarantee of theirs is needed.
			required = []string{"ensemble", "K", "kind", "partition"}
		}
		if err := cli.RequireFlags(cmd, required...); err != nil {
			return votefile.Binding{}, cli.Usagef("%v (or take them from a vote file's header with --votes)", err)
		}
		s.Relation = &f.Relation
		b, err := ledger.Bind(nil, s)
		return b, cli.AsUsage(err)
	}
	if fs.Changed("relation") {
		s.Relation = &f.Relation
	}
	meta, err := inputs.VoteHeader(cmd, f.Votes)
	if err != nil {
		return votefile.Binding{}, err
	}
	b, err := ledger.Bind(meta, s)
	if err != nil {
		return b, fmt.Errorf("--votes %s: %w", cli.InputName(f.Votes), err)
	}
	return b, nil
}

func newLedgerShowCmd() *cobra.Command {
	return newLedgerReadCmd("", "show LEDGER", "Print a ledger's budget, releases and total (it only reads the ledger)",
		func(cmd *cobra.Command, err error) error {
			fmt.Fprintf(cmd.ErrOrStderr(), "darrm: warning: %v\n", err)
			return nil
		},
		func(path string, l *ledger.Ledger) (report.Document, error) { return report.NewLedgerShow(path, l) })
}

func newLedgerVerifyCmd() *cobra.Command {
	return newLedgerReadCmd("ledger-verify", "verify LEDGER", "Check every line of a ledger, its hash chain and the totals its lines carry, and the ledger against your record (it only reads)",
		func(_ *cobra.Command, err error) error { return ledgernotes.Error(err) },
		func(path string, l *ledger.Ledger) (report.Document, error) { return report.NewLedgerVerify(path, l) })
}

// newLedgerReadCmd is a command that reads a ledger without writing it
// and prints the document newDoc makes of it. A ledger its user's record
// refuses is passed to onRecordErr: reading needs no record, so show
// warns and goes on, while verify, which vouches for the ledger, fails.
func newLedgerReadCmd(help, use, short string, onRecordErr func(*cobra.Command, error) error, newDoc func(string, *ledger.Ledger) (report.Document, error)) *cobra.Command {
	var f struct {
		Format cliout.Format `flag:"format"`
	}
	return newCmd(help, &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := ledgernotes.Read(cmd, args[0])
			if err != nil {
				return err
			}
			defer l.Close()
			if err := l.RecordErr(); err != nil {
				if err := onRecordErr(cmd, err); err != nil {
					return err
				}
			}
			doc, err := newDoc(args[0], l)
			if err != nil {
				return err
			}
			return doc.Write(cmd.OutOrStdout(), f.Format)
		},
	}, &f)
}

func newLedgerAdoptCmd() *cobra.Command {
	var f struct{}
	return newCmd("ledger-adopt", &cobra.Command{
		Use:   "adopt LEDGER",
		Short: "Record a ledger, as it is now, as its ensemble's ledger (to resolve a refusal on purpose)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prev, l, err := ledger.Adopt(cmd.Context(), args[0], ledger.Options{Waiting: ledgernotes.Waiting(cmd)})
			if err != nil {
				return ledgernotes.Error(err)
			}
			defer l.Close()
			ledgernotes.PrintNotes(cmd.ErrOrStderr(), args[0], l.Notes())
			return ledgernotes.Adopted(cmd.OutOrStdout(), args[0], l, prev)
		},
	}, &f)
}

func newLedgerUpgradeCmd() *cobra.Command {
	var f struct {
		ensembleFlags
		Replace bool `flag:"replace" help:"record the upgraded ledger as the ensemble's even though your record names another (only on purpose)"`
	}
	return newCmd("ledger-upgrade", &cobra.Command{
		Use:   "upgrade LEDGER [--ensemble ID --K K --eps E --Delta D --kind KIND --partition RULE]",
		Short: "Turn a ledger without hash chain (version 1) into a version-2 one, carrying its spends over",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := f.stated(cmd)
			if err != nil {
				return err
			}
			opts := ledger.InitOptions{Options: ledger.Options{Waiting: ledgernotes.Waiting(cmd)}, Replace: f.Replace}
			res, err := ledger.Upgrade(cmd.Context(), args[0], b, opts)
			if err != nil {
				return ledgernotes.Error(err)
			}
			return ledgernotes.Upgraded(cmd.OutOrStdout(), args[0], res)
		},
	}, &f)
}
