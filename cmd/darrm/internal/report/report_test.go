package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/shuffleexp"
	"github.com/darrm/darrm/experiments/teachers"
	"github.com/darrm/darrm/experiments/transfer"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/provenance"
)

func TestGroupDigits(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "999": "999", "1000": "1,000", "31824": "31,824", "4300000000": "4,300,000,000"} {
		if got := groupDigits(in); got != want {
			t.Errorf("groupDigits(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSolveCSVColumns checks the layout darrm verify reads back: a
// comment line with the problem, l, then gamma_opt, then one column per
// baseline, one row per l.
func TestSolveCSVColumns(t *testing.T) {
	out := Solve{
		Problem: Problem{K: 3, M: 2, Eps: 0.1, Delta: 1e-6, TargetDelta: 2e-6},
		Gamma:   []float64{0, 0.5, 1, 0.5},
		Compare: []Evaluated{{Name: "Sub", Gamma: []float64{0.25, 0.5, 0.75, 1}}},
	}
	var b bytes.Buffer
	if err := out.Write(&b, cliout.CSV); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(b.String(), "\n"); !strings.HasPrefix(first, `# {"K":3,"m":2,"eps":0.1,"Delta":0.000001,"delta":0.000002,`) {
		t.Errorf("first line %q, want the problem", first)
	}
	r := csv.NewReader(&b)
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rows[0], ","); got != "l,gamma_opt,gamma_Sub" {
		t.Errorf("header %q", got)
	}
	if len(rows) != 5 || strings.Join(rows[2], ",") != "1,0.5,0.5" || strings.Join(rows[4], ",") != "3,0.5,1" {
		t.Errorf("rows %v", rows)
	}
}

func TestVerdictNamesEveryStatus(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range []gamma.Status{gamma.Certified, gamma.Tight, gamma.Violated} {
		v := Verdict(s)
		if seen[v] {
			t.Errorf("Verdict(%v) = %q repeats another status", s, v)
		}
		seen[v] = true
	}
	if !strings.HasPrefix(Verdict(gamma.Certified), "CERTIFIED") {
		t.Errorf("Verdict(Certified) = %q", Verdict(gamma.Certified))
	}
}

// TestSolveCertificatesAndRows: a document's certificates are those
// Certificates returns, beside their gammas, and its rows list every
// mechanism with its status.
func TestSolveCertificatesAndRows(t *testing.T) {
	sub, err := gamma.Const(5, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	d := Solve{
		Problem: Problem{K: 5, M: 2, Eps: 0.1, Delta: 0, TargetDelta: 0}, Prior: "uniform",
		Gamma:       []float64{1, 1, 1, 1, 1, 1}, // not 0.1-DP: a claim the file cannot make true
		Certificate: gamma.Certificate{Status: gamma.Certified},
		Compare:     []Evaluated{{Name: "sub", Gamma: sub, Evaluation: Evaluation{Certificate: gamma.Certificate{Status: gamma.Violated}}}},
	}
	gs, certs := d.Certificates()
	if len(gs) != 2 || len(certs) != 2 || !slices.Equal(gs[1], sub) {
		t.Fatalf("Certificates: %v, %v", gs, certs)
	}
	*certs[0], *certs[1] = gamma.Certificate{Status: gamma.Violated}, gamma.Certificate{Status: gamma.Certified}
	rows := d.Rows()
	if len(rows) != 2 || rows[0][6].Val != "opt" || rows[1][6].Val != "sub" || rows[0][len(rows[0])-1].Val != "violated" || rows[1][len(rows[1])-1].Val != "certified" {
		t.Errorf("rows %v", rows)
	}
}

// TestCheckDrawable: a solve --compare document is drawn beside the first
// when it has its gamma, a comparison and the first's actual
// distributions.
func TestCheckDrawable(t *testing.T) {
	sub, err := gamma.Const(5, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	first := Solve{
		Problem: Problem{K: 5, M: 2, Eps: 0.1}, Gamma: sub, Errors: []gamma.ErrorEstimate{{Actual: "0.5"}},
		Compare: []Evaluated{{Name: "sub", Gamma: sub}},
	}
	for _, tc := range []struct {
		name string
		mod  func(*Solve)
		want string // in the error; "" for a drawable document
	}{
		{"drawable", func(*Solve) {}, ""},
		{"no comparison", func(d *Solve) { d.Compare = nil }, "not the output of darrm solve --compare"},
		{"gamma of another K", func(d *Solve) { d.K = 7 }, "not the output of darrm solve --compare"},
		{"other actual distributions", func(d *Solve) { d.Errors = []gamma.ErrorEstimate{{Actual: "U(0,1)"}} }, "differ from a.json's"},
		{"two baselines", func(d *Solve) { d.Compare = []Evaluated{{Name: "sub", Gamma: sub}, {Name: "dsub", Gamma: sub}} }, ""},
		{"a baseline twice", func(d *Solve) {
			d.Compare = []Evaluated{{Name: "sub", Gamma: sub}, {Name: "dsub", Gamma: sub}, {Name: "sub", Gamma: sub}}
		}, `compared gamma 3 is named "sub", as gamma 1 is`},
	} {
		d := first
		tc.mod(&d)
		err := d.CheckDrawable(&first, "a.json")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func TestShufflegRows(t *testing.T) {
	r := &shuffleexp.Report{Dataset: "synthetic", Task: "mean", Eps: 1, Results: []shuffleexp.ReportResult{{Label: "DP-RR", FinalLossMean: 0.5}, {Label: "Public Only"}}}
	rows := Shuffleg{Report: r}.Rows()
	if len(rows) != 2 || rows[0][8].Val != "DP-RR" || rows[0][11].Val != 0.5 {
		t.Errorf("rows %v", rows)
	}
}

// TestShufflegWrite: the table marks non-contractive learning rates and
// gives the time; the JSON is the report alone, with no timing.
func TestShufflegWrite(t *testing.T) {
	r := &shuffleexp.Report{Dataset: "synthetic", Task: "mean", Notes: []string{"a note"}, Results: []shuffleexp.ReportResult{
		{Label: "DP-RR", LR: 0.5, Sigma: 2, Eps: 1, Contractive: false}, {Label: "Public Only", LR: 0.1, Contractive: true}}}
	var table, js bytes.Buffer
	if err := (Shuffleg{Report: r, Seconds: 1.25}).Write(&table, cliout.Table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DP-RR", "0.5 (!)", "Public Only", "note: a note", "1.2 s"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if err := (Shuffleg{Report: r, Seconds: 1.25}).Write(&js, cliout.JSON); err != nil || strings.Contains(js.String(), "1.25") || !strings.Contains(js.String(), `"dataset": "synthetic"`) {
		t.Errorf("JSON (%v):\n%s", err, js.String())
	}
}

// TestNewTransferTeachers describes two small trained ensembles.
func TestNewTransferTeachers(t *testing.T) {
	b := datasets.SyntheticBinary(300, 10, 1)
	seed := uint64(1)
	tr := transfer.Thesis(accountant.Disjoint)
	tr.K = 5
	priv, pub := tr.Configs("synthetic", 300, &seed)
	pe, err := teachers.Train(context.Background(), b, priv)
	if err != nil {
		t.Fatal(err)
	}
	ne, err := teachers.Train(context.Background(), b, pub)
	if err != nil {
		t.Fatal(err)
	}
	g := accountant.Guarantee{Eps: 0.09, Delta: 1e-4}
	tt := NewTransferTeachers(&transfer.Teachers{Private: pe, NonPrivate: ne, Cached: [2]bool{true, false}, Guarantee: g, Alpha: 26}, b.Test)
	p, n := tt.Private, tt.NonPrivate
	if p.Eps != 0.09 || p.Delta != 1e-4 || p.Alpha != 26 || p.Sigma != transfer.Sigma || p.Steps != priv.DP.Steps() || !slices.Equal(p.ShareSizes, pe.ShareSizes) || p.Partition != provenance.KeyedHash || p.Batch != transfer.Batch || !p.Cached || n.Cached {
		t.Errorf("private %+v, non-private %+v", p, n)
	}
	if p.AccuracyMean != transfer.Mean(pe.Accuracy) || n.Agreement != transfer.Agree(ne.Votes(b.Test)) {
		t.Errorf("accuracy %v, agreement %+v", p.AccuracyMean, n.Agreement)
	}
	// The experiment's document: K from the teachers, the note, the results.
	res := []transfer.Result{{Mechanism: "rr", Queries: 20}}
	doc := NewTransfer("synthetic", &transfer.Teachers{Private: pe, NonPrivate: ne}, b.Test, &transfer.Outcome{Results: res}, 9)
	if doc.K != 5 || doc.Seed != 9 || doc.Note == "" || len(doc.Results) != 1 || doc.Setting != accountant.Disjoint || len(doc.Teachers.Private.ShareSizes) != 5 {
		t.Errorf("transfer document %+v", doc)
	}
	// darrm teachers train's document of each ensemble: a row per teacher.
	for _, tc := range []struct {
		e    *teachers.Ensemble
		want string
	}{{pe, "synthetic,true,disjoint,keyed-hash," + pe.Meta.Ensemble + ",private-teachers,\"" + (accountant.Guarantee{Eps: *pe.Meta.Teachers[0].Eps, Delta: *pe.Meta.Teachers[0].Delta}).String() + " by DP-SGD"}, {ne, "synthetic,false,disjoint,keyed-hash," + ne.Meta.Ensemble + ",one-vote,none (non-private teachers),0,"}} {
		var out bytes.Buffer
		if err := (Teachers{tc.e}).Write(&out, cliout.CSV); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 6 || lines[0] != "dataset,private,setting,partition,ensemble,relation,guarantee,teacher,share_size,test_accuracy" || !strings.HasPrefix(lines[1], tc.want) {
			t.Errorf("teachers train:\n%s", out.String())
		}
	}
}

// TestProblemParams: a document echoes the library's problem and which
// values are defaults, and states it back.
func TestProblemParams(t *testing.T) {
	lib := constraints.Problem{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: 3e-5}
	for _, defaults := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		o := NewProblem(resolve.Resolved{Problem: lib, MDefault: defaults[0], DeltaDefault: defaults[1]})
		if o.K != 11 || o.MDefault != defaults[0] || o.DeltaDefault != defaults[1] || o.Params() != lib {
			t.Errorf("defaults %v: %+v states %+v", defaults, o, o.Params())
		}
	}
}

// TestShardJSON: the file of a shard keeps its field names, which darrm
// separate merge reads back.
func TestShardJSON(t *testing.T) {
	doc := Shard{Problem: Problem{K: 3, M: 1, Eps: 0.1}, Gamma: []float64{1, 0.5, 0.5, 1}, Separation: constraints.Separation{MaxF: 0.1, Shard: 1, Shards: 2}}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	json.Unmarshal(b, &keys)
	for _, k := range []string{"problem", "gamma", "separation", "seconds"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("shard file lacks %q: %s", k, b)
		}
	}
	var back Shard
	if err := json.Unmarshal(b, &back); err != nil || back.Problem != doc.Problem || back.Separation.Shard != 1 || back.Separation.Shards != 2 {
		t.Errorf("shard file does not read back: %+v, %v", back, err)
	}
}

// TestNewSolve: the document of a cache entry states the entry's gamma,
// certificate and solve, and that it was certified in this run.
func TestNewSolve(t *testing.T) {
	e := &cache.Entry{K: 3, Prior: "tp", Gamma: []float64{1, 0.5, 0.5, 1}, Utility: 0.4, SurrogateError: 0.3, UpperBound: 0.41, Gap: 0.02,
		Scale: 0.99, Seconds: 2, LPSolves: 5, Rows: 7, Passes: 3, TieBroken: true, Certificate: gamma.Certificate{Status: gamma.Tight}}
	for _, cached := range []bool{false, true} {
		d := NewSolve(Problem{K: 3, M: 1}, e, cached)
		if d.K != 3 || d.Prior != "tp" || d.Utility != 0.4 || d.SurrogateError != 0.3 || d.UpperBound != 0.41 || d.Gap != 0.02 || d.Scale != 0.99 ||
			d.Certificate.Status != gamma.Tight || !d.CertifiedNow || d.Cached != cached ||
			d.Solve != (SolveStats{Seconds: 2, LPSolves: 5, Rows: 7, Passes: 3, TieBroken: true}) || len(d.Gamma) != 4 {
			t.Errorf("cached %v: %+v", cached, d)
		}
	}
}

// TestSolveTableSaysWhichGamma: the table names the utility by its one
// name, and says in words which optimal gamma it prints when the tie-break
// did not finish, and nothing when it did.
func TestSolveTableSaysWhichGamma(t *testing.T) {
	e := &cache.Entry{K: 3, Prior: "uniform", Gamma: []float64{1, 0.5, 0.5, 1}, Utility: 0.4, UpperBound: 0.41, Scale: 1,
		Certificate: gamma.Certificate{Status: gamma.Certified, Configs: big.NewInt(120)}}
	for _, broken := range []bool{true, false} {
		e.TieBroken = broken
		var b bytes.Buffer
		if err := NewSolve(Problem{K: 3, M: 1, Eps: 0.1}, e, false).Write(&b, cliout.Table); err != nil {
			t.Fatal(err)
		}
		out := unwrapped(b.String())
		if !strings.Contains(out, "utility U(gamma) = 0.4") || strings.Contains(out, "objective") || strings.Contains(out, "failed") {
			t.Errorf("tie-break done %v:\n%s", broken, out)
		}
		if says := strings.Contains(out, "the tie-break that picks the canonical one did not finish"); says == broken {
			t.Errorf("tie-break done %v, note printed %v:\n%s", broken, says, out)
		}
	}
}

// TestCompared pairs each baseline with its evaluation, in order.
func TestCompared(t *testing.T) {
	bases := []gamma.Baseline{{Name: "sub", Label: "gamma_Sub", Gamma: gamma.Gamma{0, 1}}, {Name: "rr", Label: "RR", Gamma: gamma.Gamma{0.5, 0.5}}}
	evs := []Evaluation{{Utility: 1}, {Utility: 2}}
	for _, tc := range []struct {
		bases []gamma.Baseline
		evs   []Evaluation
	}{{nil, nil}, {bases, evs}} {
		ms := Compared(tc.bases, tc.evs)
		if len(ms) != len(tc.bases) {
			t.Fatalf("%d mechanisms for %d baselines", len(ms), len(tc.bases))
		}
		for i, m := range ms {
			if m.Name != tc.bases[i].Name || m.Label != tc.bases[i].Label || m.Utility != tc.evs[i].Utility || len(m.Gamma) != 2 {
				t.Errorf("mechanism %d: %+v", i, m)
			}
		}
	}
}

// TestIsGammaFile: solve's JSON and CSV are gamma files; a vote file is not.
func TestIsGammaFile(t *testing.T) {
	for in, want := range map[string]bool{
		`{"K":3,"gamma":[1,0.5,0.5,1]}`:  true,
		"{\n  \"K\": 3,\n  \"gamma\": [": true,
		"l,gamma_opt,gamma_sub\n0,1,1\n": true,
		"l, gamma":                       true,
		"id,t1,t2\n":                     false,
		`{"darrm-votes":1}`:              false,
	} {
		if IsGammaFile([]byte(in)) != want {
			t.Errorf("IsGammaFile(%q) = %v", in, !want)
		}
	}
}
