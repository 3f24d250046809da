package discrete

import (
	"math"

	"github.com/darrm/darrm/noise"
)

// Unit53 is 2^53: Bernoulli draws compare a 53-bit uniform integer, the
// top 53 bits of a word (Uint64() >> 11), with a threshold in [0, 2^53];
// the threshold Unit53 is probability 1.
const Unit53 = 1 << 53

// Threshold returns t = floor(p·2^53), the threshold with which a draw
// U < t of a uniform 53-bit integer U has probability exactly t/2^53, the
// largest multiple of 2^-53 that is <= p. p·2^53 is exact in float64 (a
// power-of-two scaling), so the only rounding is the floor.
func Threshold(p float64) uint64 { return uint64(math.Floor(p * Unit53)) }

// Realised returns t/2^53, the probability a threshold realises; it is
// exact in float64.
func Realised(t uint64) float64 { return float64(t) / Unit53 }

// Bernoulli returns true with probability t/2^53 (t a Threshold): whether
// the top 53 bits of a word are below t.
func Bernoulli(src *noise.Source, t uint64) bool { return src.Uint64()>>11 < t }
