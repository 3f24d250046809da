package setup

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
)

// RRMethod is the value of --rr-composition: the composition that gives
// randomized response's p_const, a method, or, when Auto is set, the
// accountant's choice for the teachers' Delta (accountant.RRComposition).
// It reads and prints as text: a method's name or "auto".
type RRMethod struct {
	Method accountant.Method
	Auto   bool
}

// AutoRR leaves the choice to accountant.RRComposition: the default.
var AutoRR = RRMethod{Auto: true}

// For returns the method for teachers whose guarantee has this Delta.
func (r RRMethod) For(teacherDelta float64) accountant.Method {
	if r.Auto {
		return accountant.RRComposition(teacherDelta)
	}
	return r.Method
}

// MarshalText returns "auto" or the method's name.
func (r RRMethod) MarshalText() ([]byte, error) {
	if r.Auto {
		return []byte("auto"), nil
	}
	return r.Method.MarshalText()
}

// UnmarshalText sets r from "auto" or a method's name.
func (r *RRMethod) UnmarshalText(b []byte) error {
	if string(b) == "auto" {
		*r = AutoRR
		return nil
	}
	var m accountant.Method
	if err := m.UnmarshalText(b); err != nil {
		return fmt.Errorf("%w (or auto)", err)
	}
	*r = RRMethod{Method: m}
	return nil
}
