package main

import (
	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/aggregators"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/exitstatus"
	"github.com/darrm/darrm/cmd/darrm/internal/inputs"
	"github.com/darrm/darrm/cmd/darrm/internal/ledgernotes"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/pate"
	"github.com/darrm/darrm/votefile"
)

func init() { accountExtra = append(accountExtra, newAccountPATECmd) }

type accountPATEFlags struct {
	aggregators.ClassFlags
	inputs.VoteFlags
	analysisFlags
	Delta      float64               `flag:"target-delta" required:""`
	Orders     []float64             `flag:"orders" help:"Renyi orders (> 1), comma-separated (default: 1.25, 1.5, 1.75, 2 to 100 by 0.5, 40 orders from 100 to 1000)"`
	Noise      noisymax.Noise        `flag:"noise" help:"noise the release drew: discrete (darrm's releases) or continuous (the PATE paper's)"`
	Labels     string                `flag:"labels" help:"the labels of a release (darrm aggregate's): account its realised cost, the GNMax step only where it answered; the mechanism and its settings come from the label file's header, which flags may repeat but not contradict"`
	Conversion accountant.Conversion `flag:"conversion"`
	Seed       uint64                `flag:"seed"`
	Ledger     string                `flag:"ledger"`
	NewDraw    bool                  `flag:"new-draw" help:"draw the smooth-sensitivity release again although a draw is recorded for these votes and settings (a rerun shows the recorded draw): another release, whose GNSS cost --ledger is charged"`
	Format     cliout.Format         `flag:"format"`
}

func newAccountPATECmd() *cobra.Command {
	f := accountPATEFlags{analysisFlags: analysisFlags{SSParams: pate.SmoothDataFree}, Noise: noisymax.DiscreteNoise}
	return newCmd("account-pate", &cobra.Command{
		Use:   "pate [VOTES] [flags]",
		Short: "PATE's privacy of GNMax, Confident-GNMax or LNMax on multi-class votes: data-independent, data-dependent, and released by smooth sensitivity",
		Args:  cli.MaxArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runAccountPATE(cmd, &f, args) },
	}, &f)
}

