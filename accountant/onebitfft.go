package accountant

import (
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/darrm/darrm/internal/outward"
	"gonum.org/v1/gonum/dsp/fourier"
)

// transform sets p to the sum of the parts' k-fold convolutions of
// masses at indices over the window [lo, hi] (tails: the mass beyond
// it) by the FFT, the product of each part's transform raised to its k,
// untilted when the masses are tilted (lambda > 0): each entry times
// e^(C - λs), at most 1.
func (r *bitRun) transform(comps []bitComp, lo, hi int, tails float64) {
	// The least power of two that holds the window: the cyclic
	// convolution then wraps onto it only mass from beyond it, the
	// tails', which err bounds.
	w := hi - lo + 1
	size := 1 << bits.Len(uint(w-1))
	tr := r.pool.take(size)
	defer r.pool.put(tr)
	one := tr.seq
	// size is a power of two: s & (size-1) is s modulo size, negative s
	// included (two's complement).
	mask := size - 1
	var prod []complex128
	for ci, comp := range comps {
		clear(one)
		for j, m := range comp.mass {
			one[comp.idx[j]&mask] += m
		}
		var c []complex128
		onOwnStack(func() { c = tr.f.Coefficients(tr.coeff, one) })
		if ci == 0 {
			prod = c
			for i, v := range c {
				prod[i] = powInt(v, comp.k)
			}
			if len(comps) > 1 {
				prod = slices.Clone(prod)
			}
			continue
		}
		for i, v := range c {
			prod[i] *= powInt(v, comp.k)
		}
	}
	var seq []float64
	onOwnStack(func() { seq = tr.f.Sequence(one, prod) })
	r.first, r.p = lo, make([]float64, w)
	// blockMax too, in the same pass over the window.
	r.blockMax = make([]float64, (w+rawBlock-1)/rawBlock)
	var neg float64
	for s := lo; s <= hi; s++ {
		v := seq[s&mask] / float64(size)
		if v < 0 {
			neg -= v
			v = 0
		}
		if r.lambda > 0 && v > 0 {
			v = math.Min(1, v*math.Exp(r.cgf-r.lambda*float64(s)))
		}
		r.p[s-lo] = v
		if b := (s - lo) / rawBlock; v > r.blockMax[b] {
			r.blockMax[b] = v
		}
	}
	r.err = neg + transformErr(size, comps) + tails
}

// powInt returns v^k, k >= 1, by repeated squaring: at most 2·log2(k)
// complex products, each within a relative √5·2^-53 (for |v| <= 1 no
// product overflows), so within transform's allowance of k·2^-50 per
// power, and thirty times faster than cmplx.Pow, which goes through
// the logarithm and the exponential (the transform of a plan's search
// spent most of its time there).
func powInt(v complex128, k int) complex128 {
	r := complex(1, 0)
	for ; k > 0; k >>= 1 {
		if k&1 == 1 {
			r *= v
		}
		v *= v
	}
	return r
}

// transform is a real FFT of one size with its buffers: a sequence and
// its coefficients.
type transform struct {
	f     *fourier.FFT
	seq   []float64
	coeff []complex128
}

// transformPool keeps transforms for reuse, the most recently used
// first: a run's search composes at many step counts, each a transform of
// the same size (the window's points are about maxBitWindow whatever the
// count), whose setup (twiddle factors, about a tenth of a transform when
// profiled) and buffers need not be redone. A sync.Pool, which a garbage
// collection empties, lost them between most transforms: the searches
// allocate enough to collect every few. A Memo holds one.
type transformPool struct {
	sync.Mutex
	kept []*transform
}

// maxTransforms bounds the transforms kept: a count's search makes them
// at three sizes (coarseBitWindow, lowerBitWindow, maxBitWindow), which
// hold 24 MiB (the sequence, its coefficients and the FFT's own three
// arrays of the size: 20 MiB at maxBitWindow).
const maxTransforms = 3

// take returns a transform of size points, from p when it keeps one
// (p may be nil).
func (p *transformPool) take(size int) *transform {
	if p != nil {
		p.Lock()
		for i, t := range p.kept {
			if len(t.seq) == size {
				p.kept = slices.Delete(p.kept, i, i+1)
				p.Unlock()
				return t
			}
		}
		p.Unlock()
	}
	return &transform{f: fourier.NewFFT(size), seq: make([]float64, size), coeff: make([]complex128, size/2+1)}
}

