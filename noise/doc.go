// Package noise draws the randomness of darrm's private releases: uniform
// words, Bernoulli draws and samples of discrete Gaussian and Laplace
// noise, all exact.
//
// It gives uniform words from crypto/rand or, for experiments that are not
// for release, from a seeded ChaCha8 stream (Source); Bernoulli draws with
// thresholds that are exact multiples of 2^-53 (Threshold, Realised); and
// exact samplers of the discrete Gaussian and the discrete Laplace on the
// integers (DiscreteGaussian, DiscreteLaplace; Canonne, Kamath and Steinke,
// "The Discrete Gaussian for Differential Privacy", NeurIPS 2020) and of the
// discrete Gaussian on a lattice off the integers (LatticeGaussian), which
// form no floating-point number on the way.
//
// The package is a leaf: it imports nothing of darrm.
package noise
