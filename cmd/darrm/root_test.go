package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
)

// walk calls f on every command of the tree.
func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walk(sub, f)
	}
}

// TestSharedFlags walks the command tree: every flag whose name is a shared
// flag's has that flag's default and help, so a name means one thing with
// one default everywhere; and every shared flag is in use. A command that
// takes the value from its input when the flag is not given says so in
// words (cli.SetDefaultText), beside the same help and default value.
func TestSharedFlags(t *testing.T) {
	byName := map[string]cli.Flag{}
	for _, s := range setup.Registry.Flags() {
		byName[s.Name] = s
	}
	used := map[string][]string{}
	walk(newRootCmd(), func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			s, ok := byName[f.Name]
			if !ok {
				return
			}
			used[f.Name] = append(used[f.Name], c.CommandPath())
			fs := pflag.NewFlagSet("want", pflag.ContinueOnError)
			want := reflectNew(s)
			s.Add(fs, want)
			w := fs.Lookup(s.Name)
			_, usage := cli.DefaultText(f)
			_, wantUsage := cli.DefaultText(w)
			if f.Value.String() != w.Value.String() || usage != wantUsage || f.Value.Type() != w.Value.Type() {
				t.Errorf("%s --%s: default %q, type %s, help %q; the shared flag has %q, %s, %q",
					c.CommandPath(), f.Name, f.Value, f.Value.Type(), usage, w.Value, w.Value.Type(), wantUsage)
			}
		})
	})
	for _, s := range setup.Registry.Flags() {
		if len(used[s.Name]) == 0 {
			t.Errorf("shared flag --%s is used by no command", s.Name)
		}
	}
}

// TestHelpDefaults: no flag's help states its default twice, in its own
// words and again as pflag's "(default ...)", and none shows an empty
// "(default [])".
func TestHelpDefaults(t *testing.T) {
	walk(newRootCmd(), func(c *cobra.Command) {
		for _, line := range strings.Split(c.LocalFlags().FlagUsages(), "\n") {
			if strings.Count(line, "(default") > 1 || strings.Contains(line, "(default [])") {
				t.Errorf("%s: %s", c.CommandPath(), strings.TrimSpace(line))
			}
		}
	})
}

// reflectNew returns a pointer of the type s.add expects.
func reflectNew(s cli.Flag) any { return reflect.New(reflect.TypeOf(s.Default)).Interface() }

// TestREADMEDefaults checks that the README's table of defaults lists every
// shared flag with its default as darrm prints it.
func TestREADMEDefaults(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, s := range setup.Registry.Flags() {
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		s.Add(fs, reflectNew(s))
		def := fs.Lookup(s.Name).DefValue
		row := fmt.Sprintf("| `--%s` |", s.Name)
		i := strings.Index(readme, row)
		if i < 0 {
			t.Errorf("README's table of defaults has no row for --%s", s.Name)
			continue
		}
		line := readme[i : i+strings.IndexByte(readme[i:], '\n')]
		want := "`" + def + "`"
		if def == "" {
			want = "| unset |"
		}
		if !strings.Contains(line, want) {
			t.Errorf("README row %q does not give the default `%s`", line, def)
		}
	}
}

