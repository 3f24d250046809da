package ensemble

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Mechanism is a release mechanism with its settings: a value of DaRRM,
// OneVoteDaRRM, Subsample, DSub, RR or GNMax on the teachers' 0/1 votes,
// or of GNMax, ConfidentGNMax, LNMax or ProgressiveGNMax on vote counts
// of C classes. The
// set is closed: no other package adds one. New builds any of them, and
// Release releases with it; a label file's header states it, and
// MechanismOf reads it back.
//
// Each mechanism is one value whose methods say all a release asks of it,
// in its own file: the votes it labels, the relation of its guarantee,
// the settings it needs, how its labeler is built, and what a label
// file's header states of it. A mechanism's JSON (encoding/json) is the
// object of its settings that such a header states, {} for one whose
// guarantee says all. A setting's field tag `flag:"name"` names the
// command-line flag that sets it, as darrm names it (first, when several
// flags together give it), and `votes:"two-class"` or `votes:"multi-class"`
// the one kind of votes it is a setting on: a program binds its flags by
// them. Adding one is its file, its test and its line in mechanisms.
type Mechanism interface {
	// Name is the mechanism's name, as a label file's header states it.
	Name() provenance.MechanismName
	// Validate checks the mechanism's own settings, a bad one a
	// parameter error that names it; the rules that relate them to
	// the teachers and the votes are New's.
	Validate() error

	// Relation is the neighbouring relation that its guarantee is stated
	// in: the private teachers' (accountant.PrivateTeachers) for DaRRM,
	// Subsample, DSub and RR, the one-vote relation for the others.
	Relation() accountant.Relation

	// inputs returns the kinds of votes it labels, two-class first.
	inputs() []votefile.Input
	// calibrated reports whether, on votes of kind in, its target is
	// m·ε of the teachers' ε (provenance.Stated.Calibrated): a release
	// then needs the teachers' guarantee.
	calibrated(in votefile.Input) bool
	// unsetSetting returns the error of a setting left at a zero value
	// that has no default on votes of kind in (unset), if any.
	unsetSetting(in votefile.Input) error
	// labeler builds its labeler for b and says what it is in words.
	labeler(ctx context.Context, b *build) (Labeler, string, error)
	// settings returns its settings that a label file's header states,
	// a value whose JSON is their object (nil for none: its guarantee
	// says all); fromHeader returns the mechanism of the header h, with
	// the settings it states (labelHeader.decode).
	settings() any
	fromHeader(h *labelHeader) (Mechanism, error)
	// planned returns the setting a plan chooses for it on votes of
	// kind in and the mechanism with that setting v (Planned).
	planned(in votefile.Input) (setting string, with func(v float64) Mechanism)
}

// mechanisms are the mechanisms a release can use, the two-class ones
// first, each at its defaults: a mechanism's one registration.
var mechanisms = []Mechanism{DaRRM{Target: defaultTarget}, Subsample{defaultTarget}, DSub{defaultTarget}, RR{Target: defaultTarget},
	GNMax{Target: defaultTarget}, OneVoteDaRRM{}, ConfidentGNMax{}, LNMax{}, ProgressiveGNMax{}}

// defaultTarget is a Target at its defaults: m unset, the default δ.
var defaultTarget = Target{}

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

// twoClassVotes and manyClassVotes are the inputs of a mechanism of 0/1 votes
// and of one of vote counts.
var (
	twoClassVotes  = []votefile.Input{votefile.TwoClass}
	manyClassVotes = []votefile.Input{votefile.ManyClasses}
)

// Target is the per-query target (m·ε, δ) of a mechanism for private
// teachers, each (ε, Δ)-DP (thesis Problem 3.1.1): M is the privacy
// allowance, in [1, K]; Delta the per-query δ, 0 for the thesis' default
// 1-(1-Δ)^m of the teachers' Δ (constraints.DefaultTargetDelta). A δ
// given is at least the teachers' Δ, so 0 is no other target: the
// default of teachers with Δ = 0 is 0 itself. (GNMax on vote counts holds
// its per-query δ here too, without M: there it has no default.)
type Target struct {
	M     float64 `json:"-" flag:"m" votes:"two-class"`
	Delta float64 `json:"-" flag:"delta"`
}

