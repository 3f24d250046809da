package votefile

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/quotetest"
	"github.com/darrm/darrm/internal/tally"
)

type row struct {
	id    string
	votes string // e.g. "011"
}

// readAll reads every query of a vote file.
func readAll(data string, opts readOptions) (*voteReader, []row, error) {
	vr, err := newVoteReader(strings.NewReader(data), "votes", opts)
	if err != nil {
		return nil, nil, err
	}
	var rows []row
	for vr.Next() {
		q := vr.Query()
		var b strings.Builder
		for _, v := range q.Votes {
			b.WriteByte('0' + v)
		}
		rows = append(rows, row{string(q.ID), b.String()})
	}
	return vr, rows, vr.Err()
}

func TestReadValid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		data   string
		opts   readOptions
		format Format
		header bool
		hasID  bool
		rows   []row
	}{
		{"plain", "0,1,1\n1,1,0\n", readOptions{}, FormatCSV, false, false, []row{{"", "011"}, {"", "110"}}},
		{"no final newline", "0,1,1\n1,1,0", readOptions{}, FormatCSV, false, false, []row{{"", "011"}, {"", "110"}}},
		{"header", "t1,t2,t3\n0,1,1\n", readOptions{}, FormatCSV, true, false, []row{{"", "011"}}},
		{"header and id", "id,t1,t2,t3\nq1,0,1,1\nq2,1,1,1\n", readOptions{}, FormatCSV, true, true, []row{{"q1", "011"}, {"q2", "111"}}},
		{"header names id, ids 0/1", "ID,a,b,c\n0,0,1,1\n1,1,1,1\n", readOptions{}, FormatCSV, true, true, []row{{"0", "011"}, {"1", "111"}}},
		{"id without header", "q1,0,1,1\nq2,1,0,0\n", readOptions{}, FormatCSV, false, true, []row{{"q1", "011"}, {"q2", "100"}}},
		{"numeric ids", "17,0,1,1\n18,1,0,0\n", readOptions{}, FormatCSV, false, true, []row{{"17", "011"}, {"18", "100"}}},
		{"id column forced", "1,0,1,1\n2,1,0,0\n", readOptions{ID: present}, FormatCSV, false, true, []row{{"1", "011"}, {"2", "100"}}},
		{"header forced", "0,0,0\n0,1,1\n", readOptions{Header: present}, FormatCSV, true, false, []row{{"", "011"}}},
		{"CRLF, BOM, blanks", "\ufeff0,1,1\r\n\r\n  \n 1 , 1,0 \r\n", readOptions{}, FormatCSV, false, false, []row{{"", "011"}, {"", "110"}}},
		{"quoted fields", "\"a,\"\"b\",0,1,1\n\"c\",\"1\", 0 ,\"0\"\n", readOptions{}, FormatCSV, false, true, []row{{"a,\"b", "011"}, {"c", "100"}}},
		{"K = 1", "1\n0\n", readOptions{}, FormatCSV, false, false, []row{{"", "1"}, {"", "0"}}},
		{"jsonl arrays", "[0,1,1]\n[ 1 , 1 , 0 ]\n", readOptions{}, FormatJSONL, false, false, []row{{"", "011"}, {"", "110"}}},
		{"jsonl objects", `{"id":"q\"1","votes":[0,1,1]}` + "\n" + `{"votes":[1,1,1], "id": 7}` + "\n", readOptions{}, FormatJSONL, false, true, []row{{"q\"1", "011"}, {"7", "111"}}},
		{"jsonl escaped key", `{"v\u006ftes":[1,0,0],"id":"\u00e9"}` + "\n", readOptions{}, FormatJSONL, false, true, []row{{"é", "100"}}},
		{"jsonl forced", " [1,0,0]\n", readOptions{Format: FormatJSONL}, FormatJSONL, false, false, []row{{"", "100"}}},
	} {
		vr, rows, err := readAll(tc.data, tc.opts)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if vr.Format() != tc.format || vr.HasHeader() != tc.header || vr.HasID() != tc.hasID || vr.K() != len(tc.rows[0].votes) {
			t.Errorf("%s: format %v header %v id %v K %d; want %v %v %v %d", tc.name, vr.Format(), vr.HasHeader(), vr.HasID(), vr.K(), tc.format, tc.header, tc.hasID, len(tc.rows[0].votes))
		}
		if fmt.Sprint(rows) != fmt.Sprint(tc.rows) {
			t.Errorf("%s: rows %v, want %v", tc.name, rows, tc.rows)
		}
	}
}

