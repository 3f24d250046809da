package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMalformedFirstRow: a counts file whose first row is numbers but no
// valid counts is bad input naming the line, the column, the value and the
// rule (not a header row dropped, not an id), and so is a comment line
// among the rows of either reader; no label file is left.
func TestMalformedFirstRow(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "labels.csv")
	for _, tc := range []struct {
		data string
		args []string
		want string
	}{
		{"260,-10,0,0\n250,0,0,0\n", []string{"--input-format", "counts", "--partition", "keyed-hash", "--mechanism", "lnmax", "--laplace-scale", "20"}, `line 1, column 2: count "-10": must be a non-negative integer`},
		{"1,0,2.5,247\n250,0,0,0\n", []string{"--input-format", "counts", "--partition", "keyed-hash", "--mechanism", "lnmax", "--laplace-scale", "20"}, `line 1, column 3: count "2.5"`},
		{"240.5,5,5,0\n240,5,5,0\n", []string{"--input-format", "counts", "--partition", "keyed-hash", "--mechanism", "lnmax", "--laplace-scale", "20"}, `line 1, column 1: count "240.5"`},
		{"3,1,0\n# made by hand\n0,4,0\n", []string{"--input-format", "counts", "--partition", "keyed-hash", "--mechanism", "lnmax", "--laplace-scale", "20"}, "line 2, column 1: a line starting with # is a comment line"},
		{"1,1,0\n# {\"note\": 1}\n1,0,0\n", []string{"--mechanism", "subsample", "--eps", "0.1", "--Delta", "1e-5", "--no-cache"}, "line 2, column 1: a line starting with # is a comment line"},
	} {
		in := filepath.Join(dir, "votes.csv")
		os.WriteFile(in, []byte(tc.data), 0o644)
		_, e, code := darrm(t, "", append([]string{"aggregate", in, "--out", out}, tc.args...)...)
		if code != exitUsage || !strings.Contains(e, tc.want) {
			t.Errorf("%q: exit %d: %s", tc.data, code, e)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%q: labels written", tc.data)
			os.Remove(out)
		}
	}
}

// TestMEpsFromHeader: an m·eps beyond its range whose eps came from the
// vote file's metadata header names the header, not --eps.
func TestMEpsFromHeader(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "votes-K11.csv"))
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "votes.csv")
	os.WriteFile(in, []byte(strings.Replace(string(raw), `"eps":0.1`, `"eps":50`, 1)), 0o644)
	_, e, code := darrm(t, "", "aggregate", in, "--out", filepath.Join(dir, "labels.csv"), "--no-cache")
	if code != exitUsage || !strings.Contains(e, "eps 50 of the metadata header of "+in) || strings.Contains(e, "--eps") {
		t.Errorf("exit %d: %s", code, e)
	}
}