// validate checks M and Delta as given: m >= 1, δ in [0, 0.5] (0: the
// default).
func (t Target) validate() error {
	if !(t.M >= 1) || math.IsInf(t.M, 1) {
		return &param.Error{Name: "m", Value: t.M, Rule: "must be in [1, K]"}
	}
	return param.GuaranteeDelta("delta", t.Delta)
}

// needM refuses a target without its allowance m, which has no default.
func (t Target) needM() error {
	if t.M == 0 {
		return unset("Mechanism.M", "the privacy allowance m in [1, K]: each label is (m·eps, delta)-DP")
	}
	return nil
}

// problem returns the problem that t is held to for k teachers, each
// (ε, Δ)-DP as teachers says: (m·ε, δ), m in [1, K] (param.M) and δ the
// thesis' default when not given (0), which must be in [0, 0.5]
// (param.GuaranteeDelta); a δ given below the teachers' Δ is refused
// naming Target.Delta, the field the caller set.
func (t Target) problem(k int, teachers accountant.Guarantee) (constraints.Problem, error) {
	p := constraints.Problem{K: k, M: t.M, Eps: teachers.Eps, Delta: teachers.Delta, TargetDelta: t.Delta}
	// m first: the default δ is computed from it, and a bad m would
	// otherwise be reported as the δ it gave.
	if err := param.M(t.M, k); err != nil {
		return p, err
	}
	def := constraints.DefaultTargetDelta(teachers.Delta, t.M)
	switch {
	case t.Delta == 0:
		p.TargetDelta = def
	case t.Delta < teachers.Delta:
		// The rule of the problem's δ (constraints.Problem.Validate),
		// named by the field the caller set.
		return p, &targetDeltaError{field: "Target.Delta", def: def, err: &param.Error{Name: "delta", Value: t.Delta,
			Rule: fmt.Sprintf("must be >= Delta = %v: DaRRM's problem holds a release to at least its teachers' delta", teachers.Delta)}}
	}
	return p, param.GuaranteeDelta("delta", p.TargetDelta)
}

// targetDeltaError is a Target's δ out of its domain, an
// *param.Error of the problem's δ (so that a program names it
// as it names that one), said as the field the caller set (field) with
// the default that 0 gives (def).
type targetDeltaError struct {
	field string
	def   float64
	err   *param.Error
}

func (e *targetDeltaError) Error() string {
	return fmt.Sprintf("%s = %v: %s (0 gives the thesis' default 1-(1-Delta)^m = %.6g)", e.field, e.err.Value, e.err.Rule, e.def)
}

func (e *targetDeltaError) Unwrap() error { return e.err }

// needGamma returns err, or, without one, the error of a mechanism name
// that samples a gamma and has no source of it.
func needGamma(name provenance.MechanismName, src GammaSource, err error) error {
	if err == nil && src == nil {
		err = unset("Mechanism.Gamma", "%s samples its gamma from a source: optimal.Source, say", name)
	}
	return err
}

// built returns what a Target of p is, as built: m and δ.
func built(p constraints.Problem) Target {
	return Target{M: p.M, Delta: p.TargetDelta}
}

// Mechanisms returns the mechanisms that label votes of kind in, in the
// order registered, each at its defaults (every setting zero).
func Mechanisms(in votefile.Input) []Mechanism {
	var out []Mechanism
	for _, m := range mechanisms {
		if slices.Contains(m.inputs(), in) {
			out = append(out, m)
		}
	}
	return out
}

// mechanismNames lists the names of the mechanisms that label votes of
// kind in, separated by commas.
func mechanismNames(in votefile.Input) string {
	var names []provenance.MechanismName
	for _, m := range Mechanisms(in) {
		names = append(names, m.Name())
	}
	return provenance.JoinMechanisms(names, ", ")
}

// registered returns the registered mechanism of the name, nil for none.
func registered(name provenance.MechanismName) Mechanism {
	for _, m := range mechanisms {
		if m.Name() == name {
			return m
		}
	}
	return nil
}

