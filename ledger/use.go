package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
)

// UseRun is one run of a ledger's declared use (Header.Use): Labels
// labels, each described by Step with the further points Profile of its
// privacy profile, released by Mechanism with settings whose privacy is
// Step's. Every run's step and count are fixed at init, before the first
// release, so step i's dominating pair is known in advance and the ledger
// composes its steps exactly, as one run does (docs/accountant.md, "A
// declared use and a schedule").
//
// A run of releases each accounted as a whole (Accounting "ptr", by
// generalized PTR) counts releases, not labels: each is one step, the
// total it publishes (Step), which the mechanism's Settings (the JSON
// object a label file's header states, votefile.LabelMeta.Settings), the
// proposal of its first Queries queries and the per-release Budget fix
// before the first release.
type UseRun struct {
	Mechanism  provenance.MechanismName `json:"mechanism"`
	Step       accountant.Spend         `json:"step"`
	Profile    []accountant.Guarantee   `json:"profile,omitempty"`
	Labels     int                      `json:"labels"`
	Accounting string                   `json:"accounting,omitempty"`
	Queries    int                      `json:"queries,omitempty"`
	Budget     *accountant.Guarantee    `json:"budget,omitempty"`
	Settings   json.RawMessage          `json:"settings,omitempty"`
	// Margin says that the ledger composes Step and Profile widened by
	// the margin of another build's last digits (composed), and holds a
	// release whose step lies within them: a ledger made before it
	// composes them as they are.
	Margin bool `json:"margin,omitempty"`
}

// composed returns the step and the points of its profile that the
// ledger composes for r, and holds a release's step to (matchUse): as
// declared, or, with Margin, widened (accountant.Spend.Declared).
func (r UseRun) composed() (accountant.Spend, []accountant.Guarantee) {
	if !r.Margin {
		return r.Step, r.Profile
	}
	return r.Step.Declared(r.Profile)
}

// usePTR is the Accounting of a run of releases by generalized PTR, as
// a label file's header states it (votefile.LabelMeta.Accounting).
const usePTR = "ptr"

// String names the run: its mechanism and its per-label guarantee, or,
// for PTR releases, their proposal, budget and total.
func (r UseRun) String() string {
	if r.Accounting == usePTR {
		return fmt.Sprintf("%s PTR releases of the first %d queries within %v, each charged its total %v", r.Mechanism, r.Queries, *r.Budget, r.Step.Guarantee)
	}
	return fmt.Sprintf("%s labels of %v", r.Mechanism, r.Step.Guarantee)
}

// Counts names what the run's count is of: "releases" for PTR releases,
// each one step, else "labels".
func (r UseRun) Counts() string {
	if r.Accounting == usePTR {
		return "releases"
	}
	return "labels"
}

