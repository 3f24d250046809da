package votefile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
)

// statedMeta is the header of k teachers stated (eps, Delta)-DP.
func statedMeta(k int, eps, delta float64) *Meta {
	return &Meta{Ensemble: "test-ensemble", K: k, Classes: 2, Layout: LayoutVotes, Relation: accountant.PrivateTeachers,
		Kind: Fixed, Partition: SharedData, Teachers: []TeacherGroup{{Count: k, Guarantee: accountant.Guarantee{Eps: eps, Delta: delta}}}}
}

// sgdRun is a DP-SGD run and the guarantee the accountant gives it.
func sgdRun(t testing.TB) (*DPSGDRun, accountant.Guarantee) {
	t.Helper()
	r := &DPSGDRun{SGM: accountant.SGM{Q: 30.0 / 1024, Sigma: 12, Steps: 171}, Conversion: accountant.ImprovedConversion, Delta: 1e-4}
	g, err := r.Guarantee()
	if err != nil {
		t.Fatal(err)
	}
	return r, g
}

const statedJSON = `{"darrm-votes":1,"ensemble":"test-ensemble","K":3,"classes":2,"layout":"votes","relation":"private-teachers","kind":"fixed","partition":"shared","teachers":[{"count":3,"eps":0.1,"Delta":0.00001,"source":{"method":"stated","neighbours":"add-remove"}}]}`

// TestMetaStatedNeighbours: a stated guarantee records its neighbouring
// relation, add-remove; a header written before darrm recorded it reads
// as add-remove (and is written back with the key), and a guarantee for
// replacing a record is refused.
func TestMetaStatedNeighbours(t *testing.T) {
	old := strings.Replace(statedJSON, `,"neighbours":"add-remove"`, ``, 1)
	m, err := ParseMeta([]byte(old))
	if err != nil {
		t.Fatalf("a header without neighbours: %v", err)
	}
	if b, _ := m.MarshalJSON(); string(b) != statedJSON {
		t.Errorf("an old header is written back as %s", b)
	}
	for _, tc := range []struct{ name, json, want string }{
		{"replace-one", strings.Replace(statedJSON, `"add-remove"`, `"replace-one"`, 1), `header field teachers[0].source.neighbours = replace-one: darrm's releases and the teachers' cap need each teacher's guarantee for adding or removing a record`},
		{"unknown", strings.Replace(statedJSON, `"add-remove"`, `"swap"`, 1), `header field teachers[0].source.neighbours = "swap": must be add-remove`},
		{"not a string", strings.Replace(statedJSON, `"add-remove"`, `1`, 1), `header field teachers[0].source.neighbours = 1: want a string`},
		{"non-private", strings.Replace(strings.Replace(statedJSON, `"eps":0.1,"Delta":0.00001,`, ``, 1), `"stated"`, `"none"`, 1), `only a stated source has neighbours`},
	} {
		_, err := ParseMeta([]byte(tc.json))
		var he *HeaderError
		if !errors.As(err, &he) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a *HeaderError with %q", tc.name, err, tc.want)
		}
	}
}

// TestMetaExactSyntax pins the header's bytes: other tools and the docs
// depend on them.
func TestMetaExactSyntax(t *testing.T) {
	b, err := statedMeta(3, 0.1, 1e-5).AppendHeader(nil, FormatCSV)
	if err != nil || string(b) != "# "+statedJSON+"\n" {
		t.Errorf("CSV header %q (%v), want %q", b, err, "# "+statedJSON)
	}
	b, err = statedMeta(3, 0.1, 1e-5).AppendHeader(nil, FormatJSONL)
	if err != nil || string(b) != statedJSON+"\n" {
		t.Errorf("JSON-lines header %q (%v)", b, err)
	}
}

