package setup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/internal/fixtures"
)

// TestInputKinds: a file of a kind the reader does not take is refused as a
// usage error that names the file, what it is, what was wanted and what
// reads it; a file of its own kind, or not recognised, passes. The
// command's tests (TestSniff, TestWrongKindOfFile) do this with each file
// as darrm writes it.
func TestInputKinds(t *testing.T) {
	dir := t.TempDir()
	votes := fixtures.Path("votes-K11.csv")
	g := fixtures.Path("gamma-K11-m3.json")
	doc := filepath.Join(dir, "doc.json")
	os.WriteFile(doc, []byte("{\n  \"a\": 1\n}\n"), 0o644)
	plain := filepath.Join(dir, "plain.csv")
	os.WriteFile(plain, []byte("0,1,1\n"), 0o644)
	for _, tc := range []struct {
		path string
		kind *FileKind
		want Want
		err  string
	}{
		{votes, KindVotes, wantVotes, ""},
		{g, KindGamma, wantGamma, ""},
		{plain, nil, wantVotes, ""},
		{votes, KindVotes, wantGamma, "GAMMA " + votes + " is " + KindVotes.Name + ", not a gamma: " + KindVotes.Use},
		{g, KindGamma, wantVotes, "GAMMA " + g + " is " + KindGamma.Name + ", not a vote file: " + KindGamma.Use},
		{doc, KindJSONDoc, wantVotes, "is a JSON document spread over several lines, not a vote file"},
		{doc, KindJSONDoc, wantGamma, ""},
	} {
		k := SniffPath(tc.path)
		if k != tc.kind {
			t.Errorf("%s: sniffed as %v, want %v", tc.path, k, tc.kind)
		}
		err := tc.want.Check("GAMMA", tc.path, k)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s as %s: %v", tc.path, tc.want.what, err)
		case tc.err != "" && (!cli.IsUsage(err) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s as %s: %v, want a usage error containing %q", tc.path, tc.want.what, err, tc.err)
		}
	}
}

// TestReadJSONBounded: the JSON results one command reads hold at most
// the limit together, each read within what the ones before it left: a
// bound on each file alone let three large files, each held decoded at
// many times its size, exhaust memory. A refusal is a usage error naming
// the file that crossed it.
func TestReadJSONBounded(t *testing.T) {
	dir := t.TempDir()
	doc := func(name string, zeros int) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(`{"gamma": [0`+strings.Repeat(",0", zeros)+"]}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	type gammaDoc struct{ Gamma []float64 }
	a, b, c := doc("a.json", 100_000), doc("b.json", 100_000), doc("c.json", 100_000)
	cmd := &cobra.Command{}
	cmd.SetContext(context.Background())
	const limit = 500_000 // two of the files (some 200 kB each), not three
	docs, err := readJSON[gammaDoc](cmd, "PART", []string{a, b}, WantShuffleg, limit)
	if err != nil || len(docs) != 2 || len(docs[1].Gamma) != 100_001 {
		t.Fatalf("two files within the limit: %d documents, err %v", len(docs), err)
	}
	_, err = readJSON[gammaDoc](cmd, "PART", []string{a, b, c}, WantShuffleg, limit)
	if !cli.IsUsage(err) || !strings.Contains(err.Error(), c) || !strings.Contains(err.Error(), "together") {
		t.Errorf("three files over the limit: err %v, want a usage error naming %s", err, c)
	}
}
