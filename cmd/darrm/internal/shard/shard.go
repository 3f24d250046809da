// Package shard reads the shard of a gamma's separation that one run of
// darrm separate takes: written as i/n, or from the variables that the
// scheduler of an array job (Slurm, Kubernetes) sets for each task.
package shard

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/darrm/darrm/gamma"
)

// envShards is the environment variable that gives the number of shards
// to the pods of a Kubernetes Indexed Job (FromEnv): Kubernetes gives
// a pod its index but not the Job's completions, so the Job's manifest
// sets it to the same value as completions.
const envShards = "DARRM_SHARDS"

// The variables of a task of a Slurm job array that FromEnv reads.
const (
	slurmID    = "SLURM_ARRAY_TASK_ID"
	slurmCount = "SLURM_ARRAY_TASK_COUNT"
	slurmMin   = "SLURM_ARRAY_TASK_MIN"
	slurmMax   = "SLURM_ARRAY_TASK_MAX"
	slurmStep  = "SLURM_ARRAY_TASK_STEP"
)

// kubernetesIndex is the variable that gives a pod of a Kubernetes Indexed
// Job its completion index.
const kubernetesIndex = "JOB_COMPLETION_INDEX"

// FromEnv returns the shard that one task of an array job runs, read
// with getenv (os.Getenv) from the variables its scheduler sets, so that
// the tasks of one job run the shards 0, ..., n-1 once each:
//
//   - "slurm", a task of a Slurm job array (sbatch --array=A-B): the index
//     is SLURM_ARRAY_TASK_ID minus SLURM_ARRAY_TASK_MIN (0 when not set),
//     the count SLURM_ARRAY_TASK_COUNT. An array with a step other than 1,
//     or whose indices are not contiguous (SLURM_ARRAY_TASK_MAX - MIN + 1
//     is not the count), is refused: its tasks would not be every shard.
//   - "k8s" or "kubernetes", a pod of a Kubernetes Indexed Job
//     (completionMode: Indexed): the index is JOB_COMPLETION_INDEX, the
//     count DARRM_SHARDS, which the Job's manifest sets to its completions.
//
// A variable set to "" counts as not set. An error names the variable,
// its value and the rule it breaks.
func FromEnv(scheduler string, getenv func(string) string) (gamma.Shard, error) {
	switch scheduler {
	case "slurm":
		return slurmShard(getenv)
	case "k8s", "kubernetes":
		return kubernetesShard(getenv)
	}
	return gamma.Shard{}, fmt.Errorf("unknown scheduler %q: want slurm, or k8s (or kubernetes)", scheduler)
}

// slurmShard is FromEnv for a task of a Slurm job array.
func slurmShard(getenv func(string) string) (gamma.Shard, error) {
	const outside = "darrm is not running as a task of a Slurm job array (sbatch --array=0-N)"
	id, err := required(getenv, slurmID, outside)
	if err != nil {
		return gamma.Shard{}, err
	}
	count, err := required(getenv, slurmCount, outside)
	if err != nil {
		return gamma.Shard{}, err
	}
	low, index := 0, fmt.Sprintf("%s = %d", slurmID, id)
	if s := getenv(slurmMin); s != "" {
		if low, err = whole(slurmMin, s); err != nil {
			return gamma.Shard{}, err
		}
		index = fmt.Sprintf("%s = %d minus %s = %d", slurmID, id, slurmMin, low)
	}
	if s := getenv(slurmStep); s != "" && s != "1" {
		return gamma.Shard{}, fmt.Errorf("%s = %q: the array must have step 1 (--array=A-B), so that its tasks are the shards 0..n-1", slurmStep, s)
	}
	if s := getenv(slurmMax); s != "" {
		high, err := whole(slurmMax, s)
		if err != nil {
			return gamma.Shard{}, err
		}
		if high-low+1 != count {
			return gamma.Shard{}, fmt.Errorf("%s = %d, %s = %d, %s = %d: the array's indices must be contiguous (--array=A-B), so that its tasks are the shards 0..n-1",
				slurmMin, low, slurmMax, high, slurmCount, count)
		}
	}
	return envShard(id-low, count, index, fmt.Sprintf("%s = %d", slurmCount, count))
}

// kubernetesShard is FromEnv for a pod of a Kubernetes Indexed Job.
func kubernetesShard(getenv func(string) string) (gamma.Shard, error) {
	i, err := required(getenv, kubernetesIndex, "darrm is not running in a pod of a Kubernetes Indexed Job (completionMode: Indexed)")
	if err != nil {
		return gamma.Shard{}, err
	}
	n, err := required(getenv, envShards, "the Job's manifest sets it to the Job's completions (Kubernetes gives a pod its index, not the count)")
	if err != nil {
		return gamma.Shard{}, err
	}
	shard, err := envShard(i, n, fmt.Sprintf("%s = %d", kubernetesIndex, i), fmt.Sprintf("%s = %d", envShards, n))
	if err != nil {
		return gamma.Shard{}, fmt.Errorf("%w; set %s to the Job's completions", err, envShards)
	}
	return shard, nil
}

// envShard is shard i of n, which must be one: index and count say where
// i and n come from.
func envShard(i, n int, index, count string) (gamma.Shard, error) {
	switch {
	case n < 1:
		return gamma.Shard{}, fmt.Errorf("%s: the count of shards must be >= 1", count)
	case i < 0 || i >= n:
		return gamma.Shard{}, fmt.Errorf("%s: shard %d is not in 0..%d (%s)", index, i, n-1, count)
	}
	return gamma.Shard{Index: i, Count: n}, nil
}

// required reads the variable name as a whole number (whole); one not set
// is an error that says why it should be.
func required(getenv func(string) string, name, why string) (int, error) {
	s := getenv(name)
	if s == "" {
		return 0, fmt.Errorf("%s is not set: %s", name, why)
	}
	return whole(name, s)
}

// whole reads the value s of the variable name as a whole number >= 0 in
// base 10.
func whole(name, s string) (int, error) {
	if strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("%s = %q: must be a whole number >= 0 in base 10", name, s)
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s = %q: too large", name, s)
	}
	return n, nil
}

// Parse reads a shard written as "i/n", with 0 <= i < n and no
// leading zeros or signs.
func Parse(s string) (gamma.Shard, error) {
	var sh gamma.Shard
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.Index, &sh.Count); err != nil || sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count || sh.String() != s {
		return gamma.Shard{}, fmt.Errorf("must be i/n with 0 <= i < n")
	}
	return sh, nil
}
