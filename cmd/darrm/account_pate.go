package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/pate"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

func init() { accountExtra = append(accountExtra, newAccountPATECmd) }

type accountPATEFlags struct {
	setup.VoteFlags
	analysisFlags
	K          int                   `flag:"K"`
	Delta      float64               `flag:"target-delta" required:""`
	Orders     []float64             `flag:"orders" help:"Renyi orders (> 1), comma-separated" default:"a grid of 1.25 to 1000"`
	Noise      noisymax.Noise        `flag:"noise" help:"release's noise: discrete (darrm's) or continuous"`
	Labels     string                `flag:"labels" help:"a release's labels (aggregate's): account for what it released"`
	Conversion accountant.Conversion `flag:"conversion"`
	Seed       uint64                `flag:"seed"`
	Ledger     string                `flag:"ledger"`
	Analyst    string                `flag:"analyst"`
	Wait       time.Duration         `flag:"lock-timeout"`
	Release    bool                  `flag:"release-estimate" help:"draw eps_released (a release); only a --ledger counts every draw"`
	Format     cliout.Format         `flag:"format"`
	ms         *setup.Mechanisms
}

func newAccountPATECmd(ms *setup.Mechanisms) *cobra.Command {
	f := accountPATEFlags{analysisFlags: analysisFlags{SSParams: ssDataFree}, Noise: noisymax.DiscreteNoise, ms: ms}
	cmd := newCmd("account-pate", &cobra.Command{
		Use:   "pate [VOTES] [flags]",
		Short: "PATE's accounting of GNMax, Confident-GNMax or LNMax on multi-class votes",
		Args:  cli.MaxArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runAccountPATE(cmd, &f, args) },
	}, &f)
	ms.BindSettings(cmd, votefile.ManyClasses)
	setup.AddWitnessFlag(cmd)
	return cmd
}

