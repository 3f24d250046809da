package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// fakeMax is a multi-class mechanism that darrm does not know, defined
// here as a package of its own would define one: the noisy max of the
// counts with discrete Laplace noise of its Spread (LNMax's privacy,
// (2/b, 0), under another name and another setting), with no sigma2, no
// threshold step and no setting of darrm's.
type fakeMax struct {
	Spread float64 `json:"spread" flag:"spread" help:"spread b of its noise on each count (> 0)"`
}

func (fakeMax) Name() provenance.MechanismName { return "fake-max" }

func (m fakeMax) Validate() error {
	_, err := noisymax.LNMaxSpend(m.Spread)
	return err
}

func (fakeMax) Relation() accountant.Relation             { return accountant.OneVote }
func (fakeMax) Votes() []votefile.Input                   { return []votefile.Input{votefile.ManyClasses} }
func (fakeMax) Needs(votefile.Input) ensemble.Needs       { return ensemble.Needs{} }
func (fakeMax) Words() ensemble.Words                     { return ensemble.Words{Settings: "fake", Noise: "fake noise"} }
func (m fakeMax) withSpread(b float64) ensemble.Mechanism { m.Spread = b; return m }

func (m fakeMax) Missing(votefile.Input) error {
	if m.Spread == 0 {
		return fmt.Errorf("fake-max needs its spread")
	}
	return nil
}

func (fakeMax) FromHeader(meta *votefile.LabelMeta) (ensemble.Mechanism, error) {
	var m fakeMax
	err := json.Unmarshal(meta.Settings, &m)
	return m, err
}

// Plan: its spread, a setting of the kind of a Laplace scale (of which
// eps is 2/b), scored as the chance that the top count is the class.
func (m fakeMax) Plan(votefile.Input) ensemble.Planned {
	return ensemble.Planned{Setting: "Laplace scale", Flag: "spread", With: m.withSpread, Expect: func(counts []int, class int) float64 {
		top := 0
		for i, n := range counts {
			if n > counts[top] {
				top = i
			}
		}
		return map[bool]float64{true: 1, false: 0}[top == class]
	}}
}

func (m fakeMax) Labeler(_ context.Context, _ votefile.Input, k, classes int, _ accountant.Guarantee, _ ensemble.Options) (ensemble.Labeler, string, error) {
	spend, err := noisymax.LNMaxSpend(m.Spread)
	if err != nil {
		return nil, "", err
	}
	n, err := discrete.NewLaplace(m.Spread)
	if err != nil {
		return nil, "", err
	}
	return &fakeLabeler{m: m, k: k, classes: classes, noise: n,
		privacy: ensemble.Privacy{Spend: spend, Source: "a fake's noisy max, (2/b, 0)-DP", Relation: accountant.OneVote}}, "the fake noisy max", nil
}

type fakeLabeler struct {
	m          fakeMax
	k, classes int
	noise      *discrete.Laplace
	privacy    ensemble.Privacy
}

func (l *fakeLabeler) Name() provenance.MechanismName { return l.m.Name() }
func (l *fakeLabeler) K() int                         { return l.k }
func (l *fakeLabeler) Classes() int                   { return l.classes }
func (l *fakeLabeler) Privacy() ensemble.Privacy      { return l.privacy }
func (l *fakeLabeler) Mechanism() ensemble.Mechanism  { return l.m }

func (l *fakeLabeler) Answer(q *votefile.Query, src *noise.Source) (int, bool, error) {
	if len(q.Counts) != l.classes {
		return -1, false, fmt.Errorf("%d counts, want %d", len(q.Counts), l.classes)
	}
	best, label := int64(math.MinInt64), 0
	for i, n := range q.Counts {
		if v := int64(n) + l.noise.Sample(src); v > best {
			best, label = v, i
		}
	}
	return label, true, nil
}

