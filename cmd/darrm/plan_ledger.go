package main

// This file plans for a new ledger: an analyst's share of it (share), the
// ledger init that declares a plan's labels as its use (ledgerInitOf), and
// the request that a plan and a ledger's declared use are built from
// (requestOf).

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/plan"
	"github.com/darrm/darrm/votefile"
)

// planFilter checks plan's --filter, a filter of a new ledger open to any
// use, as ledger init takes it: one of the filters of the budget
// (accountant.Budget.OpenFilters), only simple when its delta is 0. Whether it
// holds the labels is the plan's to say.
func planFilter(f accountant.Method, budget accountant.Guarantee) error {
	switch {
	case budget.Delta == 0 && f != accountant.Simple:
		return cli.Usagef("--filter %v: a budget of delta 0 is held by simple composition of pure points alone: use --filter simple", f)
	case f == accountant.Simple, f == accountant.ZCDPFilter, f == accountant.RenyiFilter, f == accountant.AdvancedFilter, f == accountant.GDPFilter:
		return nil
	}
	return cli.Usagef("--filter %v: must be gdp-filter, zcdp-filter, rdp-filter, advanced-filter or simple (the filters valid for runs chosen adaptively)", f)
}

// planPassed are the flags of a plan that ledger init takes as they are:
// the slack of the ledger's header and how the mechanism's noise is found.
var planPassed = []string{"delta-prime", "prior", "gamma", "no-solve", "cache-dir", "no-cache", "workers", "rr-composition", "rr-delta-prime", "gnmax-search"}

// ledgerInitOf returns, for a plan p for a ledger, the darrm ledger init
// that declares its labels as a new ledger's use: the budget, the filter
// if --filter named one, the mechanism with its settings (the planned one
// at its exact value), K and the classes or the teachers' guarantee, which
// the votes' header must then state too, the analysts' shares (--share,
// as given), the queries expected (the planned ones; with shares, the
// team's: every label the ledger allows, of which the share planned for
// gives the planned ones), and the flags planPassed as given. Run as
// printed, with LEDGER the new ledger's file and VOTES the votes to be
// released (whose header binds the ledger), it fixes the filter the plan
// counted, which allows the planned labels, to the analyst planned for
// when there are shares. Its words, each quoted for a POSIX shell; nil
// for another plan.
func ledgerInitOf(cmd *cobra.Command, info setup.MechanismInfo, p plan.Plan, shares []string) []string {
	r := p.Request
	if r.For != plan.ForLedger {
		return nil
	}
	args := []string{"darrm", "ledger", "init", "LEDGER", "--votes", "VOTES", "--budget-eps", cliout.Float(r.Budget.Eps), "--budget-delta", cliout.Float(r.Budget.Delta)}
	if r.Filter != nil {
		args = append(args, "--filter", r.Filter.String())
	}
	args = append(args, votesReading(cmd)...)
	args = append(args, "--mechanism", string(info.Name), "--K", strconv.Itoa(r.K))
	if info.Input == votefile.ManyClasses {
		args = append(args, "--classes", strconv.Itoa(r.Classes))
	}
	// Its settings that are numbers (the others are passed as given),
	// with the teachers' guarantee of which m·eps is its target.
	var teachers map[string]any
	if r.Teachers != nil {
		teachers = map[string]any{"eps": r.Teachers.Eps, "Delta": r.Teachers.Delta}
	}
	args = append(args, settingArgs(info, r.Mechanism, teachers)...)
	fs := cmd.Flags()
	for _, n := range planPassed {
		if fl := fs.Lookup(n); fl != nil && fl.Changed {
			if fl.Value.Type() == "bool" {
				args = append(args, "--"+n+"="+fl.Value.String())
			} else {
				args = append(args, "--"+n, fl.Value.String())
			}
		}
	}
	for _, s := range shares {
		args = append(args, "--share", s)
	}
	queries := p.Queries
	if r.Share != 0 {
		queries = p.Count.LedgerAll
	}
	args = append(args, "--queries", strconv.Itoa(queries))
	for i, a := range args {
		args[i] = shellWord(a)
	}
	return args
}

// settingArgs returns the flags and values of the settings of mech, a
// mechanism of info, that are numbers, in the order of its flags, with
// more values by their flags (the teachers' guarantee): all but the
// per-query delta at its default, as a command line that darrm prints
// states them.
func settingArgs(info setup.MechanismInfo, mech ensemble.Mechanism, more map[string]any) []string {
	keep := setup.OnVotes(info.Input)
	values, defaults := cli.FieldValues(mech, keep), cli.FieldValues(info.Defaults(), keep)
	maps.Copy(values, more)
	var args []string
	for _, n := range info.Flags() {
		if x, ok := values[n].(float64); ok && (n != "delta" || x != defaults[n]) {
			args = append(args, "--"+n, cliout.Float(x))
		}
	}
	return args
}