// runAccountPATE reads the flags and the label file's header into the
// account's options, and prints pate.Account's result.
func runAccountPATE(cmd *cobra.Command, f *accountPATEFlags, args []string) error {
	fs := cmd.Flags()
	smooth, err := f.smooth(cmd)
	if err != nil {
		return err
	}
	opts := pate.AccountOptions{Delta: f.Delta, Orders: f.Orders, Conversion: f.Conversion, Directions: f.Directions, Smooth: smooth}
	given := f.Given(cmd)
	given.Noise = cli.Given(fs, "noise", f.Noise)
	var meta *votefile.LabelMeta
	if f.Labels != "" {
		file, err := inputs.Open(cmd, "--labels", f.Labels, inputs.WantLabels)
		if err != nil {
			return err
		}
		defer file.Close()
		if opts.Labels, err = votefile.NewLabelReader(file, cli.InputName(f.Labels)); err != nil {
			return cli.Usagef("--labels %v", err)
		}
		meta = opts.Labels.Meta()
	}
	given, stated, mech, err := pate.Settle(given, meta)
	if err != nil {
		return cli.Usagef("--labels %s: --%v", f.Labels, err)
	}
	opts.Mechanism = mech
	// The ledger charges the smooth-sensitivity draws (releaseOnce) and,
	// with labels, is the reference for their header.
	if f.Ledger != "" && f.Labels != "" {
		l, err := ledgernotes.Read(cmd, f.Ledger)
		if err != nil {
			return err
		}
		defer l.Close()
		if opts.Recorded, err = pate.RecordedIn(l, f.Ledger); err != nil {
			return ledgernotes.Error(err)
		}
	}
	var info ensemble.MechanismInfo
	info, err = ensemble.LookupMechanism(opts.Mechanism, votefile.ManyClasses)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if err := aggregators.CheckSettings(cmd, info, stated); err != nil {
		return err
	}
	switch {
	case f.NewDraw && f.Ledger == "":
		return cli.Usagef("--new-draw: a new draw of the smooth-sensitivity release is another release of the votes: give the --ledger to charge it to")
	case fs.Changed("seed") && (f.NewDraw || f.Ledger != "" && f.Labels == ""):
		// With --labels the ledger is still the labels' reference.
		return cli.Usagef("--seed draws a reproducible experiment (NOT FOR RELEASE), which is neither recorded nor charged: drop --ledger and --new-draw, or --seed")
	}
	if opts.Mechanism == votefile.LNMax {
		for _, fl := range []string{"labels", "noise", "directions", "ss-parameters", "ss-order", "beta", "sigma-ss", "seed", "ledger", "new-draw"} {
			if fs.Changed(fl) {
				return cli.Usagef("--%s: lnmax is accounted data-independently only, which needs no release, noise model or smooth sensitivity", fl)
			}
		}
		opts.LNMax = noisymax.LNMax{Scale: *given.LaplaceScale}
	} else {
		if given.Noise == nil {
			given.Noise = &f.Noise
		}
		if opts.GNMax, err = aggregators.GNMaxOf(given, *given.Noise); err != nil {
			return err
		}
	}
	in, file, err := f.OpenVotes(cmd, cli.InputArg(args))
	if err != nil {
		return err
	}
	defer file.Close()
	doc := report.AccountPATE{Seed: cli.Given(fs, "seed", f.Seed)}
	// A seeded draw is an experiment, drawn in Account; a release is
	// prepared there and drawn once below.
	var src *noise.Source
	if doc.Seed != nil {
		src = noise.NewSeededSource(*doc.Seed)
	}
	if doc.AccountResult, err = pate.Account(cmd.Context(), in, opts, src); err != nil {
		return exitstatus.Flagged(err, map[string]string{"alpha": "--orders", "delta": "--target-delta", "laplace scale": "--laplace-scale",
			"ss order": "--ss-order", "sigma ss": "--sigma-ss", "teachers": "K, the teachers of " + cli.InputName(cli.InputArg(args)) + ","})
	}
	if doc.Seed == nil {
		// A new draw of a release is charged to the ledger (pate.ChargeDraw).
		if doc.Draw, doc.LedgerTotal, err = f.releaseOnce(cmd, doc.AccountResult); err != nil {
			return err
		}
	}
	return doc.Write(cmd.OutOrStdout(), f.Format)
}

// releaseOnce releases the account's smooth-sensitivity draw once per
// votes and settings (pate.AccountResult.ReleaseOnce), recorded in the state
// folder, a new draw charged to --ledger when one is given; it returns the
// ledger's total after the charge.
func (f *accountPATEFlags) releaseOnce(cmd *cobra.Command, a *pate.AccountResult) (*pate.DrawState, *report.LedgerTotal, error) {
	dir, err := ledger.StateDir()
	if err != nil {
		return nil, nil, err
	}
	var total *report.LedgerTotal
	o := pate.Once{Record: pate.Draws{Dir: dir}, Again: f.NewDraw, Ledger: f.Ledger}
	if f.Ledger != "" {
		o.Charge = func(cost accountant.Guarantee) error {
			g, method, err := pate.ChargeDraw(cmd.Context(), f.Ledger, a.Binding, cost, ledger.Options{Waiting: ledgernotes.Waiting(cmd)},
				func(notes []string) { ledgernotes.PrintNotes(cmd.ErrOrStderr(), f.Ledger, notes) })
			if err != nil {
				return ledgernotes.Error(err)
			}
			total = &report.LedgerTotal{Guarantee: g, Composition: method}
			return nil
		}
	}
	st, err := a.ReleaseOnce(o, noise.NewSource())
	return st, total, err
}