// runAccountPATE reads the flags and the label file's header into the
// account's options, and prints pate.Account's result.
func runAccountPATE(cmd *cobra.Command, f *accountPATEFlags, args []string) error {
	fs := cmd.Flags()
	smooth, err := f.smooth(cmd)
	if err != nil {
		return err
	}
	opts := pate.AccountOptions{Delta: f.Delta, Orders: f.Orders, Conversion: f.Conversion, Directions: f.Directions, Smooth: smooth, Memo: setup.Memo(cmd)}
	var meta *votefile.LabelMeta
	if f.Labels != "" {
		file, err := setup.OpenInput(cmd, "--labels", f.Labels, setup.WantLabels)
		if err != nil {
			return err
		}
		defer file.Close()
		if opts.Labels, err = votefile.NewLabelReader(file, cli.InputName(f.Labels)); err != nil {
			return cli.Usagef("--labels %v", err)
		}
		meta = opts.Labels.Meta()
	}
	mech, stated, err := f.settle(cmd, meta)
	if err != nil {
		return cli.Usagef("--labels %s: --%v", f.Labels, err)
	}
	opts.Mechanism = mech
	// The ledger charges the smooth-sensitivity draws (releaseOnce) and,
	// with labels, is the reference for their header.
	if f.Ledger != "" && f.Labels != "" {
		if opts.Recorded, err = recordedIn(cmd, f.Ledger); err != nil {
			return err
		}
	}
	info, err := f.ms.Lookup(mech.Name(), votefile.ManyClasses)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if err := f.ms.CheckSettings(cmd, info, stated); err != nil {
		return err
	}
	switch {
	case fs.Changed("seed") && !f.Release:
		return cli.Usagef("--seed seeds the smooth-sensitivity draw of --release-estimate: give --release-estimate, or drop --seed (nothing is drawn without it)")
	case fs.Changed("seed") && f.Ledger != "" && f.Labels == "":
		// With --labels the ledger is still the labels' reference.
		return cli.Usagef("--seed draws a reproducible experiment (NOT FOR RELEASE), which is neither recorded nor charged: drop --ledger, or --seed")
	case (fs.Changed("analyst") || fs.Changed("witness") || fs.Changed("ledger")) && f.Ledger == "":
		return setup.WithoutLedger(cmd, f.Ledger)
	case f.Ledger != "" && f.Labels == "" && !f.Release:
		return cli.Usagef("--ledger is the reference of --labels and is charged for --release-estimate: give either, or drop --ledger")
	}
	// PATE's data-dependent analysis is of the noisy-max steps of the
	// GNMax family (ensemble.Steps); a mechanism charged per draw is
	// accounted by its filter; any other data-independently only.
	_, steps := ensemble.Steps(mech, 0)
	_, perDraw := setup.PerDraw(info)
	switch {
	case !steps && !perDraw:
		for _, fl := range []string{"labels", "noise", "directions", "ss-parameters", "ss-order", "beta", "sigma-ss", "seed", "ledger", "release-estimate"} {
			if fs.Changed(fl) {
				return cli.Usagef("--%s: %s is accounted data-independently only, which needs no release, noise model or smooth sensitivity", fl, mech.Name())
			}
		}
	case perDraw:
		if f.Labels == "" {
			return cli.Usagef("--labels: %s is accounted by the Gaussian-DP filter that charged its release's draws: give the release's labels, whose header states its settings and the filter's budget", mech.Name())
		}
		for _, fl := range []string{"noise", "directions", "ss-parameters", "ss-order", "beta", "sigma-ss", "seed", "release-estimate", "orders", "conversion"} {
			if fs.Changed(fl) {
				return cli.Usagef("--%s: %s is accounted by its Gaussian-DP filter's budget alone, which needs no noise model, Renyi orders, conversion or smooth sensitivity", fl, mech.Name())
			}
		}
	default:
		if err := checkGNMax(mech); err != nil {
			return setup.Flagged(err, nil)
		}
	}
	in, file, err := f.OpenVotes(cmd, "VOTES", cli.InputArg(args))
	if err != nil {
		return err
	}
	defer file.Close()
	if fs.Changed("K") && f.K != in.K() {
		return cli.Usagef("--K = %d but %s has K = %d teachers", f.K, cli.InputName(cli.InputArg(args)), in.K())
	}
	opts.Header = f.CheckedHeader()
	doc := report.AccountPATE{Seed: cli.Given(fs, "seed", f.Seed), LedgerPath: ledger.Redact(f.Ledger)}
	if doc.AccountResult, err = pate.Account(cmd.Context(), in, opts); err != nil {
		return setup.Flagged(err, map[string]string{"AccountOptions.Mechanism": "the settings given are those of", "alpha": "--orders", "delta": "--target-delta",
			"ss order": "--ss-order", "sigma ss": "--sigma-ss", "teachers": "K, the teachers of " + cli.InputName(cli.InputArg(args)) + ","})
	}
	ledgerPath := ledger.Redact(f.Ledger)
	if f.Ledger != "" && !ledger.IsURL(f.Ledger) {
		if ledgerPath, err = filepath.Abs(f.Ledger); err != nil {
			return err
		}
	}
	// A draw its ledger has no room for is stopped by the budget (exit
	// 4), after the account's document, as every outcome prints one.
	var stopped error
	if !perDraw {
		doc.Draw, err = f.releaseOnce(cmd, doc.AccountResult, doc.Seed, ledgerPath)
		stopped = err
		if !errors.Is(err, setup.ErrBudget) {
			if err != nil {
				return err
			}
			stopped = nil
		}
	}
	if f.Ledger != "" {
		if doc.Ledger, err = ledgerStatus(cmd, f.Ledger, doc.Release.Step); err != nil {
			return err
		}
		doc.PublishLedger = doc.AccountResult.LedgerCovers(ledgerPath)
	}
	if err := doc.Write(cmd.OutOrStdout(), f.Format); err != nil {
		return err
	}
	return stopped
}

