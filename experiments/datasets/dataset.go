package datasets

import (
	"fmt"
	"math"
)

// Dataset holds n samples of dimension D: the features row-major in X and,
// for the regression and classification tasks, one response per sample in
// Y (nil for mean estimation). Package shuffleg exports it as the samples
// of its problems (shuffleg.Dataset).
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

// Subset returns a copy of the samples idx, in that order, with their
// responses when the dataset has them.
func (s *Dataset) Subset(idx []int) *Dataset {
	out := &Dataset{D: s.D, X: make([]float64, 0, len(idx)*s.D)}
	if s.Y != nil {
		out.Y = make([]float64, 0, len(idx))
	}
	for _, i := range idx {
		out.X = append(out.X, s.Row(i)...)
		if s.Y != nil {
			out.Y = append(out.Y, s.Y[i])
		}
	}
	return out
}
