package provenance

import (
	"fmt"
	"strconv"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/votefile"
)

// Settings are the parameters of a mechanism that a label file states
// (votefile.LabelMeta): nil for those it does not have. From a caller,
// nil is a setting not given.
type Settings struct {
	Threshold    *float64        `json:"threshold,omitempty"`
	Sigma1       *float64        `json:"sigma1,omitempty"`
	Sigma2       *float64        `json:"sigma2,omitempty"`
	LaplaceScale *float64        `json:"laplace_scale,omitempty"`
	Noise        *noisymax.Noise `json:"noise,omitempty"`
}

// named returns each setting's name and its value as text, "" when nil.
func (s Settings) named() [][2]string {
	num := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	noise := ""
	if s.Noise != nil {
		noise = s.Noise.String()
	}
	return [][2]string{{"threshold", num(s.Threshold)}, {"sigma1", num(s.Sigma1)}, {"sigma2", num(s.Sigma2)},
		{"laplace-scale", num(s.LaplaceScale)}, {"noise", noise}}
}

// GNMax returns the GNMax-family parameters the settings give, with
// noise (Papernot et al. 2018): a threshold step when they have sigma1,
// which must be > 0; the parameters' own checks (Validate) follow. A bad
// value is a *accountant.ParamError that names its setting.
func (s Settings) GNMax(noise noisymax.Noise) (noisymax.ConfidentGNMax, error) {
	m := noisymax.ConfidentGNMax{Noise: noise}
	if s.Sigma2 != nil {
		m.Sigma2 = *s.Sigma2
	}
	if s.Sigma1 != nil {
		if !(*s.Sigma1 > 0) {
			return m, &accountant.ParamError{Name: "sigma1", Value: *s.Sigma1, Rule: "must be > 0"}
		}
		m.Sigma1 = *s.Sigma1
		if s.Threshold != nil {
			m.Threshold = *s.Threshold
		}
	}
	return m, m.Validate()
}

// contradictionError reports a setting given that contradicts what a label
// file states of the mechanism that made its labels: given is the value
// given, stated the file's ("" when that mechanism has no such setting).
type contradictionError struct {
	mechanism              MechanismName
	setting, given, stated string
}

func (e *contradictionError) Error() string {
	if e.stated == "" {
		return fmt.Sprintf("%s = %s given, but the labels were made by %s, which has no %s (its settings come from the label file's header)", e.setting, e.given, e.mechanism, e.setting)
	}
	return fmt.Sprintf("%s = %s given, but the label file's header states %s = %s: the labels were made with %s = %s (leave it out to use it)", e.setting, e.given, e.setting, e.stated, e.setting, e.stated)
}

// Agree returns s with every setting that stated, the settings of a
// label file's header made by mechanism (LabelSettings), has, or an
// error naming both values for a setting of s that contradicts it or that
// the mechanism does not have.
func (s Settings) Agree(mechanism MechanismName, stated Settings) (Settings, error) {
	named := stated.named()
	for i, given := range s.named() {
		if given[1] != "" && given[1] != named[i][1] {
			return s, &contradictionError{mechanism: mechanism, setting: given[0], given: given[1], stated: named[i][1]}
		}
	}
	return stated, nil
}

// Label sets what the settings state in a label file's header m.
func (s Settings) Label(m *votefile.LabelMeta) {
	m.Threshold, m.Sigma1, m.Sigma2, m.LaplaceScale, m.Noise = s.Threshold, s.Sigma1, s.Sigma2, s.LaplaceScale, ""
	if s.Noise != nil {
		m.Noise = s.Noise.String()
	}
}

// LabelSettings returns the settings the header m of a label file states
// of the mechanism that made its labels, after checking the names it
// states: the relation, the partition and the noise.
func LabelSettings(m *votefile.LabelMeta) (Settings, error) {
	s := Settings{Threshold: m.Threshold, Sigma1: m.Sigma1, Sigma2: m.Sigma2, LaplaceScale: m.LaplaceScale}
	var rel accountant.Relation
	if err := rel.UnmarshalText([]byte(m.Relation)); err != nil {
		return s, fmt.Errorf("label file header: %v", err)
	}
	if m.Partition != "" {
		var p Partition
		if err := p.UnmarshalText([]byte(m.Partition)); err != nil {
			return s, fmt.Errorf("label file header: %v", err)
		}
	}
	if m.Noise != "" {
		var n noisymax.Noise
		if err := n.UnmarshalText([]byte(m.Noise)); err != nil {
			return s, fmt.Errorf("label file header: %v", err)
		}
		s.Noise = &n
	}
	return s, nil
}