func TestMetaRoundTrip(t *testing.T) {
	run, g := sgdRun(t)
	hetero := statedMeta(5, 0.2, 1e-6)
	hetero.Teachers = []TeacherGroup{{Count: 2, Guarantee: accountant.Guarantee{Eps: 0.2, Delta: 1e-6}}, {Count: 3, Guarantee: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}}}
	for _, m := range []*Meta{
		statedMeta(11, 0.1, 1e-5),
		statedMeta(1, 1, 0),
		{Ensemble: "mnist58-k11-é", K: 11, Classes: 2, Relation: accountant.PrivateTeachers, Kind: Fixed, Partition: KeyedHash,
			Teachers: []TeacherGroup{{Count: 11, Guarantee: g, Origin: FromDPSGD, DPSGD: run}}},
		{Ensemble: "sgd", K: 3, Classes: 2, Relation: accountant.OneVote, Kind: Fixed, Partition: KeyedHash,
			Teachers: []TeacherGroup{{Count: 3, Origin: NonPrivate}}},
		{Ensemble: "fresh", K: 3, Classes: 2, Relation: accountant.PrivateTeachers, Kind: PerQuery, Partition: FilePosition,
			Teachers: []TeacherGroup{{Count: 3, Guarantee: accountant.Guarantee{Eps: 0.5, Delta: 1e-3}}}},
		hetero,
	} {
		for _, f := range []Format{FormatCSV, FormatJSONL} {
			head, err := m.AppendHeader(nil, f)
			if err != nil {
				t.Fatalf("%s: %v", m.Ensemble, err)
			}
			row := strings.Repeat("1,", m.K-1) + "0\n"
			if f == FormatJSONL {
				row = "[" + strings.TrimSuffix(row, "\n") + "]\n"
			}
			vr, rows, err := readAll(string(head)+row+row, readOptions{})
			if err != nil {
				t.Fatalf("%s %v: %v", m.Ensemble, f, err)
			}
			if !reflect.DeepEqual(vr.Meta(), m) || len(rows) != 2 || vr.Format() != f || vr.Query().Line != 3 {
				t.Errorf("%s %v: read back %+v, %d rows", m.Ensemble, f, vr.Meta(), len(rows))
			}
		}
	}
	if c, het := hetero.Common(); c != (accountant.Guarantee{Eps: 0.2, Delta: 1e-5}) || !het {
		t.Errorf("common bound of (0.2, 1e-6) and (0.1, 1e-5): %v, heterogeneous %v", c, het)
	}
	if c, het := statedMeta(3, 0.1, 1e-5).Common(); c != (accountant.Guarantee{Eps: 0.1, Delta: 1e-5}) || het {
		t.Errorf("common bound of equal teachers: %v, heterogeneous %v", c, het)
	}
}

