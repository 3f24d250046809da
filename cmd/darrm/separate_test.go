package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// separateGamma writes a gamma to certify in shards to dir/name and
// returns the file and verify's certificate of it (CSV).
func separateGamma(t *testing.T, dir, name string) (file, verified string) {
	t.Helper()
	g, errOut, code := darrm(t, "", "solve", "--K", "15", "--m", "3", "--no-cache", "--format", "json")
	if code != 0 {
		t.Fatal(errOut)
	}
	file = filepath.Join(dir, name)
	if err := os.WriteFile(file, []byte(g), 0o644); err != nil {
		t.Fatal(err)
	}
	verified, errOut, code = darrm(t, "", "verify", file, "--format", "csv")
	if code != 0 {
		t.Fatalf("verify: exit %d: %s", code, errOut)
	}
	return file, verified
}

// TestSeparateShards certifies a gamma in three shards and checks that the
// merged certificate is verify's, and that incomplete or foreign shards are
// refused.
func TestSeparateShards(t *testing.T) {
	dir := t.TempDir()
	gf, verified := separateGamma(t, dir, "g.json")
	var parts []string
	for _, s := range []string{"0/3", "1/3", "2/3"} {
		part := filepath.Join(dir, "part"+s[:1]+".json")
		out, errOut, code := darrm(t, "", "separate", gf, "--shard", s, "--out", part)
		if code != 0 {
			t.Fatalf("shard %s: exit %d: %s", s, code, errOut)
		}
		// One sentence says what was done, where the JSON went, and what
		// next.
		if said := unwrapped(out); strings.Count(said, ".json") != 1 || !strings.HasPrefix(said, "part "+s+" of the certificate of K = ") ||
			!strings.Contains(said, "written to "+part+"; combine all 3 parts with darrm separate merge") {
			t.Errorf("shard %s: stdout %q, want one sentence saying what was written", s, out)
		}
		parts = append(parts, part)
	}
	merged, errOut, code := darrm(t, "", append([]string{"separate", "merge", "--format", "csv"}, parts...)...)
	if code != 0 || merged != verified {
		t.Errorf("merge (exit %d) %q, verify %q: %s", code, merged, verified, errOut)
	}
	if _, errOut, code := darrm(t, "", append([]string{"separate", "merge"}, parts[0], parts[2])...); code != exitUsage || !strings.Contains(errOut, "shard 1 of 3 is missing: every shard") {
		t.Errorf("two of three shards: exit %d: %s", code, errOut)
	}
	if _, errOut, code := darrm(t, "", "separate", "merge", parts[1], parts[1], parts[2]); code != exitUsage || !strings.Contains(errOut, "are both shard 1 of 3") {
		t.Errorf("a shard twice: exit %d: %s", code, errOut)
	}
	// A shard whose stated maximum was edited is refused, not certified.
	raw, err := os.ReadFile(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	edited := regexp.MustCompile(`"MaxF": *[-0-9.e+]+`).ReplaceAll(raw, []byte(`"MaxF": 0.001`))
	if string(edited) == string(raw) {
		t.Fatalf("no MaxF in %s", raw)
	}
	os.WriteFile(parts[1], edited, 0o644)
	if out, errOut, code := darrm(t, "", append([]string{"separate", "merge"}, parts...)...); code != exitUsage || !strings.Contains(errOut, "shard 1 of 3 states the privacy cost 0.001") || strings.Contains(out, "CERTIFIED") {
		t.Errorf("a shard's maximum edited: exit %d: %s%s", code, out, errOut)
	}
	// K = 15 has 31 reduced pairs to deal: a 32nd part covers nothing (it
	// failed to write its file, its maximum -Inf), the 31st of 31 one.
	for _, bad := range []string{"3/3", "1/0", "a/b", "1", "31/32", "0/32"} {
		if _, errOut, code := darrm(t, "", "separate", gf, "--shard", bad, "--out", filepath.Join(dir, "x.json")); code != exitUsage {
			t.Errorf("--shard %s: exit %d: %s", bad, code, errOut)
		}
	}
	if _, errOut, code := darrm(t, "", "separate", gf, "--shard", "30/31", "--out", filepath.Join(dir, "x.json")); code != 0 {
		t.Errorf("--shard 30/31: exit %d: %s", code, errOut)
	}
}

// schedulerVars are the variables of array jobs that darrm separate
// --shard-from-env reads.
var schedulerVars = []string{
	"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP",
	"JOB_COMPLETION_INDEX", "DARRM_SHARDS",
}

// darrmEnv runs the CLI in-process (darrm) with the scheduler variables of
// env set, and the others set to "", which darrm reads as not set: as a
// task of an array job sees them, whatever the test's own environment.
func darrmEnv(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	for _, name := range schedulerVars {
		t.Setenv(name, env[name])
	}
	return darrm(t, "", args...)
}

// TestSeparateArrayJobs runs the protocol of a scheduler: every task of an
// array job runs darrm separate --shard-from-env with only its scheduler's
// variables to tell it apart, writing parts/part{i}.json in a shared
// folder; the dependent job merges the folder's parts into verify's
// certificate.
func TestSeparateArrayJobs(t *testing.T) {
	dir := t.TempDir()
	gf, verified := separateGamma(t, dir, "g.json")
	const n = 3
	for _, tc := range []struct {
		name      string
		scheduler string
		env       func(task int) map[string]string // task 0..n-1 of the job
	}{
		{"slurm --array=0-2", "slurm", func(task int) map[string]string {
			return map[string]string{"SLURM_ARRAY_TASK_ID": strconv.Itoa(task), "SLURM_ARRAY_TASK_COUNT": strconv.Itoa(n),
				"SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": strconv.Itoa(n - 1), "SLURM_ARRAY_TASK_STEP": "1"}
		}},
		{"slurm --array=1-3", "slurm", func(task int) map[string]string {
			return map[string]string{"SLURM_ARRAY_TASK_ID": strconv.Itoa(task + 1), "SLURM_ARRAY_TASK_COUNT": strconv.Itoa(n),
				"SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": strconv.Itoa(n)}
		}},
		{"kubernetes Indexed Job", "k8s", func(task int) map[string]string {
			return map[string]string{"JOB_COMPLETION_INDEX": strconv.Itoa(task), "DARRM_SHARDS": strconv.Itoa(n)}
		}},
	} {
		parts := filepath.Join(t.TempDir(), "parts")
		if err := os.Mkdir(parts, 0o755); err != nil {
			t.Fatal(err)
		}
		for task := range n {
			if _, errOut, code := darrmEnv(t, tc.env(task), "separate", gf, "--shard-from-env", tc.scheduler, "--out", filepath.Join(parts, "part{i}.json")); code != 0 {
				t.Fatalf("%s, task %d: exit %d: %s", tc.name, task, code, errOut)
			}
		}
		if got := files(t, parts); strings.Join(got, " ") != "part0.json part1.json part2.json" {
			t.Errorf("%s: the tasks wrote %v", tc.name, got)
		}
		written, _ := filepath.Glob(filepath.Join(parts, "part*.json"))
		merged, errOut, code := darrmEnv(t, nil, append([]string{"separate", "merge", "--format", "csv"}, written...)...)
		if code != 0 || merged != verified {
			t.Errorf("%s: merge (exit %d) %q, verify %q: %s", tc.name, code, merged, verified, errOut)
		}
	}
}

// TestSeparateFromEnvRefused: a bad --shard-from-env, or an environment
// that is not a task of its array job, is a usage error naming the
// accepted schedulers or the variable, and writes nothing; and a part
// whose {i} makes it the gamma file read is refused.
func TestSeparateFromEnvRefused(t *testing.T) {
	dir := t.TempDir()
	gf, _ := separateGamma(t, dir, "g0.json")
	out := filepath.Join(dir, "part{i}.json")
	slurm := map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "2"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"an unknown scheduler", slurm, []string{"--shard-from-env", "pbs"}, `unknown scheduler "pbs": want slurm, or k8s (or kubernetes)`},
		{"outside a Slurm array", nil, []string{"--shard-from-env", "slurm"}, "SLURM_ARRAY_TASK_ID is not set"},
		{"a garbled count", map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "two"}, []string{"--shard-from-env", "slurm"}, `SLURM_ARRAY_TASK_COUNT = "two": must be a whole number`},
		{"a stepped array", map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "2", "SLURM_ARRAY_TASK_STEP": "2"}, []string{"--shard-from-env", "slurm"}, `SLURM_ARRAY_TASK_STEP = "2"`},
		{"no DARRM_SHARDS", map[string]string{"JOB_COMPLETION_INDEX": "0"}, []string{"--shard-from-env", "kubernetes"}, "DARRM_SHARDS is not set"},
		{"both ways", slurm, []string{"--shard", "1/2", "--shard-from-env", "slurm"}, "--shard and --shard-from-env exclude each other"},
		{"neither way", slurm, nil, "--shard i/n, or --shard-from-env slurm or k8s"},
	} {
		args := append([]string{"separate", gf, "--out", out}, tc.args...)
		if _, errOut, code := darrmEnv(t, tc.env, args...); code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d: %s; want %q", tc.name, code, errOut, tc.want)
		}
	}
	if got := files(t, dir); len(got) != 1 {
		t.Errorf("refused runs left %v", got)
	}
	before, _ := os.ReadFile(gf)
	_, errOut, code := darrm(t, "", "separate", gf, "--shard", "0/2", "--out", filepath.Join(dir, "g{i}.json"))
	after, _ := os.ReadFile(gf)
	if code != exitUsage || !strings.Contains(errOut, "g0.json is an input") || string(after) != string(before) {
		t.Errorf("--out g{i}.json for shard 0 of g0.json: exit %d: %s", code, errOut)
	}
}
