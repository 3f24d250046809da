package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeparateShards certifies a gamma in three shards and checks that the
// merged certificate is verify's, and that incomplete or foreign shards are
// refused.
func TestSeparateShards(t *testing.T) {
	dir := t.TempDir()
	g, errOut, code := darrm(t, "", "solve", "--K", "15", "--m", "3", "--no-cache", "--format", "json")
	if code != 0 {
		t.Fatal(errOut)
	}
	gf := filepath.Join(dir, "g.json")
	os.WriteFile(gf, []byte(g), 0o644)
	var parts []string
	for _, s := range []string{"0/3", "1/3", "2/3"} {
		part := filepath.Join(dir, "part"+s[:1]+".json")
		if _, errOut, code := darrm(t, "", "separate", gf, "--shard", s, "--out", part); code != 0 {
			t.Fatalf("shard %s: exit %d: %s", s, code, errOut)
		}
		parts = append(parts, part)
	}
	merged, errOut, code := darrm(t, "", append([]string{"separate", "merge", "--format", "csv"}, parts...)...)
	verified, _, vcode := darrm(t, "", "verify", gf, "--format", "csv")
	if code != 0 || vcode != 0 || merged != verified {
		t.Errorf("merge (exit %d) %q, verify (exit %d) %q: %s", code, merged, vcode, verified, errOut)
	}
	if _, errOut, code := darrm(t, "", append([]string{"separate", "merge"}, parts[:2]...)...); code != exitUsage || !strings.Contains(errOut, "every shard") {
		t.Errorf("two of three shards: exit %d: %s", code, errOut)
	}
	for _, bad := range []string{"3/3", "1/0", "a/b", "1"} {
		if _, _, code := darrm(t, "", "separate", gf, "--shard", bad, "--out", filepath.Join(dir, "x.json")); code != exitUsage {
			t.Errorf("--shard %s: exit %d", bad, code)
		}
	}
}
