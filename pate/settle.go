package pate

import (
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Settle returns the settings of an account of labels whose label file's
// header is m (nil: no labels, or no header) from the settings given:
// given completed by the header's (provenance.Settings.Agree, which refuses
// a setting that contradicts it), what the header states, and the
// mechanism, the header's, else the one the settings imply (mechanismOf).
func Settle(given provenance.Settings, m *votefile.LabelMeta) (settings, stated provenance.Settings, mech provenance.MechanismName, err error) {
	settings = given
	if m != nil {
		if stated, err = provenance.LabelSettings(m); err != nil {
			return given, stated, "", err
		}
		mech = provenance.MechanismName(m.Mechanism)
		if settings, err = given.Agree(mech, stated); err != nil {
			return given, stated, "", err
		}
	}
	if mech == "" {
		mech = mechanismOf(settings)
	}
	return settings, stated, mech, nil
}
