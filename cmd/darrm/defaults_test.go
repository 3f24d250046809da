package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/internal/statedir"
)

// shownDefault returns the value that f's line of help states as its
// default ("(default X)", X unquoted), and false when it states none or
// states it in words (cli.SetDefaultText: a default taken from the input
// or from other flags, which no single value can be).
func shownDefault(f *pflag.Flag) (string, bool) {
	if text, _ := cli.DefaultText(f); text == "" || f.Annotations != nil && len(f.Annotations["cli_default_text"]) > 0 {
		return "", false
	}
	fs := pflag.NewFlagSet("one", pflag.ContinueOnError)
	fs.AddFlag(f)
	m := regexp.MustCompile(` \(default (.*)\)$`).FindStringSubmatch(strings.TrimRight(fs.FlagUsages(), "\n"))
	if m == nil {
		return "", false
	}
	if s, err := strconv.Unquote(m[1]); err == nil {
		return s, true
	}
	return strings.Trim(m[1], "[]"), true
}

// sameResult says whether two runs' JSON outputs state the same result,
// once the keys that differ between two runs of one computation are gone
// (drop).
func sameResult(a, b string) bool {
	norm := func(s string) any {
		var docs []any
		dec := json.NewDecoder(strings.NewReader(s))
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				return s
			}
			docs = append(docs, drop(v))
		}
		return docs
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// drop removes, in v, the keys that differ between two runs of the same
// computation: times and rates, and whether a value was the default
// (given, it is not, whatever its value).
func drop(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "seconds" || k == "queries_per_second" || k == "time" || strings.HasSuffix(k, "_is_default") {
				delete(v, k)
				continue
			}
			v[k] = drop(x)
		}
	case []any:
		for i := range v {
			v[i] = drop(v[i])
		}
	}
	return v
}