func TestQueryPositions(t *testing.T) {
	vr, err := newVoteReader(strings.NewReader("a,b,c\n\n0,1,1\n1,1,1\n\n0,0,0\n"), "votes", readOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for vr.Next() {
		got = append(got, fmt.Sprintf("%d@%d", vr.Query().Index, vr.Query().Line))
	}
	if want := "[1@3 2@4 3@6]"; fmt.Sprint(got) != want {
		t.Errorf("index@line = %v, want %v", got, want)
	}
	if vr.BytesRead() != 26 {
		t.Errorf("BytesRead = %d, want 26", vr.BytesRead())
	}
}

func TestReadMalformed(t *testing.T) {
	long := "0,1,1\n" + strings.Repeat("1,", maxLineBytes) + "1\n"
	for _, tc := range []struct {
		name      string
		data      string
		opts      readOptions
		line, col int
		want      string
	}{
		{"empty", "", readOptions{}, 0, 0, "empty file"},
		{"blank lines only", "\n \n\t\n", readOptions{}, 0, 0, "empty file"},
		{"header only", "t1,t2,t3\n", readOptions{}, 1, 0, "no data rows after the header"},
		{"vote 2 on the only line", "1,0,2,1,0\n", readOptions{}, 1, 3, `vote above 1 (not quoted: a vote file's counts are private): must be 0 or 1`},
		{"vote 2 on the first line", "1,0,2,1,0\n1,0,1,1,0\n", readOptions{}, 1, 3, `vote above 1 (not quoted: a vote file's counts are private): must be 0 or 1`},
		{"vote -1 on the first line", "0,-1,1\n", readOptions{}, 1, 2, `vote "-1"`},
		{"id and vote 2 on the only line", "q1,0,2,1\n", readOptions{}, 1, 3, `vote above 1 (not quoted: a vote file's counts are private)`},
		{"short row", "0,1,1\n0,1\n", readOptions{}, 2, 0, "2 columns, want 3"},
		{"long row", "0,1,1\n0,1,1,1\n", readOptions{}, 2, 0, "4 columns, want 3"},
		{"vote 2", "0,1,1\n0,2,1\n", readOptions{}, 2, 2, `vote above 1 (not quoted: a vote file's counts are private): must be 0 or 1`},
		{"vote 1.0", "0,1,1\n1.0,1,1\n", readOptions{}, 2, 1, `vote "1.0"`},
		{"vote -1", "0,1,1\n1,1,-1\n", readOptions{}, 2, 3, `vote "-1"`},
		{"empty vote", "0,1,1\n1,,1\n", readOptions{}, 2, 2, `vote ""`},
		{"hint for an id", "0,1,1\n7,1,1\n", readOptions{}, 2, 1, "declare the id column"},
		{"even K", "0,1\n1,1\n", readOptions{}, 1, 0, "must be odd"},
		{"first row 01", "01,1,0,1,1,0,1,0,1,1,0\n", readOptions{}, 1, 1, `"01" is not a vote (votes are 0 or 1); read as an id, it would leave 10 votes, but K must be odd`},
		{"first row 1.0", "1.0,1,0\n", readOptions{}, 1, 1, `"1.0" is not a vote`},
		{"even K after an id", "q1,1,0\n", readOptions{}, 1, 0, "2 votes: the number of teachers K must be odd"},
		{"K mismatch", "0,1,1\n", readOptions{K: 5}, 1, 0, "3 votes, want K = 5"},
		{"binary", "\x00\x01\x02\x03", readOptions{}, 1, 0, "binary"},
		{"invalid UTF-8", "\xff\xfe0,1\n", readOptions{}, 1, 0, "binary"},
		{"prose", "Dear teachers,\nplease vote.\n", readOptions{}, 2, 0, "not a CSV or JSON lines vote file"},
		{"header and data mismatch", "id,a,b,c\nq1,0,1\n", readOptions{}, 2, 0, "3 columns, but the header has 4"},
		{"id column lost", "q1,0,1,1\n0,1,1\n", readOptions{}, 2, 0, "3 columns, want 4"},
		{"unclosed quote", "a,0,1,1\n\"q,1,1,1\n", readOptions{}, 2, 1, "not closed"},
		{"quote in field", "0,1,1\n0,1\"1,1\n", readOptions{}, 2, 2, "quote inside an unquoted field"},
		{"junk after quote", "0,1,1\n\"0\"x,1,1\n", readOptions{}, 2, 1, "after a quoted field"},
		{"line too long", long, readOptions{}, 2, 0, "line longer than 1048576 bytes"},
		{"forced header, no data", "0,1,1\n", readOptions{Header: present}, 1, 0, "no data rows"},
		{"jsonl short", "[0,1,1]\n[0,1]\n", readOptions{}, 2, 0, "2 votes, want K = 3"},
		{"jsonl vote 2", "[0,1,1]\n[0, 1, 2]\n", readOptions{}, 2, 8, "vote 3: above 1 (not quoted: a vote file's counts are private): must be 0 or 1"},
		{"jsonl vote true", "[0,1,true]\n", readOptions{}, 1, 6, "vote 3: \"true\""},
		{"jsonl vote 1.0", "[1.0]\n", readOptions{}, 1, 2, "vote 1: \"1.0\""},
		{"jsonl missing id", "{\"id\":1,\"votes\":[0,1,1]}\n{\"votes\":[0,1,1]}\n", readOptions{}, 2, 0, "no \"id\""},
		{"jsonl unexpected id", "[0,1,1]\n{\"id\":\"a\",\"votes\":[0,1,1]}\n", readOptions{}, 2, 0, "first row has none"},
		{"jsonl unknown key", "{\"vote\":[0,1,1]}\n", readOptions{}, 1, 2, "unknown key \"vote\""},
		{"jsonl duplicate key", "{\"votes\":[1],\"votes\":[1]}\n", readOptions{}, 1, 14, "duplicate key"},
		{"jsonl trailing data", "[0,1,1] x\n", readOptions{}, 1, 9, "unexpected data"},
		{"jsonl unclosed array", "[0,1,1\n", readOptions{}, 1, 7, "not closed"},
		{"jsonl unclosed string", "{\"id\":\"abc\n", readOptions{}, 1, 7, "not closed"},
		{"jsonl id array", "{\"id\":[1],\"votes\":[1]}\n", readOptions{}, 1, 7, "must be a JSON string or number"},
		{"jsonl id beyond float64", "{\"id\":1e999,\"votes\":[1]}\n", readOptions{}, 1, 7, "within the range of a float64"},
		{"jsonl empty object", "{}\n", readOptions{}, 1, 2, "empty object"},
		{"jsonl no votes key", "{\"id\":3}\n", readOptions{}, 1, 0, "no \"votes\" array"},
		{"jsonl no votes", "[]\n", readOptions{}, 1, 0, "no votes"},
		{"jsonl then csv", "[0,1,1]\n0,1,1\n", readOptions{}, 2, 1, "want a JSON array"},
		{"jsonl id ruled out", "{\"id\":1,\"votes\":[1]}\n", readOptions{ID: absent}, 1, 0, "ruled out"},
		{"jsonl id required", "[1]\n", readOptions{ID: present}, 1, 0, "declared"},
		{"csv forced on jsonl", "[0,1,1]\n[1,1,0]\n", readOptions{Format: FormatCSV}, 2, 1, `vote "[1"`},
	} {
		_, _, err := readAll(tc.data, tc.opts)
		var fe *formatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: err = %v, want a *formatError", tc.name, err)
			continue
		}
		if fe.File != "votes" || fe.Line != tc.line || fe.Column != tc.col || !strings.Contains(fe.Msg, tc.want) {
			t.Errorf("%s: got %q (line %d, column %d), want line %d, column %d, %q", tc.name, err, fe.Line, fe.Column, tc.line, tc.col, tc.want)
		}
	}
}

