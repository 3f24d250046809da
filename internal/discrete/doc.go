// Package discrete draws darrm's noise exactly from a noise.Source:
// Bernoulli draws whose probabilities are multiples of 2^-53, and samples
// of the discrete Gaussian and Laplace on the integers and of the discrete
// Gaussian on a lattice off the integers, which form no floating-point
// number on the way.
//
// Bernoulli draws compare a word's top 53 bits with a threshold (Threshold,
// Realised, Bernoulli). The samplers of the discrete Gaussian and the
// discrete Laplace (Gaussian, Laplace) are those of Canonne, Kamath and
// Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020;
// LatticeGaussian moves their centre off the integers.
//
// They are the mechanisms' plumbing (packages ensemble, noisymax, pate and
// plan): a caller of the library chooses only the noise.Source.
package discrete
