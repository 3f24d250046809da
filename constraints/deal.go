package constraints

import "sync/atomic"

// dealer hands out the work items 0, ..., n-1 of a parallel loop, each
// once, to whichever worker asks first: which worker takes which item
// depends on timing, so the loops merge their workers' results by a total
// order (better, candidate.before) and nothing they return does.
type dealer struct {
	next  atomic.Int64
	n     int
	order []int // the item dealt j-th is order[j]; nil: item j
}

// dealOrder, set by tests only, gives the order in which a dealer hands
// out n items, so that a test can shuffle the schedule and check that no
// result changes.
var dealOrder func(n int) []int

func newDealer(n int) *dealer {
	d := &dealer{n: n}
	if dealOrder != nil {
		d.order = dealOrder(n)
	}
	return d
}

// take returns the next item, or false once every item is dealt.
func (d *dealer) take() (int, bool) {
	j := int(d.next.Add(1) - 1)
	if j >= d.n {
		return 0, false
	}
	if d.order != nil {
		return d.order[j], true
	}
	return j, true
}
