package votefile

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/quotetest"
)

// TestLabelReaderRefuses: malformed label files are *formatErrors that
// name the line; a file without a header (an older darrm's) is read.
func TestLabelReaderRefuses(t *testing.T) {
	head := `# {"darrm-labels":1,"mechanism":"gnmax","K":4,"classes":3,"relation":"one-vote","sigma2":40,"noise":"discrete","eps":0.5,"delta":0.00001,"for_release":true}` + "\n"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "no labels"},
		{"header only", head, "no labels"},
		{"bad header row", "id,class\n1,0\n", "want id,label or id,label,answered"},
		{"label without answer", "id,label,answered\n1,2,0\n", "a label must be given exactly when the query was answered"},
		{"answer without label", "id,label,answered\n1,,1\n", "a label must be given exactly"},
		{"answered 2", "id,label,answered\n1,1,2\n", "answered \"2\""},
		{"label beyond the classes", head + "id,label,answered\n1,3,1\n", "must be a class in [0, 3)"},
		{"two-class label 2", "id,label\n1,2\n", "must be a class in [0, 2)"},
		{"ragged row", "id,label\n1,0\n2,0,1\n", "3 columns, want 2"},
		{"second header", head + head + "id,label\n1,0\n", "a second metadata header"},
		{"repeated header key", `# {"darrm-labels":1,"mechanism":"gnmax","K":4,"classes":3,"relation":"one-vote","sigma2":40,"sigma2":400,"noise":"discrete","eps":0.5,"delta":0,"for_release":true}` + "\nid,label\n1,0\n", `"sigma2": repeated key`},
		{"repeated teachers key", `# {"darrm-labels":1,"mechanism":"gnmax","K":4,"classes":3,"relation":"one-vote","eps":0.5,"delta":0,"teachers":{"eps":1,"Delta":0,"eps":0.1},"for_release":true}` + "\nid,label\n1,0\n", `"eps": repeated key`},
		{"header version", `# {"darrm-labels":2,"mechanism":"gnmax","K":4,"classes":3,"relation":"one-vote","eps":0.5,"delta":0,"for_release":true}` + "\nid,label\n1,0\n", "this darrm reads version 1"},
		{"header without eps", `# {"darrm-labels":1,"mechanism":"gnmax","K":4,"classes":3,"relation":"one-vote","delta":0,"for_release":true}` + "\nid,label\n1,0\n", "eps = NaN"},
		{"ledger id not hex", `# {"darrm-labels":1,"mechanism":"gnmax","K":4,"classes":3,"relation":"one-vote","eps":0.5,"delta":0,"for_release":true,"ledger":"\u001b[2J0123456789abcdef0123456789abcd"}` + "\nid,label\n1,0\n", "must be a ledger's id"},
		{"ledger lines without a ledger", `# {"darrm-labels":1,"mechanism":"gnmax","K":4,"classes":3,"relation":"one-vote","eps":0.5,"delta":0,"for_release":true,"ledger_lines":2,"ledger_size":90,"ledger_head":"` + strings.Repeat("a", 64) + `"}` + "\nid,label\n1,0\n", "goes with the ledger's id"},
		{"ledger lines 0", `# {"darrm-labels":1,"mechanism":"gnmax","K":4,"classes":3,"relation":"one-vote","eps":0.5,"delta":0,"for_release":true,"ledger":"` + strings.Repeat("0", 32) + `","ledger_size":90,"ledger_head":"` + strings.Repeat("a", 64) + `"}` + "\nid,label\n1,0\n", "ledger_lines = 0: must be >= 1"},
		{"ledger size 0", `# {"darrm-labels":1,"mechanism":"gnmax","K":4,"classes":3,"relation":"one-vote","eps":0.5,"delta":0,"for_release":true,"ledger":"` + strings.Repeat("0", 32) + `","ledger_lines":2,"ledger_head":"` + strings.Repeat("a", 64) + `"}` + "\nid,label\n1,0\n", "ledger_size = 0: must be >= 1"},
		{"ledger head short", `# {"darrm-labels":1,"mechanism":"gnmax","K":4,"classes":3,"relation":"one-vote","eps":0.5,"delta":0,"for_release":true,"ledger":"` + strings.Repeat("0", 32) + `","ledger_lines":2,"ledger_size":90,"ledger_head":"abc"}` + "\nid,label\n1,0\n", "must be a ledger line's SHA-256"},
		{"JSON row without answered", "{\"id\":1,\"label\":1,\"answered\":true}\n{\"id\":2,\"label\":1}\n", "as in the first row"},
		{"JSON row with another key", "{\"id\":1,\"label\":1,\"votes\":[1]}\n", "want a JSON object"},
	} {
		lr, err := NewLabelReader(strings.NewReader(tc.in), "l.csv")
		for err == nil && lr.Next() {
		}
		if err == nil {
			err = lr.Err()
		}
		var fe *formatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a *formatError with %q", tc.name, err, tc.want)
		}
	}
	// A key that is not the header's own is a setting, the mechanism's to
	// read: one in another case is not read as the header's key.
	other := `# {"darrm-labels":1,"mechanism":"gnmax","K":4,"classes":3,"relation":"one-vote","x":1,"eps":0.5,"Eps":0,"delta":0,"for_release":true}` + "\nid,label\n1,0\n"
	if lr, err := NewLabelReader(strings.NewReader(other), "l.csv"); err != nil || string(lr.Meta().Settings) != `{"Eps":0,"x":1}` || lr.Meta().Eps != 0.5 {
		t.Errorf("a header of settings x and Eps: %v", err)
	}
	id := "0123456789abcdef0123456789abcdef"
	lr, err := NewLabelReader(strings.NewReader(strings.Replace(head, `"for_release":true`, `"for_release":true,"ledger":"`+id+`"`, 1)+"id,label,answered\n1,2,1\n"), "ledger.csv")
	if err != nil || lr.Meta() == nil || lr.Meta().Ledger != id || !strings.Contains(lr.Meta().HeaderLine(), `"ledger":"`+id+`"`) {
		t.Errorf("labels charged to a ledger: %v, %+v", err, lr.Meta())
	}
	at := `,"ledger_lines":7,"ledger_size":1234,"ledger_head":"` + strings.Repeat("ab", 32) + `"`
	lr, err = NewLabelReader(strings.NewReader(strings.Replace(head, `"for_release":true`, `"for_release":true,"ledger":"`+id+`"`+at, 1)+"id,label,answered\n1,2,1\n"), "ledger.csv")
	if m := lr.Meta(); err != nil || m == nil || m.LedgerLines != 7 || m.LedgerSize != 1234 || m.LedgerHead != strings.Repeat("ab", 32) || !strings.Contains(m.HeaderLine(), at) {
		t.Errorf("labels charged at a ledger's line: %v, %+v", err, lr.Meta())
	}
	lr, err = NewLabelReader(strings.NewReader("# NOT FOR RELEASE: seeded\nid,label,answered\nq1,4,1\nq2,,0\n"), "old.csv")
	if err != nil || lr.Meta() != nil || !lr.Next() || lr.Row().Label != 4 || !lr.Next() || lr.Row().Answered || lr.Next() || lr.Err() != nil {
		t.Errorf("a label file without a header: %v", err)
	}
}

