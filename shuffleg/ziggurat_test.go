package shuffleg

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// TestZigguratDefinition checks the tables against the definition of the
// ziggurat, independently of the recursion that builds them: every layer
// has area zigV, the base strip with its tail included; the 128 layers
// reach the density's top, f(0) = 1; and each layer's core is the share of
// its width under the layer above.
func TestZigguratDefinition(t *testing.T) {
	f := func(x float64) float64 { return math.Exp(-0.5 * x * x) }
	edge := func(i int) float64 { return float64(zigW[i]) * (1 << 31) }
	// float32 tables: relative rounding 6e-8, amplified by x² <= 12 in f.
	const tol = 2e-6

	tail := math.Sqrt(math.Pi/2) * math.Erfc(zigR/math.Sqrt2)
	if base := zigR*f(zigR) + tail; math.Abs(base-zigV) > 1e-12*zigV {
		t.Errorf("base strip: area %.15g, want %.15g", base, zigV)
	}
	if x0 := edge(0); math.Abs(x0*f(zigR)-zigV) > tol*zigV {
		t.Errorf("zigW[0]: base strip as a rectangle has area %.10g, want %.10g", x0*f(zigR), zigV)
	}
	for i := 1; i <= 126; i++ {
		if area := edge(i+1) * (f(edge(i)) - f(edge(i+1))); math.Abs(area-zigV) > tol*zigV*float64(i+1) {
			t.Errorf("layer %d: area %.10g, want %.10g", i, area, zigV)
		}
		if got, want := float64(zigF[i]), f(edge(i)); math.Abs(got-want) > tol {
			t.Errorf("zigF[%d] = %v, want f(x_%d) = %v", i, got, i, want)
		}
	}
	if top := f(edge(1)) + zigV/edge(1); math.Abs(top-1) > tol {
		t.Errorf("the layers reach %.10g, not the density's top 1", top)
	}
	if zigK[1] != 0 || zigF[0] != 1 {
		t.Errorf("zigK[1] = %d, zigF[0] = %v: the top layer has no core and f(0) = 1", zigK[1], zigF[0])
	}
	for i := 2; i < 128; i++ {
		if got, want := float64(zigK[i]), edge(i-1)/edge(i)*(1<<31); math.Abs(got-want) > tol*want {
			t.Errorf("zigK[%d] = %#x, want 2^31·x_%d/x_%d = %.1f", i, zigK[i], i-1, i, want)
		}
	}
}

// TestZigguratMatchesStandardLibrary compares the tables, bit for bit,
// with those of math/rand/v2 in the Go installation's source, which
// Stream.NormFloat64 must reproduce so that seeded runs draw the same
// noise as rand.Rand.NormFloat64. Skipped when the source is not
// installed.
func TestZigguratMatchesStandardLibrary(t *testing.T) {
	path := filepath.Join(runtime.GOROOT(), "src", "math", "rand", "v2", "normal.go")
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Skipf("the standard library's source is not available: %v", err)
	}
	tables := map[string][]string{}
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Names) != 1 || len(spec.Values) != 1 {
			return true
		}
		lit, ok := spec.Values[0].(*ast.CompositeLit)
		if !ok {
			return true
		}
		for _, e := range lit.Elts {
			if b, ok := e.(*ast.BasicLit); ok {
				tables[spec.Names[0].Name] = append(tables[spec.Names[0].Name], b.Value)
			}
		}
		return true
	})
	for _, c := range []struct {
		name string
		got  func(i int) float64
		bits int
	}{
		{"kn", func(i int) float64 { return float64(zigK[i]) }, 64},
		{"wn", func(i int) float64 { return float64(zigW[i]) }, 32},
		{"fn", func(i int) float64 { return float64(zigF[i]) }, 32},
	} {
		want := tables[c.name]
		if len(want) != 128 {
			t.Fatalf("%s: found %d values in %s, want 128", c.name, len(want), path)
		}
		for i, s := range want {
			var w float64
			if c.name == "kn" {
				u, err := strconv.ParseUint(s, 0, 32)
				if err != nil {
					t.Fatal(err)
				}
				w = float64(u)
			} else if w, err = strconv.ParseFloat(s, c.bits); err != nil {
				t.Fatal(err)
			}
			if c.got(i) != w {
				t.Errorf("%s[%d]: computed %.10g, math/rand/v2 has %.10g", c.name, i, c.got(i), w)
			}
		}
	}
}
