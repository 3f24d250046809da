// Package noise draws the randomness of darrm's private releases: uniform
// 64-bit words from crypto/rand (NewSource) or, for experiments that are
// not for release, from a seeded ChaCha8 stream (NewSeededSource,
// NewSeededStream).
//
// A release takes its Source as an argument, so its caller chooses between
// the two. The exact samplers of discrete noise that darrm's mechanisms
// draw from a Source are internal (package internal/discrete).
//
// The package is a leaf: it imports nothing of darrm.
package noise