// FuzzLabelReader: no label file makes the reader panic, what it accepts
// has labels within its classes, and a header it accepts, settings of any
// mechanism among them, is written again (HeaderLine) as one that reads
// back the same.
func FuzzLabelReader(f *testing.F) {
	f.Add("id,label\n1,0\n2,1\n")
	f.Add("id,label,answered\nq1,3,1\nq2,,0\n")
	f.Add("# NOT FOR RELEASE\n# {\"darrm-labels\":1,\"mechanism\":\"gnmax\",\"K\":4,\"classes\":3,\"relation\":\"one-vote\",\"eps\":0.5,\"delta\":0,\"for_release\":false}\n{\"id\":\"a\",\"label\":2,\"answered\":true}\n")
	f.Add(unitsHead + "id,label,answered,units\nq1,3,1,40\nq2,,0,40\nq3,1,1,95\n")
	f.Add(unitsHead + "{\"id\":1,\"label\":2,\"answered\":true,\"units\":7}\n{\"id\":2,\"label\":null,\"answered\":false,\"units\":9}\n")
	f.Add("# {\"darrm-labels\":1,\"mechanism\":\"fake\",\"K\":4,\"classes\":3,\"relation\":\"one-vote\",\"width\":[1, {\"a\":2}],\"Eps\":3,\"eps\":0.5,\"delta\":0,\"for_release\":true}\nid,label\n1,0\n")
	f.Fuzz(func(t *testing.T, in string) {
		lr, err := NewLabelReader(strings.NewReader(in), "fuzz")
		if err != nil {
			quotetest.Check(t, err.Error(), []byte(in), 1000)
			return
		}
		if meta := lr.Meta(); meta != nil {
			again, err := parseLabelMeta([]byte(strings.TrimPrefix(meta.HeaderLine(), "# ")))
			if err != nil || !reflect.DeepEqual(again, meta) {
				t.Fatalf("header %+v written as %s read back as %+v, %v", meta, meta.HeaderLine(), again, err)
			}
		}
		last := 0
		for lr.Next() {
			r := lr.Row()
			meta := lr.Meta()
			if r.Answered != (r.Label >= 0) || meta != nil && r.Label >= meta.Classes {
				t.Fatalf("row %+v", r)
			}
			if units := meta != nil && meta.LedgerUnits; r.Units < last || !units && r.Units != 0 || units && meta.Ledger == "" {
				t.Fatalf("row %+v after units %d (header %+v)", r, last, meta)
			}
			last = r.Units
		}
		if err := lr.Err(); err != nil {
			quotetest.Check(t, err.Error(), []byte(in), 1000)
		}
	})
}

