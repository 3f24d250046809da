package votefile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/quotetest"
)

// statedMeta is the header of k teachers stated (eps, Delta)-DP.
func statedMeta(k int, eps, delta float64) *Meta {
	return &Meta{Ensemble: "test-ensemble", K: k, Classes: 2, Layout: LayoutVotes, Relation: "private-teachers",
		Kind: "fixed", Partition: "shared", Teachers: []TeacherGroup{{Count: k, Eps: &eps, Delta: &delta, Source: TeacherSource{Method: "stated", Neighbours: AddRemove}}}}
}

// sgdGroup is a group of k teachers trained by a DP-SGD run.
func sgdGroup(k int) TeacherGroup {
	eps, delta, sigma, q, steps, runDelta := 2.5, 1e-4, 12.0, 30.0/1024, 171, 1e-4
	return TeacherGroup{Count: k, Eps: &eps, Delta: &delta, Source: TeacherSource{Method: "dp-sgd", Sigma: &sigma, SamplingRate: &q, Steps: &steps, Conversion: "improved", Delta: &runDelta}}
}

const statedJSON = `{"darrm-votes":1,"ensemble":"test-ensemble","K":3,"classes":2,"layout":"votes","relation":"private-teachers","kind":"fixed","partition":"shared","teachers":[{"count":3,"eps":0.1,"Delta":0.00001,"source":{"method":"stated","neighbours":"add-remove"}}]}`

// TestMetaStatedNeighbours: a stated guarantee records its neighbouring
// relation, add-remove; a header written before darrm recorded it reads
// as add-remove (and is written back with the key). The value is
// provenance.Check's to judge; its type is the header's form.
func TestMetaStatedNeighbours(t *testing.T) {
	old := strings.Replace(statedJSON, `,"neighbours":"add-remove"`, ``, 1)
	m, err := parseMeta([]byte(old))
	if err != nil {
		t.Fatalf("a header without neighbours: %v", err)
	}
	if b, _ := m.MarshalJSON(); string(b) != statedJSON {
		t.Errorf("an old header is written back as %s", b)
	}
	_, err = parseMeta([]byte(strings.Replace(statedJSON, `"add-remove"`, `1`, 1)))
	if want := `header field teachers[0].source.neighbours = 1: want a string`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("neighbours not a string: %v, want %q", err, want)
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
	hetero := statedMeta(5, 0.2, 1e-6)
	hetero.Teachers = append(statedMeta(2, 0.2, 1e-6).Teachers, statedMeta(3, 0.1, 1e-5).Teachers...)
	fresh := statedMeta(3, 0.5, 1e-3)
	fresh.Kind, fresh.Partition = "per-query", "file-position"
	sgd := statedMeta(11, 0, 0)
	sgd.Ensemble, sgd.Partition, sgd.Teachers = "mnist58-k11-é", "keyed-hash", []TeacherGroup{sgdGroup(11)}
	for _, m := range []*Meta{
		statedMeta(11, 0.1, 1e-5),
		statedMeta(1, 1, 0),
		sgd,
		{Ensemble: "sgd", K: 3, Classes: 2, Relation: "one-vote", Kind: "fixed", Partition: "keyed-hash",
			Teachers: []TeacherGroup{{Count: 3, Source: TeacherSource{Method: "none"}}}},
		fresh,
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
}

// TestMetaRules: every rule of the header's form, each broken once, names
// its field and value. The rules of what it states are provenance.Check's.
func TestMetaRules(t *testing.T) {
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
		// A value or key of any length is cut to its first 32 bytes.
		{"K a long array", swap(`"K":3`, `"K":[`+strings.Repeat("1,", 50)+`1]`), `header field K = [` + strings.Repeat("1,", 15) + `1...: want an integer`},
		{"a long unknown key", swap(`"K":3`, `"K":3,"`+strings.Repeat("k", 50)+`":1`), `header field header = "` + strings.Repeat("k", 32) + `"...: unknown key`},
		{"K even", swap(`"K":3`, `"K":4`), `header field K = 4: must be odd`},
		{"empty id", swap(`"ensemble":"test-ensemble"`, `"ensemble":""`), `header field ensemble: must name the teacher ensemble`},
		{"control in id", swap(`"ensemble":"test-ensemble"`, `"ensemble":"a\nb"`), `header field ensemble = "a\nb": must be printable`},
		{"one class", swap(`"classes":2`, `"classes":1`), `header field classes = 1: must be in [2, 524288]`},
		{"a billion classes", swap(`"classes":2`, `"classes":1000000000`), `header field classes = 1000000000: must be in [2, 524288]`},
		{"classes near 2^63", swap(`"classes":2`, `"classes":9000000000000000000`), `header field classes = 9000000000000000000: must be in [2, 524288]`},
		{"layout", swap(`"layout":"votes"`, `"layout":"rows"`), `layout "rows": must be one of votes, counts`},
		{"relation a number", swap(`"relation":"private-teachers"`, `"relation":1`), `header field relation = 1: want a name (a string)`},
		{"no teachers", swap(`[{"count":3,"eps":0.1,"Delta":0.00001,"source":{"method":"stated","neighbours":"add-remove"}}]`, `[]`), `header field teachers: must list`},
		{"counts", swap(`"count":3`, `"count":2`), `header field teachers: the counts sum to 2 teachers, but K = 3`},
		{"count 0", swap(`"count":3`, `"count":0`), `header field teachers[0].count = 0: must be in [1, K] = [1, 3]`},
		{"eps a string", swap(`"eps":0.1`, `"eps":"0.1"`), `header field teachers[0].eps = "0.1": want a number`},
		{"source missing", swap(`,"source":{"method":"stated","neighbours":"add-remove"}`, ``), `header field teachers[0].source: is missing`},
		{"method missing", swap(`"method":"stated",`, ``), `header field teachers[0].source.method: is missing`},
		{"steps a fraction", swap(`"method":"stated"`, `"method":"dp-sgd","steps":1.5`), `header field teachers[0].source.steps = 1.5: want an integer`},
	} {
		_, err := parseMeta([]byte(tc.json))
		var he *HeaderError
		if !errors.As(err, &he) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a *HeaderError with %q", tc.name, err, tc.want)
		}
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
		var fe *formatError
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
	bad := statedMeta(3, 0.1, 1e-5)
	bad.Ensemble = ""
	for _, m := range []*Meta{statedMeta(5, 0.1, 1e-5), bad} {
		if err := WriteVotes(&bytes.Buffer{}, m, nil, votes); err == nil {
			t.Errorf("header %+v written for K = 3 votes", m)
		}
	}
}

