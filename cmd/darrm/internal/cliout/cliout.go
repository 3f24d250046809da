// Package cliout formats darrm's command output: tables for people, JSON and
// CSV for scripts, and progress on stderr: a bar on a terminal, a line every
// LogInterval elsewhere.
package cliout

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"
)

// Format is an output format selected by --format: Table for people,
// JSON or CSV for scripts.
type Format string

// The formats every command accepts.
const (
	Table Format = "table"
	JSON  Format = "json"
	CSV   Format = "csv"
)

// ParseFormat validates the value of a --format flag.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Table, JSON, CSV:
		return f, nil
	}
	return "", fmt.Errorf("format %q: must be one of table, json, csv", s)
}

// UnmarshalText sets f from a format's name (ParseFormat), so that a
// Format works as a flag value.
func (f *Format) UnmarshalText(b []byte) error {
	v, err := ParseFormat(string(b))
	if err == nil {
		*f = v
	}
	return err
}

// MarshalText returns the format's name.
func (f Format) MarshalText() ([]byte, error) { return []byte(f), nil }

// WriteJSON writes v as indented JSON followed by a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteTable renders rows under header as a boxed table. A table wider
// than Width is split into tables of the same rows, each repeating the
// first column (the row's name) beside as many of the next columns as fit
// within Width, in order.
func WriteTable(w io.Writer, header []string, rows [][]string) error {
	for _, cols := range columnGroups(header, rows, Width) {
		sub := make([][]string, len(rows))
		for i, r := range rows {
			for _, j := range cols {
				cell := ""
				if j < len(r) {
					cell = r[j]
				}
				sub[i] = append(sub[i], cell)
			}
		}
		var h []string
		for _, j := range cols {
			h = append(h, header[j])
		}
		b := newBox(w, boxWidths(h, sub))
		b.Start()
		b.Row(h)
		if len(sub) > 0 {
			b.Rule()
		}
		for _, r := range sub {
			b.Row(r)
		}
		if err := b.End(); err != nil {
			return err
		}
	}
	return nil
}

// columnGroups returns the columns of each table that a table of header
// and rows is split into so that each is at most width columns wide: one
// group of every column when the whole fits; else the first column and
// then as many of the next as fit, in order, a column too wide for any
// table with the first alone beside it.
func columnGroups(header []string, rows [][]string, width int) [][]int {
	cw := make([]int, len(header))
	for j, h := range header {
		cw[j] = cellWidth(h)
	}
	for _, r := range rows {
		for j := range min(len(r), len(cw)) {
			cw[j] = max(cw[j], cellWidth(r[j]))
		}
	}
	// A boxed table is a border, then each column's cell, padded by a
	// space on either side, and its border: 1 + Σ (w + 3).
	total := 1
	for _, c := range cw {
		total += c + 3
	}
	all := make([]int, len(cw))
	for j := range all {
		all[j] = j
	}
	if total <= width || len(cw) < 3 {
		return [][]int{all}
	}
	var groups [][]int
	group, used := []int{0}, 1+cw[0]+3
	for j := 1; j < len(cw); j++ {
		if len(group) > 1 && used+cw[j]+3 > width {
			groups = append(groups, group)
			group, used = []int{0}, 1+cw[0]+3
		}
		group = append(group, j)
		used += cw[j] + 3
	}
	return append(groups, group)
}

// cellWidth is the width of a table's cell: that of its widest line.
func cellWidth(s string) int {
	w := 0
	for l := range strings.SplitSeq(s, "\n") {
		w = max(w, DisplayWidth(l))
	}
	return w
}

// WriteCSV writes header and rows as RFC 4180 CSV.
func WriteCSV(w io.Writer, header []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// Float formats x with the shortest representation that round-trips, so
// that tables and CSV lose no precision.
func Float(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// Floats formats a list of numbers as a flag of a list takes it, each by
// Float: 100,75,56.
func Floats(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = Float(x)
	}
	return strings.Join(s, ",")
}

// FloatN formats x with n significant digits for human-readable tables.
func FloatN(x float64, n int) string { return strconv.FormatFloat(x, 'g', n, 64) }

// IsTerminal reports whether w is a terminal, where Progress draws a bar
// rather than writing lines.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