// releaseOnce settles the account's smooth-sensitivity draws
// (pate.AccountResult.ReleaseOnce): every draw recorded on the votes in
// the state folder is counted, and with --release-estimate one is drawn,
// from the seed as an experiment, or recorded and, with --ledger (its
// absolute path, or its URL without the password: ledgerPath), charged
// first.
func (f *accountPATEFlags) releaseOnce(cmd *cobra.Command, a *pate.AccountResult, seed *uint64, ledgerPath string) (*pate.DrawState, error) {
	dir, err := statedir.Default()
	if err != nil {
		return nil, err
	}
	o := pate.Once{Dir: dir, New: f.Release, Experiment: seed != nil, Ledger: ledgerPath}
	src := noise.NewSource()
	if seed != nil {
		src = noise.NewSeededSource(*seed)
	} else if f.Ledger != "" {
		o.Charge = func(cost accountant.Guarantee) error {
			return setup.LedgerError(f.chargeDraw(cmd, a.Binding, cost))
		}
	}
	st, err := a.ReleaseOnce(o, src)
	var (
		again *pate.AgainError
		bad   interface{ BadInput() bool }
	)
	switch {
	case errors.As(err, &again):
		return nil, cli.Usagef("--release-estimate: %v: give --ledger, or drop --release-estimate (the recorded draws are counted without it)", err)
	case f.Release && errors.As(err, &bad) && bad.BadInput():
		// A draw these votes and settings do not allow: the flag that
		// asked for it.
		return nil, cli.Usagef("--release-estimate: %v", err)
	}
	return st, err
}

// gnssMechanism names a smooth-sensitivity draw where a ledger charges
// it.
const gnssMechanism provenance.MechanismName = "gnss"

// chargeDraw charges one smooth-sensitivity draw of cost to the ledger
// --ledger for the teachers b, before it is drawn (pate.Once.Charge): one
// step of its (ε, δ) as converted, so that a zcdp-filter ledger refuses it
// (GNSS's RDP holds only below order 1/(2β): it has no zCDP slope). A
// budget with no room left for it is an setup.ErrBudget. The ledger is
// opened for the charge only: the draw is recorded after it is closed.
func (f *accountPATEFlags) chargeDraw(cmd *cobra.Command, b provenance.Binding, cost accountant.Guarantee) error {
	book := setup.LedgerOptions(cmd)
	book.Analyst = f.Analyst
	l, err := ledger.Open(cmd.Context(), f.Ledger, book)
	if err != nil {
		return err
	}
	defer l.Close()
	allowed, err := l.Begin(cmd.Context(), gnssMechanism, b, accountant.ApproxStep(cost), 1)
	if err != nil {
		return err
	}
	setup.PrintLedgerNotes(cmd.ErrOrStderr(), f.Ledger, l.Notes())
	if allowed < 1 {
		what := "its budget"
		if st, err := l.BalanceFor(accountant.ApproxStep(cost)); err == nil && st.ShareBound && st.Share != nil {
			// The analyst's share, not the budget, is what stops it.
			what = fmt.Sprintf("analyst %q's share of its budget, %v,", st.Analyst, *st.Share)
		}
		return fmt.Errorf("%w: ledger %s: a smooth-sensitivity draw costs %v, beyond what %s has left: nothing drawn", setup.ErrBudget, ledger.Redact(f.Ledger), cost, what)
	}
	if err := l.Reserve(cmd.Context(), 1); err != nil {
		return err
	}
	return l.Settle(cmd.Context(), 1)
}

// recordedIn returns the releases the ledger at path charged, the
// reference a label file's header is checked against
// (pate.AccountOptions.Recorded), closing the ledger before the account: a
// draw's charge opens it again.
func recordedIn(cmd *cobra.Command, path string) (*pate.Recorded, error) {
	l, err := setup.ReadLedger(cmd, path)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	r := &pate.Recorded{Ledger: ledger.Redact(path), ID: l.Header().ID, Ensemble: l.Header().Ensemble}
	err = l.Runs(cmd.Context(), func(s ledger.Spend) error {
		r.Releases = append(r.Releases, pate.RecordedRelease{Mechanism: s.Mechanism, PerQuery: accountant.Guarantee{Eps: s.Eps, Delta: s.Delta}, Labels: s.Queries})
		return nil
	})
	if err != nil {
		return nil, setup.LedgerError(err)
	}
	return r, nil
}

// ledgerStatus returns the state of the ledger at path, read after any
// charge, with how many more queries of step it allows.
func ledgerStatus(cmd *cobra.Command, path string, step accountant.Spend) (*ledger.Balance, error) {
	l, err := setup.ReadLedger(cmd, path)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	st, err := l.BalanceFor(step)
	if err != nil {
		return nil, setup.LedgerError(err)
	}
	return &st, nil
}
