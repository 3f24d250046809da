package report

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/fixtures"
)

// TestMergeShards merges the two shards of a certified gamma, and refuses
// shards of another gamma, problem or split, a problem out of range and a
// shard twice, naming the files, and a shard missing, naming it.
func TestMergeShards(t *testing.T) {
	g, err := fixtures.GammaK11M3()
	if err != nil {
		t.Fatal(err)
	}
	p := constraints.Problem{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: constraints.DefaultTargetDelta(1e-5, 3)}
	shards := make([]Shard, 2)
	for i := range shards {
		sep, err := gamma.Shard{Index: i, Count: 2}.Verify(context.Background(), p, g, gamma.VerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		shards[i] = Shard{Problem: NewProblem(resolve.Resolved{Problem: p}), Gamma: g, Separation: sep}
	}
	names := []string{"a.json", "b.json"}
	other := func(f func(*Shard)) []Shard {
		s := slices.Clone(shards)
		f(&s[1])
		return s
	}
	for _, tc := range []struct {
		name string
		docs []Shard
		want string // in the error; "" for a certified merge
	}{
		{"both shards", shards, ""},
		{"another gamma", other(func(s *Shard) { s.Gamma = slices.Repeat([]float64{0.5}, 12) }), "b.json is a shard of another problem or gamma than a.json"},
		{"another problem", other(func(s *Shard) { s.Problem.M = 2 }), "b.json is a shard of another problem"},
		{"bad problem", []Shard{{Problem: Problem{K: 10, M: 3, Eps: 0.1}, Gamma: g}}, "a.json: K = 10"},
		{"a shard twice", []Shard{shards[1], shards[1]}, "a.json and b.json are both shard 1 of 2"},
		{"another split", other(func(s *Shard) { s.Separation.Shards = 3 }), "b.json is shard 1 of 3, a.json shard 0 of 2: shards of one split"},
		{"a shard missing", shards[:1], "shard 1 of 2 is missing"},
	} {
		out, err := MergeShards(names, tc.docs)
		switch {
		case tc.want == "" && (err != nil || out.Certificate.Status != gamma.Certified || !slices.Equal(out.Gamma, g) || out.K != 11):
			t.Errorf("%s: %v, %+v", tc.name, err, out.Certificate)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestIsShard: a part of separate's certificate is told by its
// separation, or by a gamma with its problem; solve's table by its start.
func TestIsShard(t *testing.T) {
	if !IsShard([]byte(`{"problem":{"K":3},"gamma":[1]}`)) || !IsShard([]byte(`{"separation":{}}`)) || IsShard([]byte(`{"gamma":[1]}`)) {
		t.Error("a part not told from a gamma")
	}
	if !IsSolveTable([]byte(solveTableStart+"K = 11")) || IsSolveTable([]byte("l,gamma_opt")) {
		t.Error("solve's table not told")
	}
}
