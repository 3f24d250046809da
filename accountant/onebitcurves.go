package accountant

import (
	"slices"
	"sync"
)

// bitCurves is what a Memo knows of one OneBitSpend's pairs: their
// dominating pair, and the answers its compositions gave, by step count.
// A release's count and its totals, a plan's search and its check, and a
// process that releases several times ask the same questions of the
// same pairs; each answer costs a transform of the loss distribution.
type bitCurves struct {
	pairs      []BitPair
	dominating []BitPair // paretoBits of pairs: a release's ledger lines hold them
	loss       bitLoss

	mu      sync.Mutex
	deltas  map[bitQuery]float64   // δ(ε) of k steps (x = ε, y = the δ it is composed for)
	inverse map[bitQuery]bitAnswer // the least ε at δ of k steps, searched up from hi (x = δ, y = hi)
	// runs are the compositions last made, most recent first: a count's
	// search asks whether its count fits and then the total at it, and
	// a release the total and the totals, of the same composition.
	runs []*bitRun
	// answersKey is the key of the pairs' answers in a folder
	// (answersKey, made on first use), readFrom the folder whose answers
	// were read, and added says that answers were added since they were
	// read or written.
	answersKey, readFrom string
	added                bool
}

// bitQuery is a question to the composition of k steps on a window of
// at most window points (maxBitWindow: the exact composition's; fewer:
// the coarse one that guides a count's search; -lowerBitWindow: the lower
// bound, lowerBitDelta, y 0): δ at ε (x) for the run composed for a total
// δ y, or the least ε at δ (x) searched up from y.
type bitQuery struct {
	k, window int
	x, y      float64
}

// bitAnswer is an exactEps answer.
type bitAnswer struct {
	eps float64
	ok  bool
}

const (
	// maxBitCurves bounds the sets of pairs whose answers a Memo
	// keeps, and maxBitPairs the pairs they hold together (the first is
	// kept whatever its size). A plan's search for a noise level asks of
	// a set of pairs per level, and a command that plans or simulates
	// several times asks the same again: answers, a few numbers each,
	// are kept for many more sets than compositions are.
	maxBitCurves = 64
	maxBitPairs  = 1 << 20
	// maxRunCurves bounds the sets of pairs, the most recent, that keep
	// their compositions (a few MB each); the others keep their answers
	// only.
	maxRunCurves = 8
	// maxBitRuns bounds the compositions kept of one set of pairs.
	maxBitRuns = 4
	// maxBitAnswers bounds the answers kept of one set of pairs: beyond
	// it they are forgotten.
	maxBitAnswers = 1 << 12
)

// recentBits is the bitCurves a Memo keeps, of the pairs last used, most
// recent first.
type recentBits struct {
	sync.Mutex
	recent []*bitCurves
}

// curvesOf returns the bitCurves of pairs, with the answers kept in m's
// Dir; new ones, kept nowhere, when m is nil.
func (m *Memo) curvesOf(pairs []BitPair) *bitCurves {
	if m == nil {
		return new(recentBits).of(pairs)
	}
	c := m.bits.of(pairs)
	if m.Dir != "" && len(m.Secret) >= minAnswersSecret {
		c.load(m.Dir, m.Secret)
	}
	return c
}

// of returns the bitCurves of pairs that b keeps, or new ones.
func (b *recentBits) of(pairs []BitPair) *bitCurves {
	b.Lock()
	defer b.Unlock()
	recent := b.recent
	for i, c := range recent {
		if slices.Equal(c.pairs, pairs) {
			copy(recent[1:i+1], recent[:i])
			recent[0] = c
			dropRuns(recent)
			return c
		}
	}
	// oneBitLoss of the pairs kept, sorted once: a private-teacher
	// label's tens of thousands of pairs cost a few ms to sort.
	dominating := paretoBits(pairs)
	c := &bitCurves{pairs: slices.Clone(pairs), dominating: dominating, loss: envelopeLoss(dominating, pairsScale(pairs)), deltas: map[bitQuery]float64{}, inverse: map[bitQuery]bitAnswer{}}
	recent = append([]*bitCurves{c}, recent...)
	held := 0
	for i, r := range recent {
		held += len(r.pairs)
		if i > 0 && (i >= maxBitCurves || held > maxBitPairs) {
			recent = recent[:i]
			break
		}
	}
	dropRuns(recent)
	b.recent = recent
	return c
}

// dropRuns drops the compositions of the set of pairs that moving one
// set to the front of recent pushed out of the first maxRunCurves.
func dropRuns(recent []*bitCurves) {
	if len(recent) > maxRunCurves {
		r := recent[maxRunCurves]
		r.mu.Lock()
		r.runs = nil
		r.mu.Unlock()
	}
}

// run returns the composition of k steps for questions at total δ
// delta (newBitRun, its transforms from pool), made once while it is
// among the last maxBitRuns asked for: the runs of one k and one tilt are
// the same.
func (c *bitCurves) run(pool *transformPool, k int, delta float64) (*bitRun, error) {
	r, err := newBitRun(pool, []bitPart{{c.loss, k}}, delta)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, old := range c.runs {
		if old.k == k && old.lambda == r.lambda {
			copy(c.runs[1:i+1], c.runs[:i])
			c.runs[0] = old
			return old, nil
		}
	}
	c.runs = append([]*bitRun{r}, c.runs[:min(len(c.runs), maxBitRuns-1)]...)
	return r, nil
}

// delta returns f(q.x), the profile at ε q.x of the composition q
// asks, as remembered.
func (c *bitCurves) delta(q bitQuery, f func(float64) float64) float64 {
	c.mu.Lock()
	v, ok := c.deltas[q]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = f(q.x)
	c.mu.Lock()
	if len(c.deltas) >= maxBitAnswers {
		clear(c.deltas)
	}
	c.deltas[q], c.added = v, true
	c.mu.Unlock()
	return v
}

// answer returns the answer to q remembered, and whether there is one.
func (c *bitCurves) answer(q bitQuery) (float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.deltas[q]
	return v, ok
}

// epsAt returns search(), the least ε at total δ q.x searched up from
// q.y of the composition q asks, as remembered.
func (c *bitCurves) epsAt(q bitQuery, search func() (float64, bool)) (float64, bool) {
	c.mu.Lock()
	a, ok := c.inverse[q]
	c.mu.Unlock()
	if ok {
		return a.eps, a.ok
	}
	a.eps, a.ok = search()
	c.mu.Lock()
	if len(c.inverse) >= maxBitAnswers {
		clear(c.inverse)
	}
	c.inverse[q], c.added = a, true
	c.mu.Unlock()
	return a.eps, a.ok
}
