package cliout

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// TestBoxAsBefore: the boxed tables are the ones darrm printed with
// tablewriter, byte for byte (testdata/boxes.json holds its output for
// random tables: cells with blanks at either end, tabs, carriage returns,
// line breaks, wide and combining characters, ragged rows, empty columns;
// and streamed rows of fixed widths), so that dropping the library,
// whose initialisation and tables were a tenth of a cached solve's
// start-up, changed no output.
func TestBoxAsBefore(t *testing.T) {
	b, err := os.ReadFile("testdata/boxes.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Header []string   `json:"header"`
		Rows   [][]string `json:"rows"`
		Stream bool       `json:"stream"`
		Out    string     `json:"out"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		var out bytes.Buffer
		if c.Stream {
			var w Widths
			w.keys = c.Header
			for _, h := range c.Header {
				w.w = append(w.w, DisplayWidth(h))
			}
			for _, r := range c.Rows {
				for j, v := range r {
					w.w[j] = max(w.w[j], DisplayWidth(v))
				}
			}
			bx := newBox(&out, w.w)
			bx.Start()
			bx.Row(w.keys)
			bx.Rule()
			for _, r := range c.Rows {
				bx.Row(r)
			}
			if err := bx.End(); err != nil {
				t.Fatal(err)
			}
		} else {
			bx := newBox(&out, boxWidths(c.Header, c.Rows))
			bx.Start()
			bx.Row(c.Header)
			if len(c.Rows) > 0 {
				bx.Rule()
			}
			for _, r := range c.Rows {
				bx.Row(r)
			}
			if err := bx.End(); err != nil {
				t.Fatal(err)
			}
		}
		if out.String() != c.Out {
			t.Errorf("case %d (%q, %q, stream %v):\n%s\nwant\n%s", i, c.Header, c.Rows, c.Stream, out.String(), c.Out)
		}
	}
}
