package ensemble

import (
	"context"
	"errors"
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

// Mechanism is a release mechanism with its settings: a value whose
// methods say all that a release, a plan and a program ask of it, so that
// none of them knows a mechanism by name. darrm's are DaRRM,
// OneVoteDaRRM, Subsample, DSub, RR and GNMax on the teachers' 0/1 votes,
// and GNMax, ConfidentGNMax, LNMax and ProgressiveGNMax on vote counts of C
// classes (Mechanisms); a package of its own may implement one (every
// method and type is exported) and release with it by the same path,
// checked by the same checks.
//
// Its settings are its exported fields. A field's tag `json:"key"` is its
// key in the object of the settings that a label file's header states:
// the mechanism's JSON (encoding/json), none when that is {} (its
// guarantee says all). Its tag `flag:"name"` names the command-line flag
// that sets it (first, when several flags together give it, as a γ
// source's), `help:"..."` says what it is, `votes:"two-class"` or
// `votes:"multi-class"` the one kind of votes it is a setting on, and
// `optional:""` that it may be left at zero on vote counts (every other
// setting on counts is needed), and `round:"up"` or `round:"down"` the
// way a program rounds it to print it shorter, so that the value printed,
// given again, is at least as private (a noise scale up, a privacy
// target down; without the tag it prints exactly): a program binds its
// flags by them. A
// setting with a help tag is the mechanism's own, whose flag a program
// defines from the tags; the others are set by a program's own flags (a
// target, a γ source, a composition) or by the program itself (the noise
// releases draw).
type Mechanism interface {
	// Name is the mechanism's name, as a label file's header states it.
	Name() provenance.MechanismName
	// Validate checks the mechanism's own settings, a bad one a
	// parameter error that names it by its flag; the rules that relate
	// them to the teachers and the votes are Labeler's.
	Validate() error
	// Relation is the neighbouring relation that its guarantee is stated
	// in: the private teachers' (accountant.PrivateTeachers) for DaRRM,
	// Subsample, DSub and RR, the one-vote relation for the others.
	Relation() accountant.Relation
	// Votes returns the kinds of votes it labels, two-class first.
	Votes() []votefile.Input
	// Needs says what a caller resolves for it on votes of kind in,
	// beside its own settings (Needs).
	Needs(in votefile.Input) Needs
	// Missing returns the error of a setting left at a zero value that
	// has no default on votes of kind in, naming it as a field of a
	// ReleaseSpec (unset), nil when none is.
	Missing(in votefile.Input) error
	// Labeler builds its labeler for k teachers voting among classes
	// classes on votes of kind in, each teacher (ε, Δ)-DP as teachers
	// says when it Needs them, with the options opts (a γ loaded from a
	// source is certified once, as it is sampled), its privacy
	// certified where it is built, and says what it is in words.
	Labeler(ctx context.Context, in votefile.Input, k, classes int, teachers accountant.Guarantee, opts Options) (Labeler, string, error)
	// FromHeader returns the mechanism of this name that the label file's
	// header meta states, with the settings it states, each one stated
	// (Registry.FromHeader checks the header's names first).
	FromHeader(meta *votefile.LabelMeta) (Mechanism, error)
	// Plan says what a plan chooses of it on votes of kind in (Planned).
	Plan(in votefile.Input) Planned
	// Words says it in words as a release's summary does on vote counts
	// (Words); on 0/1 votes its label says it.
	Words() Words
}

// Words say a mechanism of vote counts as a release's summary prints it:
// its settings ("T = 200, sigma1 = 150, sigma2 = 40"), the noise it adds
// to the counts, and what withholds a query's label, after "N withheld"
// ("" when it answers every query). A mechanism of 0/1 votes says none:
// its label says it.
type Words struct {
	Settings, Noise, Withheld string
}

// Words of the noise the noisy-max mechanisms add to the counts.
const (
	gaussianWords = "discrete Gaussian N_Z(0, sigma^2), sampled exactly (Canonne, Kamath and Steinke 2020); ties broken uniformly"
	laplaceWords  = "discrete Laplace of scale b, sampled exactly (Canonne, Kamath and Steinke 2020); ties broken uniformly"
)

// Needs is what a caller resolves for a mechanism on one kind of votes,
// beside its own settings (Mechanism.Needs), as gonum's optimize.Method
// says what it uses.
type Needs struct {
	// Teachers: its per-query target is m·ε of its teachers' (ε, Δ) and a
	// δ (Target), so a release needs the teachers' guarantee.
	Teachers bool
	// Eps: its per-query target is its own (ε, δ), its setting tagged
	// flag "target-eps" (darrm-one-vote's).
	Eps bool
	// Gamma: it samples a noise function from a GammaSource, its setting
	// tagged flag "gamma".
	Gamma bool
	// Budget: it is charged per draw to a Gaussian-DP filter alone, whose
	// budget, the release's, is its total to publish (ChargedPerDraw).
	Budget bool
}

// Planned is what a plan chooses of a mechanism on votes of one kind
// (Mechanism.Plan): the one setting a plan of parameters searches, or a
// plan of its own.
type Planned struct {
	// Setting names the kind of setting a plan searches, as a plan reports
	// it: "m" (an allowance in [1, K]), "target eps" (a per-query ε),
	// "sigma2" (a Gaussian deviation on each count) or "Laplace scale";
	// "" for none. Flag is the flag that sets it, and With returns the
	// mechanism with that setting v.
	Setting, Flag string
	With          func(v float64) Mechanism
	// Threshold, if set, returns the mechanism with a threshold step of
	// threshold t and deviation sigma1 (flags "threshold" and "sigma1"),
	// which a plan chooses on proxy votes beside Setting.
	Threshold func(t, sigma1 float64) Mechanism
	// Expect, if set, returns the probability that its label of a query
	// with these class counts, answered, is the class, scored as a plan
	// scores it on proxy votes; nil for a mechanism of 0/1 votes, whose
	// label a plan scores by its noise function exactly.
	Expect func(counts []int, class int) float64
	// OnProxy, if set, is its plan of its own, on proxy votes, of every
	// setting, for the budget of its Gaussian-DP filter (progressive
	// GNMax's): Setting is then "".
	OnProxy func(ctx context.Context, r ProxyRequest) (ProxyPlan, error)
}

// A Registry is the mechanisms a program releases with, each at its
// defaults, the two-class ones first: darrm's (Mechanisms), to which a
// program may add its own. It is a value: a program keeps its own, and
// no package variable holds one.
type Registry []Mechanism

// Mechanisms returns darrm's mechanisms, in a new Registry.
func Mechanisms() Registry {
	return Registry{DaRRM{}, Subsample{}, DSub{}, RR{}, GNMax{}, OneVoteDaRRM{}, ConfidentGNMax{}, LNMax{}, ProgressiveGNMax{}}
}

// On returns the mechanisms of r that label votes of kind in, in order.
func (r Registry) On(in votefile.Input) []Mechanism {
	var out []Mechanism
	for _, m := range r {
		if slices.Contains(m.Votes(), in) {
			out = append(out, m)
		}
	}
	return out
}

// Names lists the names of the mechanisms of r that label votes of kind
// in, separated by commas.
func (r Registry) Names(in votefile.Input) string {
	var names []provenance.MechanismName
	for _, m := range r.On(in) {
		names = append(names, m.Name())
	}
	return provenance.JoinMechanisms(names, ", ")
}

// Lookup returns the mechanism of r of the name that labels votes of
// kind in. A name that labels only the other kind of votes is refused
// saying so, an unknown one with the names of r.
func (r Registry) Lookup(name provenance.MechanismName, in votefile.Input) (Mechanism, error) {
	var m Mechanism
	for _, x := range r {
		if x.Name() == name {
			m = x
			break
		}
	}
	switch {
	case m == nil:
		return nil, fmt.Errorf("mechanism %s: must be one of %s (two-class votes) or %s (multi-class votes)", param.Quote(string(name)),
			r.Names(votefile.TwoClass), r.Names(votefile.ManyClasses))
	case !slices.Contains(m.Votes(), in):
		return nil, labelsOther(m, in, r)
	}
	return m, nil
}

// labelsOther is the error of mechanism m on votes of kind in, which it
// does not label: the mechanisms of r that do.
func labelsOther(m Mechanism, in votefile.Input, r Registry) error {
	return fmt.Errorf("mechanism %s labels %v, not %v: for these votes use one of %s", m.Name(), m.Votes()[0], in, r.Names(in))
}

// Calibrated reports whether a mechanism of r for the votes meta heads
// (nil: none), in their relation, is calibrated to a teachers' (ε, Δ):
// whether it Needs them. It is the registry's answer to provenance.Check,
// which accepts a guarantee stated for non-private teachers only for
// such votes (provenance.Stated.Calibrated).
func (r Registry) Calibrated(meta *votefile.Meta) bool {
	if meta == nil {
		return false
	}
	var rel accountant.Relation
	if rel.UnmarshalText([]byte(meta.Relation)) != nil {
		return false // provenance.Check refuses the header
	}
	for _, m := range r.On(meta.Input()) {
		if m.Relation() == rel && m.Needs(meta.Input()).Teachers {
			return true
		}
	}
	return false
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

// onTwoClass and onManyClasses are the kinds of votes of a mechanism of 0/1
// votes and of one of vote counts (Mechanism.Votes), a new slice each.
func onTwoClass() []votefile.Input    { return []votefile.Input{votefile.TwoClass} }
func onManyClasses() []votefile.Input { return []votefile.Input{votefile.ManyClasses} }

// Target is the per-query target (m·ε, δ) of a mechanism for private
// teachers, each (ε, Δ)-DP (thesis Problem 3.1.1): M is the privacy
// allowance, in [1, K]; Delta the per-query δ, 0 for the thesis' default
// 1-(1-Δ)^m of the teachers' Δ (constraints.DefaultTargetDelta). A δ
// given is at least the teachers' Δ, so 0 is no other target: the
// default of teachers with Δ = 0 is 0 itself. (GNMax on vote counts holds
// its per-query δ here too, without M: there it has no default.)
type Target struct {
	M     float64 `json:"-" flag:"m" votes:"two-class" round:"down"`
	Delta float64 `json:"-" flag:"delta"`
}

// The methods of a Target are those a mechanism for private teachers
// shares through it (DaRRM, Subsample, DSub, RR): it labels 0/1 votes,
// its guarantee is in the private teachers' relation, it needs their
// guarantee, its allowance m has no default, and a release's summary
// says it by its label.

// Validate checks M and Delta as given: m >= 1, δ in [0, 0.5] (0: the
// default).
func (t Target) Validate() error {
	if !(t.M >= 1) || math.IsInf(t.M, 1) {
		return &param.Error{Name: "m", Value: t.M, Rule: "must be in [1, K]"}
	}
	return param.GuaranteeDelta("delta", t.Delta)
}

// Votes returns the two-class votes.
func (Target) Votes() []votefile.Input { return onTwoClass() }

// Relation returns the private teachers' relation.
func (Target) Relation() accountant.Relation { return accountant.PrivateTeachers }

// Needs says that a mechanism of the target needs its teachers'
// guarantee.
func (Target) Needs(votefile.Input) Needs { return Needs{Teachers: true} }

// Missing refuses a target without its allowance m, which has no
// default.
func (t Target) Missing(votefile.Input) error { return t.needM() }

// Words says nothing: the label of a two-class release says it.
func (Target) Words() Words { return Words{} }

// needM refuses a target without its allowance m, which has no default.
func (t Target) needM() error {
	if t.M == 0 {
		return unset("Mechanism.M", "the privacy allowance m in [1, K]: each label is (m·eps, delta)-DP")
	}
	return nil
}

// planM returns the plan of a mechanism planned by its allowance m, which
// with sets.
func planM(with func(m float64) Mechanism) Planned {
	return Planned{Setting: "m", Flag: "m", With: with}
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

// VotesOf returns the kind of votes m labels when they are of classes
// classes: two-class votes for two classes, unless m labels counts alone
// (ConfidentGNMax, LNMax, GNMax given its Sigma2).
func VotesOf(m Mechanism, classes int) votefile.Input {
	if classes == 2 && m.Votes()[0] == votefile.TwoClass {
		return votefile.TwoClass
	}
	return votefile.ManyClasses
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
	// K before the settings that are checked against it: K = -1 was
	// refused as "m = 0: must be in [1, K] = [1, -1]".
	switch {
	case m == nil:
		return nil, "", &ReleaseError{Step: StepBuild, Err: errors.New("no mechanism")}
	case k < 1:
		return nil, "", &ReleaseError{Step: StepBuild, Err: &param.Error{Name: "K", Value: k, Rule: "must be >= 1: the teachers that vote"}}
	}
	in := VotesOf(m, classes)
	if !slices.Contains(m.Votes(), in) {
		return nil, "", &ReleaseError{Step: StepBuild, Err: labelsOther(m, in, Mechanisms())}
	}
	return newLabeler(ctx, m, in, k, classes, teachers, opts)
}

// newLabeler is New for m on votes of kind in: the one path from a
// mechanism to its labeler. Each setting is checked where the aggregator
// is built, with the problem (constraints.Problem.Validate) and the
// teachers and votes it relates to.
func newLabeler(ctx context.Context, m Mechanism, in votefile.Input, k, classes int, teachers accountant.Guarantee, opts Options) (Labeler, string, error) {
	if in == votefile.TwoClass && classes != 2 {
		return nil, "", &ReleaseError{Step: StepBuild, Err: fmt.Errorf("%s: %d classes: it labels 0/1 votes", m.Name(), classes)}
	}
	l, label, err := m.Labeler(ctx, in, k, classes, teachers, opts)
	if err != nil {
		if _, ok := err.(*ReleaseError); !ok {
			err = &ReleaseError{Step: StepBuild, Err: err}
		}
		return nil, "", err
	}
	return l, label, nil
}

// loadGamma returns the noise function of problem q from src, for the
// mechanism name (a nil src is an error that says it needs one),
// certified as the aggregator will sample it (the certificate is kept in
// opts, so that the aggregator built from it with opts certifies it no
// more), and how a description names it. An error is a *ReleaseError at
// StepGamma.
func loadGamma(ctx context.Context, name provenance.MechanismName, src GammaSource, q constraints.Problem, opts *Options) (gamma.Gamma, string, error) {
	if src == nil {
		return nil, "", &ReleaseError{Step: StepGamma, Err: fmt.Errorf("Mechanism.Gamma is not set: %s samples its gamma from a source: optimal.Source, say", name)}
	}
	certify := func(ctx context.Context, q constraints.Problem, g gamma.Gamma) (gamma.Certificate, error) {
		_, sampled := newTable(g)
		cert, _, err := certify(ctx, q, sampled, 0, *opts)
		if err == nil {
			opts.known = &knownCertificate{p: q, g: sampled, cert: cert}
		}
		return cert, err
	}
	g, words, err := src.Gamma(ctx, q, certify)
	if err != nil {
		return nil, "", &ReleaseError{Step: StepGamma, Err: err}
	}
	return g, words, nil
}
