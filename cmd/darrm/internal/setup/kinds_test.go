package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