// TestLabelFormat: the extension of the label file chooses its format,
// else the votes' format does, with CSV for NumPy votes.
func TestLabelFormat(t *testing.T) {
	for _, tc := range []struct {
		path  string
		votes Format
		want  Format
	}{
		{"labels.npy", FormatCSV, FormatNPY},
		{"labels.CSV", FormatNPY, FormatCSV},
		{"labels.jsonl", FormatCSV, FormatJSONL},
		{"labels.ndjson", FormatNPY, FormatJSONL},
		{"-", FormatJSONL, FormatJSONL},
		{"labels.txt", FormatCSV, FormatCSV},
		{"/dev/stdout", FormatNPY, FormatCSV},
	} {
		if got := LabelFormat(tc.path, tc.votes); got != tc.want {
			t.Errorf("LabelFormat(%q, %v) = %v, want %v", tc.path, tc.votes, got, tc.want)
		}
	}
}

// TestLabelWriterHeader: the header line goes out once, after the first
// reservation (which it can then state) and after the other comment
// lines, before the rows; a file of no labels has it too.
func TestLabelWriterHeader(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format Format
		labels int
		want   string
	}{
		{"csv", FormatCSV, 2, "# first\n# header after 2\nid,label\n1,1\n2,1\n"},
		{"jsonl", FormatJSONL, 1, "# first\n# header after 1\n{\"id\":1,\"label\":1}\n"},
		{"no labels", FormatJSONL, 0, "# first\n# header after -1\n"},
	} {
		var b strings.Builder
		lw, err := NewLabelWriter(&b, tc.format, false, "# first")
		if err != nil {
			t.Fatal(err)
		}
		reserved, headers := -1, 0
		lw.Reserve = func(n int) error { reserved = n; return nil }
		lw.Header = func() string { headers++; return fmt.Sprintf("# header after %d", reserved) }
		for i := range tc.labels {
			if err := lw.WriteLabel(&Query{Index: i + 1}, 1, true); err != nil {
				t.Fatal(err)
			}
		}
		if err := lw.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := lw.Flush(); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want || headers != 1 {
			t.Errorf("%s: %q, %d header calls; want %q, 1", tc.name, b.String(), headers, tc.want)
		}
	}
}

