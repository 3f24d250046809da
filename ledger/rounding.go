package ledger

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
)

// roundingError is a line whose charge is below its step's cost, as this
// darrm computes it, only in rounding: most likely the line of a darrm
// built otherwise (its Go math library and fused multiply-adds, on arm64
// or at GOAMD64=v3, round some quantities to other last digits) before
// charges carried the margin that covers that (accountant.Filter.Covers).
// It is refused all the same: a line may not charge less than this darrm
// computes.
type roundingError struct{ err error }

func (e *roundingError) Error() string { return e.err.Error() }

// sameButRounding reports whether the JSON values a and b have the same
// shape (keys, lengths, kinds) and numbers within a relative 1e-8 of
// each other: another build's rounding, with or without the margin a
// charge carries, far from any edit that matters.
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
		return errx == nil && erry == nil && math.Abs(x-y) <= 1e-8*math.Max(math.Abs(x), math.Abs(y))
	}
	return a == b
}
