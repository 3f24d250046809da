package constraints

import (
	"container/heap"
	"math"
)

// The worst multisets of a separation: each worker's top list and the
// total order of its results, ties broken canonically, so that the result
// does not depend on the number of workers or shards.

// threshold is the cost a configuration must exceed to matter: to beat the
// best so far or to enter the top list.
func (sw *sepWorker) heapThreshold() float64 {
	if sw.k == 0 {
		return math.Inf(1)
	}
	if len(sw.top) < sw.k {
		return sw.floor
	}
	return math.Max(sw.floor, sw.top[0].F)
}

// offer considers a configuration of cost f >= the threshold; c builds it.
func (sw *sepWorker) offer(f float64, c func() Config) {
	var cfg Config
	sw.raise(f, &cfg, c)
	if thr := sw.heapThreshold(); f > thr || f == thr && len(sw.top) == sw.k && better(Scored{built(&cfg, c), f}, sw.top[0]) {
		heap.Push(&sw.top, Scored{Config: built(&cfg, c), F: f})
		if len(sw.top) > sw.k {
			heap.Pop(&sw.top)
		}
	}
}

// raise makes the configuration of cost f the worker's worst if it is;
// it never enters the top list, so a multiset raised ahead of its turn is
// offered again in it.
func (sw *sepWorker) raise(f float64, cfg *Config, c func() Config) {
	if f > sw.best || f == sw.best && better(Scored{built(cfg, c), f}, Scored{sw.bestConfig, sw.best}) {
		sw.best = f
		sw.bestConfig = built(cfg, c)
		sw.global.raise(f)
	}
}

// built builds the configuration once, on first use.
func built(cfg *Config, c func() Config) Config {
	if *cfg == nil {
		*cfg = c()
	}
	return *cfg
}

// better is the total order of the results: higher cost first, ties
// broken by the lexicographically smaller configuration, so that the
// worst case and the top list do not depend on the number of workers or
// their scheduling.
func better(a, b Scored) bool {
	if a.F != b.F {
		return a.F > b.F
	}
	return keyLess(tieKey(a.Config), tieKey(b.Config))
}

// tieKey ranks multisets of equal cost, smaller first: with the 8 corners
// of Delta > 0, (n6, n7, n1+n4+n5, n3, n4, n2, n5), the order in which
// scoreFamily meets them, so that it can tell a whole block of ties
// apart without visiting it; with the 4 corners of Delta = 0 the counts.
func tieKey(c Config) [7]int {
	if len(c) == 8 {
		return [7]int{c[6], c[7], c[1] + c[4] + c[5], c[3], c[4], c[2], c[5]}
	}
	var k [7]int
	copy(k[:], c)
	return k
}

func keyLess(a, b [7]int) bool {
	for j := range a {
		if a[j] != b[j] {
			return a[j] < b[j]
		}
	}
	return false
}

// tiesSettled reports whether the multisets that set the threshold rank
// before every multiset whose key is at least pos: a multiset there then
// matters only if its cost exceeds the threshold. A nearly constant gamma
// gives millions of multisets exactly the same cost, and visiting each to
// compare keys would cost more than the pass.
func (sw *sepWorker) tiesSettled(pos [7]int) bool {
	x := math.Max(sw.best, sw.global.load())
	h := sw.heapThreshold()
	thr := math.Min(x, h)
	// Another worker's best is not known here: its ties are visited.
	if x == thr && (sw.best != x || sw.bestConfig == nil || !keyLess(tieKey(sw.bestConfig), pos)) {
		return false
	}
	// Below a full top list a tie enters only if it ranks before the
	// list's last; below one not full, the floor admits no tie.
	if h == thr && len(sw.top) == sw.k && sw.k > 0 && !keyLess(tieKey(sw.top[0].Config), pos) {
		return false
	}
	return true
}

// scoredHeap is a min-heap on F, holding the costliest configurations seen.
type scoredHeap []Scored

func (h scoredHeap) Len() int { return len(h) }

func (h scoredHeap) Less(i, j int) bool { return better(h[j], h[i]) }

func (h scoredHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *scoredHeap) Push(x any) { *h = append(*h, x.(Scored)) }

func (h *scoredHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