// TestLabelMetaSettings: a mechanism's settings go into the header line
// as keys of its own object, where the header has always held them
// (after the partition, before eps), whatever the header's strings hold,
// and read back as that object, whichever mechanism's they are; a header
// of none has none. SetSettings refuses a setting that is a key of the
// header's own, or one stated twice.
func TestLabelMetaSettings(t *testing.T) {
	for _, tc := range []struct {
		name, settings, want string
	}{
		{"none", "", `"partition":"keyed-hash","eps":0.5`},
		{"empty", "{}", `"partition":"keyed-hash","eps":0.5`},
		{"two", `{"sigma2":40,"noise":"discrete"}`, `"partition":"keyed-hash","sigma2":40,"noise":"discrete","eps":0.5`},
		{"all", `{"threshold":200,"sigma1":150,"sigma2":40,"noise":"discrete"}`, `"partition":"keyed-hash","threshold":200,"sigma1":150,"sigma2":40,"noise":"discrete","eps":0.5`},
		{"another mechanism's", `{"width":20.5,"Spread":[1,2],"a\"b":{"eps":1}}`, `"partition":"keyed-hash","width":20.5,"Spread":[1,2],"a\"b":{"eps":1},"eps":0.5`},
	} {
		for _, mech := range []string{"gnmax", `a,"eps":1,"b`} {
			m := &LabelMeta{Mechanism: mech, K: 4, Classes: 3, Relation: "one-vote", Partition: "keyed-hash", Eps: 0.5, Delta: 1e-5}
			if err := m.SetSettings([]byte(cmp.Or(tc.settings, "{}"))); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			line := m.HeaderLine()
			if !strings.Contains(line, tc.want) {
				t.Errorf("%s, mechanism %q: %s, want %s in it", tc.name, mech, line, tc.want)
				continue
			}
			got, err := parseLabelMeta([]byte(strings.TrimPrefix(line, "# ")))
			if err != nil {
				t.Errorf("%s, mechanism %q: %v", tc.name, mech, err)
				continue
			}
			var read, want map[string]any
			_ = json.Unmarshal(got.Settings, &read)
			_ = json.Unmarshal([]byte(cmp.Or(tc.settings, "{}")), &want)
			if len(want) == 0 && got.Settings != nil || !reflect.DeepEqual(read, want) && len(want) > 0 || got.Mechanism != mech || got.Eps != 0.5 {
				t.Errorf("%s, mechanism %q: read back %+v (settings %s)", tc.name, mech, got, got.Settings)
			}
		}
	}
	for _, bad := range []string{`{"eps":1}`, `{"sigma2":40,"ledger_lines":3}`, `{"darrm-labels":1}`, `{"width":1,"width":2}`, `[1]`, `{"width":`} {
		m := &LabelMeta{Settings: []byte(`{"sigma2":40}`)}
		if err := m.SetSettings([]byte(bad)); err == nil || string(m.Settings) != `{"sigma2":40}` {
			t.Errorf("settings %s: %v, settings now %s", bad, err, m.Settings)
		}
	}
}

// unitsHead is the metadata header of labels of a release charged per
// draw to a ledger, whose rows have the units column.
const unitsHead = `# {"darrm-labels":1,"mechanism":"progressive-gnmax","K":4,"classes":3,"relation":"one-vote","levels":[40,30],"kappa":1,"give_up":0.5,"noise":"discrete","eps":0.5,"delta":0.00001,"for_release":true,"ledger":"0123456789abcdef0123456789abcdef","ledger_lines":2,"ledger_size":90,"ledger_head":"` + "abababababababababababababababababababababababababababababababab" + `","ledger_units":true,"accounting":"gdp-filter","total":{"eps":0.5,"delta":0.00001,"argument":"gdp-filter budget"}}` + "\n"

