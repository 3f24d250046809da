package ledger

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
)

// roundingError is a line whose charge differs from the one this darrm
// computes only in rounding: most likely the line of a darrm built
// otherwise, whose Go math library and fused multiply-adds (arm64,
// GOAMD64=v3) round some charges to other last digits. It is refused all
// the same: a line may not charge less than this darrm computes, and a
// check that would accept another build's rounding without letting an
// edit charge less is not built yet.
type roundingError struct{ err error }

func (e *roundingError) Error() string { return e.err.Error() }

// sameButRounding reports whether the JSON values a and b have the same
// shape (keys, lengths, kinds) and numbers within a relative 1e-9 of
// each other: another build's rounding, far from any edit that matters.
func sameButRounding(a, b []byte) bool {
	decode := func(x []byte) (any, bool) {
		d := json.NewDecoder(bytes.NewReader(x))
		d.UseNumber()
		var v any
		return v, d.Decode(&v) == nil
	}
	va, oka := decode(a)
	vb, okb := decode(b)
	return oka && okb && nearJSON(va, vb)
}

// nearJSON is sameButRounding of decoded values.
func nearJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !nearJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, nearJSON)
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		x, errx := a.Float64()
		y, erry := b.Float64()
		return errx == nil && erry == nil && math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y))
	}
	return a == b
}
