package gamma

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// MaxTableBytes bounds the size of a gamma table read by ReadTable.
const MaxTableBytes = 16 << 20

// Table is a noise function read from a file, with the problem parameters
// the file states (as printed by darrm solve --format json), if any.
type Table struct {
	Gamma Gamma
	// Stated parameters; nil when the file does not give them.
	K                          *int
	M, Eps, Delta, TargetDelta *float64
}

// ReadTable reads a noise function in one of three forms: a JSON object
// with a "gamma" array (darrm solve --format json; its K, m, eps, Delta and
// delta are kept), a JSON array of numbers, or numbers separated by
// white space or commas, with # starting a comment. It checks the values
// (Gamma.Check) and, when the file states K, that it matches.
func ReadTable(r io.Reader) (Table, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxTableBytes+1))
	if err != nil {
		return Table{}, fmt.Errorf("read gamma: %w", err)
	}
	if len(b) > MaxTableBytes {
		return Table{}, fmt.Errorf("gamma table: larger than %d bytes", MaxTableBytes)
	}
	trimmed := bytes.TrimSpace(b)
	var t Table
	switch {
	case len(trimmed) == 0:
		return Table{}, fmt.Errorf("gamma table is empty")
	case trimmed[0] == '{':
		var doc struct {
			Gamma       []float64 `json:"gamma"`
			K           *int      `json:"K"`
			M           *float64  `json:"m"`
			Eps         *float64  `json:"eps"`
			Delta       *float64  `json:"Delta"`
			TargetDelta *float64  `json:"delta"`
		}
		if err := json.Unmarshal(trimmed, &doc); err != nil {
			return Table{}, fmt.Errorf("gamma table: invalid JSON: %w", err)
		}
		if doc.Gamma == nil {
			return Table{}, fmt.Errorf("gamma table: JSON object has no \"gamma\" array")
		}
		t = Table{Gamma: doc.Gamma, K: doc.K, M: doc.M, Eps: doc.Eps, Delta: doc.Delta, TargetDelta: doc.TargetDelta}
	case trimmed[0] == '[':
		if err := json.Unmarshal(trimmed, &t.Gamma); err != nil {
			return Table{}, fmt.Errorf("gamma table: invalid JSON array: %w", err)
		}
	default:
		for n, line := range strings.Split(string(trimmed), "\n") {
			if i := strings.IndexByte(line, '#'); i >= 0 {
				line = line[:i]
			}
			fields := strings.FieldsFunc(line, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
			for _, f := range fields {
				v, err := strconv.ParseFloat(f, 64)
				if err != nil {
					return Table{}, fmt.Errorf("gamma table, line %d: %q is not a number", n+1, f)
				}
				t.Gamma = append(t.Gamma, v)
			}
		}
	}
	if err := t.Gamma.Check(); err != nil {
		return Table{}, fmt.Errorf("gamma table: %w", err)
	}
	if t.K != nil && *t.K != t.Gamma.K() {
		return Table{}, fmt.Errorf("gamma table: K = %d but gamma has %d values: need K+1", *t.K, len(t.Gamma))
	}
	return t, nil
}
