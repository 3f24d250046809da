package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// fakeBoth labels both kinds of votes with one setting, as GNMax does,
// but labels 0/1 votes whatever its setting: randomized response on the
// majority at eps 2/Spread there (fakeFlip), fakeMax's noisy max on
// counts.
type fakeBoth struct{ fakeMax }

func (fakeBoth) Name() provenance.MechanismName { return "fake-both" }
func (fakeBoth) Votes() []votefile.Input {
	return []votefile.Input{votefile.TwoClass, votefile.ManyClasses}
}

func (m fakeBoth) Plan(in votefile.Input) ensemble.Planned {
	p := m.fakeMax.Plan(in)
	p.With = func(b float64) ensemble.Mechanism { m.Spread = b; return m }
	if in == votefile.TwoClass {
		p.Expect = nil // scored exactly by its gamma
	}
	return p
}

func (m fakeBoth) Labeler(ctx context.Context, in votefile.Input, k, classes int, g accountant.Guarantee, o ensemble.Options) (ensemble.Labeler, string, error) {
	if in == votefile.TwoClass {
		l, what, err := fakeFlip{FlipEps: 2 / m.Spread}.Labeler(ctx, in, k, classes, g, o)
		if err != nil {
			return nil, "", err
		}
		return &flipOf{l.(*flipLabeler), m}, what, nil
	}
	return asLabeler(m)(m.fakeMax.Labeler(ctx, in, k, classes, g, o))
}

// flipOf is fakeFlip's labeler of 0/1 votes as another mechanism's.
type flipOf struct {
	*flipLabeler
	m ensemble.Mechanism
}

func (l *flipOf) Name() provenance.MechanismName { return l.m.Name() }
func (l *flipOf) Mechanism() ensemble.Mechanism  { return l.m }

// labelerOf is a labeler of counts as another mechanism's.
type labelerOf struct {
	ensemble.Labeler
	m ensemble.Mechanism
}

func (l labelerOf) Name() provenance.MechanismName { return l.m.Name() }
func (l labelerOf) Mechanism() ensemble.Mechanism  { return l.m }

// asLabeler returns what makes a labeler of counts m's.
func asLabeler(m ensemble.Mechanism) func(ensemble.Labeler, string, error) (ensemble.Labeler, string, error) {
	return func(l ensemble.Labeler, what string, err error) (ensemble.Labeler, string, error) {
		if err != nil {
			return nil, "", err
		}
		return labelerOf{l, m}, what, nil
	}
}

// fakeKnob is fakeMax with a whole-number setting of its own, Rounds,
// needed and never chosen by a plan.
type fakeKnob struct {
	fakeMax
	Rounds int `json:"n_rounds" flag:"rounds" help:"rounds of its noise (>= 1)"`
}

func (fakeKnob) Name() provenance.MechanismName { return "fake-knob" }

func (m fakeKnob) Validate() error {
	if m.Rounds < 1 {
		return &param.Error{Name: "rounds", Value: m.Rounds, Rule: "must be >= 1"}
	}
	return m.fakeMax.Validate()
}

func (m fakeKnob) Missing(in votefile.Input) error {
	if m.Rounds == 0 {
		return fmt.Errorf("fake-knob needs its rounds")
	}
	return m.fakeMax.Missing(in)
}

func (fakeKnob) FromHeader(meta *votefile.LabelMeta) (ensemble.Mechanism, error) {
	var m fakeKnob
	err := json.Unmarshal(meta.Settings, &m)
	return m, err
}

func (m fakeKnob) Plan(in votefile.Input) ensemble.Planned {
	p := m.fakeMax.Plan(in)
	p.With = func(b float64) ensemble.Mechanism { m.Spread = b; return m }
	return p
}

func (m fakeKnob) Labeler(ctx context.Context, in votefile.Input, k, classes int, g accountant.Guarantee, o ensemble.Options) (ensemble.Labeler, string, error) {
	if err := m.Validate(); err != nil {
		return nil, "", err
	}
	return asLabeler(m)(m.fakeMax.Labeler(ctx, in, k, classes, g, o))
}

// fakeGate is fakeMax behind a threshold step of its own, whose JSON
// keys are its own (T, g) and whose flags are the threshold step's: a
// query whose top count plus discrete Laplace noise of scale Gate falls
// below T is withheld; (2/Spread + 1/Gate, 0)-DP.
type fakeGate struct {
	fakeMax
	T    float64 `json:"T" flag:"threshold" help:"threshold of its gate" optional:""`
	Gate float64 `json:"g" flag:"sigma1" help:"scale of its gate's noise (> 0; 0: no gate)" optional:""`
}

