package param

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"
)

// TestCutJSON: a number of the wrong type, an unknown key, a string
// that is no time and one that is no integer are cut to what Quote
// keeps; another error is left as it is.
func TestCutJSON(t *testing.T) {
	long := strings.Repeat("1", 1000)
	var v struct{ K int }
	err := CutJSON(json.Unmarshal([]byte(`{"K":`+long+`}`), &v))
	if err == nil || strings.Contains(err.Error(), long[:40]) || !strings.Contains(err.Error(), "field K of type int") {
		t.Errorf("a long number: %v", err)
	}
	var g []float64
	if err := CutJSON(json.Unmarshal([]byte(`[1e999]`), &g)); err == nil || err.Error() != "json: cannot unmarshal number 1e999 into float64" {
		t.Errorf("a number beyond float64: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(`{"` + strings.Repeat("x", 100) + `":1}`))
	dec.DisallowUnknownFields()
	if err := CutJSON(dec.Decode(&v)); err == nil || len(err.Error()) > 80 || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("a long unknown key: %v", err)
	}
	var at struct{ T time.Time }
	if err := CutJSON(json.Unmarshal([]byte(`{"T":"`+long+`"}`), &at)); err == nil || strings.Contains(err.Error(), long[:40]) || !strings.Contains(err.Error(), `parsing time "`+long[:32]+`..." as "2006-01-02T15:04:05Z07:00"`) {
		t.Errorf("a long string that is no time: %v", err)
	}
	if err := CutJSON(json.Unmarshal([]byte(`{"T":"2026-13-01T00:00:00Z"}`), &at)); err == nil || err.Error() != `parsing time "2026-13-01T00:00:00Z": month out of range` {
		t.Errorf("a month out of range: %v", err)
	}
	var n struct{ N *big.Int }
	if err := CutJSON(json.Unmarshal([]byte(`{"N":"`+long+`x"}`), &n)); err == nil || err.Error() != `math/big: cannot unmarshal "\"`+long[:31]+`"... into a *big.Int` {
		t.Errorf("a long string that is no integer: %v", err)
	}
	if err := CutJSON(json.Unmarshal([]byte(`{`), &v)); err == nil || !strings.Contains(err.Error(), "unexpected end") {
		t.Errorf("a syntax error: %v", err)
	}
	if CutJSON(nil) != nil {
		t.Error("CutJSON(nil) != nil")
	}
}
