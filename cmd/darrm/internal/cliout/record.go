package cliout

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Field is one named value of a result.
type Field struct {
	Key string
	Val any
}

// Record is a result as an ordered list of fields: tables, CSV columns and
// JSON keys all keep the order in which a command lists them.
type Record []Field

// MarshalJSON writes the record as a JSON object with its keys in order.
func (r Record) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range r {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.Val)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (r Record) keys() []string {
	ks := make([]string, len(r))
	for i, f := range r {
		ks[i] = f.Key
	}
	return ks
}

// Values formats r's values: exactly (round-tripping floats) for CSV, with
// six significant digits for tables; an absent value (nil) is "".
func (r Record) Values(exact bool) []string {
	vs := make([]string, len(r))
	for i, f := range r {
		if p, ok := f.Val.(*float64); ok && p != nil {
			f.Val = *p
		}
		switch v := f.Val.(type) {
		case float64:
			if exact {
				vs[i] = Float(v)
			} else {
				vs[i] = FloatN(v, 6)
			}
		case nil, *float64: // absent
		case []string:
			vs[i] = strings.Join(v, " ")
		case []float64:
			// As a list flag takes it (--levels 80,70,61), not as Go
			// prints a slice.
			parts := make([]string, len(v))
			for j, x := range v {
				parts[j] = Float(x)
				if !exact {
					parts[j] = FloatN(x, 6)
				}
			}
			vs[i] = strings.Join(parts, ",")
		default:
			vs[i] = fmt.Sprint(v)
		}
	}
	return vs
}

// WriteRecord prints one result: a two-column table, one CSV row, or a JSON
// object. A table's value wider than a cell (noteWidth) is a numbered note
// under it.
func WriteRecord(w io.Writer, f Format, r Record) error {
	switch f {
	case JSON:
		return WriteJSON(w, r)
	case CSV:
		return WriteCSV(w, r.keys(), [][]string{r.Values(true)})
	}
	t := NewText(w)
	rows := make([][]string, len(r))
	for i, v := range r.Values(false) {
		rows[i] = []string{r[i].Key, t.cell(v)}
	}
	t.Table([]string{"quantity", "value"}, rows)
	return t.Close()
}

// noteWidth is the widest value a table prints in a cell; a wider one (a
// theorem, a note) is a numbered note under the table.
const noteWidth = 60

// cell returns v as a table's cell: v, or the marker of the note that says
// it when it is wider than noteWidth.
func (t *Text) cell(v string) string {
	if DisplayWidth(v) > noteWidth {
		return t.Note(v)
	}
	return v
}

// WriteRecords prints results that share their keys: a table or CSV with
// one row each, or a JSON object holding the common fields and the rows. A
// table's value wider than a cell, a "reference" among them, is a numbered
// note under it, after the common fields. JSON and CSV are written whole
// or not at all: a row that fails to marshal (a value of +Inf) leaves w
// as it was, never half a document.
func WriteRecords(w io.Writer, f Format, common Record, rows []Record) error {
	if len(rows) == 0 {
		return errors.New("no results")
	}
	if f != Table {
		var b bytes.Buffer
		s, err := NewStream(&b, f, common, Widths{})
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := s.Row(r); err != nil {
				return err
			}
		}
		if err := s.Close(); err != nil {
			return err
		}
		_, err = w.Write(b.Bytes())
		return err
	}
	t := NewText(w)
	cells := make([][]string, len(rows))
	for i, r := range rows {
		for j, v := range r.Values(false) {
			if r[j].Key == "reference" {
				v = t.Note(v)
			}
			cells[i] = append(cells[i], t.cell(v))
		}
	}
	t.Table(rows[0].keys(), cells)
	t.lines(common.settings())
	return t.Close()
}

// settings are the common fields of results as a table prints them below
// the rows: key=value, as many a line as fit within Width.
func (r Record) settings() []string {
	var items []string
	for i, v := range r.Values(false) {
		items = append(items, r[i].Key+"="+v)
	}
	return joinWithin(items, "  ", Width)
}

// lines writes lines that are within Width as they are.
func (t *Text) lines(ls []string) {
	for _, l := range ls {
		if t.err == nil {
			_, t.err = fmt.Fprintln(t.w, l)
		}
	}
}

