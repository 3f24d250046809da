package report

import (
	"fmt"
	"io"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/provenance"
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

// Sidecar is what darrm sidecar wrote: the metadata header Meta of the
// vote file Votes, for the teachers of Ensemble, to Path, after reading
// its Queries with it whole.
type Sidecar struct {
	Path, Votes string
	Ensemble    provenance.Binding
	Meta        *votefile.Meta
	Queries     int
}

// Write prints the document for people.
func (d Sidecar) Write(w io.Writer) error {
	t := cliout.NewText(w)
	t.Line("sidecar %s: the metadata header of %s, read with it whole (%d queries)", d.Path, d.Votes, d.Queries)
	t.Line("  %s", cliout.Escape(d.Ensemble.String()))
	t.Line("  votes: %s", votesText(d.Meta))
	return t.Close()
}

// votesText says what a header states of its votes' rows.
func votesText(m *votefile.Meta) string {
	switch {
	case m.Layout == votefile.LayoutCounts:
		return fmt.Sprintf("counts of %d classes, a row per query", m.Classes)
	case m.Input() == votefile.TwoClass:
		return "0/1 votes, a row per query"
	case m.Orientation == votefile.TeachersInRows:
		return fmt.Sprintf("class labels of %d classes, a row per teacher", m.Classes)
	}
	return fmt.Sprintf("class labels of %d classes, a row per query", m.Classes)
}