// lookup checks that the mechanism name labels votes of kind in. A name
// that labels only the other kind of votes is refused saying so.
func lookup(name provenance.MechanismName, in votefile.Input) error {
	m := registered(name)
	switch {
	case m == nil:
		return fmt.Errorf("mechanism %s: must be one of %s (two-class votes) or %s (multi-class votes)", param.Quote(string(name)),
			mechanismNames(votefile.TwoClass), mechanismNames(votefile.ManyClasses))
	case !slices.Contains(m.inputs(), in):
		return fmt.Errorf("mechanism %s labels %v, not %v: for these votes use one of %s", name, m.inputs()[0], in, mechanismNames(in))
	}
	return nil
}

// votesOf returns the kind of votes m labels when they are of classes
// classes: two-class votes for two classes, unless m labels counts alone
// (ConfidentGNMax, LNMax, GNMax given its Sigma2).
func votesOf(m Mechanism, classes int) votefile.Input {
	if classes == 2 && m.inputs()[0] == votefile.TwoClass {
		return votefile.TwoClass
	}
	return votefile.ManyClasses
}

// Planned returns the setting of m that a plan chooses when m labels
// votes of classes classes: "m", the allowance of a mechanism for private
// teachers; "target eps", darrm-one-vote's eps; "sigma2", the noise of the
// GNMax family on class counts; or "Laplace scale", LNMax's. With
// returns m with that setting v.
func Planned(m Mechanism, classes int) (setting string, with func(v float64) Mechanism) {
	return m.planned(votesOf(m, classes))
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
	in := votesOf(m, classes)
	if err := lookup(m.Name(), in); err != nil {
		return nil, "", &ReleaseError{Step: StepBuild, Err: err}
	}
	return newLabeler(ctx, m, in, k, classes, teachers, opts)
}

// build is what a mechanism's labeler is built for: K teachers voting
// among classes classes, votes of kind in, each teacher (ε, Δ)-DP as
// teachers says (for a mechanism calibrated to them), and the options.
type build struct {
	in         votefile.Input
	k, classes int
	teachers   accountant.Guarantee
	opts       Options
}

// newLabeler is New for m on votes of kind in: the one path from a
// mechanism to its labeler. Each setting is checked where the aggregator
// is built, with the problem (constraints.Problem.Validate) and the
// teachers and votes it relates to.
func newLabeler(ctx context.Context, m Mechanism, in votefile.Input, k, classes int, teachers accountant.Guarantee, opts Options) (Labeler, string, error) {
	if in == votefile.TwoClass && classes != 2 {
		return nil, "", &ReleaseError{Step: StepBuild, Err: fmt.Errorf("%s: %d classes: it labels 0/1 votes", m.Name(), classes)}
	}
	b := &build{in: in, k: k, classes: classes, teachers: teachers, opts: opts}
	l, label, err := m.labeler(ctx, b)
	if err != nil {
		if _, ok := err.(*ReleaseError); !ok {
			err = &ReleaseError{Step: StepBuild, Err: err}
		}
		return nil, "", err
	}
	return l, label, nil
}

// sampledGamma is the noise function a mechanism that samples one
// samples, and how its description names it.
type sampledGamma struct {
	g     gamma.Gamma
	words string
}

// gamma returns the noise function of problem q from src, certified as
// the aggregator will sample it, and how a description names it, for the
// mechanism name. An error is a *ReleaseError at StepGamma.
func (b *build) gamma(ctx context.Context, name provenance.MechanismName, src GammaSource, q constraints.Problem) (sampledGamma, error) {
	if src == nil {
		return sampledGamma{}, &ReleaseError{Step: StepGamma, Err: fmt.Errorf("Mechanism.Gamma is not set: %s samples its gamma from a source: optimal.Source, say", name)}
	}
	certify := func(ctx context.Context, q constraints.Problem, g gamma.Gamma) (gamma.Certificate, error) {
		_, sampled := newTable(g)
		cert, _, err := certify(ctx, q, sampled, 0, b.opts)
		if err == nil {
			b.opts.known = &knownCertificate{p: q, g: sampled, cert: cert}
		}
		return cert, err
	}
	var sg sampledGamma
	var err error
	if sg.g, sg.words, err = src.Gamma(ctx, q, certify); err != nil {
		return sampledGamma{}, &ReleaseError{Step: StepGamma, Err: err}
	}
	return sg, nil
}
