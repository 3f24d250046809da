package shuffleg

import (
	"math"

	"github.com/darrm/darrm/internal/outward"
)

// The ziggurat of the standard normal density f(x) = exp(-x²/2) with 128
// layers (G. Marsaglia and W. W. Tsang, "The Ziggurat Method for
// Generating Random Variables", Journal of Statistical Software 5(8),
// 2000), computed when the package starts from its definition: a base
// strip and 127 rectangles, all of area zigV, stacked under f. Layer i has
// right edge x_i, with x_127 = zigR and x_0 the base strip's equivalent
// width zigV/f(zigR); going up, each edge follows from the one below by
// f(x_i) = f(x_{i+1}) + zigV/x_{i+1}, the rectangle of height
// f(x_i) - f(x_{i+1}) and width x_{i+1} having area zigV.
//
// The tables are scaled to the 32-bit signed integer j that NormFloat64
// draws: x = j·zigW[i] is a point of layer i, inside its rectangle's
// core when |j| < zigK[i] = 2^31·x_{i-1}/x_i; zigF[i] = f(x_i). They are
// rounded as the paper's generator rounds them (the integers truncated,
// the rest to float32), which makes them equal, bit for bit, to
// math/rand/v2's (TestZigguratMatchesStandardLibrary), so that Stream
// draws what rand.Rand.NormFloat64 draws from the same words.
const (
	zigR = 3.442619855899      // right edge of the base strip's rectangle
	zigV = 9.91256303526217e-3 // area of each layer
)

var (
	zigK [128]uint32
	zigW [128]float32
	zigF [128]float32
)

func init() {
	const scale = 1 << 31 // the range of |j|
	f := func(x float64) float64 { return math.Exp(-0.5 * x * x) }

	x0 := zigV / f(zigR) // the base strip as a rectangle of height f(zigR)
	zigK[0] = uint32(zigR / x0 * scale)
	zigW[0] = float32(x0 / scale)
	zigF[0] = 1

	// zigK[1] stays 0: the top layer has no core, every draw in it is
	// tested against f.
	x := zigR
	zigW[127] = float32(x / scale)
	zigF[127] = float32(f(x))
	for i := 126; i >= 1; i-- {
		below := x
		x = math.Sqrt(-2 * outward.Ln(zigV/below+f(below)))
		zigK[i+1] = uint32(x / below * scale)
		zigW[i] = float32(x / scale)
		zigF[i] = float32(f(x))
	}
}
