package main

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
)

// rrMethod is the value of --rr-composition: the composition that gives
// randomized response's p_const, a method, or, when Auto is set, the
// accountant's choice for the teachers' Delta (accountant.RRComposition).
// It reads and prints as text: a method's name or "auto".
type rrMethod struct {
	Method accountant.Method
	Auto   bool
}

// autoRR leaves the choice to accountant.RRComposition: the default.
var autoRR = rrMethod{Auto: true}

// For returns the method for teachers whose guarantee has this Delta.
func (r rrMethod) For(teacherDelta float64) accountant.Method {
	if r.Auto {
		return accountant.RRComposition(teacherDelta)
	}
	return r.Method
}

// MarshalText returns "auto" or the method's name.
func (r rrMethod) MarshalText() ([]byte, error) {
	if r.Auto {
		return []byte("auto"), nil
	}
	return r.Method.MarshalText()
}

// UnmarshalText sets r from "auto" or a method's name.
func (r *rrMethod) UnmarshalText(b []byte) error {
	if string(b) == "auto" {
		*r = autoRR
		return nil
	}
	var m accountant.Method
	if err := m.UnmarshalText(b); err != nil {
		return fmt.Errorf("%w (or auto)", err)
	}
	*r = rrMethod{Method: m}
	return nil
}
