package constraints

import (
	"fmt"
	"math/rand/v2"
)

// SetDealOrder makes every parallel loop of the package hand out its n
// work items in the order order(n), until restore is called: a test
// shuffles the schedule with it.
func SetDealOrder(order func(n int) []int) (restore func()) {
	old := dealOrder
	dealOrder = order
	return func() { dealOrder = old }
}

// Schedule is one way to run a parallel loop: its worker count and, when
// Seed is not 0, its items dealt in a random order drawn from Seed.
type Schedule struct {
	Workers int
	Seed    uint64
}

// Schedules are the ways tests run the search and the separation, whose
// results must agree bit for bit: one, two and eight workers in the
// order of the items, and shuffled.
var Schedules = []Schedule{{1, 0}, {2, 0}, {8, 0}, {1, 1}, {2, 2}, {8, 3}}

func (s Schedule) String() string {
	if s.Seed == 0 {
		return fmt.Sprintf("%d workers", s.Workers)
	}
	return fmt.Sprintf("%d workers, items shuffled (seed %d)", s.Workers, s.Seed)
}

// Deal makes the parallel loops deal their items as s says until restore
// is called.
func (s Schedule) Deal() (restore func()) {
	if s.Seed == 0 {
		return SetDealOrder(nil)
	}
	rng := rand.New(rand.NewPCG(s.Seed, 71))
	return SetDealOrder(func(n int) []int { return rng.Perm(n) })
}
