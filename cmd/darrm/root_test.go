package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/teachers"
	"github.com/darrm/darrm/votefile"
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
// one default everywhere; and every shared flag is in use.
func TestSharedFlags(t *testing.T) {
	byName := map[string]cli.Flag{}
	for _, s := range sharedFlags.Flags() {
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
			if f.DefValue != w.DefValue || f.Usage != w.Usage || f.Value.Type() != w.Value.Type() {
				t.Errorf("%s --%s: default %q, type %s, help %q; the shared flag has %q, %s, %q",
					c.CommandPath(), f.Name, f.DefValue, f.Value.Type(), f.Usage, w.DefValue, w.Value.Type(), w.Usage)
			}
		})
	})
	for _, s := range sharedFlags.Flags() {
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
	for _, s := range sharedFlags.Flags() {
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

// TestExplain maps every kind of error onto its exit status and message:
// explain is the one place where that happens.
func TestExplain(t *testing.T) {
	accParam := &accountant.ParamError{Name: "laplace scale", Value: -1, Rule: "must be a finite number > 0"}
	setting := &accountant.SettingError{Name: "search", Value: "grid", Rule: "the paper's search uses the paper's conversion only"}
	conParam := &constraints.ParamError{Name: "m·eps", Value: 0.5, Rule: "must be > 0"}
	ledParam := &ledger.ParamError{Name: "budget-eps", Value: "-1", Rule: "must be > 0"}
	for _, tc := range []struct {
		name string
		err  error
		code int
		msg  string
	}{
		{"none", nil, exitOK, ""},
		{"failure", errors.New("disk on fire"), exitFailure, "disk on fire"},
		{"usage", cli.Usagef("--m = 0"), exitUsage, "--m = 0"},
		{"too large", fmt.Errorf("solve K=1001 m=10: %w", optimal.ErrTooLarge), exitUsage, "solve K=1001 m=10: " + optimal.ErrTooLarge.Error()},
		{"library not certified", fmt.Errorf("x: %w", ensemble.ErrNotCertified), exitNotCertified, "x: " + ensemble.ErrNotCertified.Error()},
		{"not certified", fmt.Errorf("gamma is %w", errNotCertified), exitNotCertified, "gamma is not certified"},
		{"budget", fmt.Errorf("%w: 3 left", errBudget), exitBudget, "privacy budget reached: 3 left"},
		{"interrupted", fmt.Errorf("verify K=11: %w", context.Canceled), exitInterrupted, "verify K=11: context canceled"},

		// A parameter is named as the flag that sets it, dropping what the
		// library wrapped it in, keeping what the command did.
		{"param", flagError(fmt.Errorf("pate: %w", accParam), map[string]string{"laplace scale": "--laplace-scale"}), exitUsage, "--laplace-scale = -1: must be a finite number > 0"},
		{"param, command context", fmt.Errorf("run: %w", flagError(accParam, nil)), exitUsage, "run: --laplace scale = -1: must be a finite number > 0"},
		{"param, account", &flagged{err: accParam, names: map[string]string{"laplace scale": "--scale"}, prefix: "account x: "}, exitUsage, "account x: --scale = -1: must be a finite number > 0"},
		{"param, no flag", accParam, exitUsage, accParam.Error()},
		{"constraints param", flagError(conParam, map[string]string{"m·eps": "m·eps (--m × --eps)"}), exitUsage, "m·eps (--m × --eps) = 0.5: must be > 0"},
		{"ledger param", flagError(ledParam, nil), exitUsage, "--budget-eps = -1: must be > 0"},
		{"setting", flagError(fmt.Errorf("teacher cap: %w", setting), map[string]string{"search": "--gnmax-search"}), exitUsage, "--gnmax-search grid: the paper's search uses the paper's conversion only"},
		{"setting, no flag", setting, exitUsage, setting.Error()},
		{"flags, no param", flagError(errors.New("disk on fire"), nil), exitFailure, "disk on fire"},

		{"format", &votefile.FormatError{File: "v.csv", Line: 3, Msg: "bad"}, exitUsage, (&votefile.FormatError{File: "v.csv", Line: 3, Msg: "bad"}).Error()},
		{"teachers", &votefile.TeachersError{Field: "K"}, exitUsage, (&votefile.TeachersError{Field: "K"}).Error()},
		{"ledger corrupt", &ledger.CorruptError{Path: "l", Line: 2}, exitUsage, (&ledger.CorruptError{Path: "l", Line: 2}).Error()},
		{"not a ledger", &ledger.NotLedgerError{Path: "l", Reason: "a directory"}, exitUsage, "ledger l: a directory"},
		{"ledger version", &ledger.VersionError{Path: "l", Version: 9}, exitUsage, (&ledger.VersionError{Path: "l", Version: 9}).Error()},
		{"ledger binding", &ledger.BindingError{Path: "l"}, exitUsage, (&ledger.BindingError{Path: "l"}).Error()},
		{"ledger bind", &ledger.BindError{Err: errors.New("no K")}, exitUsage, "ledger: no K"},
		{"record", &ledger.RecordError{Path: "l"}, exitUsage, (&ledger.RecordError{Path: "l"}).Error()},
		{"record file", &ledger.RecordFileError{Path: "r", Reason: "damaged"}, exitUsage, (&ledger.RecordFileError{Path: "r", Reason: "damaged"}).Error()},

		// darrm's own state that is damaged is a failure, not the user's input.
		{"cache entry corrupt", &cache.CorruptError{Path: "c", Reason: "bad"}, exitFailure, (&cache.CorruptError{Path: "c", Reason: "bad"}).Error()},
		{"saved teachers corrupt", &teachers.CorruptError{Path: "t", Reason: "bad"}, exitFailure, (&teachers.CorruptError{Path: "t", Reason: "bad"}).Error()},
	} {
		code, msg := explain(tc.err)
		if code != tc.code || msg != tc.msg {
			t.Errorf("%s: explain(%v) = %d, %q; want %d, %q", tc.name, tc.err, code, msg, tc.code, tc.msg)
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
		code := run(context.Background(), args, strings.NewReader(""), failWriter{}, &stderr)
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
// vote file, and the output says which values are defaults.
func TestDefaultsEchoed(t *testing.T) {
	dir := t.TempDir()
	votes := voteFile(t, dir, 5, func(i int) int { return i })
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
// built), word for word.
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
		got, ok := shown[name]
		if err != nil || !ok || got[0] != long || got[1] != example {
			t.Errorf("help/%s is not the help of darrm %s (%v)", e.Name(), strings.ReplaceAll(name, "-", " "), err)
		}
	}
}