// Widths measures the rows of a table before a Stream prints them: the
// width of each column, in the form a table prints its values.
type Widths struct {
	keys []string
	w    []int
}

// Add measures row r; every row has the keys of the first.
func (c *Widths) Add(r Record) {
	if c.keys == nil {
		c.keys = r.keys()
		for _, k := range c.keys {
			c.w = append(c.w, DisplayWidth(k))
		}
	}
	for i, v := range r.Values(false) {
		if i < len(c.w) {
			c.w[i] = max(c.w[i], DisplayWidth(v))
		}
	}
}

// Stream prints results that share their keys one row at a time, as
// WriteRecords prints a slice of them, so that any number of rows takes
// no more memory than one: the common fields and the rows of a JSON
// object, CSV rows with the common fields in each, or a table, whose
// widths (Widths of every row) must be known before its first row, with
// the common fields below it.
type Stream struct {
	w      io.Writer
	f      Format
	common Record
	rows   int
	// csv
	cw *csv.Writer
	// table
	table      *box
	headerDone bool
	keys       []string
}

// NewStream starts the results of common fields common in format f;
// widths are the widths of a table's columns (Widths), unused by the
// other formats.
func NewStream(w io.Writer, f Format, common Record, widths Widths) (*Stream, error) {
	s := &Stream{w: w, f: f, common: common}
	switch f {
	case JSON:
		// The object of the common fields and empty rows, as WriteJSON
		// prints it, up to the rows' "[".
		var b bytes.Buffer
		if err := WriteJSON(&b, append(common[:len(common):len(common)], Field{"rows", []Record{}})); err != nil {
			return nil, err
		}
		head, ok := bytes.CutSuffix(b.Bytes(), []byte("]\n}\n"))
		if !ok {
			return nil, fmt.Errorf("json rows: unexpected %q", b.Bytes())
		}
		_, err := w.Write(head)
		return s, err
	case CSV:
		s.cw = csv.NewWriter(w)
		return s, nil
	}
	s.keys = widths.keys
	s.table = newBox(w, widths.w)
	s.table.Start()
	return s, nil
}

// Row prints one result.
func (s *Stream) Row(r Record) error {
	s.rows++
	switch s.f {
	case JSON:
		raw, err := json.Marshal(r)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if s.rows > 1 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		if err := json.Indent(&b, raw, "    ", "  "); err != nil {
			return err
		}
		_, err = s.w.Write(b.Bytes())
		return err
	case CSV:
		if s.rows == 1 {
			if err := s.cw.Write(append(s.common.keys(), r.keys()...)); err != nil {
				return err
			}
		}
		if err := s.cw.Write(append(s.common.Values(true), r.Values(true)...)); err != nil {
			return err
		}
		// Flushed row by row, as a pipe's reader expects.
		s.cw.Flush()
		return s.cw.Error()
	}
	if !s.headerDone {
		s.table.Row(s.keys)
		s.table.Rule()
		s.headerDone = true
	}
	s.table.Row(r.Values(false))
	// Row by row, as a reader of a long stream expects.
	return s.table.Flush()
}

// Close ends the results; with no row at all, it is an error.
func (s *Stream) Close() error {
	if s.rows == 0 {
		return errors.New("no results")
	}
	switch s.f {
	case JSON:
		_, err := io.WriteString(s.w, "\n  ]\n}\n")
		return err
	case CSV:
		s.cw.Flush()
		return s.cw.Error()
	}
	if err := s.table.End(); err != nil {
		return err
	}
	t := NewText(s.w)
	t.lines(s.common.settings())
	return t.Close()
}

// joinWithin joins items with sep into lines of at most width columns,
// as many items a line as fit; an item wider than the width is wrapped
// on lines of its own (Wrap).
func joinWithin(items []string, sep string, width int) []string {
	var lines []string
	line := ""
	for _, it := range items {
		if line != "" && DisplayWidth(line)+len(sep)+DisplayWidth(it) > width {
			lines = append(lines, line)
			line = ""
		}
		if line == "" && DisplayWidth(it) > width {
			lines = append(lines, Wrap(it, width)...)
			continue
		}
		if line != "" {
			line += sep
		}
		line += it
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}
