package shuffleg

import (
	"fmt"
	"math"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/enum"
)

// Order is the sample order of a shuffled gradient method (Algorithm 2):
// RR (random reshuffling), SO (shuffle once) or IG (incremental gradient).
// The zero value is none of them.
// A Order prints and reads as its name (its String, MarshalText and
// UnmarshalText).
type Order int

// The three orders of Section 4.3.3.
const (
	// RR (random reshuffling) draws a new permutation of the private
	// samples at the start of every epoch.
	RR Order = iota + 1
	// SO (shuffle once) draws one permutation and uses it in every epoch.
	SO
	// IG (incremental gradient) uses the samples in their stored order.
	IG
)

var orderNames = enum.Names[Order]{What: "order", List: []string{RR: "rr", SO: "so", IG: "ig"}, Fold: true}

// String returns the name of o.
func (o Order) String() string { return orderNames.String(o) }

// MarshalText returns the name of o.
func (o Order) MarshalText() ([]byte, error) { return []byte(orderNames.String(o)), nil }

// UnmarshalText sets o from its name.
func (o *Order) UnmarshalText(text []byte) error { return orderNames.Unmarshal(o, text) }

// Algorithm is one instantiation of the generalised shuffled gradient
// framework (Algorithm 3), following Table 4.1: DPShuffleG, PrivPub,
// PubPriv, Interleaved or PublicOnly. The zero value is none of them.
type Algorithm int

// The algorithms compared in Section 4.7, in the thesis' order.
const (
	// DPShuffleG uses the private data in every epoch, with noise on every
	// step (Section 4.5).
	DPShuffleG Algorithm = iota + 1
	// PrivPub runs S = p·K noisy epochs on the private data, then K − S
	// noiseless epochs on the public data (Algorithm 4).
	PrivPub
	// PubPriv runs K − p·K noiseless public epochs, then p·K noisy private
	// epochs (Algorithm 5).
	PubPriv
	// Interleaved takes n_d = p·n private steps, then n − n_d steps on the
	// first n − n_d public samples, in every epoch, with noise on every step
	// (Algorithm 6).
	Interleaved
	// PublicOnly uses only the public data, without noise (Section 4.7.3).
	PublicOnly
)

var algorithmNames = enum.Names[Algorithm]{What: "algorithm", List: []string{DPShuffleG: "dp-shuffleg", PrivPub: "priv-pub", PubPriv: "pub-priv", Interleaved: "interleaved", PublicOnly: "public-only"},
	Also: map[string]Algorithm{"dp": DPShuffleG}, Fold: true}

// String returns the algorithm's command-line name: "dp-shuffleg",
// "priv-pub", "pub-priv", "interleaved" or "public-only".
func (a Algorithm) String() string { return algorithmNames.String(a) }

// MarshalText returns the name of a, so that an Algorithm reads and
// prints as text (a flag, a JSON or config value).
func (a Algorithm) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText sets a from its name (String), case-insensitive, or
// "dp", the name an earlier darrm gave DPShuffleG.
func (a *Algorithm) UnmarshalText(b []byte) error { return algorithmNames.Unmarshal(a, b) }

// Label returns the name the thesis uses in its figures for a given order,
// e.g. "Interleaved-RR" (Section 4.7.3) or "Public Only".
func (a Algorithm) Label(o Order) string {
	suffix := strings.ToUpper(o.String())
	switch a {
	case DPShuffleG:
		return "DP-" + suffix
	case PrivPub:
		return "Priv-Pub-" + suffix
	case PubPriv:
		return "Pub-Priv-" + suffix
	case Interleaved:
		return "Interleaved-" + suffix
	case PublicOnly:
		return "Public Only"
	}
	return a.String()
}

// Reference names the lemma that bounds a's privacy.
func (a Algorithm) Reference() string {
	switch a {
	case DPShuffleG:
		return "Lemma 4.5.2 (PABI + RDP composition)"
	case PublicOnly:
		return "uses public data only: (0, 0)-DP with respect to the private data"
	}
	return "Lemma 4.6.2 (PABI + RDP composition)"
}

// Private reports whether the algorithm touches the private data (all but
// PublicOnly) and so needs calibrated noise.
func (a Algorithm) Private() bool { return a != PublicOnly }

// Plan is the schedule of one algorithm on a problem (Table 4.1): which
// samples each epoch uses and which steps are noisy.
type Plan struct {
	Algorithm Algorithm
	Epochs    int // K
	N         int // private samples n
	NPublic   int // public samples available
	// PrivEpochs is the number of epochs that use private data: K for
	// DPShuffleG and Interleaved, round(p·K) for PrivPub (the thesis' S) and
	// PubPriv (its K − S), 0 for PublicOnly.
	PrivEpochs int
	// ND is the number of private steps of a private epoch: n, or
	// round(p·n) for Interleaved.
	ND int
}

// epochSpec says what one epoch of a Plan does.
type epochSpec struct {
	priv  int  // private steps, taken first
	pub   int  // public steps, on public samples 0, 1, ..., pub−1
	noisy bool // whether every step of the epoch adds noise
}

