package votefile

import (
	"errors"
	"fmt"
	"strings"
	"testing"
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
		{"unknown header key", `# {"darrm-labels":1,"mechanism":"gnmax","K":4,"classes":3,"relation":"one-vote","eps":0.5,"delta":0,"for_release":true,"x":1}` + "\nid,label\n1,0\n", `"x": unknown key`},
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

// FuzzLabelReader: no label file makes the reader panic, and what it
// accepts has labels within its classes.
func FuzzLabelReader(f *testing.F) {
	f.Add("id,label\n1,0\n2,1\n")
	f.Add("id,label,answered\nq1,3,1\nq2,,0\n")
	f.Add("# NOT FOR RELEASE\n# {\"darrm-labels\":1,\"mechanism\":\"gnmax\",\"K\":4,\"classes\":3,\"relation\":\"one-vote\",\"eps\":0.5,\"delta\":0,\"for_release\":false}\n{\"id\":\"a\",\"label\":2,\"answered\":true}\n")
	f.Fuzz(func(t *testing.T, in string) {
		lr, err := NewLabelReader(strings.NewReader(in), "fuzz")
		if err != nil {
			quotesRow(t, err, []byte(in))
			return
		}
		for lr.Next() {
			r := lr.Row()
			if meta := lr.Meta(); r.Answered != (r.Label >= 0) || meta != nil && r.Label >= meta.Classes {
				t.Fatalf("row %+v", r)
			}
		}
		if err := lr.Err(); err != nil {
			quotesRow(t, err, []byte(in))
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
// and read back as that object; a header of none has none.
func TestLabelMetaSettings(t *testing.T) {
	for _, tc := range []struct {
		name, settings, want string
	}{
		{"none", "", `"partition":"keyed-hash","eps":0.5`},
		{"empty", "{}", `"partition":"keyed-hash","eps":0.5`},
		{"two", `{"sigma2":40,"noise":"discrete"}`, `"partition":"keyed-hash","sigma2":40,"noise":"discrete","eps":0.5`},
		{"all", `{"threshold":200,"sigma1":150,"sigma2":40,"noise":"discrete"}`, `"partition":"keyed-hash","threshold":200,"sigma1":150,"sigma2":40,"noise":"discrete","eps":0.5`},
	} {
		for _, mech := range []string{"gnmax", `a,"eps":1,"b`} {
			m := &LabelMeta{Mechanism: mech, K: 4, Classes: 3, Relation: "one-vote", Partition: "keyed-hash", Settings: []byte(tc.settings), Eps: 0.5, Delta: 1e-5}
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
			if want := tc.settings; want == "{}" && got.Settings != nil || want != "{}" && string(got.Settings) != want || got.Mechanism != mech || got.Eps != 0.5 {
				t.Errorf("%s, mechanism %q: read back %+v (settings %s)", tc.name, mech, got, got.Settings)
			}
		}
	}
}
