package gamma

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
)

// maxTableBytes bounds the size of a gamma table read by ReadTable.
const maxTableBytes = 16 << 20

// Table is a noise function read from a file, with the problem parameters
// the file states (as printed by darrm solve --format json), if any: K,
// m, eps, Delta, delta and the neighbouring relation, each nil where the
// file states nothing.
type Table struct {
	Gamma                      Gamma
	K                          *int
	M, Eps, Delta, TargetDelta *float64
	Relation                   *accountant.Relation
}

// InRelation is the neighbouring relation the table's gamma is for: the
// one it states, else DaRRM's (private teachers). A gamma is certified,
// and private, in that relation only.
func (t Table) InRelation() accountant.Relation {
	if t.Relation != nil {
		return *t.Relation
	}
	return accountant.PrivateTeachers
}

// ReadTable reads a noise function in one of four forms: a JSON object
// with a "gamma" array (darrm solve --format json; its K, m, eps, Delta,
// delta and relation are kept), a JSON array of numbers, a CSV table with a header whose
// columns are l and gamma_<name> (darrm solve --format csv; the gamma_opt
// column, or the only gamma column), or numbers separated by white space or
// commas, with # starting a comment. A CSV table or list whose first line
// is "# " and a JSON object (solve's CSV) states the problem in that
// object, by the keys of solve's JSON. It checks the values (the rules of
// Gamma.CheckFor, for k teachers when k > 0) and, when the file states K,
// that it matches. Errors quote at most a few
// bytes of the input, so binary input is not echoed back.
//
// For a problem of k teachers (k > 0) the gamma must have k+1 values
// (Gamma.CheckFor), and an error says so, naming the count it has, before
// any other rule; k = 0 takes K from the table.
func ReadTable(r io.Reader, k int) (Table, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxTableBytes+1))
	if err != nil {
		return Table{}, fmt.Errorf("read gamma: %w", err)
	}
	if len(b) > maxTableBytes {
		return Table{}, fmt.Errorf("gamma table: larger than %d bytes", maxTableBytes)
	}
	trimmed := bytes.TrimSpace(b)
	var t Table
	switch {
	case len(trimmed) == 0:
		return Table{}, fmt.Errorf("gamma table is empty")
	case trimmed[0] == '{':
		var doc struct {
			Gamma []float64 `json:"gamma"`
			problemDoc
		}
		if err := json.Unmarshal(trimmed, &doc); err != nil {
			return Table{}, fmt.Errorf("gamma table: invalid JSON: %w", param.CutJSON(err))
		}
		if doc.Gamma == nil {
			return Table{}, fmt.Errorf("gamma table: JSON object has no \"gamma\" array")
		}
		t = doc.table(doc.Gamma)
	case trimmed[0] == '[':
		if err := json.Unmarshal(trimmed, &t.Gamma); err != nil {
			return Table{}, fmt.Errorf("gamma table: invalid JSON array: %w", param.CutJSON(err))
		}
	default:
		if i := bytes.IndexFunc(trimmed, func(r rune) bool { return r == utf8.RuneError || r == 0 }); i >= 0 {
			return Table{}, fmt.Errorf("gamma table: binary data at byte %d: want JSON, CSV or numbers", i)
		}
		lines := strings.Split(string(trimmed), "\n")
		var doc problemDoc
		if head, ok := strings.CutPrefix(strings.TrimSpace(lines[0]), "#"); ok && strings.HasPrefix(strings.TrimSpace(head), "{") {
			if err := json.Unmarshal([]byte(head), &doc); err != nil {
				return Table{}, fmt.Errorf("gamma table, line 1: the problem line (# and a JSON object, as darrm solve --format csv writes it): %w", param.CutJSON(err))
			}
		}
		g, err := readText(lines)
		if err != nil {
			return Table{}, err
		}
		t = doc.table(g)
	}
	// A zero is read as 0: given as -0, it was echoed as -0 in the JSON
	// of darrm verify and separate.
	for l, v := range t.Gamma {
		if v == 0 {
			t.Gamma[l] = 0
		}
	}
	if t.K != nil && *t.K+1 != len(t.Gamma) {
		return Table{}, fmt.Errorf("gamma table: K = %d but gamma has %d values: need K+1 = %d", *t.K, len(t.Gamma), *t.K+1)
	}
	check := t.Gamma.check
	if k > 0 {
		check = func() error { return t.Gamma.CheckFor(k) }
	}
	if err := check(); err != nil {
		return Table{}, fmt.Errorf("gamma table: %w", err)
	}
	return t, nil
}

// problemDoc is the problem a gamma file states, by the keys of darrm
// solve's JSON: its document, or the first line of its CSV.
type problemDoc struct {
	K           *int                 `json:"K"`
	M           *float64             `json:"m"`
	Eps         *float64             `json:"eps"`
	Delta       *float64             `json:"Delta"`
	TargetDelta *float64             `json:"delta"`
	Relation    *accountant.Relation `json:"relation"`
}

// table is the table of g for the problem d states.
func (d problemDoc) table(g Gamma) Table {
	return Table{Gamma: g, K: d.K, M: d.M, Eps: d.Eps, Delta: d.Delta, TargetDelta: d.TargetDelta, Relation: d.Relation}
}

// readText reads numbers separated by white space or commas, or, when the
// first line is a header, the gamma column of a CSV table.
func readText(lines []string) (Gamma, error) {
	split := func(line string) []string {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		return strings.FieldsFunc(line, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	}
	col, first := -1, 0
	for first < len(lines) && len(split(lines[first])) == 0 {
		first++
	}
	if first == len(lines) {
		return nil, errors.New("gamma table has no numbers: only comments (#) and blank lines")
	}
	if header := split(lines[first]); len(header) > 0 {
		// A number out of float64's range is a value, not a header.
		if _, err := strconv.ParseFloat(header[0], 64); err != nil && !errors.Is(err, strconv.ErrRange) {
			if col = gammaColumn(header); col < 0 {
				return nil, fmt.Errorf("gamma table, line %d: header %s has no gamma_opt column (nor a single gamma column)", first+1, param.Quote(strings.Join(header, ",")))
			}
			first++
		}
	}
	var g Gamma
	for n := first; n < len(lines); n++ {
		fields := split(lines[n])
		if col >= 0 {
			if len(fields) == 0 {
				continue
			}
			if col >= len(fields) {
				return nil, fmt.Errorf("gamma table, line %d: %d fields, the gamma column is field %d", n+1, len(fields), col+1)
			}
			fields = fields[col : col+1]
		}
		for _, f := range fields {
			v, err := strconv.ParseFloat(f, 64)
			switch {
			case errors.Is(err, strconv.ErrRange):
				return nil, fmt.Errorf("gamma table, line %d: %s is beyond the largest float64: a gamma value is in [0, 1]", n+1, param.Quote(f))
			case err != nil:
				return nil, fmt.Errorf("gamma table, line %d: %s is not a number", n+1, param.Quote(f))
			}
			g = append(g, v)
		}
	}
	return g, nil
}

// gammaColumn returns the index of the gamma_opt column of a CSV header, or
// of its only gamma_* column, or -1.
func gammaColumn(header []string) int {
	found := -1
	for i, h := range header {
		switch {
		case h == "gamma_opt" || h == "gamma":
			return i
		case strings.HasPrefix(h, "gamma_"):
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}
