package ensemble

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// labelSettings writes the settings of m that a label file's header
// states into meta: the GNMax family's σs, threshold and noise, LNMax's
// scale and noise; nothing of the others, whose guarantee says all.
func labelSettings(m Mechanism, meta *votefile.LabelMeta) {
	num := func(x float64) *float64 { return &x }
	noise := func(n noisymax.Noise) string {
		if n == noisymax.UnsetNoise {
			return ""
		}
		return n.String()
	}
	meta.Threshold, meta.Sigma1, meta.Sigma2, meta.LaplaceScale, meta.Noise = nil, nil, nil, nil, ""
	switch m := m.(type) {
	case GNMax:
		meta.Sigma2, meta.Noise = num(m.Sigma2), noise(m.Noise)
	case ConfidentGNMax:
		meta.Threshold, meta.Sigma1, meta.Sigma2, meta.Noise = num(m.Threshold), num(m.Sigma1), num(m.Sigma2), noise(m.Noise)
	case LNMax:
		meta.LaplaceScale, meta.Noise = num(m.Scale), noisymax.DiscreteNoise.String()
	}
}

// MechanismOf returns the mechanism whose labels a label file's header
// meta describes, with the settings it states: the GNMax family's σs,
// threshold and noise and their per-query δ, LNMax's scale; of
// darrm-one-vote its (ε, δ); of the mechanisms for private teachers, whose
// header states their per-query δ but not m, their δ (M is 0). The names
// the header states (the mechanism, the relation, the partition, the
// noise) are checked, and an unknown one refused.
func MechanismOf(meta *votefile.LabelMeta) (Mechanism, error) {
	var rel accountant.Relation
	if err := rel.UnmarshalText([]byte(meta.Relation)); err != nil {
		return nil, fmt.Errorf("label file header: %v", err)
	}
	if meta.Partition != "" {
		var p provenance.Partition
		if err := p.UnmarshalText([]byte(meta.Partition)); err != nil {
			return nil, fmt.Errorf("label file header: %v", err)
		}
	}
	var noise noisymax.Noise
	if meta.Noise != "" {
		if err := noise.UnmarshalText([]byte(meta.Noise)); err != nil {
			return nil, fmt.Errorf("label file header: %v", err)
		}
	}
	// A setting of the mechanism must be stated: every release states
	// them all, and an absent one read as 0 would account a mechanism
	// the labels were not made by (a threshold of 0 is a setting like
	// any other).
	var missing string
	v := func(name string, x *float64) float64 {
		if x == nil {
			if missing == "" {
				missing = name
			}
			return 0
		}
		return *x
	}
	delta := meta.Delta
	var m Mechanism
	switch name := provenance.MechanismName(meta.Mechanism); name {
	case DaRRM{}.Name():
		return DaRRM{Target: Target{Delta: &delta}}, nil
	case Subsample{}.Name():
		return Subsample{Target: Target{Delta: &delta}}, nil
	case DSub{}.Name():
		return DSub{Target: Target{Delta: &delta}}, nil
	case RR{}.Name():
		return RR{Target: Target{Delta: &delta}}, nil
	case OneVoteDaRRM{}.Name():
		return OneVoteDaRRM{Eps: meta.Eps, Delta: delta}, nil
	case GNMax{}.Name():
		m = GNMax{Target: Target{Delta: &delta}, Sigma2: v("sigma2", meta.Sigma2), Noise: noise}
	case ConfidentGNMax{}.Name():
		g := noisymax.ConfidentGNMax{Threshold: v("threshold", meta.Threshold), Sigma1: v("sigma1", meta.Sigma1), Sigma2: v("sigma2", meta.Sigma2), Noise: noise}
		m = ConfidentGNMax{ConfidentGNMax: g, Delta: delta}
	case LNMax{}.Name():
		m = LNMax{LNMax: noisymax.LNMax{Scale: v("laplace_scale", meta.LaplaceScale)}}
	default:
		_, err := lookup(name, votefile.ManyClasses)
		return nil, fmt.Errorf("label file header: %v", err)
	}
	if missing != "" {
		return nil, fmt.Errorf("label file header: it states no %s, a setting of %s (a release states every setting of its mechanism)", missing, meta.Mechanism)
	}
	return m, nil
}
