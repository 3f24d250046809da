package report

import (
	"github.com/darrm/darrm/ensemble"
)

// settings are the settings of a mechanism of the GNMax family or of
// LNMax that the documents echo, nil for those it does not have.
type settings struct {
	threshold, sigma1, sigma2, scale *float64
}

// settingsOf returns m's settings: the threshold step's and sigma2 of
// Confident-GNMax, sigma2 of GNMax (of two classes too, its calibrated
// sigma), LNMax's scale; none of the others.
func settingsOf(m ensemble.Mechanism) settings {
	v := func(x float64) *float64 { return &x }
	switch m := m.(type) {
	case ensemble.GNMax:
		return settings{sigma2: v(m.Sigma2)}
	case ensemble.ConfidentGNMax:
		return settings{threshold: v(m.Threshold), sigma1: v(m.Sigma1), sigma2: v(m.Sigma2)}
	case ensemble.LNMax:
		return settings{scale: v(m.Scale)}
	}
	return settings{}
}

// TargetOf returns the per-query target of a mechanism for private
// teachers (and of two-class GNMax), and whether m has one.
func TargetOf(m ensemble.Mechanism) (ensemble.Target, bool) {
	switch m := m.(type) {
	case ensemble.DaRRM:
		return m.Target, true
	case ensemble.Subsample:
		return m.Target, true
	case ensemble.DSub:
		return m.Target, true
	case ensemble.RR:
		return m.Target, true
	case ensemble.GNMax:
		return m.Target, m.Sigma2 == 0
	}
	return ensemble.Target{}, false
}

// FlagOf names a setting that a plan chooses (plan.Plan.Parameter) by the
// flag that gives it.
func FlagOf(setting string) string {
	if f, ok := map[string]string{"target eps": "target-eps", "Laplace scale": "laplace-scale"}[setting]; ok {
		return f
	}
	return setting
}
