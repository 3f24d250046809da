package constraints

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"
)

func loadG(t testing.TB, f string) (Params, []float64) {
	b, err := os.ReadFile(f)
	if err != nil {
		t.Skip(err)
	}
	var d struct {
		K     int
		M     float64 `json:"m"`
		Eps   float64 `json:"eps"`
		Delta float64 `json:"Delta"`
		Dl    float64 `json:"delta"`
		Gamma []float64
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return Params{K: d.K, M: d.M, Eps: d.Eps, Delta: d.Delta, TargetDelta: d.Dl}, d.Gamma
}

func TestZZSep(t *testing.T) {
	f := os.Getenv("GF")
	if f == "" {
		t.Skip()
	}
	p, g := loadG(t, f)
	for _, top := range []int{0, 51} {
		st := time.Now()
		s, err := p.Separate(context.Background(), g, SeparateOptions{Top: top, Floor: p.Budget() * (1 + 1e-9)})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("top=%d %.3fs max %.17g worst %v ntop %d", top, time.Since(st).Seconds(), s.MaxF, s.Worst, len(s.Top))
	}
}
