package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/discrete"
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

// TestFakeMechanism: a multi-class mechanism registered beside darrm's,
// with a setting of its own and none of theirs, runs through the command
// with no other edit: its flag and help bound from its tags, aggregate's
// table and JSON, plan --votes comparing it with darrm's, ledger init
// declaring its labels, and a release charged to that ledger.
func TestFakeMechanism(t *testing.T) {
	ms := setup.NewMechanisms(append(ensemble.Mechanisms(), fakeMax{}))
	run := func(args ...string) (string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := runOf(ms, testMemo, context.Background(), args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("darrm %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
		}
		return out.String(), errb.String()
	}
	dir := t.TempDir()
	info, err := ms.Lookup("fake-max", votefile.ManyClasses)
	if err != nil {
		t.Fatal(err)
	}
	votes := filepath.Join(dir, "votes.csv")
	read := checkFile(t, votes, info, "fake", 50) // K = 11 teachers, 3 classes, its header in the file

	help, _ := run("aggregate", "--help")
	if !strings.Contains(help, "--spread") || !strings.Contains(help, "fake-max: spread b of its noise") {
		t.Errorf("aggregate --help does not bind the fake's setting:\n%s", help)
	}

	labels := filepath.Join(dir, "labels.csv")
	release := append([]string{"aggregate", votes, "--mechanism", "fake-max", "--spread", "20", "--out", labels, "--seed", "1"}, read...)
	table, _ := run(release...)
	for _, want := range []string{"50 queries released", "mechanism: fake-max (fake), noise fake noise", "per released query: (0.1, 0)"} {
		if !strings.Contains(table, want) {
			t.Errorf("aggregate's table lacks %q:\n%s", want, table)
		}
	}
	out, _ := run(append(release, "--format", "json")...)
	var doc struct {
		Mechanism string   `json:"mechanism"`
		Released  int      `json:"released"`
		Noise     *string  `json:"noise"`
		Sigma2    *float64 `json:"sigma2"`
		PerQuery  struct {
			Eps float64 `json:"eps"`
		} `json:"per_query"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("aggregate --format json: %v\n%s", err, out)
	}
	if doc.Mechanism != "fake-max" || doc.Released != 50 || doc.Noise == nil || *doc.Noise != "fake noise" || doc.Sigma2 != nil || doc.PerQuery.Eps != 0.1 {
		t.Errorf("aggregate --format json: %+v\n%s", doc, out)
	}
	head, err := os.ReadFile(labels)
	if err != nil || !bytes.Contains(head, []byte(`"mechanism":"fake-max"`)) || !bytes.Contains(head, []byte(`"spread":20`)) {
		t.Errorf("the label file's header does not state the fake and its spread (%v):\n%.400s", err, head)
	}

	plan := append([]string{"plan", "--votes", votes, "--votes-are", "public", "--queries", "20", "--K", "11", "--budget-eps", "4", "--budget-delta", "1e-5"}, read...)
	if table, _ := run(plan...); !strings.Contains(table, "fake-max") {
		t.Errorf("plan --votes' table does not name the fake:\n%s", table)
	}
	compare, _ := run(append(plan, "--format", "json")...)
	var c struct {
		Rows []struct {
			Mechanism string `json:"mechanism"`
			NoFit     string `json:"no_fit"`
		} `json:"mechanisms"`
	}
	if err := json.Unmarshal([]byte(compare), &c); err != nil {
		t.Fatalf("plan --votes: %v\n%s", err, compare)
	}
	found := false
	for _, r := range c.Rows {
		found = found || r.Mechanism == "fake-max" && r.NoFit == ""
	}
	if !found {
		t.Errorf("plan --votes does not plan the fake:\n%s", compare)
	}

	led := filepath.Join(dir, "fake.ledger")
	run("ledger", "init", led, "--votes", votes, "--budget-eps", "8", "--budget-delta", "1e-5", "--mechanism", "fake-max", "--spread", "20", "--queries", "50")
	out, _ = run(append(release, "--ledger", led, "--format", "json")...)
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Released != 50 {
		t.Fatalf("aggregate --ledger: %v\n%s", err, out)
	}
	show, _ := run("ledger", "show", led)
	if !strings.Contains(show, "fake-max") {
		t.Errorf("ledger show does not name the fake's release:\n%s", show)
	}
}
