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

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
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

// WriteTable renders rows under header as a boxed table.
func WriteTable(w io.Writer, header []string, rows [][]string) error {
	// Headers are shown as written: automatic formatting upper-cases them
	// and spaces out symbols, which mangles names like "E err U(0,1)".
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithHeaderAlignment(tw.AlignLeft))
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
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

// FloatN formats x with n significant digits for human-readable tables.
func FloatN(x float64, n int) string { return strconv.FormatFloat(x, 'g', n, 64) }

// IsTerminal reports whether w is a terminal, where Progress draws a bar
// rather than writing lines.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
