package cliout

import (
	"bytes"
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
		default:
			vs[i] = fmt.Sprint(v)
		}
	}
	return vs
}

// WriteRecord prints one result: a two-column table, one CSV row, or a JSON
// object.
func WriteRecord(w io.Writer, f Format, r Record) error {
	switch f {
	case JSON:
		return WriteJSON(w, r)
	case CSV:
		return WriteCSV(w, r.keys(), [][]string{r.Values(true)})
	}
	rows := make([][]string, len(r))
	for i, v := range r.Values(false) {
		rows[i] = []string{r[i].Key, v}
	}
	return WriteTable(w, []string{"quantity", "value"}, rows)
}

// WriteRecords prints results that share their keys: a table or CSV with
// one row each, or a JSON object holding the common fields and the rows. A
// table lists each distinct "reference" once, below the rows.
func WriteRecords(w io.Writer, f Format, common Record, rows []Record) error {
	if len(rows) == 0 {
		return errors.New("no results")
	}
	switch f {
	case JSON:
		return WriteJSON(w, append(common, Field{"rows", rows}))
	case CSV:
		out := make([][]string, len(rows))
		for i, r := range rows {
			out[i] = append(common.Values(true), r.Values(true)...)
		}
		return WriteCSV(w, append(common.keys(), rows[0].keys()...), out)
	}
	var header, refs []string
	seen := map[string]bool{}
	for _, f := range rows[0] {
		if f.Key != "reference" {
			header = append(header, f.Key)
		}
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		vs := r.Values(false)
		for j, f := range r {
			if f.Key != "reference" {
				out[i] = append(out[i], vs[j])
			} else if ref := fmt.Sprint(f.Val); !seen[ref] {
				seen[ref] = true
				refs = append(refs, ref)
			}
		}
	}
	if err := WriteTable(w, header, out); err != nil {
		return err
	}
	var setting []string
	for i, v := range common.Values(false) {
		setting = append(setting, common[i].Key+"="+v)
	}
	if _, err := fmt.Fprintln(w, strings.Join(setting, "  ")); err != nil {
		return err
	}
	for _, ref := range refs {
		if _, err := fmt.Fprintln(w, "reference: "+ref); err != nil {
			return err
		}
	}
	return nil
}