func (fakeGate) Name() provenance.MechanismName { return "fake-gate" }
func (fakeGate) Words() ensemble.Words {
	return ensemble.Words{Settings: "gate", Noise: "fake noise", Withheld: "by the gate"}
}

func (m fakeGate) Plan(in votefile.Input) ensemble.Planned {
	p := m.fakeMax.Plan(in)
	p.With = func(b float64) ensemble.Mechanism { m.Spread = b; return m }
	p.Threshold = func(t, gate float64) ensemble.Mechanism { m.T, m.Gate = t, gate; return m }
	return p
}

func (m fakeGate) Labeler(ctx context.Context, in votefile.Input, k, classes int, g accountant.Guarantee, o ensemble.Options) (ensemble.Labeler, string, error) {
	l, what, err := m.fakeMax.Labeler(ctx, in, k, classes, g, o)
	if err != nil || m.Gate == 0 {
		return labelerOf{l, m}, what, err
	}
	gate, err := discrete.NewLaplace(m.Gate)
	if err != nil {
		return nil, "", err
	}
	p := l.Privacy()
	p.Spend = accountant.ApproxStep(accountant.Guarantee{Eps: 2/m.Spread + 1/m.Gate})
	return gated{labelerOf{l, m}, gate, m.T, p}, what + " behind a gate", nil
}

type gated struct {
	labelerOf
	gate    *discrete.Laplace
	t       float64
	privacy ensemble.Privacy
}

func (l gated) Privacy() ensemble.Privacy { return l.privacy }

func (l gated) Answer(q *votefile.Query, src *noise.Source) (int, bool, error) {
	if float64(slices.Max(q.Counts)+int(l.gate.Sample(src))) < l.t {
		return -1, false, nil
	}
	return l.labelerOf.Answer(q, src)
}

