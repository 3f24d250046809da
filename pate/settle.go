package pate

import "github.com/darrm/darrm/votefile"

// Settle returns the settings of an account of labels whose label file's
// header is m (nil: no labels, or no header) from the settings given:
// given completed by the header's (votefile.Settings.Agree, which refuses
// a setting that contradicts it), what the header states, and the
// mechanism, the header's, else the one the settings imply (mechanismOf).
func Settle(given votefile.Settings, m *votefile.LabelMeta) (settings, stated votefile.Settings, mech votefile.MechanismName, err error) {
	settings = given
	if m != nil {
		if settings, err = given.Agree(m); err != nil {
			return given, stated, "", err
		}
		stated, mech = m.Settings, m.Mechanism
	}
	if mech == "" {
		mech = mechanismOf(settings)
	}
	return settings, stated, mech, nil
}