// NewUseHeader returns the header of a ledger bound to b whose use is
// declared: runs, in their order. A last run of 0 labels takes every label
// the budget allows after the others (Account.MaxSteps, the count of one
// run); every other count is the caller's, and the runs together must fit
// the budget by their exact composition (accountant.Account with Before).
// Its filter is accountant.Exact: the composition of steps fixed in
// advance, which holds for queries chosen adaptively and for a stop at
// any time (a stop is post-processing of the whole schedule).
func NewUseHeader(ctx context.Context, m *accountant.Memo, b provenance.Binding, budget accountant.Budget, deltaPrime float64, runs []UseRun) (Header, error) {
	if m == nil {
		// The count of the last run and the check of the whole compose
		// the same steps: a memo of this call's own.
		m = new(accountant.Memo)
	}
	h := NewHeader(b, budget, deltaPrime, accountant.Filter{})
	h.Filter, h.FirstRunFilter, h.Use = accountant.Exact, false, append([]UseRun(nil), runs...)
	// A one-bit step is kept by the pairs that dominate its others, as a
	// spend line keeps it: the same privacy loss distribution, in a few
	// tens of pairs where a private-teacher label lists tens of
	// thousands, which made the header of DaRRM at K = 13 longer than a
	// ledger's line may be (maxLineBytes), and ledger init refused the
	// ledger it had just written.
	//
	// A label's step is composed with the margin that another build of
	// darrm's digits need (Margin): a team's machines may differ, and a
	// release on any of them is held to the step so widened (matchUse),
	// which then bounds it. A PTR release's step is its budget, which
	// its flags state.
	for i := range h.Use {
		h.Use[i].Step = h.Use[i].Step.Dominating(m)
		h.Use[i].Margin = h.Use[i].Accounting != usePTR
	}
	if err := checkUse(h.Use, false); err != nil {
		return h, err
	}
	if last := &h.Use[len(h.Use)-1]; last.Labels == 0 {
		before := h.Use[:len(h.Use)-1]
		a := useAccount(before, useSteps(before), &h.Budget)
		if a.Steps > 0 {
			a.Before = append(a.Before, accountant.Run{Step: a.Step, Profile: a.Profile, Steps: a.Steps})
		}
		a.Step, a.Profile = last.composed()
		a.Steps = 0
		n, _, err := a.MaxSteps(ctx, m)
		switch {
		case errors.As(err, new(*accountant.BeyondCountError)):
			n = accountant.CountLimit - useSteps(before)
		case err != nil:
			return h, fmt.Errorf("ledger: the use declared: %w", err)
		}
		if n <= 0 {
			return h, paramError("queries", "0", fmt.Sprintf("the budget %v allows no %v after the runs before it", budget, *last))
		}
		last.Labels = n
	}
	if err := fitsUse(m, h); err != nil {
		return h, err
	}
	return h, nil
}

// checkUse validates the runs of a declared use; unless fixed, the last
// run's count may be still to be chosen (0).
func checkUse(runs []UseRun, fixed bool) error {
	if len(runs) == 0 {
		return paramError("use", "[]", "declare at least one run")
	}
	for i, r := range runs {
		if r.Mechanism == "" {
			return paramError("use", fmt.Sprint(i+1), "a run names its mechanism")
		}
		if err := r.Step.Check(); err != nil {
			return fmt.Errorf("ledger: the use declared, run %d: %w", i+1, err)
		}
		switch {
		case r.Accounting == usePTR && (r.Queries < 1 || r.Budget == nil):
			return paramError("use", fmt.Sprint(i+1), "a run of PTR releases states its proposal (queries >= 1) and its budget")
		case r.Accounting == usePTR && r.Step.Kind != accountant.ApproxSpend && r.Step.Kind != accountant.PureSpend:
			return paramError("use", fmt.Sprint(i+1), "a PTR release is charged its total, an (eps, delta) step")
		case r.Accounting != "" && r.Accounting != usePTR:
			return paramError("use", fmt.Sprint(i+1), fmt.Sprintf("accounting %q: a run's accounting is per label, or %q", r.Accounting, usePTR))
		}
		if r.Labels < 0 || r.Labels == 0 && (fixed || i < len(runs)-1) {
			return paramError("queries", fmt.Sprint(r.Labels), fmt.Sprintf("run %d of the use declared: must be >= 1", i+1))
		}
	}
	return nil
}

// fitsUse reports whether the whole schedule of h fits its budget.
func fitsUse(m *accountant.Memo, h Header) error {
	a := useAccount(h.Use, useSteps(h.Use), &h.Budget)
	ok, err := a.Fits(m)
	if err != nil {
		return fmt.Errorf("ledger: the use declared: %w", err)
	}
	if !ok {
		return paramError("queries", fmt.Sprint(useSteps(h.Use)), fmt.Sprintf("the runs declared do not fit the budget %v by their exact composition", h.Budget))
	}
	return nil
}

// useSteps is the number of labels of every run of a use.
func useSteps(runs []UseRun) int {
	n := 0
	for _, r := range runs {
		n += r.Labels
	}
	return n
}

// useAccount returns the account of the first steps labels of the use
// runs, held to budget: the runs before the one that holds the last label
// whole (Before), that one in part.
func useAccount(runs []UseRun, steps int, budget *accountant.Budget) accountant.Account {
	counts := make([]int, len(runs))
	for i, r := range runs {
		counts[i] = min(r.Labels, steps)
		steps -= counts[i]
	}
	return useCounts(runs, counts, budget)
}

