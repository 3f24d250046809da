package datasets

import "github.com/darrm/darrm/shuffleg"

// Dataset is the samples the readers fill: shuffleg's, so that the sets
// they build are a DP-ShuffleG problem's as they are, and the teachers and
// DP-SGD train on the same type.
type Dataset = shuffleg.Dataset

// Subset returns a copy of the samples idx of s, in that order, with their
// responses when the dataset has them.
func Subset(s *Dataset, idx []int) *Dataset {
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