// failWriter fails every write, like /dev/full.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestWriteErrors: output that cannot be written fails the command, in
// every format.
func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"solve", "--K", "5", "--cache-dir", dir},
		{"solve", "--K", "5", "--cache-dir", dir, "--format", "csv"},
		{"simulate", "--K", "5", "--queries", "10", "--cache-dir", dir, "--mechanisms", "subsample"},
		{"account", "compose", "--step-eps", "1", "--steps", "2"},
		{"--version"},
	} {
		var stderr bytes.Buffer
		code := runWith(testMemo, context.Background(), args, strings.NewReader(""), failWriter{}, &stderr)
		if code != exitFailure || !strings.Contains(stderr.String(), "no space left") {
			t.Errorf("%v to a full device: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

// TestInterrupted: a command whose context is cancelled (SIGINT, SIGTERM)
// exits 130 and says so.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"verify", "--m", "3"}, strings.NewReader("1 0.5 0.5 1"), &out, &errb)
	if code != exitInterrupted || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("cancelled verify: exit %d, stderr %q", code, errb.String())
	}
}

func TestVersionAndGroups(t *testing.T) {
	out, _, code := darrm(t, "", "--version")
	if code != 0 || !strings.HasPrefix(out, "darrm ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	out, _, code = darrm(t, "", "account")
	if code != 0 || !strings.Contains(out, "compose") {
		t.Errorf("account without a subcommand: exit %d, %q", code, out)
	}
	for _, args := range [][]string{{"account", "frobnicate"}, {"frobnicate"}} {
		out, errOut, code := darrm(t, "", args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, `unknown command "frobnicate"`) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// TestDefaultsEchoed: the tool's headline usage needs no flags beyond the
// vote file, and the output says which values are defaults. One query:
// the total of more is composed by a transform, and the defaults are
// echoed alike.
func TestDefaultsEchoed(t *testing.T) {
	dir := t.TempDir()
	votes := voteFile(t, dir, 1, func(i int) int { return i })
	out, errOut, code := darrm(t, "", "aggregate", votes, "--cache-dir", dir, "--out", filepath.Join(dir, "labels.csv"))
	if code != 0 || !strings.Contains(out, "m = 3 (default)") || !strings.Contains(out, "= 1-(1-Delta)^m (default)") {
		t.Errorf("aggregate votes.csv: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = darrm(t, "", "aggregate", votes, "--cache-dir", dir, "--out", filepath.Join(dir, "l.jsonl"), "--format", "json")
	var doc report.Problem
	decode(t, out, &doc)
	if code != 0 || doc.M != 3 || !doc.MDefault || !doc.DeltaDefault {
		t.Errorf("aggregate JSON: exit %d, %+v", code, doc)
	}
}

// TestOutIsDirectory: --out naming a directory is refused as such.
func TestOutIsDirectory(t *testing.T) {
	dir := t.TempDir()
	votes := voteFile(t, dir, 3, func(i int) int { return i })
	_, errOut, code := darrm(t, "", "aggregate", votes, "--cache-dir", dir, "--out", dir)
	if code != exitUsage || !strings.Contains(errOut, "is a directory") {
		t.Errorf("--out DIR: exit %d, %q", code, errOut)
	}
}

// TestVerifyReadsSolveCSV: verify takes solve's CSV output as input.
func TestVerifyReadsSolveCSV(t *testing.T) {
	dir := t.TempDir()
	csv, errOut, code := darrm(t, "", "solve", "--K", "11", "--cache-dir", dir, "--format", "csv", "--compare")
	if code != 0 {
		t.Fatalf("solve: exit %d: %s", code, errOut)
	}
	out, errOut, code := darrm(t, csv, "verify", "--format", "json")
	var doc report.Verify
	decode(t, out, &doc)
	if code != 0 || doc.Certificate.Status.String() != "certified" || doc.K != 11 {
		t.Errorf("verify of solve's CSV: exit %d, %s, %+v", code, errOut, doc)
	}
}

// TestHelpFiles: every file of help/ is the help of the command it is
// named after (a command whose file is missing panics when the tree is
// built), word for word, aggregate's with the mechanisms of its registry
// (mechanismsHelp).
func TestHelpFiles(t *testing.T) {
	shown := map[string][2]string{}
	walk(newRootCmd(), func(c *cobra.Command) {
		name := strings.ReplaceAll(strings.TrimPrefix(c.CommandPath(), "darrm "), " ", "-")
		shown[name] = [2]string{c.Long, c.Example}
	})
	entries, err := helpFiles.ReadDir("help")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".txt")
		long, example, err := cli.ReadHelp(helpFiles, "help/"+e.Name())
		long = mechanismsHelp(long, setup.NewMechanisms(ensemble.Mechanisms()))
		got, ok := shown[name]
		if err != nil || !ok || got[0] != long || got[1] != example {
			t.Errorf("help/%s is not the help of darrm %s (%v)", e.Name(), strings.ReplaceAll(name, "-", " "), err)
		}
	}
}

// TestFlagValueErrors: a flag given a value it cannot read, on any
// command, is refused naming the flag, the value and the rule, in darrm's
// words, never strconv's or pflag's; end to end, the error is a usage
// error (exit 2) with nothing on standard output, on the command line and
// in a ledger's schedule file.
func TestFlagValueErrors(t *testing.T) {
	// Every flag of a number, a list of them, a duration or a switch, of
	// every command.
	bad := map[string]string{"float64": "abc", "int": "abc", "uint": "abc", "floats": "1,abc", "intSlice": "1,abc", "duration": "abc", "bool": "abc"}
	checked := 0
	walk(newRootCmd(), func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			v, ok := bad[f.Value.Type()]
			if !ok {
				return
			}
			checked++
			fs := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
			fs.AddFlag(&pflag.Flag{Name: f.Name, Value: f.Value, NoOptDefVal: f.NoOptDefVal})
			err := cli.FlagValueError(fs.Parse([]string{"--" + f.Name + "=" + v}))
			if want := fmt.Sprintf("--%s: %q ", f.Name, v); err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), `"abc"`) ||
				strings.Contains(err.Error(), "strconv") || strings.Contains(err.Error(), "invalid") {
				t.Errorf("%s --%s=%s: %v, want %q and the rule", c.CommandPath(), f.Name, v, err, want)
			}
		})
	})
	if checked < 50 {
		t.Errorf("%d flags checked: the walk missed the commands", checked)
	}

	dir := t.TempDir()
	schedule := filepath.Join(dir, "schedule.txt")
	os.WriteFile(schedule, []byte("--mechanism gnmax --sigma2 4x --delta 1e-5 --queries 10\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--budget-eps", "abc", "--budget-delta", "1e-5"}, `--budget-eps: "abc" is not a number (such as 2, 0.5 or 1e-5)`},
		{[]string{"plan", "--budget-eps", "1,5", "--budget-delta", "1e-5"}, `--budget-eps: "1,5" is not a number`},
		{[]string{"plan", "--budget-eps", "1e999", "--budget-delta", "1e-5"}, `--budget-eps: "1e999" is out of range: a number is at most about 1.8e308 in size`},
		{[]string{"aggregate", "votes.csv", "--mechanism", "gnmax", "--sigma2", "1e"}, `--sigma2: "1e" is not a number`},
		{[]string{"account", "pate", "--sigma2", "40", "--target-delta", "0.00001x"}, `--target-delta: "0.00001x" is not a number`},
		{[]string{"solve", "--K", "eleven", "--m", "3"}, `--K: "eleven" is not a whole number in base 10`},
		{[]string{"solve", "--K", "99999999999999999999", "--m", "3"}, `--K: "99999999999999999999" is out of range`},
		{[]string{"aggregate", "votes.csv", "--seed", "-1"}, `--seed: "-1" is not a whole number >= 0 in base 10`},
		{[]string{"simulate", "--K", "11", "--budget-queries", "3,a"}, `--budget-queries: "3,a" has "a", which is not a whole number in base 10`},
		{[]string{"ledger", "init", filepath.Join(dir, "l.jsonl"), "--budget-eps", "2", "--budget-delta", "1e-5", "--lock-timeout", "5"}, `--lock-timeout: "5" is not a duration (such as 30s, 2m or 1h30m)`},
		{[]string{"ledger", "init", filepath.Join(dir, "l.jsonl"), "--budget-eps", "2", "--budget-delta", "1e-5", "--K", "25", "--classes", "10",
			"--ensemble", "e", "--relation", "one-vote", "--kind", "fixed", "--partition", "keyed-hash", "--schedule", schedule}, `line 1: --sigma2: "4x" is not a number`},
	} {
		out, stderr, code := darrm(t, "", tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q%q; want %d and %q", tc.args, code, out, stderr, exitUsage, tc.want)
		}
	}
	if f := files(t, dir); len(f) != 1 {
		t.Errorf("bad flags left files behind: %v", f)
	}
	// Good lists pass their rules, which read them item by item.
	for _, args := range [][]string{
		{"simulate", "--budget-queries", "30,100"}, {"solve", "--queries", "30", "--queries", "100"},
		{"transfer", "--queries", "30,100"}, {"account", "gnmax", "--target-eps", "0.2654,0.2561"},
	} {
		c, rest, err := newRootCmd().Find(args)
		if err == nil {
			err = c.ParseFlags(rest)
		}
		if err == nil {
			err = setup.CheckFlagRules(c)
		}
		if err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// TestOneCommandTree: a run builds only the command its first argument
// names (newRootCmd), and says the same as with every command built: the
// help of every command, an unknown flag (and one a letter off one of its
// own), an unknown argument or subcommand, and a group run bare, each with
// its exit status. Under -short at a smaller size: each command with one
// of the first four in turn, not all of them.
func TestOneCommandTree(t *testing.T) {
	for _, c := range subcommands {
		if got := c.build(testMechanisms()).Name(); got != c.name {
			t.Errorf("command %s is registered as %s: a run on it would build every command", got, c.name)
		}
	}
	var paths [][]string
	walk(newRootCmd(), func(c *cobra.Command) {
		if c.HasParent() {
			paths = append(paths, strings.Fields(c.CommandPath())[1:])
		}
	})
	execute := func(root *cobra.Command, args []string) string {
		var out, errb bytes.Buffer
		code := cli.Execute(context.Background(), root, args, strings.NewReader(""), &out, &errb, setup.Explain)
		return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, args := range [][]string{{"--version"}, {"-v"}} {
		if all, one := execute(newRootCmd(), args), execute(newRootCmd(args...), args); one != all || !strings.Contains(one, "darrm ") {
			t.Errorf("darrm %q with no command:\n%s\nwith every command:\n%s", args, one, all)
		}
	}
	for i, path := range paths {
		c, _, err := newRootCmd().Find(path)
		if err != nil {
			t.Fatal(err)
		}
		var near string
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if near == "" && !f.Hidden && len(f.Name) > 3 {
				near = "--" + f.Name[:len(f.Name)-1]
			}
		})
		suffixes := [][]string{{"--help"}, {"--no-such-flag"}, {near}, {"no-such-command"}}
		if testing.Short() {
			suffixes = suffixes[i%len(suffixes):][:1]
		}
		if c.HasSubCommands() {
			suffixes = append(suffixes, nil)
		}
		for _, suffix := range suffixes {
			args := append(slices.Clone(path), suffix...)
			if all, one := execute(newRootCmd(), args), execute(newRootCmd(args...), args); one != all {
				t.Errorf("darrm %q with its command alone:\n%s\nwith every command:\n%s", args, one, all)
			}
		}
	}
}

// BenchmarkNewRootCmd builds the command tree as a run of darrm aggregate
// does (one command) and as darrm help does (every command).
func BenchmarkNewRootCmd(b *testing.B) {
	for _, bc := range []struct {
		name string
		args []string
	}{{"aggregate", []string{"aggregate", "--K", "11"}}, {"help", []string{"help"}}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				newRootCmd(bc.args...)
			}
		})
	}
}
