package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/outputs"
	"github.com/darrm/darrm/internal/statedir"
)

// TestOutputChecks: an --out that is the command's input is refused, naming the
// input as the "input" annotation does, and so is an --out given empty
// (taken for standard output or the default file; an audit of round
// nine); another file is not.
func TestOutputChecks(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DARRM_CACHE_DIR", filepath.Join(dir, "cache"))
	t.Setenv(statedir.Env, filepath.Join(dir, "state"))
	in := filepath.Join(dir, "votes.csv")
	os.WriteFile(in, []byte("0,1,1\n"), 0o644)
	for _, c := range []struct {
		out  string
		want string
	}{{in, "the vote file"}, {"", "--out is empty: name a file"}, {filepath.Join(dir, "labels.csv"), ""}} {
		cmd := &cobra.Command{Use: "x", Annotations: map[string]string{"input": "the vote file"}}
		cmd.Flags().String("out", "", "")
		cmd.Flags().Set("out", c.out)
		args := []string{in}
		err := outputs.Check(cmd, args, outputs.Protected(cmd, args))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("--out %s: %v", c.out, err)
		case c.want != "" && (!cli.IsUsage(err) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("--out %s: %v, want a usage error naming %q", c.out, err, c.want)
		}
	}
}
