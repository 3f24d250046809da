package setup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/optimal"
)

// TestGammaSourceError: each field of a Source is named as the flag that sets it, a
// usage error (exit 2); a cache entry that cannot be used keeps its error.
func TestGammaSourceError(t *testing.T) {
	other := errors.New("entry damaged")
	for _, tc := range []struct {
		err   error
		usage bool
		want  string
	}{
		{&optimal.SourceError{Field: "Given", Err: errors.New("is not certified")}, true, "--gamma g.json is not certified"},
		{&optimal.SourceError{Field: "Prior", Err: errors.New("bad mean")}, true, "--prior: bad mean"},
		{&optimal.SourceError{Field: "CacheOnly", Err: optimal.ErrNoCache}, true, "--no-solve reads the cache, which --no-cache turns off"},
		{&optimal.SourceError{Field: "CacheOnly", Err: cache.ErrNotFound}, true, "--no-solve: " + cache.ErrNotFound.Error() + "; run darrm solve with these parameters first"},
		{&optimal.SourceError{Field: "CacheOnly", Err: other}, false, "--no-solve: entry damaged; run darrm solve with these parameters to replace it"},
		{other, false, "entry damaged"},
	} {
		err := GammaError(tc.err, "g.json")
		if cli.IsUsage(err) != tc.usage || err.Error() != tc.want {
			t.Errorf("Error(%v) = %v (usage %t), want %q (usage %t)", tc.err, err, cli.IsUsage(err), tc.want, tc.usage)
		}
	}
}

// TestOpen: --no-cache opens none; a file where the cache folder should be
// is a usage error naming the flag.
func TestOpen(t *testing.T) {
	if d, err := (&CacheFlags{NoCache: true}).Open(nil); d != nil || err != nil {
		t.Errorf("--no-cache: %v, %v", d, err)
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	_, err := (&CacheFlags{Dir: file}).Open(nil)
	if !cli.IsUsage(err) || !strings.HasPrefix(err.Error(), "--cache-dir "+file+": not a folder") {
		t.Errorf("a file as --cache-dir: %v", err)
	}
}

// TestSolving: the progress line names the problem as its relation does.
func TestSolving(t *testing.T) {
	if got := Solving(constraints.Problem{K: 11, M: 3}); got != "solving K=11 m=3" {
		t.Errorf("private teachers: %q", got)
	}
	if got := Solving(constraints.NewOneVote(11, 0.3, 1e-5)); got != "solving K=11 one-vote eps=0.3" {
		t.Errorf("one vote: %q", got)
	}
}

// TestSolveETA: a solve's line gives the time left: by the rate at which
// the gap's logarithm falls, to optimal.DefaultTol, where the loop stops
// (the rate taken afresh when the gap grows, as when the tie-break
// starts); in an exact pass by the share done; none before a second
// report, nor once the gap is within the tolerance.
func TestSolveETA(t *testing.T) {
	t0 := time.Unix(0, 0)
	type report struct {
		at   time.Duration
		s    optimal.Progress
		want string
	}
	for _, tc := range []struct {
		name    string
		reports []report
	}{
		{"gap falls", []report{
			{0, optimal.Progress{LPSolves: 1, Rows: 8, Gap: 1e-1}, "gap 0.1"},
			// 1e-1 to 1e-3 in 10 s: 1e-3 to 1e-7 in 20 s more.
			{10 * time.Second, optimal.Progress{LPSolves: 9, Rows: 20, Gap: 1e-3}, "gap 0.001, about 20s left"},
			// 1e-1 to 1e-6 in 40 s: 1e-6 to 1e-7 in 8 s more.
			{40 * time.Second, optimal.Progress{LPSolves: 30, Rows: 20, Gap: 1e-6}, "gap 1e-06, about 8s left"},
			{50 * time.Second, optimal.Progress{LPSolves: 40, Rows: 20, Gap: 1e-7}, "gap 1e-07"},
		}},
		{"the gap grows: a new rate", []report{
			{0, optimal.Progress{Gap: 1e-1}, "gap 0.1"},
			{10 * time.Second, optimal.Progress{Gap: 1e-5}, "gap 1e-05, about 5s left"},
			{20 * time.Second, optimal.Progress{Gap: 0.5}, "gap 0.5"},
			// 0.5 to 5e-4 in 30 s: 5e-4 to 1e-7 in 37 s more.
			{50 * time.Second, optimal.Progress{Gap: 5e-4}, "gap 0.0005, about 37s left"},
		}},
		{"an exact pass", []report{
			{0, optimal.Progress{Pass: 1, Gap: 1e-3}, "gap 0.001"},
			{20 * time.Second, optimal.Progress{Pass: 1, Fraction: 0.25, Gap: 1e-3}, "exact pass 1: 25%, about 1m0s more"},
			// Between passes, by the gap: 1e-3 to 1e-4 in 40 s.
			{40 * time.Second, optimal.Progress{Pass: 2, Fraction: 0, Gap: 1e-4}, "gap 0.0001, about 2m0s left"},
			{50 * time.Second, optimal.Progress{Pass: 2, Fraction: 0.5, Gap: 1e-4}, "exact pass 2: 50%, about 10s more"},
		}},
	} {
		var e solveETA
		for i, r := range tc.reports {
			if got := e.describe(t0.Add(r.at), r.s); got != r.want {
				t.Errorf("%s, report %d: %q, want %q", tc.name, i, got, r.want)
			}
		}
	}
}