// useCounts returns the account of counts[i] labels of each run i of the
// use runs (none when counts is nil), held to budget: the runs with
// labels in order, the last one's as the account's step (Before the
// others).
func useCounts(runs []UseRun, counts []int, budget *accountant.Budget) accountant.Account {
	a := accountant.Account{Budget: budget}
	for i, k := range counts {
		r := runs[i]
		if k == 0 {
			continue
		}
		if a.Steps > 0 {
			a.Before = append(a.Before, accountant.Run{Step: a.Step, Profile: a.Profile, Steps: a.Steps})
		}
		a.Step, a.Profile = r.composed()
		a.Steps = k
	}
	return a
}

// useLabels adds to counts (nil: none yet), the labels of each run of the
// use runs, the n labels that follow the first from labels of the use,
// and returns them.
func useLabels(runs []UseRun, counts []int, from, n int) []int {
	if counts == nil {
		counts = make([]int, len(runs))
	}
	end := 0
	for i, r := range runs {
		start := end
		end += r.Labels
		counts[i] += max(min(end, from+n)-max(start, from), 0)
	}
	return counts
}

// UseTurn returns the index of the run of h's declared use that the next
// step after spent steps belongs to (the run whose turn it is), and the
// count of steps up to that run's end; a use whose steps are all spent
// gives its last run.
func (h Header) UseTurn(spent int) (int, int) {
	runs := h.Use
	end := 0
	for i, r := range runs {
		end += r.Labels
		if spent < end {
			return i, end
		}
	}
	return len(runs) - 1, end
}

// useError is a release refused by a ledger whose use is declared: its
// mechanism or settings are not those of the run whose turn it is.
type useError struct {
	Path string
	// Run is the run of the use whose turn it is (Index from 0), Runs
	// their number; Mechanism and Step the release's.
	Run       UseRun
	Index     int
	Runs      int
	Mechanism provenance.MechanismName
	Step      accountant.Spend
}

func (e *useError) Error() string {
	use := fmt.Sprintf("its declared use, %d %v", e.Run.Labels, e.Run)
	if e.Runs > 1 {
		use = fmt.Sprintf("run %d of its declared schedule of %d, %d %v", e.Index+1, e.Runs, e.Run.Labels, e.Run)
	}
	same := ""
	if e.Mechanism == e.Run.Mechanism && e.Step.Guarantee.String() == e.Run.Step.Guarantee.String() {
		// Settings rounded for a table (sigma2 2.81879 for
		// 2.8187890062497027) differ where no digit shown does.
		same = "; the two differ in what the digits shown do not say (a setting rounded, or other noise): give the settings that the ledger was made with, to their last digit, as its ledger init line states them"
	}
	return fmt.Sprintf("ledger %s: a release of %s labels of %v is refused: the ledger charges only %s (a release with other settings, or out of the schedule's order, is another mechanism than the one its budget was composed for: declare it in a ledger of its own)%s",
		e.Path, e.Mechanism, e.Step.Guarantee, use, same)
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *useError) BadInput() bool { return true }

// matchUse returns nil when a release of mechanism with step is the run
// of the use whose turn it is after spent labels, a *useError otherwise,
// and the count of labels up to that run's end.
func (l *Ledger) matchUse(mechanism provenance.MechanismName, step accountant.Spend, spent int) (int, error) {
	i, end, ok := declaredRun(l.memo, l.header.Use, mechanism, step, spent)
	if !ok {
		return 0, &useError{Path: l.path, Run: l.header.Use[i], Index: i, Runs: len(l.header.Use), Mechanism: mechanism, Step: step}
	}
	return end, nil
}