// TestMetaText: the layout reads back from its name.
func TestMetaText(t *testing.T) {
	for _, l := range []Layout{LayoutVotes, LayoutCounts} {
		b, _ := l.MarshalText()
		var got Layout
		if err := got.UnmarshalText(b); err != nil || got != l {
			t.Errorf("%v: %q reads back as %v (%v)", l, b, got, err)
		}
	}
}

// FuzzVoteMeta checks that any header the parser accepts is valid, writes
// back to an equal header, and that every refusal is a *HeaderError.
func FuzzVoteMeta(f *testing.F) {
	m := statedMeta(3, 0, 0)
	m.Teachers = []TeacherGroup{sgdGroup(3)}
	sgd, _ := m.MarshalJSON()
	for _, s := range []string{statedJSON, string(sgd), `{"darrm-votes":1}`, `{"darrm-votes":2,"x":[]}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMeta(b)
		if err != nil {
			var he *HeaderError
			if !errors.As(err, &he) {
				t.Fatalf("%q: error is not a *HeaderError: %v", b, err)
			}
			quotetest.Check(t, err.Error(), b, 1000)
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("%q: parsed, but %v", b, err)
		}
		out, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseMeta(out)
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("%q: written as %s, read back %+v (%v)", b, out, again, err)
		}
	})
}

// TestFixtureHeader: the README's vote file has its header: 11 teachers
// stated (0.1, 1e-5)-DP.
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
	want := statedMeta(11, 0.1, 1e-5)
	want.Ensemble = "testdata-votes-K11"
	if vr.Err() != nil || n != 20 || !reflect.DeepEqual(m, want) {
		t.Errorf("%d queries (%v), header %+v", n, vr.Err(), m)
	}
}
