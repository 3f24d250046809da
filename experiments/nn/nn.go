// Package nn is a small convolutional network for 28×28 image tasks, with
// per-example gradients, as DP-SGD needs them: a 5×5 convolution with F
// filters and stride 2 (28×28 → 12×12×F), ReLU, and a dense layer. For two
// classes (New) the dense layer gives one logit, Pr[y = 1] =
// sigmoid(logit), trained on the logistic loss; for C classes (NewClasses)
// it gives C logits, the class probabilities are their softmax, trained on
// the cross-entropy. The thesis (Section 3.7.2) gives no architecture for
// its teachers; this one is small enough to train 22 teachers on a CPU in
// seconds and reaches 95-99% test accuracy without privacy on the 5-vs-8
// tasks, and trains PATE's 250 MNIST teachers in minutes.
//
// It serves the thesis' experiments, which darrm's command runs, and is no
// part of darrm's library API: Go lets another module import it, but its
// names change with the experiments, without notice (docs/design.md,
// "Packages and layering").
package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/darrm/darrm/internal/outward"
)

// Geometry of the network.
const (
	Side   = 28 // input width and height
	Kernel = 5  // convolution kernel width and height
	Stride = 2
	Out    = (Side-Kernel)/Stride + 1 // 12: output width and height of the convolution
)

// Net is the network: its parameters, in order, the convolution weights
// (F × Kernel × Kernel), the convolution biases (F), the dense weights
// (F × Out × Out, or Classes × F × Out × Out) and the dense bias (one, or
// Classes). Classes is 0 for the two-class network of one logit.
type Net struct {
	F       int
	Classes int
	Params  []float64
}

// NumParams returns the number of parameters of a two-class network with
// f filters.
func NumParams(f int) int { return f*Kernel*Kernel + f + f*Out*Out + 1 }

// NumParamsClasses returns the number of parameters of a network with f
// filters and c >= 2 softmax outputs.
func NumParamsClasses(f, c int) int { return f*Kernel*Kernel + f + c*(f*Out*Out+1) }

// New returns a network with f filters, its weights drawn with He
// initialisation from r and its biases 0.
func New(f int, r *rand.Rand) (*Net, error) {
	if f < 1 {
		return nil, fmt.Errorf("nn: %d filters: must be >= 1", f)
	}
	n := &Net{F: f, Params: make([]float64, NumParams(f))}
	cw, _, dw, _ := n.split(n.Params)
	heInit(cw, dw, f, r)
	return n, nil
}

// NewClasses returns a network with f filters and c >= 2 softmax
// outputs, its weights drawn with He initialisation from r and its biases
// 0.
func NewClasses(f, c int, r *rand.Rand) (*Net, error) {
	if f < 1 {
		return nil, fmt.Errorf("nn: %d filters: must be >= 1", f)
	}
	if c < 2 || c > 256 {
		return nil, fmt.Errorf("nn: %d classes: must be in [2, 256]", c)
	}
	n := &Net{F: f, Classes: c, Params: make([]float64, NumParamsClasses(f, c))}
	cw, _, dw, _ := n.splitClasses(n.Params)
	heInit(cw, dw, f, r)
	return n, nil
}

// heInit draws the convolution weights cw and the dense weights dw of a
// network with f filters with He initialisation from r, in that order (a
// seed draws the same network on every version).
func heInit(cw, dw []float64, f int, r *rand.Rand) {
	for i := range cw {
		cw[i] = r.NormFloat64() * math.Sqrt(2.0/(Kernel*Kernel))
	}
	for i := range dw {
		dw[i] = r.NormFloat64() * math.Sqrt(1.0/float64(f*Out*Out))
	}
}

// split views a parameter (or gradient) vector of a two-class network as
// its four blocks.
func (n *Net) split(p []float64) (convW, convB, denseW []float64, denseB *float64) {
	a := n.F * Kernel * Kernel
	b := a + n.F
	c := b + n.F*Out*Out
	return p[:a], p[a:b], p[b:c], &p[c]
}

// splitClasses views a parameter (or gradient) vector of a C-class network
// as its four blocks; denseW is class-major.
func (n *Net) splitClasses(p []float64) (convW, convB, denseW, denseB []float64) {
	a := n.F * Kernel * Kernel
	b := a + n.F
	c := b + n.Classes*n.F*Out*Out
	return p[:a], p[a:b], p[b:c], p[c : c+n.Classes]
}

