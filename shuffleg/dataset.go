package shuffleg

import (
	"fmt"
	"math"
)

// Dataset is the samples of a Problem: n samples of dimension D, the
// features row-major in X (sample i is X[i·D : (i+1)·D]) and, for the
// squared-error and logistic losses, one response per sample in Y (nil for
// mean estimation). Len returns n, Row(i) the features of sample i, and
// Validate reports a malformed dataset. It is the type darrm's data
// readers fill, so that the sets they build are a Problem's as they are.
type Dataset struct {
	X []float64 // n·D features; sample i is X[i·D : (i+1)·D]
	Y []float64 // n responses, or nil
	D int       // dimension of a sample
}

// Len returns the number of samples n.
func (s *Dataset) Len() int {
	if s == nil || s.D <= 0 {
		return 0
	}
	return len(s.X) / s.D
}

// Row returns sample i's features (a view into X).
func (s *Dataset) Row(i int) []float64 { return s.X[i*s.D : (i+1)*s.D : (i+1)*s.D] }

// Validate reports a malformed dataset: a non-positive dimension, a feature
// slice that is not n·D long, a response slice of the wrong length, or a
// non-finite value. name says which dataset it is in the error.
func (s *Dataset) Validate(name string) error {
	if s == nil {
		return fmt.Errorf("%s dataset: missing", name)
	}
	if s.D <= 0 {
		return fmt.Errorf("%s dataset: dimension D = %d: must be >= 1", name, s.D)
	}
	if len(s.X) == 0 || len(s.X)%s.D != 0 {
		return fmt.Errorf("%s dataset: %d feature values: must be a positive multiple of D = %d", name, len(s.X), s.D)
	}
	n := len(s.X) / s.D
	if s.Y != nil && len(s.Y) != n {
		return fmt.Errorf("%s dataset: %d responses for %d samples: must be equal", name, len(s.Y), n)
	}
	for i, v := range s.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s dataset: sample %d feature %d = %v: must be finite", name, i/s.D, i%s.D, v)
		}
	}
	for i, v := range s.Y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s dataset: response %d = %v: must be finite", name, i, v)
		}
	}
	return nil
}