// put gives t back to p for reuse (nothing when p is nil).
func (p *transformPool) put(t *transform) {
	if p == nil {
		return
	}
	p.Lock()
	defer p.Unlock()
	p.kept = slices.Insert(p.kept, 0, t)
	if len(p.kept) > maxTransforms {
		p.kept[maxTransforms] = nil
		p.kept = p.kept[:maxTransforms]
	}
}

// onOwnStack runs f, an FFT, on a goroutine of its own and waits for it,
// so that the FFT's stack sits at the same place within a page whoever
// calls: gonum's radix-4 passes (radf4, radb4) copy their arrays'
// descriptors through the stack in their inner loops, and with the stack
// at some offsets (about 48 bytes of a 4 KiB page, measured) a 2^19-point
// transform takes five times the CPU, likely 4K aliasing of those copies
// with the page-aligned data. On a goroutine of its own the offset is
// set by this package's and gonum's frames alone, outside the window for
// both callers (bitRun's transform: 0xd30 at radf4; fftDGSum's: as fast
// as on its caller's stack, measured). On the caller's stack it is the
// sum of every caller's frames: darrm run as a child of its test binary
// (TestMain, two frames more) landed there, at 0.45 s of CPU for a
// release that took 0.17 s in the built binary.
func onOwnStack(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// maxDirect bounds the work of a direct convolution (atoms × steps ×
// points): beyond it the composition goes through the FFT.
const maxDirect = 1 << 25

// direct sets r.p to the sum of the parts' k-fold convolutions of
// masses at indices, summed directly: every term is a sum of products
// of nonnegative numbers, so each entry is within a relative
// Σ k·(m+1) ulps of the exact value (m a part's masses), which rel
// carries.
//
// Each step adds, for every nonzero entry i of the last step's sum in
// increasing order, its product by each mass at i + that mass's index:
// while the nonzero entries are few beside the sum's width (a grid of
// 2^18 steps of lmax holds a few atoms), only they are visited, and the
// sums are the same, term by term and in the same order, as over every
// entry. The steps take turns between two sums, the last step's of the
// final width, the other of the width before it.
func (r *bitRun) direct(comps []bitComp) {
	r.first = 0
	var steps, width, before int
	for _, c := range comps {
		if c.k > 0 {
			steps += c.k
			before = width + (c.k-1)*(r.n-c.imin)
			width += c.k * (r.n - c.imin)
		}
	}
	var sums [2][]float64
	sums[steps%2] = make([]float64, width+1)
	if steps > 1 {
		sums[(steps+1)%2] = make([]float64, before+1)
	}
	cur := []float64{1}
	// support lists the entries of cur that may be nonzero, increasing;
	// nil: any of them.
	support, step := []int{0}, 0
	var ulps int
	for _, c := range comps {
		r.first += c.k * c.imin
		ulps += c.k * (len(c.mass) + 1)
		for range c.k {
			step++
			next := sums[step%2][:len(cur)+r.n-c.imin]
			var touched []int
			if support != nil && len(support)*len(c.mass) <= len(next)/16 {
				touched = make([]int, 0, len(support)*len(c.mass))
			}
			visits := len(cur)
			if support != nil {
				visits = len(support)
			}
			for x := range visits {
				i := x
				if support != nil {
					i = support[x]
				}
				v := cur[i]
				if v == 0 {
					continue
				}
				for j, m := range c.mass {
					t := i + c.idx[j] - c.imin
					next[t] += v * m
					if touched != nil {
						touched = append(touched, t)
					}
				}
			}
			// cur is the next step's sum: zero again where it was written.
			if support != nil {
				for _, i := range support {
					cur[i] = 0
				}
			} else {
				clear(cur)
			}
			if touched != nil {
				slices.Sort(touched)
				touched = slices.Compact(touched)
			}
			cur, support = next, touched
		}
	}
	r.p = cur
	if support != nil {
		// blockMax from the few nonzero entries (positive scans them all
		// otherwise).
		r.blockMax = make([]float64, (len(cur)+rawBlock-1)/rawBlock)
		for _, i := range support {
			if b := i / rawBlock; cur[i] > r.blockMax[b] {
				r.blockMax[b] = cur[i]
			}
		}
	}
	r.rel = float64(ulps) * outward.ULP
}