// TestStatedDefaultsUsed: the default a flag's help states is the value
// the command uses. For each flag of the commands run below whose help
// ends in "(default X)", giving --flag=X changes neither the exit status
// nor the result (JSON, the keys of times and of defaults aside) of any
// run that accepts it, and at least one run accepts it (a flag that a
// run's mechanism does not take is refused there). A default that the
// command takes from its input or derives from other flags is stated in
// words (cli.SetDefaultText) and is not a value to give.
func TestStatedDefaultsUsed(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, t.TempDir())
	cache := t.TempDir()
	in := func(name string) string { return filepath.Join(dir, name) }
	// Votes whose header states teachers other than the flags' defaults.
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "votes-K11.csv"))
	if err != nil {
		t.Fatal(err)
	}
	votes := in("votes.csv")
	if err := os.WriteFile(votes, []byte(strings.Replace(strings.Replace(string(b), `"eps":0.1`, `"eps":0.0885`, 1), `"Delta":0.00001`, `"Delta":0.0001`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same votes without their header, for sidecar.
	plain := in("plain.csv")
	if err := os.WriteFile(plain, []byte(string(b[strings.IndexByte(string(b), '\n')+1:])), 0o644); err != nil {
		t.Fatal(err)
	}
	counts := countsFile(t, dir, "counts.csv", 30, func(i int) []int { return plurality(150+10*(i%10), i%10) })
	// Proxy votes for a plan of progressive GNMax, whose run below is
	// there for --sim-seed, a setting of that plan alone (the result
	// changes with the seed on these votes: a seed of 2 plans other
	// levels). 40 queries of high consensus at --min-agreement 0.5 plan
	// in a fifth of the CPU of 400 of low consensus at the default
	// agreement, whose plan TestProgressiveCommands runs (the help states
	// --min-agreement's default as text, from its flag's default tag,
	// which this test does not give).
	proxy := ptrCounts(t, dir, "proxy.csv", 40, 236)
	gammaFile := filepath.Join("..", "..", "testdata", "gamma-K11-m3.json")
	oneVote := filepath.Join("..", "..", "testdata", "votes-K11-one-vote.csv")
	j := []string{"--format", "json"}
	c := append([]string{"--cache-dir", cache}, j...)
	runs := [][]string{
		append([]string{"solve", "--K", "11"}, c...),
		append([]string{"solve", "--K", "5", "--m", "2", "--compare", "--Delta", "0"}, c...),
		append([]string{"verify", gammaFile}, j...),
		append([]string{"simulate", "--K", "5", "--m", "2", "--queries", "500", "--seed", "1"}, c...),
		append([]string{"aggregate", votes, "--seed", "1", "--out", in("labels.csv")}, c...),
		append([]string{"aggregate", votes, "--mechanism", "rr", "--seed", "1", "--out", in("rr.csv")}, c...),
		append([]string{"aggregate", oneVote, "--mechanism", "gnmax", "--eps", "0.1", "--Delta", "1e-5", "--seed", "1", "--out", in("gn.csv")}, c...),
		append([]string{"aggregate", counts, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--seed", "1", "--out", in("g.csv")}, c...),
		{"sidecar", plain, "--ensemble", "e", "--relation", "one-vote", "--kind", "fixed", "--partition", "keyed-hash", "--out", in("plain.json"), "--replace"},
		append([]string{"account", "compose", "--step-eps", "0.1", "--step-delta", "1e-5", "--steps", "10"}, j...),
		append([]string{"account", "queries", "--step-eps", "0.2676", "--step-delta", "3e-4", "--budget-eps", "10", "--budget-delta", "0.02"}, j...),
		append([]string{"account", "step-eps", "--budget-eps", "1", "--step-delta", "1e-6", "--steps", "100"}, j...),
		append([]string{"account", "gaussian", "--sigma", "5", "--steps", "100", "--target-delta", "1e-5"}, j...),
		append([]string{"account", "dpsgd", "--sigma", "12", "--n", "1024", "--batch", "30", "--epochs", "5", "--target-delta", "1e-4"}, j...),
		append([]string{"account", "gnmax", "--target-eps", "0.2676", "--target-delta", "3e-4"}, j...),
		append([]string{"account", "rr", "--K", "35", "--m", "6.4521", "--delta", "0.1001"}, j...),
		append([]string{"account", "shuffleg", "--target-eps", "5", "--target-delta", "1e-6", "--G", "10", "--epochs", "50"}, j...),
		append([]string{"account", "pate", counts, "--sigma2", "40", "--target-delta", "1e-5"}, j...),
		append([]string{"plan", "--mechanism", "darrm", "--K", "5", "--m", "2", "--budget-eps", "2", "--budget-delta", "1e-3"}, c...),
		append([]string{"plan", "--mechanism", "rr", "--K", "5", "--queries", "5", "--budget-eps", "2", "--budget-delta", "1e-3"}, c...),
		append([]string{"plan", "--mechanism", "gnmax", "--K", "250", "--classes", "10", "--sigma2", "40", "--budget-eps", "2", "--budget-delta", "1e-5"}, j...),
		append([]string{"plan", "--mechanism", "progressive-gnmax", "--votes", proxy, "--votes-are", "public", "--min-agreement", "0.5", "--budget-eps", "2", "--budget-delta", "1e-5"}, j...),
		append(append([]string(nil), small...), append([]string{"--target-eps", "5", "--lr", "0.1"}, j...)...),
		{"shuffleg", "--task", "ridge", "--dataset", "synthetic", "--n", "40", "--d", "5", "--epochs", "3", "--runs", "2", "--seed", "7", "--target-eps", "5", "--format", "json"},
	}
	root := newRootCmd()
	type flagOf struct{ cmd, flag string }
	accepted := map[flagOf]bool{}
	for _, args := range runs {
		// A first run fills the cache folder, so that every run after it
		// reads the same entries (a run without one computes anew each
		// time: a second would cost as much again).
		if given(args, "cache-dir") {
			darrm(t, "", args...)
		}
		out, stderr, code := darrm(t, "", args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
			continue
		}
		cmd, _, err := root.Find(args)
		if err != nil {
			t.Fatal(err)
		}
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			def, ok := shownDefault(f)
			if !ok || f.Hidden || given(args, f.Name) {
				return
			}
			key := flagOf{cmd.CommandPath(), f.Name}
			if _, seen := accepted[key]; !seen {
				accepted[key] = false
			}
			// Under -short at a smaller size: each flag is given until
			// one run of its command takes it, not in every run after.
			if testing.Short() && accepted[key] {
				return
			}
			out2, stderr2, code2 := darrm(t, "", append(append([]string(nil), args...), "--"+f.Name+"="+def)...)
			switch {
			case code2 == exitUsage && strings.Contains(stderr2, "--"+f.Name) && !strings.Contains(stderr2, "given, but"):
				// Refused as a flag this run does not take (a value that
				// contradicts the input is "given, but ... states").
			case code2 != code || !sameResult(out, out2):
				accepted[key] = true
				t.Errorf("%s --%s: the help says the default is %q, but giving it changes the result (exit %d): %s",
					key.cmd, f.Name, def, code2, stderr2)
			default:
				accepted[key] = true
			}
		})
	}
	for key, ok := range accepted {
		if !ok {
			t.Errorf("%s --%s: every run refuses its stated default; run one that takes it", key.cmd, key.flag)
		}
	}
}

// given reports whether args give the flag name.
func given(args []string, name string) bool {
	for _, a := range args {
		if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") {
			return true
		}
	}
	return false
}
