package ledger

import (
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Bind returns the teacher ensemble a new ledger binds: the one the
// metadata header of its votes states (meta), which what s states must
// agree with (provenance.Check, the check of every release), or, without a
// header (meta nil), what s states, which must then state every parameter
// of the ensemble in its domain (provenance.Binding.Validate).
func Bind(meta *votefile.Meta, s provenance.Stated) (provenance.Binding, error) {
	b, err := provenance.Check(meta, s)
	if err == nil && meta == nil {
		err = b.Validate()
	}
	return b, err
}
