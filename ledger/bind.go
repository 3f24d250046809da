package ledger

import (
	"errors"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// VotesHeader returns the header of a new ledger (Create) for the
// ensemble that the metadata header of its votes states (meta, checked as
// every release checks it: provenance.Check), with the budget (eps, delta) and the defaults of ledger
// init: the filter DefaultFilter and the slack
// accountant.DefaultDeltaPrime.
func VotesHeader(meta *votefile.Meta, eps, delta float64) (Header, error) {
	if meta == nil {
		return Header{}, &bindError{errors.New("no metadata header: a ledger made for votes binds the ensemble their header states")}
	}
	b, err := provenance.Check(meta, provenance.Stated{})
	if err != nil {
		return Header{}, &bindError{err}
	}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: eps, Delta: delta}}
	f, err := DefaultFilter(b, budget)
	if err != nil {
		return Header{}, err
	}
	return NewHeader(b, budget, accountant.DefaultDeltaPrime, f), nil
}

// CheckCap refuses a budget that allows no label from the teachers b
// binds: fixed private teachers, whose releases only their cap bounds
// (provenance.Binding.Cap at the slack deltaPrime; accountant.Cap), when
// that cap is not within the budget. Teachers without a cap are not
// refused here: the composition over their queries bounds them. Init
// applies it to every new ledger.
func CheckCap(b provenance.Binding, budget accountant.Budget, deltaPrime float64) error {
	c, _, err := b.Cap(deltaPrime)
	if err != nil {
		return &bindError{err}
	}
	if err := c.Refusal(budget); err != nil {
		return &budgetError{err}
	}
	return nil
}

// budgetError is a budget that allows no label from a ledger's teachers
// (CheckCap): the caller's input.
type budgetError struct{ Err error }

func (e *budgetError) Error() string { return "ledger: budget: " + e.Err.Error() }

// BadInput reports that the error is the caller's input, not a failure.
func (e *budgetError) BadInput() bool { return true }

func (e *budgetError) Unwrap() error { return e.Err }

// bindingDiff is a parameter on which two bindings differ, with each
// one's value.
type bindingDiff struct {
	Field, A, B string
}

// diffBindings returns the parameters on which the bindings b and o
// differ, in the order of provenance.Binding's fields, for a ledger's
// refusal of a release of other teachers (bindingError). A parameter
// that either one leaves unstated (an empty id, K 0, zero teachers'
// guarantee, an unstated kind or partition) is not compared; the
// relation always is.
func diffBindings(b, o provenance.Binding) []bindingDiff {
	var d []bindingDiff
	add := func(field string, x, y any) { d = append(d, bindingDiff{field, fmt.Sprint(x), fmt.Sprint(y)}) }
	if b.Ensemble != "" && o.Ensemble != "" && b.Ensemble != o.Ensemble {
		add("ensemble", b.Ensemble, o.Ensemble)
	}
	if b.K != 0 && o.K != 0 && b.K != o.K {
		add("K", b.K, o.K)
	}
	zero := accountant.Guarantee{}
	if b.Each != zero && o.Each != zero {
		if b.Each.Eps != o.Each.Eps {
			add("eps", b.Each.Eps, o.Each.Eps)
		}
		if b.Each.Delta != o.Each.Delta {
			add("Delta", b.Each.Delta, o.Each.Delta)
		}
	}
	if b.Relation != o.Relation {
		add("relation", b.Relation, o.Relation)
	}
	if b.Kind != provenance.KindUnstated && o.Kind != provenance.KindUnstated && b.Kind != o.Kind {
		add("kind", b.Kind, o.Kind)
	}
	if b.Partition != provenance.PartitionUnstated && o.Partition != provenance.PartitionUnstated && b.Partition != o.Partition {
		add("partition", b.Partition, o.Partition)
	}
	return d
}
