package ensemble

import (
	"errors"
	"fmt"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// unset is the error of a field of a ReleaseSpec left at a zero value
// that has no default: it names the field as the caller writes it.
func unset(field, rule string, args ...any) error {
	return fmt.Errorf("ReleaseSpec.%s is not set: %s", field, fmt.Sprintf(rule, args...))
}

// withDefaults returns s with each field left at a zero value that has a
// default (ReleaseSpec's comments) set to it, or an error naming the
// first that has none; and the teachers' guarantee of a mechanism
// calibrated to it.
func (s ReleaseSpec) withDefaults() (ReleaseSpec, accountant.Guarantee, error) {
	var teachers accountant.Guarantee
	if s.Votes == nil {
		return s, teachers, unset("Votes", "the votes to label (votefile.Open, votefile.ReadRows)")
	}
	m := s.Mechanism
	if m == nil {
		return s, teachers, unset("Mechanism", "the mechanism: one of %s (two-class votes) or %s (multi-class votes)",
			Mechanisms().Names(votefile.TwoClass), Mechanisms().Names(votefile.ManyClasses))
	}
	in := s.Votes.Input()
	if !slices.Contains(m.Votes(), in) {
		return s, teachers, fmt.Errorf("ReleaseSpec.Mechanism: %w", labelsOther(m, in, Mechanisms()))
	}
	if s.Header != nil && s.Header.Meta() != s.Votes.Meta() {
		return s, teachers, errors.New("ReleaseSpec.Header is the check of another header than the one of Votes (Votes.Meta)")
	}
	if m.Needs(in).Teachers {
		if s.Teachers == nil {
			var err error
			if s.Header == nil {
				s.Header, err = provenance.CheckHeader(s.Votes.Meta())
			}
			var t provenance.TeacherGuarantee
			if err == nil {
				t, err = s.Header.ReleaseTeachers(provenance.Stated{Calibrated: true})
			}
			if err != nil {
				return s, teachers, fmt.Errorf("ReleaseSpec.Teachers is not set, and the votes do not state them: %w", err)
			}
			s.Teachers = &t.Guarantee
		}
		teachers = *s.Teachers
	}
	if f, ok := m.(filtered); ok {
		// The filter's budget is the release's: given once, in either.
		switch b := f.budget(); {
		case s.Budget == nil && b != (accountant.Guarantee{}):
			s.Budget = &accountant.Budget{Guarantee: b}
		case s.Budget != nil && b == (accountant.Guarantee{}):
			s.Mechanism = f.withBudget(s.Budget.Guarantee)
			m = s.Mechanism
		case s.Budget != nil && b != s.Budget.Guarantee:
			return s, teachers, fmt.Errorf("ReleaseSpec.Budget %v is not the budget %v of the mechanism's Gaussian-DP filter: give one", s.Budget.Guarantee, b)
		}
	}
	if err := m.Missing(in); err != nil {
		return s, teachers, err
	}
	if s.DeltaPrime == 0 {
		s.DeltaPrime = accountant.DefaultDeltaPrime
	}
	if err := s.Sink.check(); err != nil {
		return s, teachers, fmt.Errorf("ReleaseSpec.Sink: %w", err)
	}
	return s, teachers, nil
}

// filtered is a mechanism held to the budget of its Gaussian-DP filter,
// which is its total to publish (ProgressiveGNMax).
type filtered interface {
	Mechanism
	budget() accountant.Guarantee
	withBudget(accountant.Guarantee) Mechanism
}

// specField names the field of a ReleaseSpec that err, from building the
// aggregator of m, says is out of its domain: a field of the problem
// (constraints.Problem.Validate) is the mechanism's, or the teachers'.
func specField(m Mechanism, err error) error {
	if te := (*targetDeltaError)(nil); errors.As(err, &te) {
		// A Target's δ below its teachers' Δ (Target.problem): the field
		// as the spec holds it.
		named := *te
		named.field = "ReleaseSpec.Mechanism.Delta"
		return &named
	}
	var pf interface{ ProblemField() string }
	if !errors.As(err, &pf) {
		return err
	}
	field := map[string]string{"M": "Mechanism.M", "TargetDelta": "Mechanism.Delta", "Eps": "Teachers.Eps", "Delta": "Teachers.Delta", "K": "Votes"}[pf.ProblemField()]
	if m.Needs(votefile.TwoClass).Eps && pf.ProblemField() == "Eps" {
		field = "Mechanism.Eps"
	}
	if field == "" {
		return err
	}
	return fmt.Errorf("ReleaseSpec.%s: %w", field, err)
}