// TestMetaRules: every rule of the header, each broken once, names its
// field and value.
func TestMetaRules(t *testing.T) {
	run, g := sgdRun(t)
	sgd := func(edit func(*TeacherGroup)) string {
		r := *run
		tg := TeacherGroup{Count: 3, Guarantee: g, Origin: FromDPSGD, DPSGD: &r}
		edit(&tg)
		m := statedMeta(3, 0, 0)
		m.Teachers = []TeacherGroup{tg}
		b, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	swap := func(old, new string) string {
		if !strings.Contains(statedJSON, old) {
			t.Fatalf("%q not in the header", old)
		}
		return strings.Replace(statedJSON, old, new, 1)
	}
	for _, tc := range []struct {
		name, json, want string
	}{
		{"version 2", swap(`"darrm-votes":1`, `"darrm-votes":2`), `header field darrm-votes = 2: this darrm reads version 1 headers`},
		{"version missing", swap(`"darrm-votes":1,`, ``), `header field darrm-votes: is missing`},
		{"not an object", `[1,2]`, `header field header: must be a JSON object`},
		{"trailing data", statedJSON + ` x`, `unexpected data after the JSON object`},
		{"unknown key", swap(`"K":3`, `"K":3,"colour":"red"`), `header field header = "colour": unknown key`},
		{"wrong case", swap(`"K":3`, `"k":3`), `header field header = "k": unknown key`},
		{"repeated key", swap(`"K":3`, `"K":3,"K":5`), `header field header = "K": repeated key`},
		{"repeated teacher key", swap(`"eps":0.1`, `"eps":0.1,"eps":1`), `header field teachers[0] = "eps": repeated key`},
		{"null", swap(`"K":3`, `"K":null`), `header field K: must not be null`},
		{"K string", swap(`"K":3`, `"K":"3"`), `header field K = "3": want an integer`},
		{"K fraction", swap(`"K":3`, `"K":3.5`), `header field K = 3.5: want an integer`},
		{"K even", swap(`"K":3`, `"K":4`), `header field K = 4: must be odd`},
		{"empty id", swap(`"ensemble":"test-ensemble"`, `"ensemble":""`), `header field ensemble: must name the teacher ensemble`},
		{"control in id", swap(`"ensemble":"test-ensemble"`, `"ensemble":"a\nb"`), `header field ensemble = "a\nb": must be printable`},
		{"one class", swap(`"classes":2`, `"classes":1`), `header field classes = 1: must be in [2, 524288]`},
		{"a billion classes", swap(`"classes":2`, `"classes":1000000000`), `header field classes = 1000000000: must be in [2, 524288]`},
		{"classes near 2^63", swap(`"classes":2`, `"classes":9000000000000000000`), `header field classes = 9000000000000000000: must be in [2, 524288]`},
		{"layout", swap(`"layout":"votes"`, `"layout":"rows"`), `layout "rows": must be one of votes, counts`},
		{"relation", swap(`"relation":"private-teachers"`, `"relation":"friends"`), `relation "friends"`},
		{"kind", swap(`"kind":"fixed"`, `"kind":"sometimes"`), `kind "sometimes": must be one of fixed, per-query`},
		{"partition", swap(`"partition":"shared"`, `"partition":"random"`), `partition "random": must be one of keyed-hash, file-position, shared`},
		{"one-vote on shared data", swap(`"relation":"private-teachers"`, `"relation":"one-vote"`), `header field partition = shared: the one-vote relation does not hold on shared data`},
		{"one-vote by file position", strings.Replace(swap(`"relation":"private-teachers"`, `"relation":"one-vote"`), `"partition":"shared"`, `"partition":"file-position"`, 1),
			`header field partition = file-position: the one-vote relation does not hold on file-position shares: one added record moves every later record`},
		{"no teachers", swap(`[{"count":3,"eps":0.1,"Delta":0.00001,"source":{"method":"stated","neighbours":"add-remove"}}]`, `[]`), `header field teachers: must list`},
		{"counts", swap(`"count":3`, `"count":2`), `header field teachers: the counts sum to 2 teachers, but K = 3`},
		{"count 0", swap(`"count":3`, `"count":0`), `header field teachers[0].count = 0: must be in [1, K] = [1, 3]`},
		{"eps 0", swap(`"eps":0.1`, `"eps":0`), `header field teachers[0].eps = 0: must be a finite number > 0`},
		{"eps missing", swap(`"eps":0.1,`, ``), `header field teachers[0].eps: is missing`},
		{"Delta 1", swap(`"Delta":0.00001`, `"Delta":1`), `header field teachers[0].Delta = 1: must be in [0, 1)`},
		{"source missing", swap(`,"source":{"method":"stated","neighbours":"add-remove"}`, ``), `header field teachers[0].source: is missing`},
		{"method", swap(`"method":"stated"`, `"method":"trust-me"`), `method "trust-me": must be one of stated, dp-sgd, none`},
		{"stated with sigma", swap(`"method":"stated"`, `"method":"stated","sigma":3`), `header field teachers[0].source.sigma = 3: only a dp-sgd source has sigma`},
		{"non-private with eps", swap(`"method":"stated"`, `"method":"none"`), `header field teachers[0].eps = 0.1: non-private teachers (method none) have no guarantee`},
		{"non-private private-teachers", swap(`"eps":0.1,"Delta":0.00001,"source":{"method":"stated","neighbours":"add-remove"}`, `"source":{"method":"none"}`), `the private-teachers relation needs every teacher's (eps, Delta)`},
		{"dp-sgd without run", swap(`"method":"stated","neighbours":"add-remove"`, `"method":"dp-sgd"`), `header field teachers[0].source.sigma: is missing`},
		{"dp-sgd with neighbours", strings.Replace(sgd(func(*TeacherGroup) {}), `"method":"dp-sgd"`, `"method":"dp-sgd","neighbours":"add-remove"`, 1), `only a stated source has neighbours`},
		{"dp-sgd sigma 0", sgd(func(g *TeacherGroup) { g.DPSGD.Sigma = 0 }), `header field teachers[0].source.sigma = 0: must be a finite number > 0`},
		{"dp-sgd rate", sgd(func(g *TeacherGroup) { g.DPSGD.Q = 1.5 }), `header field teachers[0].source.sampling_rate = 1.5: must be in (0, 1]`},
		{"dp-sgd steps", sgd(func(g *TeacherGroup) { g.DPSGD.Steps = 0 }), `header field teachers[0].source.steps = 0: must be an integer >= 1`},
		{"dp-sgd delta", sgd(func(g *TeacherGroup) { g.DPSGD.Delta = 0 }), `header field teachers[0].source.delta = 0: must be in (0, 1)`},
		{"dp-sgd Delta below delta", sgd(func(g *TeacherGroup) { g.Delta = 1e-5 }), `header field teachers[0].Delta = 1e-05: the DP-SGD run is converted at delta = 0.0001: Delta must be >= it`},
		{"dp-sgd eps below the accountant", sgd(func(g *TeacherGroup) { g.Eps *= 0.999 }), `by the accountant: eps must be >= `},
		{"dp-sgd per query", strings.Replace(sgd(func(*TeacherGroup) {}), `"fixed"`, `"per-query"`, 1), `header field kind = per-query: DP-SGD trains fixed models`},
	} {
		_, err := ParseMeta([]byte(tc.json))
		var he *HeaderError
		if !errors.As(err, &he) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a *HeaderError with %q", tc.name, err, tc.want)
		}
	}
	if m, err := ParseMeta([]byte(sgd(func(g *TeacherGroup) { g.Eps *= 2; g.Delta = 1e-3 }))); err != nil || m.Teachers[0].Eps != 2*g.Eps {
		t.Errorf("a DP-SGD guarantee weaker than the accountant's is valid: %v", err)
	}
}

