package setup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/pate"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// The accountings of a release (--accounting): per query, by a
// composition of the mechanism's data-independent guarantee; as a
// whole by generalized PTR (docs/pate.md, "A data-dependent guarantee:
// generalized PTR"); or per draw, each draw charged to a Gaussian-DP
// filter before it is drawn (docs/pate.md, "Progressive GNMax").
const (
	DataIndependent  = "data-independent"
	PTRAccounting    = "ptr"
	FilterAccounting = "gdp-filter" // accountant.GDPFilter's name, as a label file's header states it
)

// PerDraw reports whether mechanism info can be charged per draw to a
// Gaussian-DP filter (ensemble.ChargedPerDraw), and whether that is its
// only accounting (it is its own form charged per draw). It asks of the
// mechanism with the setting a plan chooses set (GNMax's σ2, which its
// defaults leave unset, as on 0/1 votes): the settings given decide its
// form, not whether it has one.
func PerDraw(info MechanismInfo) (charged, only bool) {
	if info.Input != votefile.ManyClasses {
		return false, false
	}
	m := info.Defaults()
	if p := m.Plan(votefile.ManyClasses); p.With != nil {
		m = p.With(1)
	}
	d, ok := ensemble.ChargedPerDraw(m, accountant.Guarantee{})
	if !ok {
		return false, false
	}
	return true, d.Name() == info.Name
}

// PerDrawOnlyNames names the mechanisms of ms charged per draw alone
// (PerDraw), in alphabetical order: "a, b".
func (ms *Mechanisms) PerDrawOnlyNames() string {
	return ms.sorted(func(m MechanismInfo) bool { _, only := PerDraw(m); return only }, ", ")
}

// PerDrawNames names the mechanisms of ms that can be charged per draw
// (PerDraw), in alphabetical order: "a, b or c".
func (ms *Mechanisms) PerDrawNames() string {
	return ms.sorted(func(m MechanismInfo) bool { ok, _ := PerDraw(m); return ok }, ", ")
}

// sorted lists the names of the mechanisms that keep keeps, each once, in
// alphabetical order, separated by sep.
func (ms *Mechanisms) sorted(keep func(MechanismInfo) bool, sep string) string {
	return provenance.JoinMechanisms(slices.Sorted(slices.Values(ms.names(keep))), sep)
}

// PTRFlagNames are the flags that set the parameters of a PTR release.
var PTRFlagNames = map[string]string{"budget eps": "--budget-eps", "budget delta": "--budget-delta", "queries": "--max-queries"}

// PTRTests reports whether generalized PTR tests the labels of mechanism
// info: PATE's data-dependent cost, of the GNMax family on class counts
// (ensemble.Steps).
func PTRTests(info MechanismInfo) bool {
	_, family := ensemble.Steps(info.Defaults(), 0) // counts, of any classes
	return info.Input == votefile.ManyClasses && family
}

// PTRNames names the mechanisms of ms whose labels generalized PTR tests
// (PTRTests), in alphabetical order, separated by sep ("a or b").
func (ms *Mechanisms) PTRNames(sep string) string { return ms.sorted(PTRTests, sep) }

// PTRRun returns the run of a ledger's use that a release by generalized
// PTR of mech on votes of classes classes is, its proposal queries
// within budget and plan pate.PlanPTR's plan of it: one step, the total
// it publishes, with the settings of the steps of the GNMax family that
// pate.ReleasePTR tests (its noise the discrete Gaussian unless set), as
// a label file's header states them; a declared use of PTR releases
// records and matches them.
func PTRRun(mech ensemble.Mechanism, classes int, budget accountant.Guarantee, queries int, plan pate.PTRResult) (*ledger.UseRun, error) {
	m, ok := ensemble.Steps(mech, classes)
	if !ok {
		return nil, fmt.Errorf("generalized PTR: %s on %d classes is not of the GNMax family", mech.Name(), classes)
	}
	settings, err := json.Marshal(m.Drawn())
	if err != nil {
		return nil, err
	}
	return &ledger.UseRun{Mechanism: mech.Name(), Step: accountant.ApproxStep(plan.Publish), Accounting: PTRAccounting, Queries: queries, Budget: &budget, Settings: settings}, nil
}

// PTRFailed is a PTR release whose test failed: no label left, or the
// data-independent fallback's Fallback labels, and its total to publish
// holds (exit 4, as a release its budget stopped).
type PTRFailed struct {
	Plan     *report.PTR
	Publish  accountant.Total
	Ledger   string // the ledger charged, redacted; "" for none
	Seeded   bool   // --seed: the test's outcome is reproducible, no total holds
	Fallback int    // the queries the fallback labelled (--fallback)
}

