package ensemble

import (
	"errors"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
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
// first that has none; and the mechanism's registry entry for the votes
// and the problem it is held to (problemOf).
func (s ReleaseSpec) withDefaults() (ReleaseSpec, *mechInfo, constraints.Problem, error) {
	var p constraints.Problem
	if s.Votes == nil {
		return s, nil, p, unset("Votes", "the votes to label (votefile.Open, votefile.ReadRows)")
	}
	m := s.Mechanism
	if m == nil {
		return s, nil, p, unset("Mechanism", "the mechanism: one of %s (two-class votes) or %s (multi-class votes)",
			provenance.JoinMechanisms(Mechanisms(votefile.TwoClass), ", "), provenance.JoinMechanisms(Mechanisms(votefile.ManyClasses), ", "))
	}
	in := s.Votes.Input()
	info, err := lookup(m.Name(), in)
	if err != nil {
		return s, nil, p, fmt.Errorf("ReleaseSpec.Mechanism: %w", err)
	}
	var teachers accountant.Guarantee
	if info.teachersEps {
		if s.Teachers == nil {
			t, err := ReleaseTeachers(s.Votes.Meta(), nil, nil)
			if err != nil {
				return s, nil, p, fmt.Errorf("ReleaseSpec.Teachers is not set, and the votes do not state them: %w", err)
			}
			s.Teachers = &t.Guarantee
		}
		teachers = *s.Teachers
	}
	name := m.Name()
	switch m := m.(type) {
	case DaRRM:
		err = needM(m.Target)
	case Subsample:
		err = needM(m.Target)
	case DSub:
		err = needM(m.Target)
	case RR:
		err = needM(m.Target)
	case OneVoteDaRRM:
		if m.Eps == 0 {
			err = unset("Mechanism.Eps", "%s needs the release's eps > 0", name)
		}
	case GNMax:
		switch {
		case in == votefile.TwoClass && m.Sigma2 != 0:
			err = fmt.Errorf("ReleaseSpec.Mechanism.Sigma2 = %g: on two-class votes GNMax's sigma is calibrated to its target (m·eps, delta): leave it 0", m.Sigma2)
		case in == votefile.TwoClass:
			err = needM(m.Target)
		case m.Sigma2 == 0:
			err = unset("Mechanism.Sigma2", "%s needs the noise of its answer, sigma2 > 0", name)
		case m.Delta == nil || *m.Delta == 0:
			err = unset("Mechanism.Delta", "%s needs the per-query delta > 0 of its guarantee: Gaussian noise is not pure DP", name)
		}
	case ConfidentGNMax:
		switch {
		case m.Sigma2 == 0:
			err = unset("Mechanism.Sigma2", "%s needs the noise of its answer, sigma2 > 0", name)
		case m.Delta == 0:
			err = unset("Mechanism.Delta", "%s needs the per-query delta > 0 of its guarantee: Gaussian noise is not pure DP", name)
		case m.Sigma1 == 0:
			err = unset("Mechanism.Sigma1", "%s needs the noise of its threshold step, sigma1 > 0 (without one it is gnmax)", name)
		}
	case LNMax:
		if m.Scale == 0 {
			err = unset("Mechanism.Scale", "%s needs the scale b > 0 of its Laplace noise", name)
		}
	}
	if err == nil && info.gamma && gammaSource(m) == nil {
		err = unset("Mechanism.Gamma", "%s samples its gamma from a source: optimal.Source, say", name)
	}
	if err != nil {
		return s, nil, p, err
	}
	if s.DeltaPrime == 0 {
		s.DeltaPrime = accountant.DefaultDeltaPrime
	}
	if err := s.Sink.check(); err != nil {
		return s, nil, p, fmt.Errorf("ReleaseSpec.Sink: %w", err)
	}
	return s, info, problemOf(m, s.Votes.K(), teachers), nil
}

// needM refuses a target without its allowance m, which has no default.
func needM(t Target) error {
	if t.M == 0 {
		return unset("Mechanism.M", "the privacy allowance m in [1, K]: each label is (m·eps, delta)-DP")
	}
	return nil
}

// specField names the field of a ReleaseSpec that err, from building the
// aggregator of m, says is out of its domain: a field of the problem
// (constraints.Problem.Validate) is the mechanism's, or the teachers'.
func specField(m Mechanism, err error) error {
	var pf interface{ ProblemField() string }
	if !errors.As(err, &pf) {
		return err
	}
	field := map[string]string{"M": "Mechanism.M", "TargetDelta": "Mechanism.Delta", "Eps": "Teachers.Eps", "Delta": "Teachers.Delta", "K": "Votes"}[pf.ProblemField()]
	if _, ok := m.(OneVoteDaRRM); ok && pf.ProblemField() == "Eps" {
		field = "Mechanism.Eps"
	}
	if field == "" {
		return err
	}
	return fmt.Errorf("ReleaseSpec.%s: %w", field, err)
}