// Workspace holds the activations of one example; reuse it across calls.
type Workspace struct {
	z []float64 // pre-activations of the convolution, F × Out × Out
	// on lists the indices k of z > 0, the ReLUs that pass, in order: the
	// dense layer's sums and gradients go through them alone, in z's order,
	// rather than ask z > 0 of every z again for each class, a branch that
	// a processor cannot predict.
	on     []int32
	logits []float64 // the C logits, then their softmax
	dz     []float64 // the loss's gradient at z
}

// NewWorkspace returns a workspace for n.
func (n *Net) NewWorkspace() *Workspace {
	ws := &Workspace{z: make([]float64, n.F*Out*Out), on: make([]int32, n.F*Out*Out)}
	if n.Classes > 0 {
		ws.logits, ws.dz = make([]float64, n.Classes), make([]float64, n.F*Out*Out)
	}
	return ws
}

// Logit returns the two-class network's logit for image x (Side × Side
// pixels, row major).
func (n *Net) Logit(x []float64, ws *Workspace) float64 {
	cw, cb, dw, db := n.split(n.Params)
	n.conv(cw, cb, x, ws)
	logit := *db
	for _, k := range ws.on {
		logit += dw[k] * ws.z[k]
	}
	return logit
}

// conv writes into ws.z the convolution layer's pre-activations for image
// x, filter by filter, row by row, the input of both networks' dense layer
// after ReLU, and into ws.on the indices of those > 0. Each sum adds the
// kernel's rows in order, each row's products in order.
func (n *Net) conv(cw, cb, x []float64, ws *Workspace) {
	z, on := ws.z, ws.on[:cap(ws.on)]
	pos := 0
	for f := 0; f < n.F; f++ {
		w := kernelOf(cw, f)
		zf := z[f*Out*Out : (f+1)*Out*Out]
		for i := 0; i < Out; i++ {
			for j := 0; j < Out; j++ {
				p := patchAt(x, i, j)
				v := cb[f]
				v += dot5(kernelRow(w, 0), patchRow(p, 0))
				v += dot5(kernelRow(w, 1), patchRow(p, 1))
				v += dot5(kernelRow(w, 2), patchRow(p, 2))
				v += dot5(kernelRow(w, 3), patchRow(p, 3))
				v += dot5(kernelRow(w, 4), patchRow(p, 4))
				zf[i*Out+j] = v
				// Written always, kept when v > 0: no branch to mispredict.
				on[pos] = int32((f*Out+i)*Out + j)
				if v > 0 {
					pos++
				}
			}
		}
	}
	ws.on = on[:pos]
}

// patch is the part of an image that one output of the convolution sees:
// Kernel rows of Kernel pixels, Side pixels apart.
type patch = [(Kernel-1)*Side + Kernel]float64

// patchAt is the patch of image x under output (i, j) of the convolution:
// one bounds check where a row each took one.
func patchAt(x []float64, i, j int) *patch {
	return (*patch)(x[Stride*i*Side+Stride*j:])
}

// patchRow is row u of patch p.
func patchRow(p *patch, u int) *[Kernel]float64 {
	return (*[Kernel]float64)(p[u*Side:])
}

// kernelOf is filter f's kernel (or its gradient) in cw.
func kernelOf(cw []float64, f int) *[Kernel * Kernel]float64 {
	return (*[Kernel * Kernel]float64)(cw[f*Kernel*Kernel:])
}

// kernelRow is row u of kernel w.
func kernelRow(w *[Kernel * Kernel]float64, u int) *[Kernel]float64 {
	return (*[Kernel]float64)(w[u*Kernel:])
}

// Predict returns the class of image x: 0 or 1 for a two-class network,
// the largest logit's (the first of equal ones) for C classes.
func (n *Net) Predict(x []float64, ws *Workspace) byte {
	if n.Classes > 0 {
		l := n.Logits(x, ws)
		best := 0
		for k, v := range l {
			if v > l[best] {
				best = k
			}
		}
		return byte(best)
	}
	if n.Logit(x, ws) > 0 {
		return 1
	}
	return 0
}

// Logits returns the C-class network's logits for image x, in ws (valid
// until its next use).
func (n *Net) Logits(x []float64, ws *Workspace) []float64 {
	cw, cb, dw, db := n.splitClasses(n.Params)
	m := n.F * Out * Out
	n.conv(cw, cb, x, ws)
	for c := range ws.logits {
		l, w := db[c], dw[c*m:(c+1)*m]
		for _, k := range ws.on {
			l += w[k] * ws.z[k]
		}
		ws.logits[c] = l
	}
	return ws.logits
}

