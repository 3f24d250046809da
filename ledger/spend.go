package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/provenance"
)

// Begin begins the run of a release of labels that step describes, by
// mechanism, from the ensemble that b states, on a ledger opened for a
// run (Open), and returns how many labels the budget allows it: at
// most limit when limit >= 0, accountant.Unlimited when the teachers' cap
// is within the budget and limit < 0. It refuses what begin refuses.
// Reserve before labels leave, Settle once they have, then Close.
func (l *Ledger) Begin(ctx context.Context, mechanism provenance.MechanismName, b provenance.Binding, step accountant.Spend, limit int) (int, error) {
	if err := l.begin(ctx, mechanism, b, step); err != nil {
		return 0, err
	}
	return l.allowance(step, limit)
}

// RunFilter returns the filter the run begun is charged by (Begin): the
// filter of a ledger open to any use, the one its first run chose among
// them; nil for a declared use, which composes its steps exactly, and for
// a version-4 ledger's filter of one method. A release charged per draw
// (ensemble.ProgressiveGNMax) asks it for a Gaussian-DP part.
func (l *Ledger) RunFilter() *accountant.Filter {
	if l.run == "" || l.header.Use != nil {
		return nil
	}
	return l.rule.filter
}

// begin starts this run's spend, charged by the Options's analyst: mechanism, the description of one label
// (its guarantee, and its noise when it has a curve), and the ensemble
// the release states (b), which must be the one the ledger is bound to:
// every parameter both state must agree, and the release must state its
// ensemble (Binding.Stated); a *bindingError otherwise. A label that the
// ledger's filter cannot compose is refused (filterAccepts), a
// *FilterError, even when the teachers' cap frees every release: the
// ledger's totals are its filter's. On a ledger that gives analysts
// shares, an analyst without one is refused (*shareError), and the
// analyst's runs before this one are read, so that a reservation beyond
// the share is refused as one beyond the budget is.
func (l *Ledger) begin(ctx context.Context, mechanism provenance.MechanismName, b provenance.Binding, step accountant.Spend) error {
	if l.readOnly {
		return fmt.Errorf("ledger %s: opened read-only", l.path)
	}
	if mechanism == "" || strings.IndexFunc(string(mechanism), unicode.IsControl) >= 0 {
		// Its lines say what released the labels they charge.
		return fmt.Errorf("ledger %s: %w", l.path, &param.Error{Name: "mechanism", Value: param.Quote(string(mechanism)), Rule: "must name the mechanism the run releases with"})
	}
	// Its lines hold the pairs that dominate the others (spendOf), found
	// once, of pairs checked first; a declared use states them all.
	recorded := step
	var err error
	if step.Kind == accountant.OneBitSpend {
		if err = step.Check(); err == nil {
			recorded = step.Dominating(l.memo)
		}
	}
	if err == nil {
		err = checkSpend(l.version, spendOf(l.memo, l.version, "-", mechanism, recorded, nil))
	}
	if err != nil {
		return fmt.Errorf("ledger %s: %s's guarantee %v: %w", l.path, mechanism, step.Guarantee, err)
	}
	if err := l.bound(b); err != nil {
		return err
	}
	useEnd := 0
	var charge *accountant.Charge
	r, err := l.ruleFor(step)
	if err != nil {
		return &FilterError{Path: l.path, Mechanism: mechanism, Err: err}
	}
	switch {
	case l.header.Use != nil:
		end, err := l.matchUse(mechanism, step, l.chain.spent.Steps)
		if err != nil {
			return err
		}
		useEnd = end
	case r.filter != nil:
		// The charge is chosen now, from the description alone, before
		// the run: the point of its profile each part prefers.
		c, err := r.charge(recorded)
		if err != nil {
			return &FilterError{Path: l.path, Mechanism: mechanism, Err: err}
		}
		charge = &c
	default:
		if err := filterAccepts(l.header.Filter, step); err != nil {
			return &FilterError{Path: l.path, Mechanism: mechanism, Err: err}
		}
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	l.share, l.mine, l.mineUse = nil, accountant.Sequence{}, nil
	if len(l.header.Shares) > 0 {
		f, ok := l.header.Shares[l.analyst]
		if !ok {
			return l.shareErr()
		}
		sums, err := l.Analysts(ctx)
		if err != nil {
			return err
		}
		for _, a := range sums {
			if a.Analyst == l.analyst {
				l.mine, l.mineUse = a.seq, a.use
			}
		}
		share, err := l.header.shareBudget(l.memo, f)
		if err != nil {
			return err
		}
		l.share = &share
	}
	l.run, l.mech, l.step, l.charge, l.rule, l.useEnd = hex.EncodeToString(id[:]), mechanism, recorded, charge, r, useEnd
	l.chose = r.firstRun && l.chain.rule.filter == nil
	l.base, l.held, l.settled = l.chain.spent, 0, false
	return nil
}

// CheckRun returns what a run on the ledger at location (Open) would be
// refused for whatever it releases from the ensemble that b states, nil
// if nothing: the ledger missing or damaged, of version 3, ended
// (retired, exported, imported), against your record or a witness, an
// analyst without a share, or another ensemble than b's (b.Ensemble, if
// stated: every parameter b states that differs is named). It reads the
// ledger as a run does but takes no lock and writes nothing, so that a
// caller that must do long work before its run (a solve of gamma_opt)
// asks it first, holding no lock that others wait for; the run's Open
// and Begin check all of it again, locked, and the rest of the binding.
func (opts Options) CheckRun(ctx context.Context, location string, b provenance.Binding) error {
	l, settled, err := opts.open(ctx, location, true)
	if err != nil {
		return err
	}
	defer l.store.close()
	l.checking = true
	if _, err := l.load(ctx, opts, settled, false); err != nil {
		return err
	}
	if _, ok := l.header.Shares[l.analyst]; len(l.header.Shares) > 0 && !ok {
		return l.shareErr()
	}
	if b.Ensemble != "" && b.Ensemble != l.header.Ensemble {
		return l.bound(b)
	}
	return nil
}

// bound checks the ensemble that a release states (b) against the one
// the ledger is bound to: every parameter both state must agree, and the
// release must state its ensemble (Binding.Stated); a *bindingError
// otherwise.
func (l *Ledger) bound(b provenance.Binding) error {
	bound, err := l.header.binding()
	if err != nil {
		return err
	}
	if d := diffBindings(bound, b); len(d) > 0 {
		return &bindingError{Path: l.path, Ledger: bound, Diffs: d}
	}
	if !b.Stated() {
		return &bindingError{Path: l.path, Ledger: bound, Unstated: true}
	}
	return nil
}

// shareErr refuses a run of an analyst who has no share of a ledger that
// gives shares.
func (l *Ledger) shareErr() error {
	return &shareError{Path: l.path, Analyst: l.analyst, Shares: l.header.Shares}
}

// Reserve records, on disk, that this run will have handed out labels
// labels in all. It is called before they leave the process.
// A reservation beyond the budget is refused with errBudget.
func (l *Ledger) Reserve(ctx context.Context, labels int) error {
	if labels <= l.held {
		return nil
	}
	if l.run == "" {
		return fmt.Errorf("ledger: Begin was not called")
	}
	if l.settled {
		return fmt.Errorf("ledger %s: reserve %d labels: the run is settled (a run ends with its final line)", l.path, labels)
	}
	own := spendOf(l.memo, l.version, l.run, l.mech, l.step, l.charge)
	seq, err := l.rule.add(l.base, own, labels)
	var total accountant.Guarantee
	fits := false
	if err == nil {
		total, fits, err = l.compose(l.rule, seq)
	}
	if err != nil {
		return fmt.Errorf("ledger %s: %w", l.path, err)
	}
	if err := l.cap.Refusal(l.header.Budget); err != nil {
		return fmt.Errorf("ledger %s: %d labels of %v: %w: %w", l.path, labels, l.step.Guarantee, err, errBudget)
	}
	if !fits && l.header.Use != nil {
		return fmt.Errorf("ledger %s: %d labels of %v would pass the %d of its declared use that %d labels before leave (the exact composition of the use fits the budget %v): %w",
			l.path, labels, l.step.Guarantee, useSteps(l.header.Use), l.base.Steps, l.header.Budget, errBudget)
	}
	if !fits {
		return fmt.Errorf("ledger %s: %d labels of %v would bring the total to %v by the %v, over the budget %v: %w", l.path, labels, l.step.Guarantee, total, l.filterName(l.rule), l.header.Budget, errBudget)
	}
	if total, fits, err := l.withinShare(l.rule, own, labels-l.held); err != nil || !fits {
		if err == nil && l.header.Use != nil {
			f := l.header.Shares[l.analyst]
			err = fmt.Errorf("%d labels would bring analyst %q's labels to %d, over %q's share %v of the %d labels of its declared use, %d: %w",
				labels, l.analyst, l.mine.Steps+labels, l.analyst, f, useSteps(l.header.Use), shareLabels(f, useSteps(l.header.Use)), errBudget)
		} else if err == nil {
			err = fmt.Errorf("%d labels of %v would bring analyst %q's runs to %v by the %v, over %q's share %v of the budget %v: %w",
				labels, l.step.Guarantee, l.analyst, total, l.filterName(l.rule), l.analyst, l.header.Shares[l.analyst], *l.share, errBudget)
		}
		return fmt.Errorf("ledger %s: %w", l.path, err)
	}
	return l.write(ctx, labels, false)
}

// Settle records the exact number of labels this run handed out, at
// most the number reserved: the run's final line. A run settles once: a
// later Settle of no more labels changes nothing (no line of a run may
// follow its final line, so that an appended line can never lower what
// a run counts; the count settled first stands, an over-count at worst),
// one of more is an error.
func (l *Ledger) Settle(ctx context.Context, labels int) error {
	if l.run == "" {
		return nil
	}
	if labels < 0 || labels > l.held {
		return fmt.Errorf("ledger %s: settle %d labels, %d were reserved: the count must be in [0, reserved]", l.path, labels, l.held)
	}
	if l.settled {
		return l.broken
	}
	return l.write(ctx, labels, true)
}

// write appends this run's spend of labels and advances the record. A
// write that fails is cut off again (the file truncated to its last whole
// line and synced) before write returns, so that nothing is ever appended
// after a fragment; if that fails too, the ledger takes no more writes.
func (l *Ledger) write(ctx context.Context, labels int, final bool) error {
	if l.run == "" {
		return fmt.Errorf("ledger: Begin was not called")
	}
	if l.broken != nil {
		return l.broken
	}
	base := l.base
	s := spendOf(l.memo, l.version, l.run, l.mech, l.step, l.charge)
	s.Analyst = l.analyst
	if l.rule.firstRun {
		s.Filter = l.rule.filter.Parts
	}
	s.Time, s.Queries, s.Final, s.Prior = time.Now().UTC(), labels, final, &base
	l.chain.bits.name(&s)
	pairs, err := l.chain.bits.pairsOf(l.chain.n+1, s)
	if err != nil {
		return fmt.Errorf("ledger %s: %w", l.path, err)
	}
	next, err := at(l.chain.rule, l.chain.n+1, "", s, pairs)
	if err != nil {
		return fmt.Errorf("ledger %s: %w", l.path, err)
	}
	b, h, err := encodeLine(l.version, l.chain.head, s)
	if err != nil {
		return err
	}
	if err := l.store.append(ctx, pos{n: l.chain.n, off: l.size}, l.chain.head, b, h); err != nil {
		err = midRun(err, l.held)
		var broken *brokenError
		if errors.As(err, &broken) || l.store.cause() != nil {
			l.broken = err
		}
		return err
	}
	next.head = h
	l.size += int64(len(b))
	next.bits, next.end = l.chain.bits, l.size
	next.bits.keep(bitsAt{Line: next.n, End: next.end}, s)
	l.chain = next
	l.held, l.settled = labels, final
	if err := l.state.advance(ctx, l.chain.n, l.size, l.chain.head); err != nil {
		err = fmt.Errorf("ledger %s: the spend is written, but %w", l.path, midRun(err, labels))
		if errors.Is(err, errRecordChanged) {
			l.broken = err
		}
		return err
	}
	// Every line, a reservation too, leaves the team's checkpoint before
	// the labels it charges leave: a copy of the ledger put in its place
	// during the run is then behind the checkpoint for every other run.
	return l.leaveCheckpoint(ctx, false)
}

// Close releases the lock.
func (l *Ledger) Close() error {
	if l.state != nil {
		l.state.close()
	}
	return l.store.close()
}