// TestFakeMechanismShapes: mechanisms of other shapes registered beside
// darrm's. A whole-number setting given as a flag reaches the mechanism
// (its label file's header and the summary's settings state it); plan
// --votes compares them on 0/1 votes and on counts: one that labels both
// kinds and still labels 0/1 votes on two classes is scored there as a
// mechanism of 0/1 votes, and one whose setting no plan chooses is left
// out, saying why, where either stopped the whole comparison.
func TestFakeMechanismShapes(t *testing.T) {
	ms, run := withFakes(t, fakeBoth{}, fakeKnob{}, fakeGate{})
	dir := t.TempDir()
	knob, err := ms.Lookup("fake-knob", votefile.ManyClasses)
	if err != nil {
		t.Fatal(err)
	}
	counts := filepath.Join(dir, "counts.csv")
	read := checkFile(t, counts, knob, "knob", 10)
	labels := filepath.Join(dir, "labels.csv")
	var doc struct {
		Settings fakeKnob `json:"settings"`
	}
	out := run(append([]string{"aggregate", counts, "--mechanism", "fake-knob", "--spread", "20", "--rounds", "3", "--out", labels, "--seed", "1", "--format", "json"}, read...)...)
	head, _ := os.ReadFile(labels)
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Settings.Rounds != 3 || !bytes.Contains(head, []byte(`"n_rounds":3`)) {
		t.Errorf("--rounds 3 does not reach fake-knob (%v): %+v\n%.300s", err, doc.Settings, head)
	}

	for _, c := range []struct {
		flags []string
		want  string
	}{
		{nil, "fake-knob is accounted data-independently only"},
		{[]string{"--rounds", "5"}, "rounds = 5 given, but the label file's header states rounds = 3"},
	} {
		var out, errb bytes.Buffer
		args := append(append([]string{"account", "pate", counts, "--labels", labels, "--target-delta", "1e-5"}, read...), c.flags...)
		if code := runOf(ms, testMemo, context.Background(), args, strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(strings.Join(strings.Fields(errb.String()), " "), c.want) {
			t.Errorf("account pate --labels %v: exit %d, want 2 and %q:\n%s", c.flags, code, c.want, errb.String())
		}
	}

	plan := []string{"plan", "--votes-are", "public", "--queries", "5", "--K", "11", "--budget-eps", "2", "--budget-delta", "1e-5"}
	compare := run(append(append(plan, "--votes", counts), read...)...)
	for _, want := range []string{"fake-both", "left out: fake-knob:"} {
		if !strings.Contains(compare, want) {
			t.Errorf("plan --votes on counts lacks %q:\n%s", want, compare)
		}
	}
	// The gate's threshold and scale are said by their flags, whatever
	// its JSON calls them; a plan of it alone scores it on the votes too.
	if !regexp.MustCompile(`fake-gate +│ threshold [0-9.]+ +│[^\n]*\n[^\n]*│ +│ sigma1 [0-9.]+ +│[^\n]*\n[^\n]*│ +│ spread [0-9.]+ +│`).MatchString(compare) {
		t.Errorf("plan --votes does not say fake-gate's threshold step:\n%s", compare)
	}
	for _, mech := range []string{"fake-gate", "lnmax"} {
		if out := run(append(append(plan, "--votes", counts, "--mechanism", mech, "--classes", "3"), read...)...); !strings.Contains(out, "expected_correct") {
			t.Errorf("plan --mechanism %s --votes does not score it:\n%s", mech, out)
		}
	}
	both, err := ms.Lookup("fake-both", votefile.TwoClass)
	if err != nil {
		t.Fatal(err)
	}
	votes := filepath.Join(dir, "votes.csv")
	read = checkFile(t, votes, both, "both", 10)
	if compare := run(append(append(plan, "--votes", votes), read...)...); !strings.Contains(compare, "fake-both") {
		t.Errorf("plan --votes on 0/1 votes does not plan fake-both:\n%s", compare)
	}
}

// fakeTeachers is fakeMax in the private-teachers relation, calibrated
// to its teachers' guarantee: its label is (ε, Δ)-DP as each teacher is
// on its own share of the data, whatever its spread.
type fakeTeachers struct{ fakeMax }

func (fakeTeachers) Name() provenance.MechanismName      { return "fake-teachers" }
func (fakeTeachers) Relation() accountant.Relation       { return accountant.PrivateTeachers }
func (fakeTeachers) Needs(votefile.Input) ensemble.Needs { return ensemble.Needs{Teachers: true} }

func (m fakeTeachers) Plan(votefile.Input) ensemble.Planned { return ensemble.Planned{} }

func (m fakeTeachers) Labeler(ctx context.Context, in votefile.Input, k, classes int, g accountant.Guarantee, o ensemble.Options) (ensemble.Labeler, string, error) {
	if !(g.Eps > 0) {
		return nil, "", &param.Error{Name: "eps", Value: g.Eps, Rule: "must be > 0: the teachers' guarantee"}
	}
	l, what, err := asLabeler(m)(m.fakeMax.Labeler(ctx, in, k, classes, g, o))
	if err != nil {
		return nil, "", err
	}
	p := l.Privacy()
	p.Spend, p.Relation, p.Source = accountant.ApproxStep(g), accountant.PrivateTeachers, "each teacher's guarantee, on its own share"
	return calibrated{l.(labelerOf), p}, what, nil
}

type calibrated struct {
	labelerOf
	privacy ensemble.Privacy
}

func (l calibrated) Privacy() ensemble.Privacy { return l.privacy }

// TestFakeCalibratedMechanism: a mechanism of counts calibrated to its
// teachers' guarantee, in the private-teachers relation, releases saying
// so (not that their guarantee plays no part), and is planned and
// declared on a ledger with the teachers' guarantee, where --eps was
// refused as none of its settings and a plan built it with (0, 0).
func TestFakeCalibratedMechanism(t *testing.T) {
	ms, run := withFakes(t, fakeTeachers{})
	dir := t.TempDir()
	info, err := ms.Lookup("fake-teachers", votefile.ManyClasses)
	if err != nil {
		t.Fatal(err)
	}
	votes := filepath.Join(dir, "votes.csv")
	read := checkFile(t, votes, info, "calibrated", 10)
	table := strings.Join(strings.Fields(run(append([]string{"aggregate", votes, "--mechanism", "fake-teachers", "--spread", "20", "--out", filepath.Join(dir, "l.csv"), "--seed", "1"}, read...)...)), " ")
	if !strings.Contains(table, "the labels' guarantee is calibrated to it") || strings.Contains(table, "plays no part") || !strings.Contains(table, "per released query: (0.1, 1e-05)-DP") {
		t.Errorf("aggregate's table does not say its teachers' guarantee:\n%s", table)
	}
	if plan := run("plan", "--mechanism", "fake-teachers", "--spread", "20", "--K", "11", "--classes", "3", "--eps", "0.2", "--Delta", "1e-6", "--budget-eps", "4", "--budget-delta", "1e-5", "--format", "json"); !strings.Contains(plan, `"per_query_eps": 0.2,`) {
		t.Errorf("plan does not calibrate it to --eps 0.2:\n%s", plan)
	}
	run("ledger", "init", filepath.Join(dir, "c.ledger"), "--votes", votes, "--budget-eps", "4", "--budget-delta", "1e-3", "--mechanism", "fake-teachers", "--spread", "20", "--queries", "10")
}
