package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		err := sourceError(tc.err, "g.json")
		if cli.IsUsage(err) != tc.usage || err.Error() != tc.want {
			t.Errorf("Error(%v) = %v (usage %t), want %q (usage %t)", tc.err, err, cli.IsUsage(err), tc.want, tc.usage)
		}
	}
}

// TestOpen: --no-cache opens none; a file where the cache folder should be
// is a usage error naming the flag.
func TestOpen(t *testing.T) {
	if d, err := (&cacheFlags{NoCache: true}).Open(); d != nil || err != nil {
		t.Errorf("--no-cache: %v, %v", d, err)
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	_, err := (&cacheFlags{Dir: file}).Open()
	if !cli.IsUsage(err) || !strings.HasPrefix(err.Error(), "--cache-dir "+file+": not a folder") {
		t.Errorf("a file as --cache-dir: %v", err)
	}
}

// TestSolving: the progress line names the problem as its relation does.
func TestSolving(t *testing.T) {
	if got := solvingNote(constraints.Problem{K: 11, M: 3}); got != "solving K=11 m=3" {
		t.Errorf("private teachers: %q", got)
	}
	if got := solvingNote(constraints.NewOneVote(11, 0.3, 1e-5)); got != "solving K=11 one-vote eps=0.3" {
		t.Errorf("one vote: %q", got)
	}
}