// withFakes returns darrm's mechanisms with fakes registered beside
// them, and a run of darrm on them that fails t unless it exits 0 and
// returns its standard output.
func withFakes(t *testing.T, fakes ...ensemble.Mechanism) (*setup.Mechanisms, func(args ...string) string) {
	ms := setup.NewMechanisms(append(ensemble.Mechanisms(), fakes...))
	return ms, func(args ...string) string {
		t.Helper()
		ownState(t)
		var out, errb bytes.Buffer
		if code := runOf(ms, testMemo, context.Background(), args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("darrm %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
		}
		return out.String()
	}
}

// TestFakeMechanism: a multi-class mechanism registered beside darrm's,
// with a setting of its own and none of theirs, runs through the command
// with no other edit: its flag and help bound from its tags, aggregate's
// table and JSON, plan --votes comparing it with darrm's, ledger init
// declaring its labels, and a release charged to that ledger.
func TestFakeMechanism(t *testing.T) {
	ms, run := withFakes(t, fakeMax{})
	dir := t.TempDir()
	info, err := ms.Lookup("fake-max", votefile.ManyClasses)
	if err != nil {
		t.Fatal(err)
	}
	votes := filepath.Join(dir, "votes.csv")
	read := checkFile(t, votes, info, "fake", 50) // K = 11 teachers, 3 classes, its header in the file

	help := run("aggregate", "--help")
	if !strings.Contains(help, "--spread") || !strings.Contains(help, "fake-max: spread b of its noise") ||
		!strings.Contains(strings.Join(strings.Fields(help), " "), "multi-class votes: gnmax, confident-gnmax, lnmax, progressive-gnmax, fake-max.") {
		t.Errorf("aggregate --help does not list the fake and bind its setting:\n%s", help)
	}

	labels := filepath.Join(dir, "labels.csv")
	release := append([]string{"aggregate", votes, "--mechanism", "fake-max", "--spread", "20", "--out", labels, "--seed", "1"}, read...)
	table := run(release...)
	for _, want := range []string{"50 queries released", "mechanism: fake-max (fake), noise fake noise", "per released query: (0.1, 0)"} {
		if !strings.Contains(table, want) {
			t.Errorf("aggregate's table lacks %q:\n%s", want, table)
		}
	}
	out := run(append(release, "--format", "json")...)
	var doc struct {
		Mechanism string   `json:"mechanism"`
		Released  int      `json:"released"`
		Noise     *string  `json:"noise"`
		Sigma2    *float64 `json:"sigma2"`
		Settings  fakeMax  `json:"settings"`
		PerQuery  struct {
			Eps float64 `json:"eps"`
		} `json:"per_query"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("aggregate --format json: %v\n%s", err, out)
	}
	if doc.Mechanism != "fake-max" || doc.Released != 50 || doc.Noise == nil || *doc.Noise != "fake noise" || doc.Sigma2 != nil || doc.Settings.Spread != 20 || doc.PerQuery.Eps != 0.1 {
		t.Errorf("aggregate --format json: %+v\n%s", doc, out)
	}
	head, err := os.ReadFile(labels)
	if err != nil || !bytes.Contains(head, []byte(`"mechanism":"fake-max"`)) || !bytes.Contains(head, []byte(`"spread":20`)) {
		t.Errorf("the label file's header does not state the fake and its spread (%v):\n%.400s", err, head)
	}

	plan := append([]string{"plan", "--votes", votes, "--votes-are", "public", "--queries", "20", "--K", "11", "--budget-eps", "4", "--budget-delta", "1e-5"}, read...)
	table = run(plan...)
	compare := run(append(plan, "--format", "json")...)
	var c struct {
		Rows []struct {
			Mechanism string           `json:"mechanism"`
			NoFit     string           `json:"no_fit"`
			Settings  []report.Setting `json:"settings"`
		} `json:"mechanisms"`
	}
	if err := json.Unmarshal([]byte(compare), &c); err != nil {
		t.Fatalf("plan --votes: %v\n%s", err, compare)
	}
	found := false
	for _, r := range c.Rows {
		found = found || r.Mechanism == "fake-max" && r.NoFit == "" && len(r.Settings) == 1 && r.Settings[0].Flag == "spread" && r.Settings[0].Value > 0
	}
	if !found || !regexp.MustCompile(`fake-max +│ spread [0-9.]+ +│`).MatchString(table) {
		t.Errorf("plan --votes does not plan the fake with its spread:\n%s\n%s", table, compare)
	}

	led := filepath.Join(dir, "fake.ledger")
	run("ledger", "init", led, "--votes", votes, "--budget-eps", "8", "--budget-delta", "1e-5", "--mechanism", "fake-max", "--spread", "20", "--queries", "50")
	out = run(append(release, "--ledger", led, "--format", "json")...)
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Released != 50 {
		t.Fatalf("aggregate --ledger: %v\n%s", err, out)
	}
	show := run("ledger", "show", led)
	if !strings.Contains(show, "fake-max") {
		t.Errorf("ledger show does not name the fake's release:\n%s", show)
	}
	// Its label file, whose header states its spread, is a witness of the
	// ledger that charged it.
	run("ledger", "verify", led, "--witness", labels)

	// PATE's analyses are of darrm's mechanisms: account pate refuses the
	// fake as a flag's value it cannot take (exit 2), not as a failure.
	var o, e bytes.Buffer
	code := runOf(ms, testMemo, context.Background(), []string{"account", "pate", votes, "--spread", "20", "--target-delta", "1e-5"}, strings.NewReader(""), &o, &e)
	if msg := strings.Join(strings.Fields(e.String()), " "); code != setup.ExitUsage || !strings.Contains(msg, "the settings given are those of fake-max: pate accounts gnmax,") {
		t.Errorf("account pate of the fake: exit %d, want %d naming it:\n%s", code, setup.ExitUsage, e.String())
	}
}

// fakePlain is fakeMax under another name, with no plan: nothing a
// comparison on proxy votes could score.
type fakePlain struct{ fakeMax }

func (fakePlain) Name() provenance.MechanismName       { return "fake-plain" }
func (fakePlain) Plan(votefile.Input) ensemble.Planned { return ensemble.Planned{} }

// TestFakeMechanismWithoutPlan: a multi-class mechanism whose plan scores
// no setting is left out of plan --votes' comparison, saying why, where
// it was dropped without a word.
func TestFakeMechanismWithoutPlan(t *testing.T) {
	ms, run := withFakes(t, fakePlain{})
	info, err := ms.Lookup("fake-plain", votefile.ManyClasses)
	if err != nil {
		t.Fatal(err)
	}
	votes := filepath.Join(t.TempDir(), "votes.csv")
	read := checkFile(t, votes, info, "plain", 50)
	out := run(append([]string{"plan", "--votes", votes, "--votes-are", "public", "--queries", "20", "--K", "11", "--budget-eps", "4", "--budget-delta", "1e-5", "--format", "json"}, read...)...)
	var doc struct {
		Left []string `json:"left_out"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || !slices.Contains(doc.Left, "fake-plain: no setting of its plan is scored on proxy votes") {
		t.Errorf("plan --votes does not say why it leaves out the fake (%v): %q\n%s", err, doc.Left, out)
	}
}

// fakeFlip is a two-class mechanism that darrm does not know: randomized
// response on the majority of the 0/1 votes at its own Eps, in the
// one-vote relation (a changed vote moves the majority at most once), a
// guarantee its setting gives, needing neither the teachers' guarantee
// nor a target: its gamma is the constant tanh(eps/2).
type fakeFlip struct {
	FlipEps float64 `json:"flip_eps" flag:"flip-eps" help:"eps of its randomized response on the majority (> 0)"`
}

func (fakeFlip) Name() provenance.MechanismName { return "fake-flip" }

func (m fakeFlip) Validate() error {
	if !(m.FlipEps >= 0) || math.IsInf(m.FlipEps, 0) {
		return &param.Error{Name: "flip-eps", Value: m.FlipEps, Rule: "must be a finite number > 0"}
	}
	return nil
}

func (fakeFlip) Relation() accountant.Relation       { return accountant.OneVote }
func (fakeFlip) Votes() []votefile.Input             { return []votefile.Input{votefile.TwoClass} }
func (fakeFlip) Needs(votefile.Input) ensemble.Needs { return ensemble.Needs{} }
func (fakeFlip) Words() ensemble.Words               { return ensemble.Words{} }

func (m fakeFlip) Missing(votefile.Input) error {
	if m.FlipEps == 0 {
		return fmt.Errorf("fake-flip needs its flip-eps")
	}
	return nil
}

func (fakeFlip) FromHeader(meta *votefile.LabelMeta) (ensemble.Mechanism, error) {
	var m fakeFlip
	err := json.Unmarshal(meta.Settings, &m)
	return m, err
}

func (m fakeFlip) Plan(votefile.Input) ensemble.Planned {
	return ensemble.Planned{Setting: "target eps", Flag: "flip-eps", With: func(v float64) ensemble.Mechanism { m.FlipEps = v; return m }}
}

func (m fakeFlip) Labeler(_ context.Context, _ votefile.Input, k, _ int, _ accountant.Guarantee, _ ensemble.Options) (ensemble.Labeler, string, error) {
	g, err := gamma.Const(k, math.Tanh(m.FlipEps/2))
	if err != nil {
		return nil, "", err
	}
	return &flipLabeler{m: m, k: k, g: g, privacy: ensemble.Privacy{Spend: accountant.ApproxStep(accountant.Guarantee{Eps: m.FlipEps}),
		Source: "randomized response on the majority", Relation: accountant.OneVote}}, "the fake randomized response", nil
}

type flipLabeler struct {
	m       fakeFlip
	k       int
	g       gamma.Gamma
	privacy ensemble.Privacy
}

func (l *flipLabeler) Name() provenance.MechanismName { return l.m.Name() }
func (l *flipLabeler) K() int                         { return l.k }
func (l *flipLabeler) Classes() int                   { return 2 }
func (l *flipLabeler) Privacy() ensemble.Privacy      { return l.privacy }
func (l *flipLabeler) Mechanism() ensemble.Mechanism  { return l.m }
func (l *flipLabeler) Gamma() gamma.Gamma             { return l.g }

func (l *flipLabeler) Aggregate(votes []byte, src *noise.Source) (byte, error) {
	ones := 0
	for _, v := range votes {
		ones += int(v)
	}
	label := byte(0)
	if 2*ones > l.k {
		label = 1
	}
	if src.Float64() < (1-l.g[0])/2 {
		label = 1 - label
	}
	return label, nil
}

func (l *flipLabeler) Answer(q *votefile.Query, src *noise.Source) (int, bool, error) {
	b, err := l.Aggregate(q.Votes, src)
	return int(b), true, err
}

// TestFakeTwoClassMechanism: a two-class mechanism registered beside
// darrm's whose guarantee is its own setting's, needing neither the
// teachers' guarantee nor a target, releases from votes with or without
// a header, its summary stating its guarantee and no m·eps target (JSON
// m null), plan --votes planning its setting beside darrm's, and a ledger
// declared for it charged and witnessed by its labels.
func TestFakeTwoClassMechanism(t *testing.T) {
	ms, run := withFakes(t, fakeFlip{})
	dir := t.TempDir()
	info, err := ms.Lookup("fake-flip", votefile.TwoClass)
	if err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(dir, "bare.csv")
	checkFile(t, bare, info, "", 20)
	table := run("aggregate", bare, "--mechanism", "fake-flip", "--flip-eps", "0.5", "--partition", "keyed-hash", "--out", filepath.Join(dir, "bare-labels.csv"), "--seed", "1")
	for _, want := range []string{"20 labels released", "per query: (0.5, 0)-DP\n", "plays no part"} {
		if !strings.Contains(table, want) {
			t.Errorf("aggregate's table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "m·eps") {
		t.Errorf("aggregate's table states an m·eps target the fake does not have:\n%s", table)
	}

	votes := filepath.Join(dir, "votes.csv")
	read := checkFile(t, votes, info, "flip", 50)
	labels := filepath.Join(dir, "labels.csv")
	release := append([]string{"aggregate", votes, "--mechanism", "fake-flip", "--flip-eps", "0.05", "--out", labels, "--seed", "1"}, read...)
	var doc struct {
		Released int      `json:"released"`
		M        *float64 `json:"m"`
		PerQuery struct {
			Eps float64 `json:"eps"`
		} `json:"per_query"`
	}
	out := run(append(release, "--format", "json")...)
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Released != 50 || doc.M != nil || doc.PerQuery.Eps != 0.05 {
		t.Errorf("aggregate --format json: %+v, %v\n%s", doc, err, out)
	}
	compare := run(append([]string{"plan", "--votes", votes, "--votes-are", "public", "--queries", "5", "--K", "11", "--budget-eps", "2", "--budget-delta", "1e-5"}, read...)...)
	if !regexp.MustCompile(`fake-flip +│ flip-eps [0-9.]+ +│`).MatchString(compare) {
		t.Errorf("plan --votes does not plan the fake's flip-eps:\n%s", compare)
	}
	led := filepath.Join(dir, "flip.ledger")
	run("ledger", "init", led, "--votes", votes, "--budget-eps", "8", "--budget-delta", "1e-5", "--mechanism", "fake-flip", "--flip-eps", "0.05", "--queries", "50")
	if err := json.Unmarshal([]byte(run(append(release, "--ledger", led, "--format", "json")...)), &doc); err != nil || doc.Released != 50 {
		t.Fatalf("aggregate --ledger: %+v, %v", doc, err)
	}
	run("ledger", "verify", led, "--witness", labels)
}