// TestErrorsDoNotQuoteRows checks that no error shows a row's votes.
func TestErrorsDoNotQuoteRows(t *testing.T) {
	for _, data := range []string{
		"1,1,1,1,1\n1,1,1,1\n",
		"1,1,1,1,1\n1,1,1,1,1,1\n",
		"[1,1,1,1,1]\n[1,1,1,1]\n",
	} {
		_, _, err := readAll(data, readOptions{})
		if err == nil || strings.Contains(err.Error(), "1,1") || strings.Contains(err.Error(), "[1") {
			t.Errorf("%q: error %v shows votes", data, err)
		}
	}
}

// TestReadLongFile checks that the reader streams: a file far larger than
// its buffer is read row by row.
func TestReadLongFile(t *testing.T) {
	const n = 200000
	r := io.MultiReader(strings.NewReader("id,a,b,c,d,e\n"), &repeatReader{line: []byte("q,1,0,1,1,0\n"), n: n})
	vr, err := newVoteReader(r, "votes", readOptions{})
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for vr.Next() {
		count++
		if l, err := tally.Votes(5, vr.Query().Votes); err != nil || l != 3 {
			t.Fatalf("row %d: %d votes for", count, l)
		}
	}
	if vr.Err() != nil || count != n {
		t.Errorf("read %d rows, err %v", count, vr.Err())
	}
}