// declaredRun returns the run i of the use runs whose turn it is after
// spent labels, the count of labels up to its end, and whether a release
// of mechanism with step is that run's: the step declared must hold the
// release's (accountant.Spend.Declares): the same step but for another
// build's last digits, and no less private in any quantity, so that the
// composition declared bounds it; a one-bit step is compared by its
// dominating pairs.
func declaredRun(m *accountant.Memo, runs []UseRun, mechanism provenance.MechanismName, step accountant.Spend, spent int) (int, int, bool) {
	i, end := Header{Use: runs}.UseTurn(spent)
	declared, _ := runs[i].composed()
	return i, end, mechanism == runs[i].Mechanism && declared.Dominating(m).Declares(step.Dominating(m))
}

// checkUse reports whether the labels of the spend s are a release that
// a ledger whose use is declared takes (nil on any other ledger): of the
// run of the use whose turn it was when s's run began, after the labels
// of its prior, and within that run's count (Ledger.matchUse, Begin). The
// use's total to publish composes its declared steps and counts alone,
// so a line of other labels, or of more, would be published as less than
// it spent. Its step is held to the use's by declaredRun, some
// milliseconds on a one-bit release's pairs, once a read for each spend
// and run (useKey): a ledger's lines repeat a few, but not always the
// line before's (analysts taking turns), and compared at each such run's
// first line, ledger verify of 25,000 runs of DaRRM at K = 11 by two
// analysts in turn took 51 s of CPU instead of 2 s. A one-bit release
// without its pairs (a line written before the lists were kept) is held
// to the run's mechanism, to a guarantee within the step declared and to
// its count.
func (c *chain) checkUse(s Spend, pairs []accountant.BitPair) error {
	use := c.rule.use
	if use == nil {
		return nil
	}
	i, end := Header{Use: use}.UseTurn(s.Prior.Steps)
	var ok bool
	if s.BitsSHA256 != "" && pairs == nil {
		declared, _ := use[i].composed()
		ok = s.Mechanism == use[i].Mechanism && accountant.Guarantee{Eps: s.Eps, Delta: s.Delta}.Within(declared.Guarantee)
	} else {
		k := useKeyOf(i, s)
		if _, ok = c.used[k]; !ok {
			if _, _, ok = declaredRun(c.rule.memo, use, s.Mechanism, s.charged(pairs), s.Prior.Steps); ok {
				if c.used == nil {
					c.used = map[useKey]struct{}{}
				}
				c.used[k] = struct{}{}
			}
		}
	}
	switch {
	case !ok:
		return fmt.Errorf("%s %v, after %d %s of the declared use, are not of its run %d, %d %v, whose turn it was: a release with other settings is refused, so no release writes this line", shown(string(s.Mechanism)), accountant.Guarantee{Eps: s.Eps, Delta: s.Delta}, s.Prior.Steps, use[i].Counts(), i+1, use[i].Labels, use[i])
	case s.Queries > end-s.Prior.Steps:
		return fmt.Errorf("%d %s after %d of the declared use go past the end of its run %d, at %d: a release stops at its run's count, so no release writes this line", s.Queries, use[i].Counts(), s.Prior.Steps, i+1, end)
	}
	return nil
}

// useKey is what declaredRun's verdict on a spend line depends on in a
// read, whose use is fixed: the run of the use whose turn it was, and the
// line's mechanism and step (Spend.charged), its pairs by their digest,
// which the line that holds them is checked against, and its Gaussian
// parts as %v prints them, every σ to its last digit.
type useKey struct {
	run        int
	mechanism  provenance.MechanismName
	eps, delta float64
	kind       accountant.SpendKind
	gaussian   string
	discrete   bool
	laplace    accountant.LaplacePart
	laplaced   bool
	bits       string
}

// useKeyOf returns the useKey of the spend s at the turn of the use's
// run i.
func useKeyOf(i int, s Spend) useKey {
	k := useKey{run: i, mechanism: s.Mechanism, eps: s.Eps, delta: s.Delta, kind: s.Kind, discrete: s.Discrete, bits: s.BitsSHA256}
	if len(s.Gaussian) > 0 {
		k.gaussian = fmt.Sprint(s.Gaussian)
	}
	if s.Laplace != nil {
		k.laplace, k.laplaced = *s.Laplace, true
	}
	return k
}