func (e *PTRFailed) Error() string {
	p := e.Plan
	if e.Fallback > 0 {
		return fmt.Sprintf("generalized PTR: the test FAILED on the %s proposed: the first %d released by the data-independent fallback (--fallback), within the total %v to publish for this run, by %s",
			plural.Of(p.Queries, "query", "queries"), e.Fallback, e.Publish.Guarantee, pate.PTRArgument)
	}
	where := fmt.Sprintf("the total %v to publish for this run, by %s, holds: its output is that no label was released", e.Publish.Guarantee, pate.PTRArgument)
	if e.Ledger != "" {
		where = fmt.Sprintf("the release's total was charged to ledger %s, whose total to publish is now %v", e.Ledger, e.Publish.Guarantee)
	}
	if e.Seeded {
		where = report.NotForRelease + ": the test's outcome too, so no total to publish holds"
	}
	return fmt.Sprintf("generalized PTR: the test FAILED on the %s proposed: no label released, no label file written; spent: the test's own %v; %s",
		plural.Of(p.Queries, "query", "queries"), accountant.Guarantee{Eps: p.TestEps, Delta: p.TestDelta}, where)
}

// Is reports that the release was stopped as a budget stops one.
func (e *PTRFailed) Is(target error) bool { return target == ErrBudget }

// PTRUseRefused refuses a PTR release, charged its total as one step, on
// the ledger l (named name) whose use is declared (ledger init
// --mechanism or --schedule) when the run whose turn it is does not
// declare it: a run of labels, each charged its mechanism's
// data-independent step, or a run of PTR releases of another mechanism,
// proposal, budget or total. It names the flag that differs and the run,
// before the ledger is charged; the ledger's own match (Begin) refuses
// any other step still.
func PTRUseRefused(l *ledger.Ledger, name string, release ledger.UseRun) error {
	h := l.Header()
	if h.Use == nil {
		return nil
	}
	i, _ := h.UseTurn(l.Spent().Steps)
	run := h.Use[i]
	use := fmt.Sprintf("%d %v", run.Labels, run)
	if len(h.Use) > 1 {
		use = fmt.Sprintf("run %d of a schedule of %d runs, %s", i+1, len(h.Use), use)
	}
	if run.Accounting != PTRAccounting {
		return cli.Usagef("--accounting ptr with --ledger %s: the ledger's use is declared (%s, by ledger init --mechanism or --schedule), labels each charged their mechanism's data-independent step; "+
			"a release by generalized PTR is charged its total, %v, as one step, which that use does not hold: charge it to a ledger whose use declares it (ledger init --accounting ptr), or without a declared use, or release without --accounting ptr",
			name, use, release.Step.Guarantee)
	}
	var differs string
	switch {
	case release.Mechanism != run.Mechanism:
		differs = fmt.Sprintf("--mechanism %s, where the use's is %s", release.Mechanism, run.Mechanism)
	case !bytes.Equal(release.Settings, run.Settings):
		differs = settingsDiffer(release.Settings, run.Settings)
	case release.Queries != run.Queries:
		differs = fmt.Sprintf("--max-queries %d, where the use's proposal is %d", release.Queries, run.Queries)
	case release.Budget.Eps != run.Budget.Eps:
		differs = fmt.Sprintf("--budget-eps %v, where the use's releases are each within eps %v", release.Budget.Eps, run.Budget.Eps)
	case release.Budget.Delta != run.Budget.Delta:
		differs = fmt.Sprintf("--budget-delta %v, where the use's releases are each within delta %v", release.Budget.Delta, run.Budget.Delta)
	case !run.Step.Declares(release.Step):
		got, want := release.Step.Guarantee.String(), run.Step.Guarantee.String()
		if got == want {
			// Totals that differ beyond the digits a guarantee prints.
			got = fmt.Sprintf("(%v, %v)", release.Step.Guarantee.Eps, release.Step.Guarantee.Delta)
			want = fmt.Sprintf("(%v, %v)", run.Step.Guarantee.Eps, run.Step.Guarantee.Delta)
		}
		differs = fmt.Sprintf("the votes' classes give the total %s, where the use's total is %s", got, want)
	default:
		return nil
	}
	return cli.Usagef("--accounting ptr with --ledger %s: %s: the ledger charges only its declared use, %s; a release with other settings is another mechanism than the one its budget was composed for: nothing charged",
		name, differs, use)
}

// settingsDiffer says which settings of a mechanism, as a label file's
// header states them (got, and want, the declared use's), differ, by
// their flags.
func settingsDiffer(got, want json.RawMessage) string {
	var g, w map[string]any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return fmt.Sprintf("the mechanism's settings %s, where the use's are %s", got, want)
	}
	var said []string
	for _, k := range slices.Sorted(maps.Keys(w)) {
		if g[k] != w[k] {
			said = append(said, fmt.Sprintf("--%s %v, where the use's is %v", k, g[k], w[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(g)) {
		if _, ok := w[k]; !ok {
			said = append(said, fmt.Sprintf("--%s %v, which the use does not set", k, g[k]))
		}
	}
	return strings.Join(said, ", ")
}
