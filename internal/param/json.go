package param

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// CutJSON is err, an error of encoding/json, with the value or the key it
// quotes cut (Cut): encoding/json quotes a value of the wrong type whole,
// a number of any length among them (a K of a megabyte of digits), and an
// unknown key whole, time.Time a string that is no time whole, and
// math/big a value that is no number whole, so a file from anyone would
// be echoed back whole in its error. Other errors are returned as they
// are.
func CutJSON(err error) error {
	var pe *time.ParseError
	if errors.As(err, &pe) {
		cut := *pe
		for _, s := range []*string{&cut.Value, &cut.ValueElem} {
			if c, ok := Cut(*s); ok {
				*s = c + "..."
			}
		}
		return &cut
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		value := te.Value
		if kind, v, ok := strings.Cut(value, " "); ok {
			c, cut := Cut(v)
			if value = kind + " " + c; cut {
				value += "..."
			}
		}
		if te.Field == "" {
			return fmt.Errorf("json: cannot unmarshal %s into %v", value, te.Type)
		}
		return fmt.Errorf("json: cannot unmarshal %s into field %s of type %v", value, te.Field, te.Type)
	}
	if err != nil {
		if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			if k, uerr := strconv.Unquote(key); uerr == nil {
				return fmt.Errorf("json: unknown field %s", Quote(k))
			}
		}
		// math/big's "cannot unmarshal %q into a *big.Int" (or Float,
		// Rat).
		const bigErr = "math/big: cannot unmarshal "
		if rest, ok := strings.CutPrefix(err.Error(), bigErr); ok {
			if q, qerr := strconv.QuotedPrefix(rest); qerr == nil {
				v, _ := strconv.Unquote(q)
				return errors.New(bigErr + Quote(v) + rest[len(q):])
			}
		}
	}
	return err
}
