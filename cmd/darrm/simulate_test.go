package main

import (
	"encoding/json"
	"testing"

	"github.com/darrm/darrm/noise"
)

func TestTeachersOf(t *testing.T) {
	src := noise.NewSeededSource(1)
	p, err := teachersOf("U(0.5,1)", 11, src)
	if err != nil || len(p) != 11 {
		t.Fatal(p, err)
	}
	for _, v := range p {
		if v < 0.5 || v > 1 {
			t.Errorf("U(0.5,1) drew %v", v)
		}
	}
	if p, err := teachersOf("0.7", 3, src); err != nil || p[0] != 0.7 || p[2] != 0.7 {
		t.Errorf("0.7: %v %v", p, err)
	}
	if p, err := teachersOf("0.1, 0.2,0.3", 3, src); err != nil || p[1] != 0.2 {
		t.Errorf("list: %v %v", p, err)
	}
	for _, bad := range []string{"U(0.6,0.5)", "U(0,2)", "1.5", "0.1,0.2", "NaN", "x", "U(a,b)"} {
		if _, err := teachersOf(bad, 3, src); err == nil {
			t.Errorf("teachersOf(%q) accepted", bad)
		}
	}
}

// TestSimulateDrawnSeedExact checks that the seed simulate draws when none
// is given is at most 2^53, so that JSON readers that hold numbers as
// doubles (jq, JavaScript) read the seed printed exactly and can rerun it.
func TestSimulateDrawnSeedExact(t *testing.T) {
	for range 3 {
		code, out, errOut := runCLI("simulate", "--K", "1", "--m", "1", "--queries", "10", "--mechanisms", "darrm", "--cache-dir", t.TempDir(), "--format", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var doc struct{ Seed uint64 }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Seed > 1<<53 {
			t.Errorf("seed %d: above 2^53, which a JSON reader of doubles rounds", doc.Seed)
		}
	}
}
