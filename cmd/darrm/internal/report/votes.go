package report

import (
	"fmt"
	"io"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/votefile"
)

// Votes is what darrm teachers vote wrote: the vote file, its layout and
// what its metadata header states of the teachers.
type Votes struct {
	Output  string // the file, or "standard output"
	Format  votefile.Format
	Layout  votefile.Layout
	Meta    *votefile.Meta
	Queries int
}

// Write prints the document in format f: one line for a table, as a
// command's summary of a file it wrote, or one record.
func (d Votes) Write(w io.Writer, f cliout.Format) error {
	m := d.Meta
	if f != cliout.Table {
		return cliout.WriteRecord(w, f, cliout.Record{field("output", d.Output), field("format", d.Format.String()), field("layout", d.Layout.String()),
			field("K", m.K), field("classes", m.Classes), field("queries", d.Queries), field("ensemble", m.Ensemble)})
	}
	what := "0/1 votes"
	if d.Layout == votefile.LayoutCounts {
		what = "vote counts"
	} else if m.Classes > 2 {
		what = "class indices"
	}
	header := "metadata header"
	if d.Format == votefile.FormatNPY {
		header = "no metadata header: a NumPy file holds the counts alone"
	}
	return cliout.WriteWrapped(w, fmt.Sprintf("votes: %s (%v, %s): %s of K = %d teachers, %d classes, %s; ensemble %s",
		cliout.Escape(d.Output), d.Format, header, what, m.K, m.Classes, plural.Of(d.Queries, "query", "queries"), cliout.Escape(m.Ensemble)))
}
