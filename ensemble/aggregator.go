package ensemble

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/tally"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Labeler is what a release draws its labels from: an Aggregator (0/1
// votes of two classes) or a multi-class aggregator (vote counts of C classes).
// ReleaseTo takes either.
type Labeler interface {
	// Name is the mechanism's short name, as the registry knows it
	// (Registry.Lookup).
	Name() provenance.MechanismName
	// K is the number of teachers, Classes the number of classes.
	K() int
	Classes() int
	// Privacy is the guarantee of one released label and its
	// justification.
	Privacy() Privacy
	// Mechanism is the mechanism with the settings it was built with (a
	// sigma calibrated, a default delta), as a label file states them; nil
	// for an aggregator that is no mechanism of release.
	Mechanism() Mechanism
	// Answer returns the label of query q, drawing from src, and whether
	// q was answered (the label is -1 when a threshold step withheld it).
	// Votes it cannot count (not one per teacher, a vote other than 0
	// and 1, counts of the wrong length or sum) are an error that says
	// why, and release nothing.
	Answer(q *votefile.Query, src *noise.Source) (label int, answered bool, err error)
}

// Aggregator releases one private label per query from the 0/1 votes of K
// teachers.
type Aggregator interface {
	Labeler
	// Gamma is the noise function of the DaRRM that has the same output
	// distribution, as sampled (Lemmas 3.4.1 and 3.4.3).
	Gamma() gamma.Gamma
	// Aggregate returns the private label of one query from the K votes,
	// each the byte value 0 or 1 (not the characters '0' and '1'); any
	// other input is an error that names the vote at fault, and releases
	// nothing. Randomness comes from src.
	Aggregate(votes []byte, src *noise.Source) (byte, error)
}

// twoClass reports whether agg labels 0/1 votes (an Aggregator) rather
// than multi-class counts.
func twoClass(agg Labeler) bool {
	_, ok := agg.(Aggregator)
	return ok
}

// Privacy is the per-query guarantee of an aggregator and the argument
// behind it.
type Privacy struct {
	// Spend describes one released label as the accountant composes it:
	// its guarantee and, when the mechanism has one beyond it, its
	// privacy curve (a GaussianSpend: classGNMax; a OneBitSpend: DaRRM,
	// RR, subsampling and GNMax on two classes; a LaplaceSpend: LNMax);
	// else an ApproxSpend, or a PureSpend when δ = 0
	// (accountant.ApproxStep).
	accountant.Spend
	// Source is the argument that proves the guarantee, in words.
	Source string
	// Certificate is the exhaustive certificate behind the guarantee (Lemma
	// 3.4.4 over every corner multiset), or nil when it rests on another
	// argument.
	Certificate *gamma.Certificate
	// Relation is the neighbouring relation the guarantee is stated for.
	// Guarantees for different relations must not be composed or charged
	// to one budget.
	Relation accountant.Relation
	// Teachers is the (ε, Δ) of each teacher that the guarantee assumes
	// (GNMax: the ε its target m·ε is a multiple of). Release checks it
	// against the vote file's header.
	Teachers accountant.Guarantee
	// Profile holds further points of the label's exact privacy profile,
	// each a guarantee (ε_i, δ_i) it also meets in Relation with
	// ε_i >= Eps and δ_i < Delta, when the mechanism knows them
	// (darrm-one-vote, GNMax); totals compose them
	// (accountant.ComposeProfile).
	Profile []accountant.Guarantee
	// CurveMissing says why a mechanism that has a curve beyond its
	// guarantee is described by its guarantee alone (a private-teacher
	// label's pairs at more corner multisets than are listed), so that
	// totals of it say that the exact composition was out of reach
	// (accountant.Account.CurveMissing).
	CurveMissing string
}

// Account returns the accountant's account of labels of privacy p from
// the teachers b binds: the per-query description and profile, the
// teachers' post-processing cap at the slack deltaPrime
// (provenance.Binding.Cap), or in words why there is none, the slack of
// the analysis totals; no budget, and no labels yet (Steps 0).
func (p Privacy) Account(b provenance.Binding, deltaPrime float64) (accountant.Account, string, error) {
	acc := accountant.Account{Step: p.Spend, Profile: p.Profile, DeltaPrime: deltaPrime, CurveMissing: p.CurveMissing}
	if err := param.DeltaPrime(deltaPrime); err != nil {
		return acc, "", err
	}
	c, note, err := b.Cap(deltaPrime)
	if err != nil {
		return acc, "", fmt.Errorf("teachers' cap: %w", err)
	}
	acc.Cap = c
	return acc, note, nil
}

// Options tune the construction of aggregators.
type Options struct {
	// Workers is the number of goroutines of the certificate; 0 means GOMAXPROCS.
	Workers int
	// Progress, if set, receives the progress of the certificate in [0, 1].
	Progress func(float64)
	// Memo keeps what is computed for the calls that ask again
	// (accountant.Memo): the certificates of the gammas certified, a
	// label's pairs, and, for Release, the accountant's compositions of
	// the labels. nil keeps nothing from one call to the next.
	Memo *accountant.Memo
	// known is a certificate that Release computed as it loaded the gamma
	// from a cache (optimal.Source.Certify); only this package sets it, so
	// no caller can hand an aggregator a certificate it did not compute.
	known *knownCertificate
	// verify computes the exhaustive certificate: gamma.Verify when nil.
	// Tests count certificates through it.
	verify func(context.Context, constraints.Problem, gamma.Gamma, gamma.VerifyOptions) (gamma.Certificate, error)
}

