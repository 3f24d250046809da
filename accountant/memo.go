package accountant

import "sync"

// Memo keeps what darrm's computations made, for the calls that ask the
// same again: the accountant's compositions of one-bit pairs and their
// answers, its sums of discrete Gaussians and their Gaussian-DP
// certificates, the sampled Gaussian's Rényi curves, and what a package
// above the accountant keeps in it (Keep). A release's count search, its
// total, its totals and a ledger's charges ask the same questions of the
// same step, and a plan asks them again at each of its checks: each
// answer costs a transform or a search. Every answer is the one computed
// without a Memo, bit for bit.
//
// A Memo is its caller's, in the manner of apd's Context: a command holds
// one for its run, a program one for as long as what it keeps is worth
// its memory (each kind is bounded). A nil *Memo keeps nothing from one
// call to the next: each call then keeps what it made for itself alone,
// as a search asks the same again within one call. The zero Memo keeps
// in memory.
//
// With Dir set, the answers of one-bit compositions are kept on disk
// too: a Memo reads those of a set of pairs from Dir when it first
// composes them, and Save writes those it added, so that a release or a
// plan asked again in another process composes nothing. Each file is
// read only when its HMAC-SHA256 under Secret (at least 16 bytes, which
// Dir must not hold: darrm keeps its own in its private state folder) is
// the one the Memo computes: an answer it did not compute, altered or
// forged in a shared folder, would let a release claim a count its
// budget does not allow. Set Dir and Secret before the Memo's first use.
//
// A Memo is safe for concurrent use. It must not be copied after its
// first use.
type Memo struct {
	// Dir is the folder of the one-bit answers kept on disk; "" keeps
	// them in memory only.
	Dir string
	// Secret authenticates the files of Dir.
	Secret []byte

	bits       recentBits
	dgSums     recentDGSums
	dgCerts    dgCertTable
	sgm        recentSGMCurves
	transforms transformPool
	kept       keptAbove
}

// forCall returns m, or, when m is nil, a Memo of the one call that asks:
// what it keeps is forgotten when the call returns.
func (m *Memo) forCall() *Memo {
	if m == nil {
		return new(Memo)
	}
	return m
}

// keptAbove is what the packages above the accountant keep in a Memo,
// by their keys.
type keptAbove struct {
	sync.Mutex
	by map[any]any
}

// Keep returns what m keeps under key, made by newTable at the first call
// with key; a nil m keeps nothing and returns newTable(). It is how a
// package above the accountant keeps what it made in its caller's Memo
// (ensemble, gamma and pate do): key is a value of a type of that
// package's own, as a context.Context's keys are, so that no other
// package's collides, and newTable returns an empty table, safe for
// concurrent use and bounded, which the package then fills. newTable is
// called with m's lock held: it must not call m.
func (m *Memo) Keep(key any, newTable func() any) any {
	if m == nil {
		return newTable()
	}
	m.kept.Lock()
	defer m.kept.Unlock()
	v, ok := m.kept.by[key]
	if !ok {
		if m.kept.by == nil {
			m.kept.by = map[any]any{}
		}
		v = newTable()
		m.kept.by[key] = v
	}
	return v
}

// pool returns the transforms m keeps for reuse; nil when m is nil.
func (m *Memo) pool() *transformPool {
	if m == nil {
		return nil
	}
	return &m.transforms
}