// maxEpochs bounds a plan's epochs: a run's trace holds two values an
// epoch (16 MiB at the bound), and 2^31 epochs ran it out of memory
// before its first step.
const maxEpochs = 1 << 20

// NewPlan schedules algorithm a for K epochs on n private and nPublic public
// samples with private fraction p (Section 4.6.6: S = p·K, n_d = p·n,
// rounded half up). It rejects a p that leaves no private steps and a
// public set too small for the algorithm.
func NewPlan(a Algorithm, n, nPublic, epochs int, p float64) (Plan, error) {
	if n < 1 {
		return Plan{}, fmt.Errorf("private samples n = %d: must be >= 1", n)
	}
	if epochs < 1 || epochs > maxEpochs {
		return Plan{}, fmt.Errorf("epochs = %d: must be in [1, %d]", epochs, maxEpochs)
	}
	if nPublic < 0 {
		return Plan{}, fmt.Errorf("public samples = %d: must be >= 0", nPublic)
	}
	if !(p > 0 && p <= 1) {
		return Plan{}, fmt.Errorf("private fraction p = %v: must be in (0, 1]", p)
	}
	pl := Plan{Algorithm: a, Epochs: epochs, N: n, NPublic: nPublic, ND: n}
	switch a {
	case DPShuffleG:
		pl.PrivEpochs = epochs
	case PrivPub, PubPriv:
		pl.PrivEpochs = int(math.Floor(p*float64(epochs) + 0.5))
		if pl.PrivEpochs < 1 {
			return Plan{}, fmt.Errorf("%v: private fraction p = %v with K = %d epochs gives round(p·K) = 0 private epochs: need p·K >= 0.5", a, p, epochs)
		}
		if pl.PrivEpochs < epochs && nPublic < 1 {
			return Plan{}, fmt.Errorf("%v: needs public data, the problem has none", a)
		}
	case Interleaved:
		pl.PrivEpochs = epochs
		pl.ND = int(math.Floor(p*float64(n) + 0.5))
		if pl.ND < 1 {
			return Plan{}, fmt.Errorf("%v: private fraction p = %v with n = %d gives round(p·n) = 0 private steps per epoch: need p·n >= 0.5", a, p, n)
		}
		if need := n - pl.ND; nPublic < need {
			return Plan{}, fmt.Errorf("%v: needs n − n_d = %d public samples per epoch, the problem has %d", a, need, nPublic)
		}
	case PublicOnly:
		if nPublic < 1 {
			return Plan{}, fmt.Errorf("%v: needs public data, the problem has none", a)
		}
		pl.ND = 0
	default:
		return Plan{}, fmt.Errorf("algorithm %v: unknown", a)
	}
	return pl, nil
}

// amplification returns the factor by which PABI divides the per-epoch
// Rényi DP: n + 1 − n_d for Interleaved (Lemma 4.6.2), 1 otherwise.
func (pl Plan) amplification() int {
	if pl.Algorithm == Interleaved {
		return pl.N + 1 - pl.ND
	}
	return 1
}

// PABI returns the privacy accounting of the plan's private epochs with
// every gradient clipped to norm clip (Lemmas 4.5.2 and 4.6.2).
func (pl Plan) PABI(clip float64) accountant.PABI {
	return accountant.PABI{G: clip, Epochs: pl.PrivEpochs, Dilution: pl.amplification()}
}

// epoch returns the schedule of epoch k (0-based).
func (pl Plan) epoch(k int) epochSpec {
	switch pl.Algorithm {
	case DPShuffleG:
		return epochSpec{priv: pl.N, noisy: true}
	case PrivPub:
		if k < pl.PrivEpochs {
			return epochSpec{priv: pl.N, noisy: true}
		}
		return epochSpec{pub: pl.NPublic}
	case PubPriv:
		if k >= pl.Epochs-pl.PrivEpochs {
			return epochSpec{priv: pl.N, noisy: true}
		}
		return epochSpec{pub: pl.NPublic}
	case Interleaved:
		return epochSpec{priv: pl.ND, pub: pl.N - pl.ND, noisy: true}
	}
	return epochSpec{pub: pl.NPublic}
}

// ContractionBound returns 1/L for the L that the privacy analysis needs
// the learning rate to respect (η <= 1/L makes every step contractive,
// Remark 4.3.7): L* over the private samples for DPShuffleG, PrivPub and
// PubPriv (Lemmas 4.5.2, 4.6.2); for Interleaved, the maximum of L* and the
// smoothness of the n − n_d public samples whose steps lie between a
// private step and the release (max{L*, L̃*} in Lemma 4.6.2); +Inf for
// PublicOnly.
func (pl Plan) ContractionBound(p *Problem) float64 {
	switch pl.Algorithm {
	case PublicOnly:
		return math.Inf(1)
	case Interleaved:
		l := p.lStar
		for _, sq := range p.pubSq[:pl.N-pl.ND] {
			l = math.Max(l, p.Task.Loss.smoothness(sq))
		}
		return 1 / l
	}
	return 1 / p.lStar
}
