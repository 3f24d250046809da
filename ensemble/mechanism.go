package ensemble

import (
	"context"
	"fmt"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// MechanismInfo describes a registered mechanism: the votes it labels, the
// relation its guarantee is in, and the settings it takes. Every
// mechanism of the registry goes through the one release path
// (ReleaseTo) and its checks.
type MechanismInfo struct {
	Name  provenance.MechanismName
	Input votefile.Input
	// Relation is the neighbouring relation of its guarantee.
	Relation accountant.Relation
	// PureTeachers says that it needs pure-DP teachers, Δ = 0.
	PureTeachers bool
	// Gamma says that it samples a noise function: gamma_opt of its
	// problem (GammaProblem), or one given (optimal.Source.Given).
	Gamma bool
	// Needs are the settings it cannot go without, Takes those it may be
	// given besides.
	Needs, Takes []Setting
	// Example is the settings of an example release (the rest comes from
	// the votes and their header).
	Example map[Setting]string
	// construct calls the mechanism's constructor.
	construct func(ctx context.Context, m Mechanism, g sampledGamma, p constraints.Problem, classes int, opts Options) (Labeler, string, error)
}

// twoClassSettings are the settings of every two-class mechanism, whose
// per-query target is (m·eps, delta) for teachers (eps, Delta)-DP.
func twoClassSettings(more ...Setting) []Setting {
	return append([]Setting{settingM, settingEps, settingDelta, settingTargetDelta}, more...)
}

// oneVoteSettings are the settings of a two-class mechanism in the
// one-vote relation whose per-query target is the release's own
// (target eps, delta): its teachers need no guarantee.
func oneVoteSettings(more ...Setting) []Setting {
	return append([]Setting{settingTargetEps, settingTargetDelta}, more...)
}

// exampleM is the example of a two-class mechanism in the
// private-teachers relation: m = 3.
var exampleM = map[Setting]string{settingM: "3"}

// registry holds every mechanism a release can use: one entry each.
var registry = []MechanismInfo{
	{Name: provenance.DaRRM, Relation: accountant.PrivateTeachers, Gamma: true, Takes: twoClassSettings(settingPrior, settingGamma, settingNoSolve), Example: exampleM, construct: buildDaRRM},
	{Name: provenance.Subsample, Relation: accountant.PrivateTeachers, Takes: twoClassSettings(), Example: exampleM, construct: buildSubsample},
	{Name: provenance.DSub, Relation: accountant.PrivateTeachers, PureTeachers: true, Takes: twoClassSettings(), Example: exampleM, construct: buildSubsample},
	{Name: provenance.RR, Relation: accountant.PrivateTeachers, Takes: twoClassSettings(settingRRComposition, settingRRDeltaPrime), Example: exampleM, construct: buildRR},
	{Name: provenance.GNMax, Relation: accountant.OneVote, Takes: twoClassSettings(settingGNMaxSearch), Example: exampleM, construct: buildGNMax},
	{Name: provenance.DaRRMOneVote, Relation: accountant.OneVote, Gamma: true, Takes: oneVoteSettings(settingPrior, settingGamma, settingNoSolve),
		Example: map[Setting]string{settingTargetEps: "0.3", settingTargetDelta: "1e-5"}, construct: buildOneVoteDaRRM},
	{Name: provenance.GNMax, Input: votefile.ManyClasses, Relation: accountant.OneVote, Needs: []Setting{settingSigma2, settingTargetDelta},
		Example: map[Setting]string{settingSigma2: "40", settingTargetDelta: "1e-5"}, construct: buildClassGNMax},
	{Name: provenance.ConfidentGNMax, Input: votefile.ManyClasses, Relation: accountant.OneVote, Needs: []Setting{settingThreshold, settingSigma1, settingSigma2, settingTargetDelta},
		Example: map[Setting]string{settingThreshold: "200", settingSigma1: "150", settingSigma2: "40", settingTargetDelta: "1e-5"}, construct: buildClassGNMax},
	{Name: provenance.LNMax, Input: votefile.ManyClasses, Relation: accountant.OneVote, Needs: []Setting{settingLaplaceScale},
		Example: map[Setting]string{settingLaplaceScale: "20"}, construct: buildLNMax},
}

// GammaProblem returns the problem whose noise function info samples when
// held to the per-query target (m·eps, delta) of p: p itself in the
// private-teachers relation, in the one-vote relation the release's own
// problem (constraints.NewOneVote), which p already is when its relation
// is one-vote (m = 1).
func (info MechanismInfo) GammaProblem(p constraints.Problem) constraints.Problem {
	if info.Relation == accountant.OneVote {
		return oneVoteProblem(p)
	}
	return p
}

// oneVoteProblem returns the one-vote problem of the per-query target
// (m·eps, delta) of p.
func oneVoteProblem(p constraints.Problem) constraints.Problem {
	return constraints.NewOneVote(p.K, p.MEps(), p.TargetDelta)
}

// OwnTarget reports whether info's per-query target is the release's own
// (eps, delta) in the one-vote relation, which it takes as
// its setting target-eps (darrm-one-vote), rather than m·eps of its teachers'
// guarantee (eps, Delta).
func (info MechanismInfo) OwnTarget() bool { return slices.Contains(info.Takes, settingTargetEps) }

// OneVoteTarget states the problem of a release whose per-query target
// is its own (eps, delta) in the one-vote relation (MechanismInfo.OwnTarget,
// or darrm solve --relation one-vote): the relation, the release's eps,
// the one value of eps if any is given, and delta if given. Resolved as a
// one-vote problem (constraints.NewOneVote), the teachers' m and Delta are 1 and 0, which
// the relation does not use, and a delta not given is 0: pure. More than
// one eps is a *accountant.SettingError naming target-eps: a release has
// one.
func OneVoteTarget(eps []float64, delta *float64) (gamma.Stated, error) {
	rel := accountant.OneVote
	s := gamma.Stated{Relation: &rel, TargetDelta: delta}
	switch len(eps) {
	case 0:
	case 1:
		s.Eps = &eps[0]
	default:
		return s, &accountant.SettingError{Name: "target-eps", Value: fmt.Sprintf("%d values", len(eps)), Rule: "give the one eps of each release"}
	}
	return s, nil
}

// Registry returns the registered mechanisms that keep keeps, every one
// for a nil keep, in the registry's order: the two-class ones first.
// Filters name e.g. those of the votes of one kind, or those that sample
// a noise function (MechanismInfo.Gamma).
func Registry(keep func(MechanismInfo) bool) []MechanismInfo {
	var infos []MechanismInfo
	for _, r := range registry {
		if keep == nil || keep(r) {
			infos = append(infos, r)
		}
	}
	return infos
}

// namesFor returns the names of the mechanisms for votes of kind in.
func namesFor(in votefile.Input) []provenance.MechanismName {
	var names []provenance.MechanismName
	for _, r := range Registry(func(r MechanismInfo) bool { return r.Input == in }) {
		names = append(names, r.Name)
	}
	return names
}

// LookupMechanism returns the mechanism name for votes of kind in. A name
// that the registry knows only for the other kind of votes is refused
// saying so.
func LookupMechanism(name provenance.MechanismName, in votefile.Input) (MechanismInfo, error) {
	var other []votefile.Input
	for _, r := range registry {
		switch {
		case r.Name == name && r.Input == in:
			return r, nil
		case r.Name == name:
			other = append(other, r.Input)
		}
	}
	if len(other) > 0 {
		return MechanismInfo{}, fmt.Errorf("mechanism %s labels %v, not %v: for these votes use one of %s", name, other[0], in, provenance.JoinMechanisms(namesFor(in), ", "))
	}
	return MechanismInfo{}, fmt.Errorf("mechanism %q: must be one of %s (two-class votes) or %s (multi-class votes)", name,
		provenance.JoinMechanisms(namesFor(votefile.TwoClass), ", "), provenance.JoinMechanisms(namesFor(votefile.ManyClasses), ", "))
}

// SettingUse is a setting that the caller gave a mechanism that does not
// take it, or one that the mechanism needs and did not get
// (MechanismInfo.CheckSettings).
type SettingUse struct {
	Setting Setting
	// Missing is true for a setting the mechanism needs and did not get;
	// otherwise the setting was given and the mechanism does not take it.
	Missing bool
	// Takes are the settings the mechanism takes, those it needs first.
	Takes []Setting
	// TakenBy names the mechanisms that take the setting, and Input is the
	// kind of votes of the first registered one: not the mechanism's when
	// the setting belongs to mechanisms of the other kind of votes.
	TakenBy []provenance.MechanismName
	Input   votefile.Input
}

// CheckSettings returns the first setting of a registered mechanism that
// the caller gave and info does not take, else the first that info needs
// and neither the caller nor stated (a label file's header) gives; nil
// when there is none. given says whether the caller gave the setting,
// and whether the caller has it at all: a setting it has no way to give
// is never asked for.
func (info MechanismInfo) CheckSettings(given func(Setting) (set, known bool), stated provenance.Settings) *SettingUse {
	takes := info.settings()
	for _, r := range registry {
		for _, s := range r.settings() {
			if set, _ := given(s); !set || slices.Contains(takes, s) {
				continue
			}
			u := &SettingUse{Setting: s, Takes: takes, Input: r.Input}
			for _, o := range registry {
				if o.takes(s) && !slices.Contains(u.TakenBy, o.Name) {
					u.TakenBy = append(u.TakenBy, o.Name)
				}
			}
			return u
		}
	}
	for _, s := range info.Needs {
		if set, known := given(s); known && !set && !s.statedIn(stated) {
			return &SettingUse{Setting: s, Missing: true, Takes: takes}
		}
	}
	return nil
}

// settings returns the settings info takes, those it needs first.
func (info MechanismInfo) settings() []Setting {
	return append(slices.Clone(info.Needs), info.Takes...)
}

// takes reports whether info needs or takes s.
func (info MechanismInfo) takes(s Setting) bool { return slices.Contains(info.settings(), s) }

// Mechanism names an aggregator and holds the settings of the one it
// names; the others are ignored. A mechanism that samples a noise
// function (MechanismInfo.Gamma: darrm, darrm-one-vote) takes it from an
// optimal.Source when it is built (Build).
type Mechanism struct {
	// Name is a registered name; Input says which mechanism of that name
	// (gnmax labels either kind of votes).
	Name  provenance.MechanismName
	Input votefile.Input
	// RR is the composition that gives rr's p_const (NewRR).
	RR accountant.Composition
	// GNMaxSearch picks two-class gnmax's sigma (NewGNMax).
	GNMaxSearch noisymax.GNMaxSearch
	// GNMax holds the multi-class gnmax's sigma2 and confident-gnmax's
	// threshold, sigma1 and sigma2 (the noise is discrete); LNMax holds
	// lnmax's scale.
	GNMax noisymax.ConfidentGNMax
	LNMax noisymax.LNMax
}

// sampledGamma is the noise function a mechanism that samples one
// samples, and how its description names it.
type sampledGamma struct {
	g     gamma.Gamma
	words string
}

// Build returns the aggregator m names for p.K teachers voting among
// classes classes, certified, and says what it is in words; for a
// mechanism that samples a noise function, its gamma is loaded from src
// for its problem (MechanismInfo.GammaProblem) and returned. A gamma
// from a cache is certified once, as the aggregator samples it, when the
// cache entry is checked (optimal.Source.Certify); a src without Given
// or Prior takes the uniform prior (gamma.UniformPrior). A two-class
// mechanism is held to the per-query target (m·eps, delta) of p, a
// multi-class one takes its settings from m and delta from
// p.TargetDelta. A delta above accountant.MaxDelta, under which a label
// says nothing, is refused for every mechanism. An error is a
// *ReleaseError at step "gamma" or "build".
func (m Mechanism) Build(ctx context.Context, src optimal.Source, p constraints.Problem, classes int, opts Options) (Labeler, string, optimal.Loaded, error) {
	info, err := LookupMechanism(m.Name, m.Input)
	if err != nil {
		return nil, "", optimal.Loaded{}, &ReleaseError{Step: stepBuild, Err: err}
	}
	return info.build(ctx, m, src, p, classes, opts)
}

// build is Build for the registry entry info of m: the one path from a
// resolved mechanism to its labeler.
func (info MechanismInfo) build(ctx context.Context, m Mechanism, src optimal.Source, p constraints.Problem, classes int, opts Options) (Labeler, string, optimal.Loaded, error) {
	var l optimal.Loaded
	var err error
	var sg sampledGamma
	if info.Gamma {
		if src.Given == nil && src.Prior.String() == "" {
			src.Prior = gamma.UniformPrior()
		}
		src.Certify = func(ctx context.Context, q constraints.Problem, g gamma.Gamma) (gamma.Certificate, error) {
			_, sampled := newTable(g)
			cert, _, err := certify(ctx, q, sampled, 0, opts)
			if err == nil {
				opts.known = &knownCertificate{p: q, g: sampled, cert: cert}
			}
			return cert, err
		}
		if l, err = src.Load(ctx, info.GammaProblem(p)); err != nil {
			return nil, "", l, &ReleaseError{Step: stepGamma, Err: err}
		}
		sg = sampledGamma{g: l.Gamma, words: gammaWords(src, l.Origin)}
	}
	agg, label, err := info.newLabeler(ctx, m, sg, p, classes, opts)
	if err != nil {
		return nil, "", l, &ReleaseError{Step: stepBuild, Err: err}
	}
	return agg, label, l, nil
}

// gammaWords names the gamma that src gave from origin in a description:
// src.Name if set, else by where it came from.
func gammaWords(src optimal.Source, origin optimal.Origin) string {
	switch {
	case src.Name != "":
		return src.Name
	case origin == optimal.FromCache:
		return fmt.Sprintf("gamma_opt (prior %s) from the cache", src.Prior)
	case origin == optimal.Solved:
		return fmt.Sprintf("gamma_opt (prior %s), solved now", src.Prior)
	}
	return "a gamma given"
}

// newLabeler is build with the gamma g that info samples, if any.
func (info MechanismInfo) newLabeler(ctx context.Context, m Mechanism, g sampledGamma, p constraints.Problem, classes int, opts Options) (Labeler, string, error) {
	if err := accountant.CheckDelta("delta", p.TargetDelta); err != nil {
		return nil, "", err
	}
	if info.Input == votefile.TwoClass && classes != 2 {
		return nil, "", fmt.Errorf("%s: %d classes: it labels 0/1 votes", info.Name, classes)
	}
	return info.construct(ctx, m, g, p, classes, opts)
}

func buildDaRRM(ctx context.Context, _ Mechanism, g sampledGamma, p constraints.Problem, _ int, opts Options) (Labeler, string, error) {
	d, err := NewDaRRM(ctx, p, g.g, opts)
	if err != nil {
		return nil, "", err
	}
	return d, "DaRRM with " + g.words, nil
}

func buildOneVoteDaRRM(ctx context.Context, _ Mechanism, g sampledGamma, p constraints.Problem, _ int, opts Options) (Labeler, string, error) {
	d, err := NewOneVoteDaRRM(ctx, oneVoteProblem(p), g.g, opts)
	if err != nil {
		return nil, "", err
	}
	return d, "DaRRM in the one-vote relation with " + g.words, nil
}

func buildRR(ctx context.Context, m Mechanism, _ sampledGamma, p constraints.Problem, _ int, opts Options) (Labeler, string, error) {
	r, err := newRR(ctx, p, m.RR.Method, m.RR.DeltaPrime, opts)
	if err != nil {
		return nil, "", err
	}
	return r, fmt.Sprintf("randomized response with p_const = %.6g (Algorithm 7, Lemma B.1.1, %v composition)", r.PConst(), m.RR.Method), nil
}

func buildSubsample(ctx context.Context, m Mechanism, _ sampledGamma, p constraints.Problem, _ int, opts Options) (Labeler, string, error) {
	newSub, what := newSubsample, "Algorithm 8"
	if m.Name == provenance.DSub {
		newSub, what = newDoubleSubsample, "2m-1 of Theorem 3.5.1"
	}
	s, err := newSub(ctx, p, opts)
	if err != nil {
		return nil, "", err
	}
	return s, fmt.Sprintf("subsampling: majority of %d of the %d teachers, drawn without replacement (%s)", s.Size(), p.K, what), nil
}

func buildGNMax(_ context.Context, m Mechanism, _ sampledGamma, p constraints.Problem, _ int, _ Options) (Labeler, string, error) {
	g, err := newGNMax(p, m.GNMaxSearch)
	if err != nil {
		return nil, "", err
	}
	sigma, _ := g.Sigma()
	return g, fmt.Sprintf("GNMax: Gaussian noise with sigma = %.4g on the two class counts (%v search)", sigma, m.GNMaxSearch), nil
}

func buildClassGNMax(_ context.Context, m Mechanism, _ sampledGamma, p constraints.Problem, classes int, _ Options) (Labeler, string, error) {
	g := m.GNMax
	if confident := m.Name == provenance.ConfidentGNMax; confident != g.Confident() {
		return nil, "", fmt.Errorf("%s: threshold %v, sigma1 %v: confident-gnmax has the threshold step (sigma1 > 0), gnmax none", m.Name, g.Threshold, g.Sigma1)
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
	agg, err := newLNMax(m.LNMax, p.K, classes)
	if err != nil {
		return nil, "", err
	}
	return agg, fmt.Sprintf("LNMax: discrete Laplace noise of scale b = %g on the %d class counts", m.LNMax.Scale, classes), nil
}
