package curveplot

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/darrm/darrm/cmd/darrm/internal/figure"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := &Panel{Title: "t", XLabel: "epoch", YLabel: "loss", KeyTitle: "η =", Series: []Series{
		{Label: "a", Mean: []float64{3, 2, 1}, Std: []float64{0.1, 0.2, 0.1}, Key: "0.1"},
		{Label: "b", Mean: []float64{3, 2.5, 2}, Std: []float64{0, 0.1, 0.3}, Key: "10^{-3}"},
	}, Reference: []Series{{Label: "a", Mean: []float64{3, 2.2, 1.1}, Std: []float64{0, 0, 0}}}}
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, "panel"+ext)
		if err := (Figure{Title: "title", Panels: []*Panel{p, p}, Cols: 2, Notes: []string{"shaded: one std"}}).Write(t.Context(), path); err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
		if st, err := os.Stat(path); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", ext, err)
		}
	}
	p.LogY, p.Floor = true, 1e-3
	p.Series[0].Std[2] = 5 // mean − std < 0: cut at the floor
	if err := (Figure{Panels: []*Panel{p}}).Write(t.Context(), filepath.Join(dir, "log.png")); err != nil {
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
		if err := (Figure{Panels: []*Panel{{Series: []Series{tc.s}}}}).Write(t.Context(), path); err == nil {
			t.Errorf("%s: no error", name)
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("%s: file written despite the error", name)
		}
	}
	if err := (Figure{Panels: []*Panel{nil}}).Write(t.Context(), filepath.Join(dir, "none.png")); err == nil {
		t.Error("no panel: no error")
	}
}

// TestBrokenAxis: a curve far above the others is drawn above a break of
// the axis, not cut; the lower part holds the others; its band stays on
// each side of the break; many decades above the break are linear too.
func TestBrokenAxis(t *testing.T) {
	opt := 0.5
	p := &Panel{Lower: &opt, Series: []Series{
		{Label: "low", Mean: []float64{46, 40, 30, 25}, Std: []float64{0, 1, 1, 1}},
		{Label: "diverges", Mean: []float64{46, 97, 96, 25.4}, Std: []float64{0, 2, 80, 0}},
	}}
	a, err := p.axis()
	if err != nil {
		t.Fatal(err)
	}
	if !a.broken || !slices.Equal(a.outliers, []int{1}) || a.top != 46 || a.breakLo != 96 || a.hi != 97 {
		t.Fatalf("axis %+v: want broken, [lo, 46] below and [96, 97] above", a)
	}
	pl := p.plot(a)
	s, ok := pl.Y.Scale.(figure.BrokenScale)
	if !ok || !(s.Lo >= 46 && s.Lo < s.Hi && s.Hi <= 96) || pl.Y.Max < 97 {
		t.Errorf("scale %+v, y up to %v", pl.Y.Scale, pl.Y.Max)
	}
	for _, b := range a.bands(1, s) {
		above := b[0].Y >= s.Hi || b[len(b)-1].Y >= s.Hi
		for _, xy := range b {
			if above && xy.Y < s.Hi || !above && xy.Y > s.Lo {
				t.Errorf("band of the diverging curve crosses the break at %v", xy)
			}
		}
	}
	// decades above: still a linear part above the break (one kind of
	// scale on one axis), reaching the highest point, the label unchanged
	p.Series[1].Mean = []float64{46, 20000, 150, 25.4}
	p.Series[1].Std = []float64{0, 0, 0, 0}
	a, _ = p.axis()
	pl = p.plot(a)
	if s, ok := pl.Y.Scale.(figure.BrokenScale); !ok || pl.Y.Max < 20000 || pl.Y.Label.Text != p.YLabel || s.Normalize(pl.Y.Min, pl.Y.Max, 10150)-s.Normalize(pl.Y.Min, pl.Y.Max, 150) < 0.4*(1-s.Normalize(pl.Y.Min, pl.Y.Max, s.Hi)) {
		t.Errorf("scale %+v up to %v, label %q: want a linear part above the break", pl.Y.Scale, pl.Y.Max, pl.Y.Label.Text)
	}
	// a spread that is not extreme is kept whole
	p.Series[1].Mean = []float64{46, 60, 50, 25.4}
	if a, _ = p.axis(); a.broken {
		t.Errorf("axis %+v: broken for a curve 1.3 times as high", a)
	}
}

