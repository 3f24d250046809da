package ensemble

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// labelSettings writes the settings of m that a label file's header
// states into meta (Mechanism.header), those of no other mechanism; a
// nil m states none.
func labelSettings(m Mechanism, meta *votefile.LabelMeta) {
	meta.Threshold, meta.Sigma1, meta.Sigma2, meta.LaplaceScale, meta.Noise = nil, nil, nil, nil, ""
	if m != nil {
		m.header(meta)
	}
}

// num returns a pointer to x, a setting as a header states it.
func num(x float64) *float64 { return &x }

// noiseName is the noise n as a header states it: "" when unset.
func noiseName(n noisymax.Noise) string {
	if n == noisymax.UnsetNoise {
		return ""
	}
	return n.String()
}

// labelHeader is a label file's header as a mechanism reads its settings
// from it: the header, its noise read, and the first setting of the
// mechanism it does not state.
type labelHeader struct {
	meta    *votefile.LabelMeta
	noise   noisymax.Noise
	missing string
}

// num returns the setting x of the header, which names it so; an absent
// one is recorded in h.missing and read as 0.
func (h *labelHeader) num(name string, x *float64) float64 {
	if x == nil {
		if h.missing == "" {
			h.missing = name
		}
		return 0
	}
	return *x
}

// delta returns the per-query δ the header states, as a Target's.
func (h *labelHeader) delta() Target {
	delta := h.meta.Delta
	return Target{Delta: &delta}
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
	h := &labelHeader{meta: meta}
	if meta.Noise != "" {
		if err := h.noise.UnmarshalText([]byte(meta.Noise)); err != nil {
			return nil, fmt.Errorf("label file header: %v", err)
		}
	}
	name := provenance.MechanismName(meta.Mechanism)
	r := registered(name)
	if r == nil {
		return nil, fmt.Errorf("label file header: %v", lookup(name, votefile.ManyClasses))
	}
	// A setting of the mechanism must be stated: every release states
	// them all, and an absent one read as 0 would account a mechanism
	// the labels were not made by (a threshold of 0 is a setting like
	// any other).
	m := r.fromHeader(h)
	if h.missing != "" {
		return nil, fmt.Errorf("label file header: it states no %s, a setting of %s (a release states every setting of its mechanism)", h.missing, meta.Mechanism)
	}
	return m, nil
}