// Grad writes into g (len(n.Params) long) the gradient of the loss of
// image x with label y, and returns the loss: for a two-class network the
// logistic loss log(1 + e^logit) − y·logit, y in {0, 1}; for C classes the
// cross-entropy −log softmax(logits)_y, y the class index in [0, C).
func (n *Net) Grad(x []float64, y float64, g []float64, ws *Workspace) float64 {
	if n.Classes > 0 {
		return n.gradClasses(x, int(y), g, ws)
	}
	logit := n.Logit(x, ws)
	_, _, dw, _ := n.split(n.Params)
	gcw, gcb, gdw, gdb := n.split(g)
	d := sigmoid(logit) - y // dloss/dlogit
	*gdb = d
	clear(gcw)
	clear(gcb)
	clear(gdw)
	for _, k := range ws.on {
		z := ws.z[k]
		gdw[k] = d * z
		dz := d * dw[k]
		f, ij := int(k)/(Out*Out), int(k)%(Out*Out)
		gcb[f] += dz
		addPatch(dz, patchAt(x, ij/Out, ij%Out), kernelOf(gcw, f))
	}
	return softplus(logit) - y*logit
}

// dot5 returns the dot product of one row of a kernel and of an image
// patch, Kernel = 5 values each.
func dot5(w, x *[Kernel]float64) float64 {
	return w[0]*x[0] + w[1]*x[1] + w[2]*x[2] + w[3]*x[3] + w[4]*x[4]
}

// axpy5 adds a·x to g, 5 values each: one row of a kernel's gradient.
func axpy5(a float64, x, g *[Kernel]float64) {
	g[0] += a * x[0]
	g[1] += a * x[1]
	g[2] += a * x[2]
	g[3] += a * x[3]
	g[4] += a * x[4]
}

// addPatch adds a·p to the kernel's gradient g, row by row.
func addPatch(a float64, p *patch, g *[Kernel * Kernel]float64) {
	axpy5(a, patchRow(p, 0), kernelRow(g, 0))
	axpy5(a, patchRow(p, 1), kernelRow(g, 1))
	axpy5(a, patchRow(p, 2), kernelRow(g, 2))
	axpy5(a, patchRow(p, 3), kernelRow(g, 3))
	axpy5(a, patchRow(p, 4), kernelRow(g, 4))
}

func sigmoid(t float64) float64 {
	if t >= 0 {
		return 1 / (1 + math.Exp(-t))
	}
	e := math.Exp(t)
	return e / (1 + e)
}

// softplus returns log(1 + e^t) without overflow.
func softplus(t float64) float64 {
	if t > 0 {
		return t + math.Log1p(math.Exp(-t))
	}
	return math.Log1p(math.Exp(t))
}

// gradClasses is Grad for a C-class network: with p = softmax(logits),
// dloss/dlogit_c = p_c − [c = y].
func (n *Net) gradClasses(x []float64, y int, g []float64, ws *Workspace) float64 {
	l := n.Logits(x, ws)
	top := l[0]
	for _, v := range l {
		top = math.Max(top, v)
	}
	var sum float64
	for _, v := range l {
		sum += math.Exp(v - top)
	}
	loss := top + outward.Ln(sum) - l[y]
	for c, v := range l {
		l[c] = math.Exp(v-top) / sum
	}
	l[y]--
	_, _, dw, _ := n.splitClasses(n.Params)
	gcw, gcb, gdw, gdb := n.splitClasses(g)
	m := n.F * Out * Out
	copy(gdb, l)
	clear(ws.dz)
	clear(gdw)
	for c, d := range l {
		w, gw := dw[c*m:(c+1)*m], gdw[c*m:(c+1)*m]
		for _, k := range ws.on {
			gw[k] = d * ws.z[k]
			ws.dz[k] += d * w[k]
		}
	}
	// Only the z > 0 have a gradient dz off zero.
	clear(gcw)
	clear(gcb)
	for _, k := range ws.on {
		dz := ws.dz[k]
		if dz == 0 {
			continue
		}
		f, ij := int(k)/(Out*Out), int(k)%(Out*Out)
		gcb[f] += dz
		addPatch(dz, patchAt(x, ij/Out, ij%Out), kernelOf(gcw, f))
	}
	return loss
}