// TestShare: the panels of a row share their lower range; a broken panel
// keeps its break when the others stay below it, and loses it when
// another panel reaches its outliers.
func TestShare(t *testing.T) {
	mk := func(hi float64, outlier float64) *Panel {
		p := &Panel{Series: []Series{{Label: "a", Mean: []float64{1, hi}, Std: []float64{0, 0}}}}
		if outlier > 0 {
			p.Series = append(p.Series, Series{Label: "b", Mean: []float64{1, outlier}, Std: []float64{0, 0}})
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		panels []*Panel
		broken []bool
		top    float64
	}{
		{"one broken", []*Panel{mk(2, 0), mk(1.5, 100)}, []bool{false, true}, 2},
		{"another reaches the outliers", []*Panel{mk(150, 0), mk(1.5, 100)}, []bool{false, false}, 150},
	} {
		axes := make([]axis, len(tc.panels))
		for i, p := range tc.panels {
			axes[i], _ = p.axis()
		}
		share(axes, tc.panels, 2)
		for i, a := range axes {
			if a.broken != tc.broken[i] || a.top < tc.top || a.lo != 1 {
				t.Errorf("%s: panel %d: %+v, want broken %v, top %v", tc.name, i, a, tc.broken[i], tc.top)
			}
		}
	}
}

// TestReferenceInRange: a reference curve below the series widens the
// range rather than being cut.
func TestReferenceInRange(t *testing.T) {
	p := &Panel{Series: []Series{{Label: "a", Mean: []float64{1, 2}, Std: []float64{0, 0}}},
		Reference: []Series{{Label: "a", Mean: []float64{0.5, 2}, Std: []float64{0, 0}}}}
	if a, err := p.axis(); err != nil || a.lo != 0.5 {
		t.Errorf("axis %+v, %v: want the reference's 0.5 in range", a, err)
	}
}

// TestOutliers: series far above the rest, highest first, as long as one
// series stays below; a spread that is not extreme is kept.
func TestOutliers(t *testing.T) {
	for _, tc := range []struct {
		name string
		his  []float64
		out  []int
	}{
		{"none above", []float64{2, 3, 4}, nil},
		{"one far above", []float64{2, 100, 3}, []int{1}},
		{"two far above", []float64{500, 2, 60}, []int{0, 2}},
		{"just under the span", []float64{1.5, 2.2}, nil},
		{"one series", []float64{7}, nil},
	} {
		if got := outliers(1, tc.his); !slices.Equal(got, tc.out) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.out)
		}
	}
}

// TestMarkAt: on a long curve each series' markers fall at other points
// than every other series' (so curves that coincide show each its own),
// evenly over the curve; a short curve marks every point.
func TestMarkAt(t *testing.T) {
	for _, ns := range []int{1, 2, 5} {
		seen := map[int]int{}
		for j := range ns {
			at := markAt(51, j, ns)
			if len(at) != marks || at[0] > 51/marks || at[len(at)-1] < 50-51/marks {
				t.Errorf("%d series, series %d: marks at %v", ns, j, at)
			}
			for _, k := range at {
				if o, ok := seen[k]; ok {
					t.Errorf("%d series: series %d and %d both marked at %d", ns, o, j, k)
				}
				seen[k] = j
			}
		}
	}
	if at := markAt(5, 2, 3); !slices.Equal(at, []int{0, 1, 2, 3, 4}) {
		t.Errorf("a curve of 5 points: marks at %v", at)
	}
}
