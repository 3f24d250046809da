// Package alpha is a fixture of the docs test's name checks.
package alpha

import (
	"bytes"

	"example.com/citemod/beta"
)

// Limit is a constant.
const Limit = 3

// Default is a variable.
var Default = Plan{N: 1}

// Plan is a struct with a method, an embedded type of the module and a
// field of the standard library's.
type Plan struct {
	N int
	beta.Stated
	Buf    bytes.Buffer
	secret int
}

// NewPlan makes a Plan.
func NewPlan(n int) (Plan, error) { return Plan{N: n}, nil }

// Calibrate is a method.
func (p *Plan) Calibrate(x float64) (float64, error) { return x * float64(p.N+p.secret), nil }

// Runner is an interface.
type Runner interface{ Run() error }

// hidden is unexported.
func hidden() {}
