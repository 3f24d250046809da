package pate

import "sync"

// kept holds the values a pure function made, by its arguments, for the
// next call with the same ones (a memo's tables). What it holds is
// bounded: once a value would take the cost of those held past limit,
// all are forgotten first.
type kept[K comparable, V any] struct {
	mu    sync.Mutex
	made  map[K]V
	held  int
	limit int
}

// get returns the value held for key, and whether there is one.
func (k *kept[K, V]) get(key K) (V, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.made[key]
	return v, ok
}

// put holds v, of the given cost, for key.
func (k *kept[K, V]) put(key K, v V, cost int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.made == nil || k.held+cost > k.limit {
		k.made, k.held = map[K]V{}, 0
	}
	k.made[key] = v
	k.held += cost
}
