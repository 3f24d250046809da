//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLargeNoise: releases with discrete noise of a large scale end, in
// exactly their distribution (ensemble's tests), and a scale beyond the
// samplers' range is refused before any work, naming the flag and the
// range (exit 2).
func TestLargeNoise(t *testing.T) {
	dir := t.TempDir()
	counts := countsFile(t, dir, "counts.csv", 50, func(i int) []int { return plurality(200, i%10) })
	out := filepath.Join(dir, "labels.csv")
	for _, args := range [][]string{
		{"--mechanism", "gnmax", "--sigma2", "1e11", "--delta", "1e-5"},
		{"--mechanism", "gnmax", "--sigma2", "1e15", "--delta", "1e-5"},
		{"--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "1e12", "--sigma2", "40", "--delta", "1e-5"},
		{"--mechanism", "lnmax", "--laplace-scale", "1e15"},
	} {
		cmd := child(append([]string{"aggregate", counts, "--out", out}, args...)...)
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if code := waitExitWithin(t, cmd, time.Minute); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, stderr.String())
		}
	}
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--mechanism", "gnmax", "--sigma2", "1e16", "--delta", "1e-5"}, "--sigma2"},
		{[]string{"--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "1e16", "--sigma2", "40", "--delta", "1e-5"}, "--sigma1"},
		{[]string{"--mechanism", "lnmax", "--laplace-scale", "1e16"}, "--laplace-scale"},
	} {
		_, e, code := darrm(t, "", append([]string{"aggregate", counts, "--out", out}, tc.args...)...)
		if code != exitUsage || !strings.Contains(e, tc.flag+" = 1e+16") || !strings.Contains(e, "1e+15]") {
			t.Errorf("%v: exit %d: %s", tc.args, code, e)
		}
	}
}

// TestClassBound: a number of classes beyond votefile.MaxClasses, from
// --classes or from a metadata header, is refused before anything is
// allocated for it (exit 2, naming it and the range), under a memory limit
// of 4 GB that a billion classes would exceed.
func TestClassBound(t *testing.T) {
	dir := t.TempDir()
	votes := filepath.Join(dir, "classes.csv")
	os.WriteFile(votes, []byte("0,1,2\n1,1,1\n"), 0o644)
	header := func(c string) string {
		p := filepath.Join(dir, "h"+c+".csv")
		os.WriteFile(p, []byte(`# {"darrm-votes":1,"ensemble":"e","K":3,"classes":`+c+`,"layout":"votes","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":3,"source":{"method":"none"}}]}`+"\n0,1,2\n"), 0o644)
		return p
	}
	release := []string{"--mechanism", "lnmax", "--laplace-scale", "20", "--out", filepath.Join(dir, "labels.csv")}
	for _, c := range []string{"1000000000", "4000000000", "9000000000000000000"} {
		for _, args := range [][]string{
			append([]string{"aggregate", votes, "--classes", c}, release...),
			append([]string{"aggregate", header(c)}, release...),
		} {
			cmd := inShell("ulimit -v 4000000", args...)
			var stderr syncBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if code := waitExitWithin(t, cmd, 30*time.Second); code != exitUsage || !containsFlat(stderr.String(), c+": must be in [2, 524288]") {
				t.Errorf("%v: exit %d: %s", args, code, stderr.String())
			}
		}
	}
}
