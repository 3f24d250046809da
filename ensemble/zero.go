package ensemble

import (
	"errors"
	"fmt"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noisymax"
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
// first that has none; and the mechanism's registry entry.
func (s ReleaseSpec) withDefaults() (ReleaseSpec, MechanismInfo, error) {
	var info MechanismInfo
	if s.Votes == nil {
		return s, info, unset("Votes", "the votes to label (votefile.Read, votefile.ReadRows)")
	}
	m, p := &s.Mechanism, &s.Problem
	if m.Name == "" {
		return s, info, unset("Mechanism.Name", "the mechanism: one of %s (two-class votes) or %s (multi-class votes)",
			provenance.JoinMechanisms(namesFor(votefile.TwoClass), ", "), provenance.JoinMechanisms(namesFor(votefile.ManyClasses), ", "))
	}
	m.Input = s.Votes.Input()
	info, err := LookupMechanism(m.Name, m.Input)
	if err != nil {
		return s, info, fmt.Errorf("ReleaseSpec.Mechanism.Name: %w", err)
	}
	if p.K == 0 {
		p.K = s.Votes.K()
	}
	if m.Input == votefile.TwoClass {
		switch {
		case slices.Contains(info.Takes, settingTargetEps) && p.Eps == 0:
			return s, info, unset("Problem.Eps", "%s needs the release's eps > 0", m.Name)
		case slices.Contains(info.Takes, settingEps) && p.Eps == 0 && p.Delta == 0:
			t, err := ReleaseTeachers(s.Votes.Meta(), nil, nil)
			if err != nil {
				return s, info, fmt.Errorf("ReleaseSpec.Problem.Eps and Delta are not set, and the votes do not state them: %w", err)
			}
			p.Eps, p.Delta = t.Eps, t.Delta
		}
		if p.M == 0 && slices.Contains(info.Takes, settingM) {
			return s, info, unset("Problem.M", "the privacy allowance m in [1, K]: each label is (m·eps, delta)-DP")
		}
	}
	if m.Name == provenance.RR && m.RR == (accountant.Composition{}) {
		m.RR.Method = accountant.RRComposition(p.Delta)
	}
	if m.RR.DeltaPrime == 0 {
		m.RR.DeltaPrime = accountant.DefaultDeltaPrime
	}
	if m.Input == votefile.ManyClasses {
		switch {
		case (m.Name == provenance.GNMax || m.Name == provenance.ConfidentGNMax) && m.GNMax.Sigma2 == 0:
			return s, info, unset("Mechanism.GNMax.Sigma2", "%s needs the noise of its answer, sigma2 > 0", m.Name)
		case (m.Name == provenance.GNMax || m.Name == provenance.ConfidentGNMax) && p.TargetDelta == 0:
			return s, info, unset("Problem.TargetDelta", "%s needs the per-query delta > 0 of its guarantee: Gaussian noise is not pure DP", m.Name)
		case m.Name == provenance.ConfidentGNMax && m.GNMax.Sigma1 == 0:
			return s, info, unset("Mechanism.GNMax.Sigma1", "%s needs the noise of its threshold step, sigma1 > 0 (without one it is gnmax)", m.Name)
		case m.Name == provenance.LNMax && m.LNMax.Scale == 0:
			return s, info, unset("Mechanism.LNMax.Scale", "%s needs the scale b > 0 of its Laplace noise", m.Name)
		}
		if m.GNMax.Noise == noisymax.UnsetNoise {
			m.GNMax.Noise = noisymax.DiscreteNoise
		}
	}
	if s.DeltaPrime == 0 {
		s.DeltaPrime = accountant.DefaultDeltaPrime
	}
	if err := s.Sink.check(); err != nil {
		return s, info, fmt.Errorf("ReleaseSpec.Sink: %w", err)
	}
	return s, info, nil
}

// problemField names the field of ReleaseSpec.Problem that err, from
// building the aggregator, says is out of its domain.
func problemField(err error) error {
	var pf interface{ ProblemField() string }
	if errors.As(err, &pf) {
		return fmt.Errorf("ReleaseSpec.Problem.%s: %w", pf.ProblemField(), err)
	}
	return err
}