type repeatReader struct {
	line []byte
	n    int
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	w := 0
	for w < len(p) && r.n > 0 {
		c := copy(p[w:], r.line[r.off:])
		w += c
		r.off += c
		if r.off == len(r.line) {
			r.off = 0
			r.n--
		}
	}
	if w == 0 {
		return 0, io.EOF
	}
	return w, nil
}

func FuzzVoteReader(f *testing.F) {
	for _, s := range []string{
		"0,1,1\n1,1,0\n", "id,a,b,c\nq1,0,1,1\n", "\"a\"\"b\",1,0,0\n", "[0,1,1]\n",
		`{"id":"x","votes":[1,0,1]}` + "\n", "a,b\n0,1\n", "\ufeff1\r\n0\r\n", "{\"id\":1e5,\"votes\":[1]}",
		"# " + statedJSON + "\nid,a,b,c\nq1,0,1,1\n", statedJSON + "\n[0,1,1]\n", "# x\n0\n",
		// A long number first, taken for a mistyped vote.
		strings.Repeat("9", 200) + ",1,0\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		vr, err := newVoteReader(bytes.NewReader(data), "fuzz", readOptions{})
		if err != nil {
			var fe *formatError
			if !errors.As(err, &fe) {
				t.Fatalf("error is not a *formatError: %v", err)
			}
			quotetest.Check(t, err.Error(), data, 1000)
			return
		}
		k := vr.K()
		if k < 1 || k%2 == 0 {
			t.Fatalf("K = %d", k)
		}
		if m := vr.Meta(); m != nil && (m.K != k || m.Validate() != nil) {
			t.Fatalf("header %+v for K = %d: %v", m, k, m.Validate())
		}
		for n := 1; vr.Next(); n++ {
			q := vr.Query()
			if q.Index != n || len(q.Votes) != k || (q.ID != nil) != vr.HasID() {
				t.Fatalf("query %d: index %d, %d votes, id %q", n, q.Index, len(q.Votes), q.ID)
			}
			for _, v := range q.Votes {
				if v > 1 {
					t.Fatalf("vote %d", v)
				}
			}
		}
		var fe *formatError
		if err := vr.Err(); err != nil {
			if !errors.As(err, &fe) {
				t.Fatalf("error is not a *formatError: %v", err)
			}
			quotetest.Check(t, err.Error(), data, 1000)
		}
	})
}

// FuzzCSVAgainstEncodingCSV checks the fast and slow CSV paths against
// encoding/csv: a file that encoding/csv reads as equal-length records of
// "0" and "1" must read the same here.
func FuzzCSVAgainstEncodingCSV(f *testing.F) {
	for _, s := range []string{"0,1,1\n1,1,0\n", "\"1\",0,1\r\n1,1,1", "1\n\n0\n", "0,1,1\n0,1,1,1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		records, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil || len(records) == 0 || len(records[0])%2 == 0 {
			return
		}
		var want []row
		for _, rec := range records {
			var b strings.Builder
			for _, f := range rec {
				if f != "0" && f != "1" {
					return
				}
				b.WriteString(f)
			}
			want = append(want, row{"", b.String()})
		}
		_, got, err := readAll(string(data), readOptions{Format: FormatCSV, Header: absent, ID: absent})
		if err != nil {
			t.Fatalf("encoding/csv reads %q, voteReader: %v", data, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q: rows %v, encoding/csv %v", data, got, want)
		}
	})
}