// TestLabelUnits: the units column goes out, in CSV and JSON lines, when
// the writer's Units is set, and its header row names it; it reads back
// row by row; a writer refuses units that decrease. A reader refuses a
// units column that the header does not state (or no header), a header
// that states it over rows without it, and a column that is not a
// non-decreasing sequence of whole numbers >= 0 written plainly.
func TestLabelUnits(t *testing.T) {
	for _, format := range []Format{FormatCSV, FormatJSONL} {
		for _, answered := range []bool{false, true} {
			var b strings.Builder
			lw, err := NewLabelWriter(&b, format, answered)
			if err != nil {
				t.Fatal(err)
			}
			units := []int{3, 3, 8, 1 << 40}
			i := 0
			lw.Units = func() (int, error) { return units[i], nil }
			lw.Header = func() string { return strings.TrimSuffix(unitsHead, "\n") }
			for i = range units {
				if err := lw.WriteLabel(&Query{Index: i + 1}, 1, i != 1 || !answered); err != nil {
					t.Fatal(err)
				}
			}
			if err := lw.Flush(); err != nil {
				t.Fatal(err)
			}
			if format == FormatCSV && !strings.Contains(b.String(), ",units\n") {
				t.Errorf("%v, answered %v: no units column in the header row: %q", format, answered, b.String())
			}
			lr, err := NewLabelReader(strings.NewReader(b.String()), "units")
			var got []int
			for err == nil && lr.Next() {
				got = append(got, lr.Row().Units)
			}
			if err == nil {
				err = lr.Err()
			}
			if err != nil || !slices.Equal(got, units) {
				t.Errorf("%v, answered %v: read back units %v (%v), want %v, from %q", format, answered, got, err, units, b.String())
			}
		}
	}
	var b strings.Builder
	lw, _ := NewLabelWriter(&b, FormatCSV, true)
	next := 5
	lw.Units = func() (int, error) { return next, nil }
	if err := lw.WriteLabel(&Query{Index: 1}, 1, true); err != nil {
		t.Fatal(err)
	}
	next = 4
	if err := lw.WriteLabel(&Query{Index: 2}, 1, true); err == nil || !strings.Contains(err.Error(), "never decreases") {
		t.Errorf("units that decrease, written: %v", err)
	}

	noUnits := strings.Replace(unitsHead, `,"ledger_units":true`, "", 1)
	csvRow := func(units string) string {
		return unitsHead + "id,label,answered,units\nq1,2,1,5\nq2,,0," + units + "\n"
	}
	jsonRow := func(units string) string {
		return unitsHead + `{"id":1,"label":2,"answered":true,"units":5}` + "\n" + `{"id":2,"label":null,"answered":false,"units":` + units + "}\n"
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"a units column without a header", "id,label,answered,units\nq1,2,1,5\n", "a units column, which goes with a metadata header"},
		{"a units column the header does not state", noUnits + "id,label,answered,units\nq1,2,1,5\n", "a units column, which goes with a metadata header"},
		{"a JSON units key the header does not state", noUnits + `{"id":1,"label":2,"answered":true,"units":5}` + "\n", "a units column, which goes with"},
		{"a header that states units over rows without", unitsHead + "id,label,answered\nq1,2,1\n", "no units column, which the metadata header says"},
		{"JSON rows without units under a header that states them", unitsHead + `{"id":1,"label":2,"answered":true}` + "\n", "no units column, which the metadata header says"},
		{"units stated without a ledger", strings.Replace(unitsHead, `"ledger":"0123456789abcdef0123456789abcdef","ledger_lines":2,"ledger_size":90,"ledger_head":"abababababababababababababababababababababababababababababababab",`, "", 1) + "id,label,answered,units\nq1,2,1,5\n", "ledger_units = true: the units of a ledger's charge go with the ledger's id"},
		{"units before answered", unitsHead + "id,label,units,answered\nq1,2,5,1\n", "want id,label or id,label,answered"},
		{"a row without units", unitsHead + "id,label,answered,units\nq1,2,1,5\nq2,,0\n", "3 columns, want 4"},
		{"units that decrease", csvRow("4"), "units 4 after 5: the units a run's draws had taken never decrease"},
		{"negative units", csvRow("-6"), `units "-6": must be a whole number`},
		{"empty units", csvRow(""), `units "": must be a whole number`},
		{"units with a sign", csvRow("+6"), `units "+6": must be a whole number`},
		{"units with a leading zero", csvRow("07"), `units "07": must be a whole number`},
		{"fractional units", csvRow("7.0"), `units "7.0": must be a whole number`},
		{"units in exponent form", csvRow("1e3"), `units "1e3": must be a whole number`},
		{"units past 2^53", csvRow("9007199254740993"), `units "9007199254740993": must be a whole number in [0, 9007199254740992]`},
		{"units past int64", csvRow("99999999999999999999"), "must be a whole number"},
		{"JSON units that decrease", jsonRow("4"), "units 4 after 5"},
		{"JSON fractional units", jsonRow("5.5"), `units "5.5"`},
		{"JSON units as a string", jsonRow(`"6"`), `units "\"6\""`},
		{"JSON units null", jsonRow("null"), `units "null"`},
		{"JSON negative units", jsonRow("-1"), `units "-1"`},
		{"JSON units in exponent form", jsonRow("6e0"), `units "6e0"`},
		{"a JSON row without units", unitsHead + `{"id":1,"label":2,"answered":true,"units":5}` + "\n" + `{"id":2,"label":null,"answered":false}` + "\n", `"units": <units>}, as in the first row`},
	} {
		lr, err := NewLabelReader(strings.NewReader(tc.in), "l.csv")
		for err == nil && lr.Next() {
		}
		if err == nil {
			err = lr.Err()
		}
		var fe *formatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a *formatError with %q", tc.name, err, tc.want)
		}
	}
	// Equal units are allowed (a query whose draws were charged within
	// the same unit), and so is 0.
	lr, err := NewLabelReader(strings.NewReader(csvRow("5")), "l.csv")
	for err == nil && lr.Next() {
	}
	if err != nil || lr.Err() != nil || lr.Row().Units != 5 {
		t.Errorf("units that repeat: %v, %v", err, lr.Err())
	}
}
