package ensemble

import (
	"errors"
	"strings"
	"testing"

	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

func TestClassGNMaxLabels(t *testing.T) {
	m := noisymax.ConfidentGNMax{Sigma2: 1, Noise: noisymax.DiscreteNoise}
	g, err := NewClassGNMax(m, 50, 4, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	src := noise.NewSeededSource(1)
	for range 100 {
		l, ans, err := g.Label([]int{2, 45, 3, 0}, src)
		if err != nil || !ans || l != 1 {
			t.Fatalf("label %d answered %v err %v, want class 1", l, ans, err)
		}
	}
	// A tie is broken uniformly.
	seen := map[int]int{}
	for range 2000 {
		l, _, _ := g.Label([]int{25, 25, 0, 0}, src)
		seen[l]++
	}
	if seen[0] < 800 || seen[1] < 800 || seen[0]+seen[1] != 2000 {
		t.Errorf("tied classes 0 and 1: %v", seen)
	}
	if _, _, err := g.Label([]int{25, 26, 0, 0}, src); err == nil {
		t.Error("counts summing to 51 accepted for K = 50")
	}
	if _, _, err := g.Label([]int{25, 24, 0, 0}, src); err != nil {
		t.Errorf("counts summing to 49 for K = 50, one teacher abstaining: %v", err)
	}
	c := noisymax.ConfidentGNMax{Threshold: 40, Sigma1: 1, Sigma2: 1, Noise: noisymax.DiscreteNoise}
	cg, err := NewClassGNMax(c, 50, 4, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if _, ans, _ := cg.Label([]int{20, 20, 10, 0}, src); ans {
		t.Error("largest count 20 answered at threshold 40 with sigma1 = 1")
	}
	if l, ans, _ := cg.Label([]int{48, 2, 0, 0}, src); !ans || l != 0 {
		t.Error("largest count 48 withheld at threshold 40")
	}
	if _, err := NewClassGNMax(noisymax.ConfidentGNMax{Sigma2: 1, Noise: noisymax.ContinuousNoise}, 50, 4, 1e-5); err == nil {
		t.Error("continuous noise accepted for a release")
	}
}

func TestReleaseMulti(t *testing.T) {
	in, _, err := votefile.Read(strings.NewReader("id,a,b,c\nx,10,0,0\ny,4,3,3\n"), "v", votefile.Options{Layout: votefile.LayoutCounts})
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewClassGNMax(noisymax.ConfidentGNMax{Threshold: 8, Sigma1: 0.6, Sigma2: 0.6, Noise: noisymax.DiscreteNoise}, 10, 3, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := releaseOut(t, in, g, noise.NewSeededSource(3), -1, ReleaseOptions{Partition: provenance.KeyedHash}, votefile.FormatCSV); !errors.Is(err, ErrSeededRelease) || out != "" {
		t.Fatalf("seeded release without Experiment: %v, wrote %q", err, out)
	}
	out, res, err := releaseOut(t, in, g, noise.NewSeededSource(3), -1, ReleaseOptions{Experiment: true, Partition: provenance.KeyedHash}, votefile.FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	head := `# {"darrm-labels":1,"mechanism":"confident-gnmax","K":10,"classes":3,"relation":"one-vote","partition":"keyed-hash","threshold":8,"sigma1":0.6,"sigma2":0.6,"noise":"discrete","eps":`
	if !strings.HasPrefix(out, NotForRelease+"\n"+head) || labelsOf(out) != "id,label,answered\nx,0,1\ny,,0\n" || res.Answered != 2 || res.Withheld != 1 {
		t.Errorf("got %q %+v", out, res)
	}
}

// TestMaxClasses: the aggregators refuse more classes than MaxClasses
// before they allocate anything per class, and take that many.
func TestMaxClasses(t *testing.T) {
	m := noisymax.ConfidentGNMax{Sigma2: 40, Noise: noisymax.DiscreteNoise}
	for _, c := range []int{votefile.MaxClasses + 1, 4_000_000_000, 9_000_000_000_000_000_000} {
		if _, err := NewClassGNMax(m, 3, c, 1e-5); err == nil || !strings.Contains(err.Error(), "C in [2, 524288]") {
			t.Errorf("gnmax with %d classes: %v", c, err)
		}
		if _, err := NewLNMax(noisymax.LNMax{Scale: 20}, 3, c); err == nil || !strings.Contains(err.Error(), "C in [2, 524288]") {
			t.Errorf("lnmax with %d classes: %v", c, err)
		}
	}
	if _, err := NewLNMax(noisymax.LNMax{Scale: 20}, 3, votefile.MaxClasses); err != nil {
		t.Errorf("lnmax with MaxClasses classes: %v", err)
	}
	// A row of MaxClasses counts fits in a line, one more does not.
	row := strings.Repeat("0,", votefile.MaxClasses-1) + "3\n"
	r, _, err := votefile.Read(strings.NewReader(row), "v.csv", votefile.Options{Layout: votefile.LayoutCounts})
	if err != nil || !r.Next() || r.Classes() != votefile.MaxClasses {
		t.Errorf("a row of %d counts: %v", votefile.MaxClasses, err)
	}
	if _, _, err := votefile.Read(strings.NewReader("0,"+row), "v.csv", votefile.Options{Layout: votefile.LayoutCounts}); err == nil {
		t.Errorf("a row of %d counts was read", votefile.MaxClasses+1)
	}
}