// TestReadMeta: the header in files, and what the reader checks against
// the data.
func TestReadMeta(t *testing.T) {
	csvHead := "# " + statedJSON + "\n"
	for _, tc := range []struct {
		name, data string
		line, col  int
		want       string
	}{
		{"K mismatch", csvHead + "1,0,1,1,0\n", 2, 0, "5 votes, but the metadata header (line 1) states K = 3"},
		{"K mismatch JSON lines", statedJSON + "\n[1]\n", 2, 0, "1 votes, but the metadata header (line 1) states K = 3"},
		{"header only", csvHead, 1, 0, "no votes after the metadata header"},
		{"header and blank lines only", csvHead + "\n\n", 3, 0, "no votes after the metadata header"},
		{"three classes", strings.Replace(csvHead, `"classes":2`, `"classes":3`, 1) + "0,1,1\n", 1, 0, "3 classes in layout votes: the 0/1 reader takes two-class votes"},
		{"comment that is not a header", "# votes of my teachers\n0,1,1\n", 1, 0, "a line starting with # must be the metadata header"},
		{"bad header", strings.Replace(csvHead, `"K":3`, `"K":-3`, 1) + "0,1,1\n", 1, 0, "header field K = -3"},
		{"second header", csvHead + csvHead + "0,1,1\n", 2, 0, "must be the first line of the file, once"},
		{"comment after the header", csvHead + "# made by hand\n0,1,1\n", 2, 0, "must be the first line of the file, once"},
		{"comment among the rows", csvHead + "0,1,1\n# {\"note\": \"made by hand\"}\n0,1,1\n", 3, 1, "the only one a vote file may have is its metadata header"},
		{"comment among rows with ids", "q1,0,1,1\nq2,1,1,0\n#3,1,1,0\n", 3, 1, "so no row's id may start with #"},
		{"comment after the header row", "id,a,b,c\n  # note\nq1,0,1,1\n", 2, 1, "a line starting with # is a comment line"},
		{"JSON-lines header twice", statedJSON + "\n" + statedJSON + "\n[0,1,1]\n", 2, 2, "unknown key \"darrm-votes\""},
		{"JSON header before CSV rows", statedJSON + "\n0,1,1\n", 2, 1, "want a JSON array"},
	} {
		_, _, err := readAll(tc.data, readOptions{})
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Line != tc.line || fe.Column != tc.col || !strings.Contains(fe.Msg, tc.want) {
			t.Errorf("%s: %v, want line %d column %d %q", tc.name, err, tc.line, tc.col, tc.want)
		}
	}
	// A header keeps every other part of the layout: a header row, ids,
	// blank lines, CRLF, a byte-order mark, a leading blank.
	for _, data := range []string{
		"\ufeff" + csvHead + "id,a,b,c\r\nq1,0,1,1\r\n\r\nq2,1,1,0\r\n",
		"\n  " + csvHead + "q1,0,1,1\nq2,1,1,0\n",
		statedJSON + "\n{\"id\":\"q1\",\"votes\":[0,1,1]}\n{\"id\":\"q2\",\"votes\":[1,1,0]}\n",
	} {
		vr, rows, err := readAll(data, readOptions{})
		if err != nil || vr.Meta() == nil || vr.Meta().K != 3 || fmt.Sprint(rows) != "[{q1 011} {q2 110}]" {
			t.Errorf("%q: %v, rows %v", data, err, rows)
		}
	}
	// Without a header Meta is nil; an id that merely contains the key is
	// a row.
	vr, _, err := readAll("{\"id\":\"darrm-votes\",\"votes\":[1]}\n", readOptions{})
	if err != nil || vr.Meta() != nil {
		t.Errorf("row with id darrm-votes: %v, meta %v", err, vr.Meta())
	}
}

