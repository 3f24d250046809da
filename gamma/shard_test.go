package gamma

import (
	"context"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/constraints"
)

// TestShardsMergeToVerify: for gammas that are certified, tight and
// violated, the shards of every split merge to Verify's certificate.
func TestShardsMergeToVerify(t *testing.T) {
	ctx := context.Background()
	p := constraints.New(11, 3, 0.1, 1e-5)
	sub1, _ := Sub(11, 1)
	for _, tc := range []struct {
		name string
		p    constraints.Problem
		g    Gamma
	}{
		{"gamma_opt", p, optK11M3(t)},
		{"gamma_opt at m = 2", constraints.New(11, 2, 0.1, 1e-5), optK11M3(t)},
		{"gamma_Sub(1) at m = 1", constraints.Problem{K: 11, M: 1, Eps: 0.1}, sub1},
	} {
		want, err := Verify(ctx, tc.p, tc.g, VerifyOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 2, 5} {
			var parts []constraints.Separation
			for i := range n {
				sep, err := Shard{i, n}.Verify(ctx, tc.p, tc.g, VerifyOptions{Workers: 1})
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, sep)
			}
			got, err := MergeShards(tc.p, tc.g, parts)
			if err != nil {
				t.Fatalf("%s in %d shards: %v", tc.name, n, err)
			}
			// The merge holds the multisets the shards name to the cost it
			// computes there too, which may come out above Verify's by
			// rounding.
			if got.Status != want.Status || got.MaxF < want.MaxF || got.MaxF > want.MaxF+want.ErrBound || got.ErrBound != want.ErrBound || got.Configs.Cmp(want.Configs) != 0 {
				t.Errorf("%s in %d shards: %v max f %v bound %v over %v; Verify: %v %v %v over %v",
					tc.name, n, got.Status, got.MaxF, got.ErrBound, got.Configs, want.Status, want.MaxF, want.ErrBound, want.Configs)
			}
		}
	}
}