// knownCertificate is the certificate cert of exactly the gamma g (as
// sampled) for problem p.
type knownCertificate struct {
	p    constraints.Problem
	g    gamma.Gamma
	cert gamma.Certificate
}

// table samples DaRRM_gamma: it holds the thresholds t(l) = floor(gamma(l)·2^53)
// and releases the majority when a 53-bit uniform integer is below t(L),
// a fair coin otherwise. Both come from one 64-bit word: its top 53 bits
// and its lowest bit are independent.
type table struct {
	k    int
	t    []uint64
	mech Mechanism
}

// newTable returns the sampler of g and the noise function it realises,
// gamma~(l) = t(l)/2^53 <= gamma(l), which is exact in float64 and is what
// must be certified.
func newTable(g gamma.Gamma) (table, gamma.Gamma) {
	tb := table{k: g.K(), t: make([]uint64, len(g))}
	real := make(gamma.Gamma, len(g))
	for l, v := range g {
		tb.t[l] = discrete.Threshold(v)
		real[l] = discrete.Realised(tb.t[l])
	}
	return tb, real
}

// Classes returns 2: the votes are 0 or 1.
func (tb *table) Classes() int { return 2 }

// Mechanism returns the mechanism as built.
func (tb *table) Mechanism() Mechanism { return tb.mech }

// Answer releases the label of q from its votes; every query is answered.
func (tb *table) Answer(q *votefile.Query, src *noise.Source) (int, bool, error) {
	l, err := tally.Votes(tb.k, q.Votes)
	if err != nil {
		return -1, false, err
	}
	return int(tb.release(l, src)), true, nil
}

func (tb *table) release(l int, src *noise.Source) byte {
	w := src.Uint64()
	if w>>11 < tb.t[l] {
		if 2*l > tb.k {
			return 1
		}
		return 0
	}
	return byte(w & 1)
}

// probOne returns Pr[label = 1] of DaRRM_g when l of the K teachers vote 1
// (0 <= l <= K, as an index of g):
// (1 + g(l))/2 if l is a 1-majority, (1 - g(l))/2 otherwise (Algorithm 1).
func probOne(g gamma.Gamma, l int) float64 {
	if 2*l > g.K() {
		return (1 + g[l]) / 2
	}
	return (1 - g[l]) / 2
}

// certify runs the exhaustive certificate of g for p and reports whether
// it holds with room to spare: max f + rounding bound + slack <= budget.
// slack covers the difference between g and the noise function actually
// sampled, when they differ (0 when g is sampled exactly).
//
// A certificate that opts already holds for exactly p and g is not
// computed again: Release certifies a cached gamma once, as it loads it.
// Nor is one that opts.Memo keeps (certificatesIn): a plan builds the
// aggregator of its answer at its last probe, again to count what the
// budget buys there, and again to simulate or measure it.
func certify(ctx context.Context, p constraints.Problem, g gamma.Gamma, slack float64, opts Options) (gamma.Certificate, bool, error) {
	var cert gamma.Certificate
	if k := opts.known; k != nil && k.p == p && slices.Equal(k.g, g) {
		cert = k.cert
	} else if k, ok := certificatesIn(opts.Memo).find(p, g); ok {
		cert = k.cert
	} else {
		verify := opts.verify
		if verify == nil {
			verify = gamma.Verify
		}
		var err error
		if cert, err = verify(ctx, p, g, gamma.VerifyOptions{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
			return gamma.Certificate{}, false, err
		}
		certificatesIn(opts.Memo).add(knownCertificate{p: p, g: slices.Clone(g), cert: cert})
	}
	ok := cert.Status == gamma.Certified && cert.MaxF+cert.ErrBound+slack <= cert.Budget
	return cert, ok, nil
}

// certificatesKey is the key of the certificates a Memo keeps for this
// package.
type certificatesKey struct{}

// certificatesIn returns the certificates m keeps, the last computed,
// most recent first: a certificate is a function of the problem and the
// gamma alone, and each is kept with a copy of its gamma. A nil m keeps
// none.
func certificatesIn(m *accountant.Memo) *certificates {
	return m.Keep(certificatesKey{}, func() any { return new(certificates) }).(*certificates)
}

// maxCertified bounds the certificates kept.
const maxCertified = 8

// certificates are certificates computed, most recent first.
type certificates struct {
	mu   sync.Mutex
	made []knownCertificate
}

// find returns the certificate kept of exactly p and g, if any.
func (c *certificates) find(p constraints.Problem, g gamma.Gamma) (knownCertificate, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, k := range c.made {
		if k.p == p && slices.Equal(k.g, g) {
			copy(c.made[1:i+1], c.made[:i])
			c.made[0] = k
			return k, true
		}
	}
	return knownCertificate{}, false
}

// add keeps k.
func (c *certificates) add(k knownCertificate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.made = append([]knownCertificate{k}, c.made[:min(len(c.made), maxCertified-1)]...)
}

// teachers is the guarantee of each teacher that an aggregator of p
// assumes.
func teachers(p constraints.Problem) accountant.Guarantee {
	return accountant.Guarantee{Eps: p.Eps, Delta: p.Delta}
}

// target is the per-query guarantee every aggregator of p is held to.
func target(p constraints.Problem) accountant.Guarantee {
	return accountant.Guarantee{Eps: p.MEps(), Delta: p.TargetDelta}
}