// TestWriteVotesHeader: WriteVotes writes the header, which must fit the
// votes.
func TestWriteVotesHeader(t *testing.T) {
	votes := [][]byte{{1, 0, 1}, {0, 0, 1}}
	var b bytes.Buffer
	if err := WriteVotes(&b, statedMeta(3, 0.1, 1e-5), []string{"a", "b"}, votes); err != nil {
		t.Fatal(err)
	}
	if want := "# " + statedJSON + "\nid,t1,t2,t3\na,1,0,1\nb,0,0,1\n"; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
	for _, m := range []*Meta{statedMeta(5, 0.1, 1e-5), statedMeta(3, -1, 1e-5)} {
		if err := WriteVotes(&bytes.Buffer{}, m, nil, votes); err == nil {
			t.Errorf("header %+v written for K = 3 votes", m)
		}
	}
}

// TestMetaText: the header's named values read back from their names.
func TestMetaText(t *testing.T) {
	for _, v := range []interface {
		MarshalText() ([]byte, error)
	}{LayoutVotes, Fixed, PerQuery, KeyedHash, FilePosition, SharedData, FromStated, FromDPSGD, NonPrivate} {
		b, _ := v.MarshalText()
		p := reflect.New(reflect.TypeOf(v))
		if err := p.Interface().(interface{ UnmarshalText([]byte) error }).UnmarshalText(b); err != nil || p.Elem().Interface() != v {
			t.Errorf("%v: %q reads back as %v (%v)", v, b, p.Elem(), err)
		}
	}
	var k Kind
	if err := k.UnmarshalText(nil); err == nil || KindUnstated.String() != "unstated" || PartitionUnstated.String() != "unstated" {
		t.Errorf("the unstated kind reads back (%v) or prints %q", err, KindUnstated)
	}
}

// FuzzVoteMeta checks that any header the parser accepts is valid, writes
// back to an equal header, and that every refusal is a *HeaderError.
func FuzzVoteMeta(f *testing.F) {
	run, g := sgdRun(f)
	m := statedMeta(3, 0, 0)
	m.Teachers = []TeacherGroup{{Count: 3, Guarantee: g, Origin: FromDPSGD, DPSGD: run}}
	sgd, _ := m.MarshalJSON()
	for _, s := range []string{statedJSON, string(sgd), `{"darrm-votes":1}`, `{"darrm-votes":2,"x":[]}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMeta(b)
		if err != nil {
			var he *HeaderError
			if !errors.As(err, &he) {
				t.Fatalf("%q: error is not a *HeaderError: %v", b, err)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("%q: parsed, but %v", b, err)
		}
		out, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseMeta(out)
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("%q: written as %s, read back %+v (%v)", b, out, again, err)
		}
	})
}

// TestFixtureHeader: the README's vote file states its teachers, (0.1,
// 1e-5)-DP.
func TestFixtureHeader(t *testing.T) {
	f, err := os.Open("../testdata/votes-K11.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vr, err := newVoteReader(f, "votes-K11.csv", readOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for vr.Next() {
		n++
	}
	m := vr.Meta()
	if c, het := m.Common(); vr.Err() != nil || n != 20 || m.K != 11 || c != (accountant.Guarantee{Eps: 0.1, Delta: 1e-5}) || het || m.Teachers[0].Origin != FromStated {
		t.Errorf("%d queries (%v), header %+v", n, vr.Err(), m)
	}
}