func TestShardsRefused(t *testing.T) {
	ctx := context.Background()
	p, g := constraints.New(11, 3, 0.1, 1e-5), optK11M3(t)
	part := func(i, n int) constraints.Separation {
		sep, err := Shard{i, n}.Verify(ctx, p, g, VerifyOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		return sep
	}
	for _, tc := range []struct {
		name  string
		p     constraints.Problem
		parts []constraints.Separation
	}{
		{"a shard missing", p, []constraints.Separation{part(0, 3), part(1, 3)}},
		{"a shard twice", p, []constraints.Separation{part(0, 2), part(0, 2)}},
		{"shards of two splits", p, []constraints.Separation{part(0, 2), part(1, 3)}},
		{"no shards", p, nil},
		{"a bad problem", constraints.New(10, 3, 0.1, 1e-5), []constraints.Separation{part(0, 1)}},
	} {
		if _, err := MergeShards(tc.p, g, tc.parts); err == nil {
			t.Errorf("%s: merged", tc.name)
		}
	}
	for _, tc := range []struct {
		name string
		p    constraints.Problem
		g    Gamma
	}{
		{"a bad problem", constraints.New(11, 0, 0.1, 1e-5), g},
		{"gamma of another K", constraints.New(13, 3, 0.1, 1e-5), g},
		{"gamma out of [0, 1]", p, append(Gamma{2}, g[1:]...)},
	} {
		if _, err := (Shard{0, 1}).Verify(ctx, tc.p, tc.g, VerifyOptions{Workers: 1}); err == nil {
			t.Errorf("Shard.Verify of %s: no error", tc.name)
		}
	}
}

// TestMergeNamesMissingShards: a merge that lacks shards names them, as
// runs of indices, and leaves a repeated or foreign shard to
// constraints.Problem.MergeSeparations' message.
func TestMergeNamesMissingShards(t *testing.T) {
	p := constraints.New(11, 3, 0.1, 1e-5)
	parts := func(n int, idx ...int) []constraints.Separation {
		var out []constraints.Separation
		for _, i := range idx {
			out = append(out, constraints.Separation{Shard: i, Shards: n, Configs: new(big.Int)})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		parts []constraints.Separation
		want  string
	}{
		{"the middle one", parts(3, 2, 0), "merge: shard 1 of 3 is missing: every shard is needed"},
		{"runs", parts(8, 0, 2, 3, 7), "shards 1, 4-6 of 8 are missing"},
		{"all but one", parts(5, 4), "shards 0-3 of 5 are missing"},
		{"many runs", parts(40, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20), "shards 1, 3, 5, 7, 9, 11, 13, 15, ... of 40 are missing"},
		{"a repeated shard", parts(3, 0, 0), "exactly once"},
		{"shards of two splits", append(parts(3, 0), parts(2, 1)...), "exactly once"},
		{"no count of multisets", []constraints.Separation{{Shard: 0, Shards: 1}}, "shard 0 of 1 states no count"},
	} {
		_, err := MergeShards(p, optK11M3(t), tc.parts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestMergeChecksStatedWorst: a merge evaluates the privacy cost at the
// multiset each shard states as its worst, and at each of the costliest
// multisets it keeps, and refuses a shard whose stated cost there is not
// that cost (issue 40, item 10: shards with their maxima edited merged
// into a certificate), naming the shard and both values.
func TestMergeChecksStatedWorst(t *testing.T) {
	ctx := context.Background()
	p, g := constraints.New(11, 3, 0.1, 1e-5), optK11M3(t)
	// The plain majority (gamma = 1) is far over the budget: its shards
	// keep costly multisets.
	g = slices.Repeat(Gamma{1}, 12)
	parts := func() []constraints.Separation {
		var out []constraints.Separation
		for i := range 2 {
			sep, err := Shard{i, 2}.Verify(ctx, p, g, VerifyOptions{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, sep)
		}
		return out
	}
	if _, err := MergeShards(p, g, parts()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*constraints.Separation)
	}{
		{"max f lowered", func(s *constraints.Separation) { s.MaxF = s.MaxF/2 - 1 }},
		{"max f raised", func(s *constraints.Separation) { s.MaxF += 1e-3 }},
		{"max f below the budget", func(s *constraints.Separation) { s.MaxF = 0 }},
		{"a top cost lowered", func(s *constraints.Separation) { s.Top[len(s.Top)-1].F -= 1e-3 }},
		// Its worst multiset and the costly ones dropped, so that none is
		// evaluated: the merge took the other shard's maximum, and a gamma
		// 1% over the budget merged into "certified".
		{"worst and top dropped", func(s *constraints.Separation) { s.Worst, s.Top, s.MaxF = nil, nil, 0 }},
		{"worst dropped, max f infinite", func(s *constraints.Separation) { s.Worst, s.Top, s.MaxF = nil, nil, math.Inf(-1) }},
		{"covers none", func(s *constraints.Separation) {
			s.Worst, s.Top, s.MaxF, s.Configs = nil, nil, math.Inf(-1), new(big.Int)
		}},
		{"covers one more", func(s *constraints.Separation) { s.Configs = new(big.Int).Add(s.Configs, big.NewInt(1)) }},
	} {
		ps := parts()
		if len(ps[1].Top) == 0 {
			t.Fatal("shard 1 keeps no costly multisets")
		}
		tc.edit(&ps[1])
		if _, err := MergeShards(p, g, ps); err == nil || !strings.Contains(err.Error(), "shard 1 of 2") || !strings.Contains(err.Error(), "states") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// Shard 1's count moved to shard 0, and its worst multiset dropped:
	// the total is the problem's, and shard 1 claims to cover nothing.
	ps := parts()
	ps[0].Configs = new(big.Int).Add(ps[0].Configs, ps[1].Configs)
	ps[1].Configs, ps[1].Worst, ps[1].Top, ps[1].MaxF = new(big.Int), nil, nil, math.Inf(-1)
	if _, err := MergeShards(p, g, ps); err == nil || !strings.Contains(err.Error(), "shard 0 of 2 states") {
		t.Errorf("a count moved between shards: %v", err)
	}
	if _, err := MergeShards(p, optK11M3(t), parts()); err == nil {
		t.Error("shards of gamma merged as shards of gamma/2")
	}
}

// TestMergeHoldsStatedCosts: a merge holds each multiset a shard names to
// the larger of its stated cost and the cost the merge computes there. A
// gamma just over the budget (Verify: tight), whose shards state their
// costs lowered within the merge's tolerance of 2·ErrBound, had merged into
// "certified".
func TestMergeHoldsStatedCosts(t *testing.T) {
	ctx := context.Background()
	p := constraints.Problem{K: 11, M: 3, Eps: 0.1}
	cert, err := Verify(ctx, p, optK11M3(t), VerifyOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	g := optK11M3(t).Scale((cert.Budget + cert.ErrBound/2) / cert.MaxF)
	if cert, err = Verify(ctx, p, g, VerifyOptions{Workers: 1}); err != nil || cert.Status == Certified {
		t.Fatalf("the gamma over the budget: %v, %v", cert.Status, err)
	}
	var parts []constraints.Separation
	for i := range 2 {
		sep, err := Shard{i, 2}.Verify(ctx, p, g, VerifyOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		low := cert.Budget - 1.01*cert.ErrBound
		sep.MaxF = min(sep.MaxF, low)
		for j := range sep.Top {
			sep.Top[j].F = min(sep.Top[j].F, low)
		}
		parts = append(parts, sep)
	}
	got, err := MergeShards(p, g, parts)
	if err == nil && got.Status == Certified {
		t.Errorf("shards with their costs lowered by less than 2·ErrBound merged into %v: max f %v, Verify's %v", got.Status, got.MaxF, cert.MaxF)
	}
}

// TestShardPath: {i} and {n} in a file name become the shard's index and
// count, every time they appear; a name without them is kept.
func TestShardPath(t *testing.T) {
	s := Shard{Index: 3, Count: 12}
	for in, want := range map[string]string{
		"part{i}.json":         "part3.json",
		"run-{n}/part{i}of{n}": "run-12/part3of12",
		"whole.json":           "whole.json",
		"{i}{i}-{n}.json":      "33-12.json",
	} {
		if got := s.Path(in); got != want {
			t.Errorf("Path(%q) = %q, want %q", in, got, want)
		}
	}
}
