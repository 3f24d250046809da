package param

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCutJSON: a number of the wrong type and an unknown key are cut to
// what Quote keeps; another error is left as it is.
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
	if err := CutJSON(json.Unmarshal([]byte(`{`), &v)); err == nil || !strings.Contains(err.Error(), "unexpected end") {
		t.Errorf("a syntax error: %v", err)
	}
	if CutJSON(nil) != nil {
		t.Error("CutJSON(nil) != nil")
	}
}
