package shard

import (
	"strings"
	"testing"

	"github.com/darrm/darrm/gamma"
)

// TestShardFromEnv reads shards from the environments of Slurm array tasks
// and Kubernetes Indexed Job pods, and refuses environments whose tasks
// would not be every shard once, naming the variable and its value.
func TestShardFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name      string
		scheduler string
		env       map[string]string
		want      gamma.Shard
		err       string // in the error; "" for none
	}{
		{"slurm --array=0-7", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "8", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "7", "SLURM_ARRAY_TASK_STEP": "1"}, gamma.Shard{Index: 3, Count: 8}, ""},
		{"slurm --array=1-8", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "8", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "8"}, gamma.Shard{Index: 0, Count: 8}, ""},
		{"slurm --array=1-8, last task", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "8", "SLURM_ARRAY_TASK_COUNT": "8", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "8"}, gamma.Shard{Index: 7, Count: 8}, ""},
		{"slurm without MIN, MAX, STEP", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3"}, gamma.Shard{Index: 2, Count: 3}, ""},
		{"slurm MIN set to empty", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "1", "SLURM_ARRAY_TASK_MIN": ""}, gamma.Shard{Index: 0, Count: 1}, ""},
		{"slurm outside an array", "slurm", map[string]string{"SLURM_JOB_ID": "12"}, gamma.Shard{}, "SLURM_ARRAY_TASK_ID is not set: darrm is not running as a task of a Slurm job array"},
		{"slurm without COUNT", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "2"}, gamma.Shard{}, "SLURM_ARRAY_TASK_COUNT is not set"},
		{"slurm ID garbled", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "2x", "SLURM_ARRAY_TASK_COUNT": "3"}, gamma.Shard{}, `SLURM_ARRAY_TASK_ID = "2x": must be a whole number`},
		{"slurm ID negative", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "-1", "SLURM_ARRAY_TASK_COUNT": "3"}, gamma.Shard{}, `SLURM_ARRAY_TASK_ID = "-1": must be a whole number`},
		{"slurm COUNT with a space", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "3 "}, gamma.Shard{}, `SLURM_ARRAY_TASK_COUNT = "3 "`},
		{"slurm MIN garbled", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "one"}, gamma.Shard{}, `SLURM_ARRAY_TASK_MIN = "one"`},
		{"slurm ID too large", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "99999999999999999999", "SLURM_ARRAY_TASK_COUNT": "3"}, gamma.Shard{}, "too large"},
		{"slurm --array=0-6:2", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "6", "SLURM_ARRAY_TASK_STEP": "2"}, gamma.Shard{}, `SLURM_ARRAY_TASK_STEP = "2": the array must have step 1`},
		{"slurm --array=1,3,5", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "5"}, gamma.Shard{}, "indices must be contiguous"},
		{"slurm ID below MIN", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "8", "SLURM_ARRAY_TASK_MIN": "1"}, gamma.Shard{}, "SLURM_ARRAY_TASK_ID = 0 minus SLURM_ARRAY_TASK_MIN = 1: shard -1 is not in 0..7"},
		{"slurm ID beyond COUNT", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "8", "SLURM_ARRAY_TASK_COUNT": "8"}, gamma.Shard{}, "SLURM_ARRAY_TASK_ID = 8: shard 8 is not in 0..7 (SLURM_ARRAY_TASK_COUNT = 8)"},
		{"slurm COUNT 0", "slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "0"}, gamma.Shard{}, "SLURM_ARRAY_TASK_COUNT = 0: the count of shards must be >= 1"},

		{"k8s", "k8s", map[string]string{"JOB_COMPLETION_INDEX": "0", "DARRM_SHARDS": "4"}, gamma.Shard{Index: 0, Count: 4}, ""},
		{"kubernetes", "kubernetes", map[string]string{"JOB_COMPLETION_INDEX": "3", "DARRM_SHARDS": "4"}, gamma.Shard{Index: 3, Count: 4}, ""},
		{"k8s outside an Indexed Job", "k8s", map[string]string{"DARRM_SHARDS": "4"}, gamma.Shard{}, "JOB_COMPLETION_INDEX is not set: darrm is not running in a pod of a Kubernetes Indexed Job"},
		{"k8s without DARRM_SHARDS", "k8s", map[string]string{"JOB_COMPLETION_INDEX": "1"}, gamma.Shard{}, "DARRM_SHARDS is not set: the Job's manifest sets it to the Job's completions"},
		{"k8s DARRM_SHARDS garbled", "k8s", map[string]string{"JOB_COMPLETION_INDEX": "1", "DARRM_SHARDS": "four"}, gamma.Shard{}, `DARRM_SHARDS = "four": must be a whole number`},
		{"k8s index beyond DARRM_SHARDS", "k8s", map[string]string{"JOB_COMPLETION_INDEX": "4", "DARRM_SHARDS": "4"}, gamma.Shard{}, "JOB_COMPLETION_INDEX = 4: shard 4 is not in 0..3 (DARRM_SHARDS = 4); set DARRM_SHARDS to the Job's completions"},
		{"k8s DARRM_SHARDS 0", "k8s", map[string]string{"JOB_COMPLETION_INDEX": "0", "DARRM_SHARDS": "0"}, gamma.Shard{}, "DARRM_SHARDS = 0: the count of shards must be >= 1"},
		{"k8s ignores Slurm's variables", "k8s", map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "2"}, gamma.Shard{}, "JOB_COMPLETION_INDEX is not set"},

		{"unknown scheduler", "pbs", map[string]string{"PBS_ARRAY_INDEX": "1"}, gamma.Shard{}, `unknown scheduler "pbs": want slurm, or k8s (or kubernetes)`},
		{"scheduler names are lower case", "Slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "1"}, gamma.Shard{}, "unknown scheduler"},
	} {
		got, err := FromEnv(tc.scheduler, func(name string) string { return tc.env[name] })
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, %v; want an error with %q", tc.name, got, err, tc.err)
		}
	}
}

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want gamma.Shard
		ok   bool
	}{
		{"0/1", gamma.Shard{Index: 0, Count: 1}, true},
		{"2/3", gamma.Shard{Index: 2, Count: 3}, true},
		{"10/16", gamma.Shard{Index: 10, Count: 16}, true},
		{"3/3", gamma.Shard{}, false},
		{"1/0", gamma.Shard{}, false},
		{"-1/2", gamma.Shard{}, false},
		{"01/2", gamma.Shard{}, false},
		{"1/+2", gamma.Shard{}, false},
		{"a/b", gamma.Shard{}, false},
		{"1", gamma.Shard{}, false},
		{"1/2/3", gamma.Shard{}, false},
		{"", gamma.Shard{}, false},
	} {
		got, err := Parse(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v", tc.in, got, err)
		}
		if tc.ok && got.String() != tc.in {
			t.Errorf("%q prints as %q", tc.in, got)
		}
	}
}
