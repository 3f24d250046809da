package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
)

// text is a summary printed for people: lines wrapped to cliout.Width
// columns, each reference to a theorem a numbered note ("[1]") printed
// under the summary, so that no line outgrows a terminal.
type text struct {
	w     io.Writer
	notes []string
	err   error
}

func newText(w io.Writer) *text { return &text{w: w} }

// line writes one line, formatted as fmt.Sprintf does and wrapped.
func (t *text) line(format string, a ...any) {
	if t.err == nil {
		t.err = cliout.WriteWrapped(t.w, strings.TrimRight(fmt.Sprintf(format, a...), " "))
	}
}

// note returns the marker of the note that says s, "[n]", numbering it
// if it is new.
func (t *text) note(s string) string {
	i := slices.Index(t.notes, s)
	if i < 0 {
		t.notes = append(t.notes, s)
		i = len(t.notes) - 1
	}
	return fmt.Sprintf("[%d]", i+1)
}

// table writes rows under header as a boxed table.
func (t *text) table(header []string, rows [][]string) {
	if t.err == nil {
		t.err = cliout.WriteTable(t.w, header, rows)
	}
}

// close writes the notes and returns the first error of any write.
func (t *text) close() error {
	if len(t.notes) > 0 {
		t.line("")
	}
	for i, n := range t.notes {
		t.line("[%d] %s", i+1, n)
	}
	return t.err
}