// FuzzRoundTrip writes random vote files in every layout and reads them back.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint8(3), uint8(5), uint8(0), []byte{1, 2, 3})
	f.Add(uint8(1), uint8(1), uint8(7), []byte{255})
	f.Add(uint8(5), uint8(3), uint8(9), []byte{7})
	f.Add(uint8(2), uint8(2), uint8(12), []byte{9})
	f.Fuzz(func(t *testing.T, kk, nn, layout uint8, bits []byte) {
		k := 2*int(kk%8) + 1
		n := int(nn%20) + 1
		header, hasID, jsonl, meta := layout&1 != 0, layout&2 != 0, layout&4 != 0, layout&8 != 0
		var file strings.Builder
		var want []row
		var m *Meta
		if meta {
			m = statedMeta(k, (float64(nn)+1)/8, float64(kk)/1e3)
			f := FormatCSV
			if jsonl {
				f = FormatJSONL
			}
			b, err := m.AppendHeader(nil, f)
			if err != nil {
				t.Fatal(err)
			}
			file.Write(b)
		}
		if header && !jsonl {
			if hasID {
				file.WriteString("id,")
			}
			for i := range k {
				if i > 0 {
					file.WriteByte(',')
				}
				fmt.Fprintf(&file, "t%d", i)
			}
			file.WriteByte('\n')
		}
		for q := range n {
			var v strings.Builder
			for i := range k {
				bit := 0
				if j := q*k + i; len(bits) > 0 && bits[(j/8)%len(bits)]>>(j%8)&1 == 1 {
					bit = 1
				}
				v.WriteByte(byte('0' + bit))
			}
			id := ""
			if hasID {
				id = fmt.Sprintf("q%d", q)
			}
			want = append(want, row{id, v.String()})
			vs := strings.Split(v.String(), "")
			switch {
			case jsonl && hasID:
				fmt.Fprintf(&file, "{\"id\":%q,\"votes\":[%s]}\n", id, strings.Join(vs, ","))
			case jsonl:
				fmt.Fprintf(&file, "[%s]\n", strings.Join(vs, ","))
			case hasID:
				fmt.Fprintf(&file, "%s,%s\n", id, strings.Join(vs, ","))
			default:
				fmt.Fprintf(&file, "%s\n", strings.Join(vs, ","))
			}
		}
		opts := readOptions{}
		if !jsonl {
			// A headerless first row of votes with an id such as "q0" is
			// detected; headers only when they are not 0/1 themselves.
			opts.Header = absent
			if header {
				opts.Header = present
			}
		}
		vr, got, err := readAll(file.String(), opts)
		if err != nil {
			t.Fatalf("%q: %v", file.String(), err)
		}
		if vr.HasID() != hasID || fmt.Sprint(got) != fmt.Sprint(want) || !reflect.DeepEqual(vr.Meta(), m) {
			t.Fatalf("%q: id %v rows %v header %+v, want %v %v %+v", file.String(), vr.HasID(), got, vr.Meta(), hasID, want, m)
		}
	})
}

// TestFormatAndPresenceText: the options of a vote file read back from the
// text they print, as flags give them.
func TestFormatAndPresenceText(t *testing.T) {
	for _, f := range []Format{FormatAuto, FormatCSV, FormatJSONL} {
		b, _ := f.MarshalText()
		var got Format
		if err := got.UnmarshalText(b); err != nil || got != f {
			t.Errorf("format %v: %q reads back as %v (%v)", f, b, got, err)
		}
	}
	for _, p := range []Presence{autoDetect, present, absent} {
		b, _ := p.MarshalText()
		var got Presence
		if err := got.UnmarshalText(b); err != nil || got != p {
			t.Errorf("presence %v: %q reads back as %v (%v)", p, b, got, err)
		}
	}
	var f Format
	var p Presence
	if f.UnmarshalText([]byte("xml")) == nil || p.UnmarshalText([]byte("maybe")) == nil {
		t.Error("xml or maybe accepted")
	}
	// Other spellings that flags and configurations use, in any case.
	for in, want := range map[string]Format{"NDJSON": FormatJSONL, "ndjson": FormatJSONL, "Npy": FormatNPY, "AUTO": FormatAuto} {
		if err := f.UnmarshalText([]byte(in)); err != nil || f != want {
			t.Errorf("format %q reads as %v (%v), want %v", in, f, err, want)
		}
	}
	for in, want := range map[string]Presence{"TRUE": present, "false": absent, "Yes": present, "NO": absent} {
		if err := p.UnmarshalText([]byte(in)); err != nil || p != want {
			t.Errorf("presence %q reads as %v (%v), want %v", in, p, err, want)
		}
	}
	if err := f.UnmarshalText([]byte("xml")); err == nil || err.Error() != `format "xml": must be auto, csv, jsonl or npy` {
		t.Errorf("format xml: %v", err)
	}
	if err := p.UnmarshalText([]byte("maybe")); err == nil || err.Error() != `"maybe": must be auto, yes or no` {
		t.Errorf("presence maybe: %v", err)
	}
}