// planSharesAllow refuses a plan for an analyst's share of a new ledger
// whose other shares (--share, as given) allow no label of it
// (plan.Count.ShareAllows): the ledger init it prints would refuse them
// (sharesAllow), and the plan would hand the team a command that fails.
func planSharesAllow(cmd *cobra.Command, p plan.Plan, given []string) error {
	if p.Request.Share == 0 {
		return nil
	}
	shares, err := parseShares(given)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(shares)) {
		n, err := p.Count.ShareAllows(setup.Memo(cmd), shares[name])
		if err != nil {
			return err
		}
		if n == 0 {
			return cli.Usagef("--share %s=%v allows none of the new ledger's %d labels, each %v, which ledger init refuses; give %q a larger share",
				name, shares[name], p.Count.LedgerAll, p.Count.PerQuery, name)
		}
	}
	return nil
}

// votesReading returns the flags, as given to cmd, that say how its
// --votes were read, but --meta (the proxy's own header): a command that
// darrm prints for the votes to be released reads them alike, as plan
// reads --private-votes.
func votesReading(cmd *cobra.Command) []string {
	var words []string
	for _, n := range readFlags {
		fl := cmd.Flags().Lookup(n)
		switch {
		case n == "meta" || fl == nil || !fl.Changed || fl.Value.String() == fl.DefValue:
			// A default given says nothing the line must repeat.
		case fl.Value.Type() == "bool" && fl.Value.String() == "true":
			words = append(words, "--"+n)
		case fl.Value.Type() == "bool":
			words = append(words, "--"+n+"="+fl.Value.String())
		default:
			words = append(words, "--"+n, fl.Value.String())
		}
	}
	return words
}

// shellLine joins words into a command line, each quoted for a POSIX
// shell where it needs it (shellWord).
func shellLine(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shellWord(w)
	}
	return strings.Join(quoted, " ")
}

// shellWord quotes s for a POSIX shell when it needs it, for a command
// that darrm prints to be run.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// share returns the analyst a plan is for and their share of a new
// ledger, from --share (as ledger init takes them, checked alike) and
// --analyst, which names one of them (needed when there are several);
// none without --share.
func (f *planFlags) share(cmd *cobra.Command) (string, float64, error) {
	fs := cmd.Flags()
	shares, err := parseShares(f.Shares)
	if err == nil {
		err = ledger.CheckShares(shares)
	}
	if err != nil {
		return "", 0, cli.AsUsage(setup.Flagged(err, setup.BudgetFlags))
	}
	switch {
	case len(shares) == 0 && fs.Changed("analyst"):
		return "", 0, cli.Usagef("--analyst names whose --share to plan for: give the ledger's shares with --share NAME=FRACTION")
	case len(shares) == 0:
		return "", 0, nil
	case !fs.Changed("analyst") && len(shares) > 1:
		return "", 0, cli.Usagef("--analyst: give whose --share to plan for, one of %s", strings.Join(shareNames(shares), ", "))
	case !fs.Changed("analyst"):
		for name, share := range shares {
			return name, share, nil
		}
	}
	share, ok := shares[f.Analyst]
	if !ok {
		return "", 0, cli.Usagef("--analyst %q has no --share: plan for one of %s", f.Analyst, strings.Join(shareNames(shares), ", "))
	}
	return f.Analyst, share, nil
}

// requestOf returns the request of a plan of mechanism info for k
// teachers, each (eps, Delta)-DP as teachers says (for a mechanism
// calibrated to them, ensemble.Needs.Teachers), voting among classes classes, held to budget, with the
// settings s and those of the flags fs, and workers goroutines of the
// certificate: the per-query delta of a multi-class mechanism is the one
// given, else the budget's. A per-query delta given as 0 to a mechanism
// calibrated to the teachers is refused by the rule of DaRRM's problem,
// as aggregate refuses it: the mechanism's 0 is its default, which would
// plan or declare labels of another delta than the one given.
func requestOf(memo *accountant.Memo, fs *pflag.FlagSet, info setup.MechanismInfo, k, classes int, teachers accountant.Guarantee, budget accountant.Budget, s setup.MechanismValues, workers int) (plan.Request, error) {
	r := plan.Request{ReleaseSpec: ensemble.ReleaseSpec{Budget: &budget, Certificate: ensemble.Options{Workers: workers, Memo: memo}}, K: k, Classes: classes}
	delta, given := s["delta"]
	if info.Input == votefile.ManyClasses && !given {
		s["delta"] = budget.Delta
	}
	if info.Uses.Teachers {
		if given && delta == 0.0 {
			p := constraints.Problem{K: k, M: 1, Eps: teachers.Eps, Delta: teachers.Delta, Relation: accountant.PrivateTeachers}
			if err := p.Validate(); err != nil {
				return r, cli.AsUsage(setup.Flagged(err, nil))
			}
		}
		r.Teachers = &teachers
	}
	r.Mechanism = info.With(fs, s)
	return r, nil
}
