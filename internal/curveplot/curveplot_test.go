package curveplot

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := Panel{Title: "t", XLabel: "epoch", YLabel: "loss", Series: []Series{
		{Label: "a", Mean: []float64{3, 2, 1}, Std: []float64{0.1, 0.2, 0.1}},
		{Label: "b", Mean: []float64{3, 2.5, 2}, Std: []float64{0, 0.1, 0.3}},
	}}
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, "panel"+ext)
		if err := Write(path, p); err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
		if st, err := os.Stat(path); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", ext, err)
		}
	}
	p.LogY, p.Floor = true, 1e-3
	p.Series[0].Std[2] = 5 // mean − std < 0: cut at the floor
	if err := Write(filepath.Join(dir, "log.png"), p); err != nil {
		t.Fatal(err)
	}
}

func TestWriteRejects(t *testing.T) {
	dir := t.TempDir()
	good := Series{Label: "a", Mean: []float64{1, 2}, Std: []float64{0, 0}}
	for name, tc := range map[string]struct {
		path string
		s    Series
	}{
		"extension": {"x.gif", good},
		"lengths":   {"x.png", Series{Label: "a", Mean: []float64{1, 2}, Std: []float64{0}}},
		"inf":       {"x.png", Series{Label: "a", Mean: []float64{1, math.Inf(1)}, Std: []float64{0, 0}}},
	} {
		path := filepath.Join(dir, tc.path)
		if err := Write(path, Panel{Series: []Series{tc.s}}); err == nil {
			t.Errorf("%s: no error", name)
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("%s: file written despite the error", name)
		}
	}
}
