package shuffleg

import "github.com/darrm/darrm/experiments/datasets"

// Dataset is the samples of a Problem: n samples of dimension D, the
// features row-major in X (sample i is X[i·D : (i+1)·D]) and, for the
// squared-error and logistic losses, one response per sample in Y (nil for
// mean estimation). Len returns n, Row(i) the features of sample i, and
// Validate reports a malformed dataset. It is the type darrm's data
// readers fill, so that the sets they build are a Problem's as they are.
type Dataset = datasets.Dataset
