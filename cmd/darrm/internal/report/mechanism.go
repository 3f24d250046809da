package report

import (
	"encoding/json"

	"github.com/darrm/darrm/ensemble"
)

// settings are the settings of a mechanism of the GNMax family or of
// LNMax that the documents echo, nil for those it does not have: its
// JSON's, as a label file's header states them.
type settings struct {
	Threshold *float64  `json:"threshold"`
	Sigma1    *float64  `json:"sigma1"`
	Sigma2    *float64  `json:"sigma2"`
	Scale     *float64  `json:"laplace_scale"`
	Levels    []float64 `json:"levels"`
	Kappa     *float64  `json:"kappa"`
	GiveUp    *float64  `json:"give_up"`
}

// settingsOf returns m's settings: the threshold step's and sigma2 of
// Confident-GNMax, sigma2 of GNMax (of two classes too, its calibrated
// sigma), LNMax's scale, progressive GNMax's levels, kappa, give-up and
// threshold step; none of the others. The numbers of a built
// mechanism are finite, so its JSON is never an error.
func settingsOf(m ensemble.Mechanism) settings {
	var s settings
	if raw, err := json.Marshal(m); err == nil {
		_ = json.Unmarshal(raw, &s)
	}
	return s
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
