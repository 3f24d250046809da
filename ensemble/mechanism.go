package ensemble

import (
	"context"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Mechanism is a release mechanism with its settings: a value of DaRRM,
// OneVoteDaRRM, Subsample, DSub, RR or GNMax on the teachers' 0/1 votes,
// or of GNMax, ConfidentGNMax or LNMax on vote counts of C classes. The
// set is closed: no other package adds one. New builds any of them, and
// Release releases with it; a label file's header states it, and
// MechanismOf reads it back.
type Mechanism interface {
	// Name is the mechanism's name, as a label file's header states it.
	Name() provenance.MechanismName
	// Validate checks the mechanism's own settings, a bad one a
	// *accountant.ParamError that names it; the rules that relate them to
	// the teachers and the votes are New's.
	Validate() error
	// mechanism seals the set.
	mechanism()
}

// Target is the per-query target (m·ε, δ) of a mechanism for private
// teachers, each (ε, Δ)-DP (thesis Problem 3.1.1): M is the privacy
// allowance, in [1, K]; Delta the per-query δ, nil for the thesis'
// default 1-(1-Δ)^m (constraints.DefaultTargetDelta) of the teachers' Δ.
type Target struct {
	M     float64
	Delta *float64
}

// validate checks M and Delta as given: m >= 1, δ in [0, 0.5].
func (t Target) validate() error {
	if !(t.M >= 1) || math.IsInf(t.M, 1) {
		return &accountant.ParamError{Name: "m", Value: t.M, Rule: "must be in [1, K]"}
	}
	if t.Delta != nil {
		return param.GuaranteeDelta("delta", *t.Delta)
	}
	return nil
}

// DaRRM is DaRRM (thesis Algorithm 1) for private teachers: the majority
// with probability gamma(L), a fair coin otherwise, the gamma Gamma gives
// for its problem (K, m, the teachers' (ε, Δ), δ), certified
// exhaustively before anything is released. optimal.Source is the source
// of gamma_opt (from a cache or solved) or of a gamma given.
type DaRRM struct {
	Target
	Gamma GammaSource
}

// A GammaSource gives the noise function that DaRRM and OneVoteDaRRM
// sample, for their problem; optimal.Source is one. The release takes it
// as this interface, so that a release that samples none links no solver.
type GammaSource interface {
	// Gamma returns the gamma for p, which the caller has validated, and
	// names it for a description: "gamma_opt (prior uniform) from the
	// cache", say. A gamma that the source keeps from before (a cached
	// one) it checks by certify, the exhaustive check of the gamma as
	// its user samples it (an error, or a certificate whose Status is not
	// gamma.Certified, refuses it), so that a gamma is certified once
	// per use.
	Gamma(ctx context.Context, p constraints.Problem, certify func(context.Context, constraints.Problem, gamma.Gamma) (gamma.Certificate, error)) (gamma.Gamma, string, error)
}

// OneVoteDaRRM is DaRRM in the one-vote relation: teachers that need not
// be private, on disjoint shares of the data, and a release held to its
// own (Eps, Delta) per query (PATE's relation, as GNMax's); its gamma
// from Gamma as DaRRM's.
type OneVoteDaRRM struct {
	Eps, Delta float64
	Gamma      GammaSource
}

// Subsample is the majority of floor(m) teachers drawn without
// replacement (Algorithm 8).
type Subsample struct {
	Target
}

// DSub is the majority of 2·floor(m)-1 teachers drawn without replacement
// (Theorem 3.5.1), for pure-DP teachers (Δ = 0).
type DSub struct {
	Target
}

// RR is randomized response on the majority (Algorithm 7) with p_const of
// Lemma B.1.1 by Composition (zero: the thesis' composition for the
// teachers' Δ, accountant.RRComposition, with slack
// accountant.DefaultDeltaPrime; a zero DeltaPrime is that default).
type RR struct {
	Target
	Composition accountant.Composition
}

// GNMax is PATE's Gaussian NoisyMax (Papernot et al. 2018), in the
// one-vote relation. On the teachers' 0/1 votes its σ is calibrated to
// the per-query target (M·ε, δ) by Search (Sigma2 zero; the label is
// one bit, of continuous Gaussian noise's distribution); on vote counts
// of C classes it adds discrete Gaussian noise of deviation Sigma2 (> 0)
// to each count (Noise zero: noisymax.DiscreteNoise, which releases draw)
// and its guarantee is at Target.Delta, which it needs (> 0); M is not
// used.
type GNMax struct {
	Target
	Search noisymax.GNMaxSearch
	Sigma2 float64
	Noise  noisymax.Noise
}

// ConfidentGNMax is Confident-GNMax on vote counts of C classes
// (Papernot et al. 2018, Algorithm 1): a threshold step of noise Sigma1 >
// 0 at Threshold, then GNMax of noise Sigma2; its guarantee at the
// per-query Delta > 0. A zero Noise is noisymax.DiscreteNoise.
type ConfidentGNMax struct {
	noisymax.ConfidentGNMax
	Delta float64
}

// LNMax is PATE's Laplace NoisyMax on vote counts of C classes: discrete
// Laplace noise of the Scale on each count.
type LNMax struct {
	noisymax.LNMax
}

// Name returns "darrm".
func (DaRRM) Name() provenance.MechanismName { return "darrm" }

// Name returns "darrm-one-vote".
func (OneVoteDaRRM) Name() provenance.MechanismName { return "darrm-one-vote" }

// Name returns "subsample".
func (Subsample) Name() provenance.MechanismName { return "subsample" }

// Name returns "dsub".
func (DSub) Name() provenance.MechanismName { return "dsub" }

// Name returns "rr".
func (RR) Name() provenance.MechanismName { return "rr" }

// Name returns "gnmax".
func (GNMax) Name() provenance.MechanismName { return "gnmax" }

// Name returns "confident-gnmax".
func (ConfidentGNMax) Name() provenance.MechanismName { return "confident-gnmax" }

// Name returns "lnmax".
func (LNMax) Name() provenance.MechanismName { return "lnmax" }

func (DaRRM) mechanism()          {}
func (OneVoteDaRRM) mechanism()   {}
func (Subsample) mechanism()      {}
func (DSub) mechanism()           {}
func (RR) mechanism()             {}
func (GNMax) mechanism()          {}
func (ConfidentGNMax) mechanism() {}
func (LNMax) mechanism()          {}

// Validate checks m and δ.
func (m DaRRM) Validate() error { return m.Target.validate() }

// Validate checks the release's (ε, δ): ε > 0, δ in [0, 0.5].
func (m OneVoteDaRRM) Validate() error {
	if err := param.Positive("target eps", m.Eps); err != nil {
		return err
	}
	return param.GuaranteeDelta("delta", m.Delta)
}

// Validate checks m and δ.
func (m Subsample) Validate() error { return m.Target.validate() }

// Validate checks m and δ.
func (m DSub) Validate() error { return m.Target.validate() }

// Validate checks m, δ and the composition's slack, when given.
func (m RR) Validate() error {
	if err := m.Target.validate(); err != nil {
		return err
	}
	if m.Composition.DeltaPrime != 0 {
		return m.Composition.Validate()
	}
	return nil
}

// Validate checks m and δ, or σ and δ with Sigma2.
func (m GNMax) Validate() error {
	if m.Sigma2 == 0 {
		return m.Target.validate()
	}
	if err := m.counts().Validate(); err != nil {
		return err
	}
	if m.Delta == nil {
		return &accountant.ParamError{Name: "delta", Value: 0.0, Rule: "must be given: Gaussian noise is not pure DP"}
	}
	return param.ConversionDelta("delta", *m.Delta)
}

// Validate checks the threshold step's σ1 > 0, the parameters' own rules
// (noisymax.ConfidentGNMax.Validate) and δ.
func (m ConfidentGNMax) Validate() error {
	if !(m.Sigma1 > 0) {
		return &accountant.ParamError{Name: "sigma1", Value: m.Sigma1, Rule: "must be > 0"}
	}
	g := m.ConfidentGNMax
	if g.Noise == noisymax.UnsetNoise {
		g.Noise = noisymax.DiscreteNoise
	}
	if err := g.Validate(); err != nil {
		return err
	}
	return param.ConversionDelta("delta", m.Delta)
}

// Validate checks the scale (noisymax.LNMax.Validate).
func (m LNMax) Validate() error { return m.LNMax.Validate() }

// counts returns the parameters of GNMax on C-class counts.
func (m GNMax) counts() noisymax.ConfidentGNMax {
	n := m.Noise
	if n == noisymax.UnsetNoise {
		n = noisymax.DiscreteNoise
	}
	return noisymax.ConfidentGNMax{Sigma2: m.Sigma2, Noise: n}
}

// classes returns the parameters of Confident-GNMax, its noise set.
func (m ConfidentGNMax) classes() noisymax.ConfidentGNMax {
	g := m.ConfidentGNMax
	if g.Noise == noisymax.UnsetNoise {
		g.Noise = noisymax.DiscreteNoise
	}
	return g
}

// mechInfo is a mechanism of the registry: its name, the votes it labels,
// the relation its guarantee is in, and how it is built.
type mechInfo struct {
	name  provenance.MechanismName
	input votefile.Input
	// relation is the neighbouring relation of its guarantee.
	relation accountant.Relation
	// gamma says that it samples a noise function from its GammaSource.
	gamma bool
	// teachersEps says that it is calibrated to the teachers' ε: its
	// target is m·ε (provenance.Stated.Calibrated).
	teachersEps bool
	// construct builds it.
	construct func(ctx context.Context, m Mechanism, g sampledGamma, p constraints.Problem, classes int, opts Options) (Labeler, string, error)
}

// registry holds every mechanism a release can use: one entry each, the
// two-class ones first.
var registry = []mechInfo{
	{name: DaRRM{}.Name(), relation: accountant.PrivateTeachers, gamma: true, teachersEps: true, construct: buildDaRRM},
	{name: Subsample{}.Name(), relation: accountant.PrivateTeachers, teachersEps: true, construct: buildSubsample},
	{name: DSub{}.Name(), relation: accountant.PrivateTeachers, teachersEps: true, construct: buildSubsample},
	{name: RR{}.Name(), relation: accountant.PrivateTeachers, teachersEps: true, construct: buildRR},
	{name: GNMax{}.Name(), relation: accountant.OneVote, teachersEps: true, construct: buildGNMax},
	{name: OneVoteDaRRM{}.Name(), relation: accountant.OneVote, gamma: true, construct: buildOneVoteDaRRM},
	{name: GNMax{}.Name(), input: votefile.ManyClasses, relation: accountant.OneVote, construct: buildClassGNMax},
	{name: ConfidentGNMax{}.Name(), input: votefile.ManyClasses, relation: accountant.OneVote, construct: buildClassGNMax},
	{name: LNMax{}.Name(), input: votefile.ManyClasses, relation: accountant.OneVote, construct: buildLNMax},
}

// Mechanisms returns the names of the mechanisms that label votes of
// kind in, in the order of the registry.
func Mechanisms(in votefile.Input) []provenance.MechanismName {
	var names []provenance.MechanismName
	for _, r := range registry {
		if r.input == in {
			names = append(names, r.name)
		}
	}
	return names
}

// lookup returns the registry's entry of the mechanism name for votes of
// kind in. A name that the registry knows only for the other kind of
// votes is refused saying so.
func lookup(name provenance.MechanismName, in votefile.Input) (*mechInfo, error) {
	var other []votefile.Input
	for i, r := range registry {
		switch {
		case r.name == name && r.input == in:
			return &registry[i], nil
		case r.name == name:
			other = append(other, r.input)
		}
	}
	if len(other) > 0 {
		return nil, fmt.Errorf("mechanism %s labels %v, not %v: for these votes use one of %s", name, other[0], in, provenance.JoinMechanisms(Mechanisms(in), ", "))
	}
	return nil, fmt.Errorf("mechanism %q: must be one of %s (two-class votes) or %s (multi-class votes)", name,
		provenance.JoinMechanisms(Mechanisms(votefile.TwoClass), ", "), provenance.JoinMechanisms(Mechanisms(votefile.ManyClasses), ", "))
}

// votesOf returns the kind of votes m labels when they are of classes
// classes: two-class votes for two classes, unless m labels counts alone
// (ConfidentGNMax, LNMax) or is GNMax given its Sigma2.
func votesOf(m Mechanism, classes int) votefile.Input {
	switch m := m.(type) {
	case ConfidentGNMax, LNMax:
		return votefile.ManyClasses
	case GNMax:
		if m.Sigma2 != 0 {
			return votefile.ManyClasses
		}
	}
	if classes == 2 {
		return votefile.TwoClass
	}
	return votefile.ManyClasses
}

// problemOf returns the problem that m is held to for k teachers, each
// (ε, Δ)-DP as teachers says: the one mapping from a mechanism to its
// problem. A two-class mechanism for private teachers (and two-class
// GNMax, calibrated to their ε) is held to (m·ε, δ), δ the thesis'
// default when not given; darrm-one-vote to its own (ε, δ) in the
// one-vote relation (constraints.NewOneVote); a multi-class one to its
// per-query δ alone.
func problemOf(m Mechanism, k int, teachers accountant.Guarantee) constraints.Problem {
	var t Target
	switch m := m.(type) {
	case DaRRM:
		t = m.Target
	case Subsample:
		t = m.Target
	case DSub:
		t = m.Target
	case RR:
		t = m.Target
	case GNMax:
		if m.Sigma2 != 0 {
			return constraints.Problem{K: k, TargetDelta: deref(m.Delta)}
		}
		t = m.Target
	case OneVoteDaRRM:
		return constraints.NewOneVote(k, m.Eps, m.Delta)
	case ConfidentGNMax:
		return constraints.Problem{K: k, TargetDelta: m.Delta}
	default: // LNMax
		return constraints.Problem{K: k}
	}
	p := constraints.Problem{K: k, M: t.M, Eps: teachers.Eps, Delta: teachers.Delta, TargetDelta: constraints.DefaultTargetDelta(teachers.Delta, t.M)}
	if t.Delta != nil {
		p.TargetDelta = *t.Delta
	}
	return p
}

func deref(x *float64) float64 {
	if x == nil {
		return 0
	}
	return *x
}

// gammaProblem returns the problem whose noise function info samples when
// held to the per-query target of p: p itself in the private-teachers
// relation, in the one-vote relation the release's own problem
// (constraints.NewOneVote), which p already is when its relation is
// one-vote (m = 1).
func (info *mechInfo) gammaProblem(p constraints.Problem) constraints.Problem {
	if info.relation == accountant.OneVote {
		return oneVoteProblem(p)
	}
	return p
}

// oneVoteProblem returns the one-vote problem of the per-query target
// (m·eps, delta) of p.
func oneVoteProblem(p constraints.Problem) constraints.Problem {
	return constraints.NewOneVote(p.K, p.MEps(), p.TargetDelta)
}

// gammaSource returns where m takes its noise function from, for a
// mechanism that samples one.
func gammaSource(m Mechanism) GammaSource {
	switch m := m.(type) {
	case DaRRM:
		return m.Gamma
	case OneVoteDaRRM:
		return m.Gamma
	}
	return nil
}

// New returns the aggregator of m for k teachers voting among classes
// classes, each (ε, Δ)-DP as teachers says (the teachers' guarantee plays
// no part for the mechanisms of the one-vote relation), certified, and
// says what it is in words. A two-class mechanism is held to its
// per-query target (m·ε, δ), a multi-class one takes its settings from m;
// a mechanism that samples a noise function loads it from its Gamma
// source for its problem (a cached gamma is certified once, as the
// aggregator samples it). A δ above 0.5 (param.GuaranteeDelta), under which a
// label says nothing, is refused for every mechanism. An error is a
// *ReleaseError at StepGamma or StepBuild.
func New(ctx context.Context, m Mechanism, k, classes int, teachers accountant.Guarantee, opts Options) (Labeler, string, error) {
	info, err := lookup(m.Name(), votesOf(m, classes))
	if err != nil {
		return nil, "", &ReleaseError{Step: StepBuild, Err: err}
	}
	return info.build(ctx, m, problemOf(m, k, teachers), classes, opts)
}

// sampledGamma is the noise function a mechanism that samples one
// samples, and how its description names it.
type sampledGamma struct {
	g     gamma.Gamma
	words string
}

// build is New for the registry entry info of m held to p: the one path
// from a mechanism to its labeler. Each setting is checked where the
// aggregator is built, with the problem (constraints.Problem.Validate)
// and the teachers and votes it relates to.
func (info *mechInfo) build(ctx context.Context, m Mechanism, p constraints.Problem, classes int, opts Options) (Labeler, string, error) {
	var sg sampledGamma
	if info.gamma {
		src := gammaSource(m)
		if src == nil {
			return nil, "", &ReleaseError{Step: StepGamma, Err: fmt.Errorf("Mechanism.Gamma is not set: %s samples its gamma from a source: optimal.Source, say", info.name)}
		}
		certify := func(ctx context.Context, q constraints.Problem, g gamma.Gamma) (gamma.Certificate, error) {
			_, sampled := newTable(g)
			cert, _, err := certify(ctx, q, sampled, 0, opts)
			if err == nil {
				opts.known = &knownCertificate{p: q, g: sampled, cert: cert}
			}
			return cert, err
		}
		var err error
		if sg.g, sg.words, err = src.Gamma(ctx, info.gammaProblem(p), certify); err != nil {
			return nil, "", &ReleaseError{Step: StepGamma, Err: err}
		}
	}
	agg, label, err := info.newLabeler(ctx, m, sg, p, classes, opts)
	if err != nil {
		return nil, "", &ReleaseError{Step: StepBuild, Err: err}
	}
	return agg, label, nil
}

// newLabeler is build with the gamma g that info samples, if any.
func (info *mechInfo) newLabeler(ctx context.Context, m Mechanism, g sampledGamma, p constraints.Problem, classes int, opts Options) (Labeler, string, error) {
	if err := param.GuaranteeDelta("delta", p.TargetDelta); err != nil {
		return nil, "", err
	}
	if info.input == votefile.TwoClass && classes != 2 {
		return nil, "", fmt.Errorf("%s: %d classes: it labels 0/1 votes", info.name, classes)
	}
	return info.construct(ctx, m, g, p, classes, opts)
}

// built returns what a Target of p is, as built: m and δ.
func built(p constraints.Problem) Target {
	delta := p.TargetDelta
	return Target{M: p.M, Delta: &delta}
}

func buildDaRRM(ctx context.Context, _ Mechanism, g sampledGamma, p constraints.Problem, _ int, opts Options) (Labeler, string, error) {
	d, err := newPrivateDaRRM(ctx, p, g.g, opts)
	if err != nil {
		return nil, "", err
	}
	d.mech = DaRRM{Target: built(p)}
	return d, "DaRRM with " + g.words, nil
}

func buildOneVoteDaRRM(ctx context.Context, _ Mechanism, g sampledGamma, p constraints.Problem, _ int, opts Options) (Labeler, string, error) {
	q := oneVoteProblem(p)
	d, err := newOneVoteDaRRM(ctx, q, g.g, opts)
	if err != nil {
		return nil, "", err
	}
	d.mech = OneVoteDaRRM{Eps: q.Eps, Delta: q.TargetDelta}
	return d, "DaRRM in the one-vote relation with " + g.words, nil
}

func buildRR(ctx context.Context, m Mechanism, _ sampledGamma, p constraints.Problem, _ int, opts Options) (Labeler, string, error) {
	c := m.(RR).Composition
	if c.Method == 0 && c.DeltaPrime == 0 {
		c.Method = accountant.RRComposition(p.Delta)
	}
	if c.DeltaPrime == 0 {
		c.DeltaPrime = accountant.DefaultDeltaPrime
	}
	r, err := newRR(ctx, p, c.Method, c.DeltaPrime, opts)
	if err != nil {
		return nil, "", err
	}
	r.mech = RR{Target: built(p), Composition: c}
	return r, fmt.Sprintf("randomized response with p_const = %.6g (Algorithm 7, Lemma B.1.1, %v composition)", r.PConst(), c.Method), nil
}

func buildSubsample(ctx context.Context, m Mechanism, _ sampledGamma, p constraints.Problem, _ int, opts Options) (Labeler, string, error) {
	newSub, what := newSubsample, "Algorithm 8"
	var mech Mechanism = Subsample{Target: built(p)}
	if _, ok := m.(DSub); ok {
		newSub, what, mech = newDoubleSubsample, "2m-1 of Theorem 3.5.1", DSub{Target: built(p)}
	}
	s, err := newSub(ctx, p, opts)
	if err != nil {
		return nil, "", err
	}
	s.mech = mech
	return s, fmt.Sprintf("subsampling: majority of %d of the %d teachers, drawn without replacement (%s)", s.Size(), p.K, what), nil
}

func buildGNMax(_ context.Context, m Mechanism, _ sampledGamma, p constraints.Problem, _ int, _ Options) (Labeler, string, error) {
	search := m.(GNMax).Search
	g, err := newGNMax(p, search)
	if err != nil {
		return nil, "", err
	}
	sigma, _ := g.Sigma()
	return g, fmt.Sprintf("GNMax: Gaussian noise with sigma = %.4g on the two class counts (%v search)", sigma, search), nil
}

func buildClassGNMax(_ context.Context, m Mechanism, _ sampledGamma, p constraints.Problem, classes int, _ Options) (Labeler, string, error) {
	var g noisymax.ConfidentGNMax
	switch m := m.(type) {
	case GNMax:
		g = m.counts()
	case ConfidentGNMax:
		g = m.classes()
	}
	agg, err := newClassGNMax(g, p.K, classes, p.TargetDelta)
	if err != nil {
		return nil, "", err
	}
	label := fmt.Sprintf("GNMax: discrete Gaussian noise with sigma2 = %g on the %d class counts", g.Sigma2, classes)
	if g.Confident() {
		label = fmt.Sprintf("Confident-GNMax: answered when the largest count plus discrete Gaussian noise (sigma1 = %g) reaches T = %g, then GNMax with sigma2 = %g on the %d class counts", g.Sigma1, g.Threshold, g.Sigma2, classes)
	}
	return agg, label, nil
}

func buildLNMax(_ context.Context, m Mechanism, _ sampledGamma, p constraints.Problem, classes int, _ Options) (Labeler, string, error) {
	l := m.(LNMax).LNMax
	agg, err := newLNMax(l, p.K, classes)
	if err != nil {
		return nil, "", err
	}
	return agg, fmt.Sprintf("LNMax: discrete Laplace noise of scale b = %g on the %d class counts", l.Scale, classes), nil
}

// RelationOf returns the neighbouring relation that m's guarantee is
// stated in: the private teachers' (accountant.PrivateTeachers) for
// DaRRM, Subsample, DSub and RR, the one-vote relation for the others.
func RelationOf(m Mechanism) accountant.Relation {
	if info, err := lookup(m.Name(), votesOf(m, 2)); err == nil {
		return info.relation
	}
	return accountant.OneVote
}
