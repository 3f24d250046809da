package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
)

// color is a TextValue for the tests.
type color int

var colors = []string{"red", "green"}

func (c color) MarshalText() ([]byte, error) { return []byte(colors[c]), nil }

func (c *color) UnmarshalText(b []byte) error {
	for i, s := range colors {
		if s == string(b) {
			*c = color(i)
			return nil
		}
	}
	return fmt.Errorf("color %q: must be red or green", b)
}

var testRegistry = NewRegistry([]Flag{
	{Name: "n", Default: 3, Usage: "a count"},
	{Name: "x", Default: 0.5, Usage: "a number"},
	{Name: "name", Default: "", Usage: "a name"},
	{Name: "on", Default: false, Usage: "a switch"},
	{Name: "seed", Default: uint64(7), Usage: "a seed"},
	{Name: "xs", Default: []float64{1}, Usage: "numbers"},
	{Name: "names", Default: []string(nil), Usage: "names"},
	{Name: "ns", Default: []int{2, 3}, Usage: "counts"},
	{Name: "color", Default: color(1), Usage: "a color"},
})

type inner struct {
	X float64 `flag:"x"`
}

type testFlags struct {
	inner
	N      int       `flag:"n"`
	Name   string    `flag:"name"`
	On     bool      `flag:"on"`
	Seed   uint64    `flag:"seed"`
	Xs     []float64 `flag:"xs"`
	Names  []string  `flag:"names"`
	Ns     []int     `flag:"ns"`
	Color  color     `flag:"color"`
	Own    string    `flag:"own" help:"a flag of this command"`
	Nested struct {
		Deep int `flag:"deep" help:"a flag in an exported struct"`
	}
	hidden struct {
		Skipped int `flag:"skipped" help:"not bound: unexported, not embedded"`
	}
}

func newTestCmd(f *testFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "t", RunE: func(*cobra.Command, []string) error { return nil }, SilenceErrors: true, SilenceUsage: true}
	cmd.SetFlagErrorFunc(FlagErrorFunc)
	cmd.SetOut(io.Discard)
	testRegistry.Bind(cmd.Flags(), f)
	return cmd
}

func TestBindDefaultsAndHelp(t *testing.T) {
	f := testFlags{Own: "mine"}
	fs := newTestCmd(&f).Flags()
	for _, tc := range []struct{ name, def, usage string }{
		{"n", "3", "a count"},
		{"x", "0.5", "a number"},
		{"name", "", "a name"},
		{"on", "false", "a switch"},
		{"seed", "7", "a seed"},
		{"xs", "[1.000000]", "numbers"},
		{"names", "[]", "names"},
		{"ns", "[2,3]", "counts"},
		{"color", "green", "a color"},
		{"own", "mine", "a flag of this command"},
		{"deep", "0", "a flag in an exported struct"},
	} {
		fl := fs.Lookup(tc.name)
		if fl == nil {
			t.Errorf("--%s is not bound", tc.name)
			continue
		}
		if fl.DefValue != tc.def || fl.Usage != tc.usage {
			t.Errorf("--%s: default %q, help %q; want %q, %q", tc.name, fl.DefValue, fl.Usage, tc.def, tc.usage)
		}
	}
	if fs.Lookup("skipped") != nil {
		t.Error("a flag of an unexported field that is not embedded was bound")
	}
	if f.N != 3 || f.Color != 1 || f.Seed != 7 {
		t.Errorf("defaults not stored: %+v", f)
	}
}

func TestBindParses(t *testing.T) {
	var f testFlags
	cmd := newTestCmd(&f)
	cmd.SetArgs([]string{"--n", "5", "--x", "2", "--color", "red", "--xs", "1,2", "--names", "a,b", "--deep", "4", "--on"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if f.N != 5 || f.X != 2 || f.Color != 0 || len(f.Xs) != 2 || len(f.Names) != 2 || f.Nested.Deep != 4 || !f.On {
		t.Errorf("parsed %+v", f)
	}
	// Lists read given twice append, and give their items back one by
	// one, as the rules of a list's values read them.
	f = testFlags{}
	cmd = newTestCmd(&f)
	cmd.SetArgs([]string{"--ns", "4,5", "--ns", "6", "--xs", "0.5", "--xs", "1e-5,2"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{"ns": {"4", "5", "6"}, "xs": {"0.5", "1e-05", "2"}} {
		list, ok := cmd.Flags().Lookup(name).Value.(interface{ GetSlice() []string })
		if !ok || !slices.Equal(list.GetSlice(), want) {
			t.Errorf("--%s: a list %v (%#v), want items %v", name, ok, list, want)
		}
	}
	if !slices.Equal(f.Ns, []int{4, 5, 6}) || !slices.Equal(f.Xs, []float64{0.5, 1e-5, 2}) {
		t.Errorf("lists parsed as %v, %v", f.Ns, f.Xs)
	}
}

// TestBindNegativeZero reads a zero given as -0 as 0, in a number and in
// a list of them: it was kept negative, and JSON and CSV printed -0
// (account compose --step-delta -0 wrote "step_delta": -0).
func TestBindNegativeZero(t *testing.T) {
	for _, tc := range []struct {
		args []string
		get  func(testFlags) []float64
	}{
		{[]string{"--x", "-0"}, func(f testFlags) []float64 { return []float64{f.X} }},
		{[]string{"--x", "-0.0e5"}, func(f testFlags) []float64 { return []float64{f.X} }},
		{[]string{"--x", "-1e-400"}, func(f testFlags) []float64 { return []float64{f.X} }},
		{[]string{"--xs", "1,-0,2"}, func(f testFlags) []float64 { return f.Xs[1:2] }},
		{[]string{"--xs", "-0"}, func(f testFlags) []float64 { return f.Xs }},
	} {
		var f testFlags
		cmd := newTestCmd(&f)
		cmd.SetArgs(tc.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		for _, x := range tc.get(f) {
			if x != 0 || math.Signbit(x) {
				t.Errorf("%v: read as %v (sign bit %v), want 0", tc.args, x, math.Signbit(x))
			}
		}
	}
}

// TestBindDecimal reads whole numbers in base 10 only: a leading 0 is no
// octal prefix (--K 013 is 13, not 11), and 0x is refused.
func TestBindDecimal(t *testing.T) {
	var f testFlags
	cmd := newTestCmd(&f)
	cmd.SetArgs([]string{"--n", "013", "--seed", "010"})
	if err := cmd.Execute(); err != nil || f.N != 13 || f.Seed != 10 {
		t.Errorf("--n 013 --seed 010: %d, %d (%v)", f.N, f.Seed, err)
	}
	for _, arg := range []string{"0x10", "1.5", "1e3", "99999999999999999999"} {
		f = testFlags{}
		cmd := newTestCmd(&f)
		cmd.SetArgs([]string{"--n", arg})
		if err := cmd.Execute(); err == nil {
			t.Errorf("--n %s: read as %d", arg, f.N)
		}
	}
}

func TestBindPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    any
	}{
		{"shared flag with a help tag", &struct {
			N int `flag:"n" help:"again"`
		}{}},
		{"other flag without help", &struct {
			M int `flag:"m"`
		}{}},
		{"shared flag of another type", &struct {
			N float64 `flag:"n"`
		}{}},
		{"unsupported type", &struct {
			C complex128 `flag:"c" help:"a complex number"`
		}{}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			testRegistry.Bind(pflag.NewFlagSet("t", pflag.ContinueOnError), tc.p)
		}()
	}
	defer func() {
		if recover() == nil {
			t.Error("a registry with a name twice: no panic")
		}
	}()
	NewRegistry([]Flag{{Name: "a", Default: 1, Usage: "x"}, {Name: "a", Default: 2, Usage: "y"}})
}

func TestTextFlagString(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var s string
	Flag{Name: "color", Default: color(0), Usage: "a color"}.Add(fs, &s)
	if s != "red" || fs.Lookup("color").Value.Type() != "string" {
		t.Errorf("a text default kept as a string: %q, type %s", s, fs.Lookup("color").Value.Type())
	}
}

func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--color", "blue"}, `--color: color "blue": must be red or green`},
		{[]string{"--n", "three"}, `--n: "three" is not a whole number in base 10 (such as 11)`},
		{[]string{"--n", "1e3"}, `--n: "1e3" is not a whole number in base 10`},
		{[]string{"--n", "9223372036854775808"}, `--n: "9223372036854775808" is out of range`},
		{[]string{"--x", "half"}, `--x: "half" is not a number (such as 2, 0.5 or 1e-5)`},
		{[]string{"--x", "1e400"}, `--x: "1e400" is out of range`},
		{[]string{"--seed", "-7"}, `--seed: "-7" is not a whole number >= 0 in base 10`},
		{[]string{"--xs", "1,two,3"}, `--xs: "1,two,3" has "two", which is not a number`},
		{[]string{"--ns", "2,0x10"}, `--ns: "2,0x10" has "0x10", which is not a whole number in base 10`},
		{[]string{"--on=maybe"}, `--on: "maybe" is not true or false`},
		{[]string{"--nope"}, `unknown flag --nope for "t"; run "t --help" for its flags`},
	} {
		var f testFlags
		cmd := newTestCmd(&f)
		cmd.SetArgs(tc.args)
		err := cmd.Execute()
		if !IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v (usage error: %t), want one mentioning %q", tc.args, err, IsUsage(err), tc.want)
		}
	}
}

// TestSuggest: an unknown flag or command is answered with the names the
// user may have meant: the same name in another case first, else names a
// few edits away, and none for a name close to nothing.
func TestSuggest(t *testing.T) {
	names := []string{"K", "m", "Delta", "delta", "compare", "cache-dir", "prior", "train", "vote", "target-eps", "budget-eps", "step-delta"}
	for _, tc := range []struct {
		typed string
		want  []string
	}{
		{"k", []string{"K"}},
		{"DELTA", []string{"Delta", "delta"}},
		{"Detla", []string{"Delta", "delta"}},
		{"compair", []string{"compare"}},
		{"cashe-dir", []string{"cache-dir"}},
		{"trian", []string{"train"}},
		{"comp", []string{"compare"}},
		{"x", nil},
		{"n", nil},
		{"seed", nil},
		// A flag another command spells differently.
		{"eps", []string{"target-eps", "budget-eps"}},
		{"target-delta", []string{"Delta", "delta"}},
		{"cache", []string{"cache-dir"}},
	} {
		if got := suggest(tc.typed, names); !slices.Equal(got, tc.want) {
			t.Errorf("suggest(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
	var f testFlags
	cmd := newTestCmd(&f)
	cmd.SetArgs([]string{"--N", "3"})
	if err := cmd.Execute(); !IsUsage(err) || !strings.Contains(err.Error(), "did you mean --n?") {
		t.Errorf("--N: %v, want a usage error suggesting --n", err)
	}
}

func TestRequireFlags(t *testing.T) {
	var f testFlags
	cmd := newTestCmd(&f)
	cmd.SetArgs([]string{"--n", "9"})
	if err := cmd.Execute(); err != nil || f.N != 9 {
		t.Fatalf("--n 9: %v, n = %d", err, f.N)
	}
	if err := RequireFlags(cmd, "n"); err != nil {
		t.Errorf("--n was given: %v", err)
	}
	err := RequireFlags(cmd, "n", "name")
	if !IsUsage(err) || err.Error() != "--name is required: a name" {
		t.Errorf("RequireFlags: %v", err)
	}
}

// TestRequired: flags tagged required are checked before the command
// runs, the first missing one in the order declared reported as
// RequireFlags reports it.
func TestRequired(t *testing.T) {
	var f struct {
		Zeta  int    `flag:"zeta" help:"declared first" required:""`
		Name  string `flag:"name" required:""`
		Alpha int    `flag:"alpha" help:"declared last" required:""`
		Free  int    `flag:"free" help:"not required"`
	}
	ran := false
	root := &cobra.Command{Use: "r", PersistentPreRunE: CheckRequired, SilenceErrors: true, SilenceUsage: true}
	sub := &cobra.Command{Use: "s", RunE: func(*cobra.Command, []string) error { ran = true; return nil }}
	testRegistry.Bind(sub.Flags(), &f)
	root.AddCommand(sub)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"s"}, "--zeta is required: declared first"},
		{[]string{"s", "--alpha", "1", "--free", "2"}, "--zeta is required: declared first"},
		{[]string{"s", "--zeta", "1"}, "--name is required: a name"},
		{[]string{"s", "--zeta", "1", "--name", "x"}, "--alpha is required: declared last"},
		{[]string{"s", "--zeta", "1", "--name", "x", "--alpha", "0"}, ""},
	} {
		ran = false
		sub.Flags().VisitAll(func(fl *pflag.Flag) { fl.Changed = false })
		root.SetArgs(tc.args)
		err := root.Execute()
		if tc.want == "" && (err != nil || !ran) || tc.want != "" && (!IsUsage(err) || err.Error() != tc.want || ran) {
			t.Errorf("%v: %v (ran %t), want %q", tc.args, err, ran, tc.want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	plain := errors.New("disk on fire")
	for _, tc := range []struct {
		err   error
		usage bool
	}{
		{nil, false},
		{plain, false},
		{Usagef("--m = %d", 0), true},
		{fmt.Errorf("wrapped: %w", Usagef("bad")), true},
		{AsUsage(plain), true},
	} {
		if IsUsage(tc.err) != tc.usage {
			t.Errorf("IsUsage(%v) = %t", tc.err, !tc.usage)
		}
	}
	if AsUsage(nil) != nil || !errors.Is(AsUsage(plain), plain) {
		t.Error("AsUsage: nil stays nil, and the error is wrapped")
	}
	u := Usagef("x")
	if AsUsage(u) != u {
		t.Error("AsUsage wraps a usage error again")
	}
}

func TestArgs(t *testing.T) {
	parent := &cobra.Command{Use: "p"}
	leaf := &cobra.Command{Use: "leaf"}
	group := Group(&cobra.Command{Use: "g"}, &cobra.Command{Use: "child"})
	parent.AddCommand(leaf, group, &cobra.Command{Use: "other"})
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"no args", NoArgs(leaf, nil), ""},
		{"args to a leaf", NoArgs(leaf, []string{"x"}), `p leaf takes no arguments, got ["x"] (usage: p leaf)`},
		{"unknown command", NoArgs(parent, []string{"x"}), `unknown command "x" for "p"; run "p --help" for the list`},
		{"within max", MaxArgs(1)(leaf, []string{"a"}), ""},
		{"over max", MaxArgs(1)(leaf, []string{"a", "b"}), `p leaf takes at most 1 argument(s), got 2: ["a" "b"] (usage: p leaf)`},
		{"group: nothing", group.Args(group, nil), ""},
		{"group: unknown", group.Args(group, []string{"x"}), `unknown command "x" for "p g"; run "p g --help" for the list`},
		{"unknown, close to one", NoArgs(parent, []string{"lef"}), `unknown command "lef" for "p"; did you mean "leaf"?`},
		{"group: close to one", group.Args(group, []string{"chlid"}), `unknown command "chlid" for "p g"; did you mean "child"?`},
	} {
		if tc.want == "" && tc.err != nil || tc.want != "" && (!IsUsage(tc.err) || tc.err.Error() != tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	var out bytes.Buffer
	group.SetOut(&out)
	if err := group.RunE(group, nil); err != nil || !strings.Contains(out.String(), "child") {
		t.Errorf("a group without a subcommand prints its help: %v, %q", err, out.String())
	}
}

func TestHelp(t *testing.T) {
	fsys := fstest.MapFS{
		"help/a.txt": {Data: []byte("Long text.\n\nMore.\n\nExamples:\n  a --x\n  a --y\n")},
		"help/b.txt": {Data: []byte("Only a description.\n")},
	}
	for _, tc := range []struct{ name, long, example string }{
		{"help/a.txt", "Long text.\n\nMore.", "  a --x\n  a --y"},
		{"help/b.txt", "Only a description.", ""},
	} {
		long, example, err := ReadHelp(fsys, tc.name)
		if err != nil || long != tc.long || example != tc.example {
			t.Errorf("%s: %q, %q, %v", tc.name, long, example, err)
		}
	}
	cmd := WithHelp(fsys, "help/a.txt", &cobra.Command{Use: "a"})
	if cmd.Long != "Long text.\n\nMore." || cmd.Example != "  a --x\n  a --y" {
		t.Errorf("WithHelp: %q, %q", cmd.Long, cmd.Example)
	}
	defer func() {
		if recover() == nil {
			t.Error("WithHelp of a missing file: no panic")
		}
	}()
	WithHelp(fsys, "help/c.txt", &cobra.Command{Use: "c"})
}

func TestVersion(t *testing.T) {
	if v := Version(); v == "" || !strings.Contains(v, "go1") {
		t.Errorf("Version() = %q", v)
	}
}

// failWriter fails every write, like /dev/full.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

func TestExecute(t *testing.T) {
	errBoom := errors.New("boom")
	explain := func(err error) (int, string) {
		switch {
		case err == nil:
			return 0, ""
		case errors.Is(err, context.Canceled):
			return 130, err.Error()
		case IsUsage(err):
			return 2, err.Error()
		}
		return 1, err.Error()
	}
	newRoot := func() *cobra.Command {
		root := &cobra.Command{Use: "prog", Args: NoArgs, RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }, SilenceErrors: true, SilenceUsage: true}
		root.SetFlagErrorFunc(FlagErrorFunc)
		root.AddCommand(
			&cobra.Command{Use: "print", RunE: func(cmd *cobra.Command, _ []string) error { fmt.Fprintln(cmd.OutOrStdout(), "hello"); return nil }},
			&cobra.Command{Use: "fail", RunE: func(*cobra.Command, []string) error { return errBoom }},
			&cobra.Command{Use: "wait", RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Context().Err() }},
			// A ledger's connection lost stops the command (Stop); its
			// work ends on its context canceled.
			&cobra.Command{Use: "lost", RunE: func(cmd *cobra.Command, _ []string) error {
				Stop(cmd, errBoom)
				return fmt.Errorf("read votes: %w", cmd.Context().Err())
			}},
			// A cancellation of the command's own work, no signal.
			&cobra.Command{Use: "cancel", RunE: func(cmd *cobra.Command, _ []string) error {
				c, cancel := context.WithCancel(cmd.Context())
				cancel()
				return fmt.Errorf("work: %w", c.Err())
			}},
		)
		return root
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		ctx          context.Context
		args         []string
		stdout       io.Writer
		code         int
		out, errText string
	}{
		{context.Background(), []string{"print"}, nil, 0, "hello\n", ""},
		{context.Background(), []string{"print"}, failWriter{}, 1, "", "prog: write standard output: no space left on device\n"},
		{context.Background(), []string{"fail"}, nil, 1, "", "prog: boom\n"},
		{context.Background(), []string{"print", "--nope"}, nil, 2, "", "prog: unknown flag --nope for \"prog print\"; run \"prog print --help\" for its flags\n"},
		// A mistyped command is an unknown command, whatever flags follow.
		{context.Background(), []string{"pritn", "--nope"}, nil, 2, "", "prog: unknown command \"pritn\" for \"prog\"; did you mean \"print\"?\n"},
		{context.Background(), []string{"pritn"}, nil, 2, "", "prog: unknown command \"pritn\" for \"prog\"; did you mean \"print\"?\n"},
		{cancelled, []string{"wait"}, nil, 130, "", "prog: interrupted: context canceled\n"},
		{cancelled, []string{"lost"}, nil, 130, "", "prog: interrupted: read votes: context canceled\n"},
		// No exit 130 without a signal.
		{context.Background(), []string{"lost"}, nil, 1, "", "prog: read votes: boom\n"},
		{context.Background(), []string{"cancel"}, nil, 1, "", "prog: work: context canceled\n"},
	} {
		var out, errb bytes.Buffer
		stdout := tc.stdout
		if stdout == nil {
			stdout = &out
		}
		got := Execute(tc.ctx, newRoot(), tc.args, strings.NewReader(""), stdout, &errb, explain)
		if got != tc.code || out.String() != tc.out || errb.String() != tc.errText {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, got, out.String(), errb.String(), tc.code, tc.out, tc.errText)
		}
	}
}

// TestExecuteWrapsErrors drives errors longer than a terminal through
// Execute's printer: every line fits cliout.Width columns, continuation
// lines are indented, a message that fits stays one line, and the words
// (a long path among them) are all there, in order, once the lines are
// joined.
func TestExecuteWrapsErrors(t *testing.T) {
	long := "--budget-delta = 0.9: must be below 0.5, the largest delta that plan accepts; " +
		strings.Repeat("a rule that goes on and on, naming every flag it involves, ", 7) +
		"and the file /very/long/directory/name/that/goes/on/and/on/for/a/while/votes.meta.json at the end"
	for _, msg := range []string{long, "short", long + "\nsecond line: " + long} {
		root := &cobra.Command{Use: "prog", RunE: func(*cobra.Command, []string) error { return errors.New(msg) }, SilenceErrors: true, SilenceUsage: true}
		var errb bytes.Buffer
		code := Execute(context.Background(), root, nil, strings.NewReader(""), io.Discard, &errb, func(err error) (int, string) {
			if err == nil {
				return 0, ""
			}
			return 1, err.Error()
		})
		lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
		for i, l := range lines {
			if n := utf8.RuneCountInString(l); n > cliout.Width {
				t.Errorf("a line of %d columns: %q", n, l)
			}
			if i > 0 && !strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "second line") {
				t.Errorf("continuation line %d not indented: %q", i, l)
			}
		}
		if msg == "short" && errb.String() != "prog: short\n" {
			t.Errorf("a short error: %q", errb.String())
		}
		flat := func(s string) string { return strings.Join(strings.Fields(s), "") }
		if code != 1 || flat(errb.String()) != flat("prog: "+msg) {
			t.Errorf("exit %d, words changed:\n%s", code, errb.String())
		}
		if len(msg) > cliout.Width && len(lines) < 2 {
			t.Errorf("a message of %d columns printed as one line", len(msg))
		}
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.json")
	if err := os.WriteFile(file, []byte(`{"n": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name  string
		usage bool
		text  string
	}{
		{Std, false, "stdin"},
		{file, false, `{"n": 1}`},
		{missing, true, ""},
		{dir, true, ""},
	} {
		r, err := OpenInputContext(context.Background(), strings.NewReader("stdin"), nil, tc.name)
		if tc.usage {
			if !IsUsage(err) {
				t.Errorf("OpenInputContext(%s): %v, want a usage error", tc.name, err)
			}
			continue
		}
		b, _ := io.ReadAll(r)
		r.Close()
		if err != nil || string(b) != tc.text {
			t.Errorf("OpenInputContext(%s): %q, %v", tc.name, b, err)
		}
	}
	for _, tc := range []struct {
		path    string
		ok      bool
		outName string
	}{
		{"", true, "standard output"},
		{Std, true, "standard output"},
		{missing, true, missing},
		{file, true, file},
		{dir, false, dir},
	} {
		if err := CheckOutput("out", tc.path); (err == nil) != tc.ok || err != nil && !IsUsage(err) {
			t.Errorf("CheckOutput(%q) = %v", tc.path, err)
		}
		if got := OutputName(tc.path); got != tc.outName {
			t.Errorf("OutputName(%q) = %q", tc.path, got)
		}
	}
	if InputName(Std) != "standard input" || InputName(file) != file {
		t.Error("InputName")
	}
	if InputArg(nil) != Std || InputArg([]string{file}) != file {
		t.Error("InputArg")
	}
}

func TestWriteOutput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	var stdout bytes.Buffer
	hello := func(w io.Writer) error { _, err := io.WriteString(w, "hello"); return err }
	if err := WriteOutput(context.Background(), Std, &stdout, hello); err != nil || stdout.String() != "hello" {
		t.Errorf("to standard output: %v, %q", err, stdout.String())
	}
	if err := WriteOutput(context.Background(), out, &stdout, hello); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "hello" {
		t.Errorf("to a file: %q, %v", b, err)
	}
	failed := filepath.Join(dir, "failed.txt")
	errHalf := errors.New("half written")
	err := WriteOutput(context.Background(), failed, &stdout, func(w io.Writer) error { io.WriteString(w, "hal"); return errHalf })
	if !errors.Is(err, errHalf) {
		t.Errorf("failed write: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed write left files: %v", entries)
	}
}

func TestDecodeJSON(t *testing.T) {
	type doc struct{ N int }
	d, err := DecodeJSON[doc](context.Background(), strings.NewReader(`{"n": 3}`), "a.json", "a document")
	if err != nil || d.N != 3 {
		t.Errorf("DecodeJSON: %+v, %v", d, err)
	}
	for _, tc := range []struct {
		in, name, want string
	}{
		{"not json", Std, "standard input: not a document: "},
		{`{"n": "x"}`, "a.json", "a.json: not a document: "},
		{`{"n": ` + strings.Repeat("1", 1<<20) + `}`, "a.json", "a.json: not a document: "},
	} {
		_, err := DecodeJSON[doc](context.Background(), strings.NewReader(tc.in), tc.name, "a document")
		if !IsUsage(err) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("DecodeJSON(%.40q): %.200v", tc.in, err)
		}
		// A value of the wrong type is quoted cut: a number of a
		// megabyte is not echoed back.
		if err != nil && len(err.Error()) > 200 {
			t.Errorf("DecodeJSON(%.40q): an error of %d bytes", tc.in, len(err.Error()))
		}
	}
}

// TestDecodeJSONTooLarge: a document longer than the bound is refused as
// too large, not as JSON that ends too soon (where the bound cut it).
func TestDecodeJSONTooLarge(t *testing.T) {
	type doc struct{ N []int }
	in := `{"n": [` + strings.Repeat("0,", 50) + `0]}`
	if _, err := decodeJSON[doc](context.Background(), strings.NewReader(in), "a.json", "a document", int64(len(in))); err != nil {
		t.Errorf("a document at the bound: %v", err)
	}
	_, err := decodeJSON[doc](context.Background(), strings.NewReader(in), "a.json", "a document", int64(len(in))/2)
	if !IsUsage(err) || !strings.Contains(err.Error(), fmt.Sprintf("holds more than %d bytes", len(in)/2)) {
		t.Errorf("a document past the bound: %v", err)
	}
}

// TestDecodeJSONCancelled: DecodeJSON returns ctx's error once ctx is
// done, whatever its decoding is doing (here waiting on a read that never
// ends; a large document's decoding takes a minute and checks nothing).
func TestDecodeJSONCancelled(t *testing.T) {
	type doc struct{ N []int }
	pr, pw := io.Pipe()
	defer pw.Close()
	go io.WriteString(pw, `{"n": [0, 0, 0,`) // and no more
	// The document never ends: without the context, DecodeJSON waits on
	// it for ever (and the test binary's -timeout ends the test).
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := DecodeJSON[doc](ctx, pr, "a.json", "a document"); !errors.Is(err, context.Canceled) {
		t.Errorf("DecodeJSON after its context was cancelled: %v, want context.Canceled", err)
	}
}

// TestDecodeJSONArrayBound: an array of more than maxJSONArray values is
// refused before it is decoded, at any depth, and one of maxJSONArray is
// not; commas within strings, escaped quotes included, are no values.
func TestDecodeJSONArrayBound(t *testing.T) {
	values := func(n int) string { return strings.Repeat("0,", n-1) + "0" }
	type doc struct{ N [][]int }
	_, err := DecodeJSON[doc](context.Background(), strings.NewReader(`{"n": [[1], [`+values(maxJSONArray+1)+`]]}`), "a.json", "a document")
	if want := fmt.Sprintf("a.json: not a document: an array of more than %d values", maxJSONArray); !IsUsage(err) || !strings.HasPrefix(fmt.Sprint(err), want) {
		t.Errorf("DecodeJSON of an array of maxJSONArray+1 values: %v, want a usage error %q...", err, want)
	}
	for _, tc := range []struct {
		in   string
		fail bool
	}{
		{"[" + values(maxJSONArray) + "]", false},
		{"[" + values(maxJSONArray+1) + "]", true},
		{`{"a": [` + values(maxJSONArray) + `], "b": [` + values(maxJSONArray) + "]}", false},
		{`[{"a": 1, "b": [` + values(maxJSONArray+1) + "]}]", true},
		{`["` + strings.Repeat(",", maxJSONArray) + `", "\",` + strings.Repeat(",", maxJSONArray) + `"]`, false},
		{`{"` + strings.Repeat(",", maxJSONArray) + `": 1}`, false},
		{`{"a\\": [` + values(maxJSONArray+1) + `]}`, true},
	} {
		_, err := io.Copy(io.Discard, &arrayBound{r: strings.NewReader(tc.in)})
		if (err != nil) != tc.fail {
			t.Errorf("%.40q...: %v, want an error: %t", tc.in, err, tc.fail)
		}
	}
}

// TestGiven: a flag given on the command line is a pointer to its value,
// even when it equals the default; one left to its default is nil.
func TestGiven(t *testing.T) {
	for _, tc := range []struct {
		args []string
		n    *int
		x    *float64
	}{
		{nil, nil, nil},
		{[]string{"--n", "5"}, new(5), nil},
		{[]string{"--n", "3", "--x", "0.5"}, new(3), new(0.5)},
	} {
		var f testFlags
		cmd := newTestCmd(&f)
		cmd.SetArgs(tc.args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		n, x := Given(cmd.Flags(), "n", f.N), Given(cmd.Flags(), "x", f.X)
		if (n == nil) != (tc.n == nil) || n != nil && *n != *tc.n || (x == nil) != (tc.x == nil) || x != nil && *x != *tc.x {
			t.Errorf("%v: n %v, x %v; want %v, %v", tc.args, n, x, tc.n, tc.x)
		}
	}
}

// TestInputSize: a regular file's size, -1 for standard input, a missing
// file, a directory and a device.
func TestInputSize(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "votes.csv")
	if err := os.WriteFile(file, []byte("0,1,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want int64
	}{{file, 6}, {Std, -1}, {filepath.Join(dir, "missing"), -1}, {dir, -1}, {os.DevNull, -1}} {
		if got := InputSize(tc.name); got != tc.want {
			t.Errorf("InputSize(%s) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestFlagErrorAfterArgument: a command that takes an argument and holds
// subcommands (darrm separate FILE, darrm separate merge) reports a bad
// flag after its argument as the flag, not the argument as a command.
func TestFlagErrorAfterArgument(t *testing.T) {
	root := &cobra.Command{Use: "prog", Args: NoArgs, RunE: func(*cobra.Command, []string) error { return nil }, SilenceErrors: true, SilenceUsage: true}
	root.SetFlagErrorFunc(FlagErrorFunc)
	sep := &cobra.Command{Use: "sep", Args: MaxArgs(1), RunE: func(*cobra.Command, []string) error { return nil }}
	sep.AddCommand(&cobra.Command{Use: "merge", RunE: func(*cobra.Command, []string) error { return nil }})
	root.AddCommand(sep)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sep", "file.json", "--bogus"}, `unknown flag --bogus for "prog sep"`},
		{[]string{"sep", "a", "b", "--bogus"}, `prog sep takes at most 1 argument(s), got 2`},
	} {
		root.SetArgs(tc.args)
		if err := root.Execute(); !IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

// TestSetDefaultText: a default stated in words replaces the value in the
// flag's line of help, once, for every type; %v is the default stated
// before; DefaultText gives the words and the help without them; the
// variable keeps its value.
func TestSetDefaultText(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var x float64
	var name string
	var c color
	var xs []float64
	Flag{Name: "x", Default: 0.5, Usage: "a number"}.Add(fs, &x)
	Flag{Name: "name", Default: "n", Usage: "a name", DefaultText: "the input's"}.Add(fs, &name)
	Flag{Name: "color", Default: color(1), Usage: "a color"}.Add(fs, &c)
	Flag{Name: "xs", Default: []float64{1}, Usage: "numbers"}.Add(fs, &xs)
	SetDefaultText(fs, "the file's, else %v", "x", "color", "xs")
	for name, want := range map[string]string{
		"x": "a number (default the file's, else 0.5)", "name": "a name (default the input's)",
		"color": "a color (default the file's, else green)", "xs": "numbers (default the file's, else [1.000000])",
	} {
		f := fs.Lookup(name)
		line := strings.TrimSpace(strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimSpace(flagLine(fs, name)), "--"+name)), " "))
		if strings.Count(line, "(default") != 1 || !strings.HasSuffix(line, want) {
			t.Errorf("--%s: help %q, want it to end in %q", name, line, want)
		}
		text, usage := DefaultText(f)
		if usage+" (default "+text+")" != f.Usage {
			t.Errorf("--%s: DefaultText %q, %q; usage %q", name, text, usage, f.Usage)
		}
	}
	if x != 0.5 || name != "n" || c != 1 || len(xs) != 1 {
		t.Errorf("values changed: %v %q %v %v", x, name, c, xs)
	}
}

// flagLine is the line of help of fs's flag name.
func flagLine(fs *pflag.FlagSet, name string) string {
	one := pflag.NewFlagSet("one", pflag.ContinueOnError)
	one.AddFlag(fs.Lookup(name))
	return one.FlagUsages()
}

// TestSetFields: the fields a struct's tags name are listed with their
// values by their first flag, and take a value given, else
// a flag given, read back from its text; a flag not given leaves its
// field, and a field keep refuses is neither listed nor set.
func TestSetFields(t *testing.T) {
	type inner struct {
		Scale float64 `flag:"scale"`
		Shade color   `flag:"shade" votes:"no"`
	}
	type settings struct {
		inner
		Size  float64 `flag:"size"`
		Given any     `flag:"src,prior"`
		One   float64 `flag:"list"`
	}
	keep := func(tag reflect.StructTag) bool { return tag.Get("votes") != "no" }
	if got := FieldFlags(settings{}, keep); !slices.Equal(got, []string{"scale", "size", "src", "prior", "list"}) {
		t.Errorf("FieldFlags: %v", got)
	}
	if got := FieldFlags(settings{}, nil); !slices.Equal(got, []string{"scale", "shade", "size", "src", "prior", "list"}) {
		t.Errorf("FieldFlags, every field: %v", got)
	}
	if got := FieldValues(settings{Size: 3, One: 5}, keep); len(got) != 4 || got["size"] != 3.0 || got["list"] != 5.0 || got["src"] != nil {
		t.Errorf("FieldValues: %v", got)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var f struct {
		Scale, Size float64
		Shade       color
	}
	fs.Float64Var(&f.Scale, "scale", 0, "")
	fs.Float64Var(&f.Size, "size", 7, "")
	fs.Var(textFlag{&f.Shade}, "shade", "")
	fs.Float64Slice("list", nil, "")
	if err := fs.Parse([]string{"--scale", "1e-300", "--shade", "green", "--list", "1,2"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		keep   func(reflect.StructTag) bool
		values map[string]any
		want   settings
	}{
		{keep, map[string]any{"src": "a source"}, settings{inner: inner{Scale: 1e-300}, Given: "a source", One: 5}},
		{nil, map[string]any{"scale": 2.0}, settings{inner: inner{Scale: 2, Shade: 1}, One: 5}},
	} {
		s := settings{One: 5} // a list does not read as one number
		SetFields(fs, &s, tc.keep, tc.values)
		if s != tc.want {
			t.Errorf("SetFields %v: %+v, want %+v", tc.values, s, tc.want)
		}
	}
}

// TestSetFieldsKinds: a field of each type the binder takes (Flag.Add)
// reads its flag's value back: an int, a string, a switch, a duration, a
// uint64 and lists, as a mechanism's settings of those types do.
func TestSetFieldsKinds(t *testing.T) {
	type settings struct {
		Rounds int           `flag:"rounds"`
		Label  string        `flag:"label"`
		On     bool          `flag:"on"`
		Wait   time.Duration `flag:"wait"`
		Seed   uint64        `flag:"seed"`
		Names  []string      `flag:"names"`
		Counts []int         `flag:"counts"`
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var bound settings
	EachFlagField(reflect.ValueOf(&bound).Elem(), nil, func(names []string, _ reflect.StructTag, f reflect.Value) {
		Flag{Name: names[0], Default: reflect.Zero(f.Type()).Interface()}.Add(fs, reflect.New(f.Type()).Interface())
	})
	if err := fs.Parse([]string{"--rounds", "3", "--label", "a b", "--on", "--wait", "90s", "--seed", "18446744073709551615", "--names", "x,y", "--counts", "1", "--counts", "2"}); err != nil {
		t.Fatal(err)
	}
	var s settings
	SetFields(fs, &s, nil, nil)
	want := settings{Rounds: 3, Label: "a b", On: true, Wait: 90 * time.Second, Seed: 1<<64 - 1, Names: []string{"x", "y"}, Counts: []int{1, 2}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("SetFields: %+v, want %+v", s, want)
	}
}

// TestPrintErrorEscapes: an error that quotes a file of others is printed
// with its control characters escaped, its lines as they were.
func TestPrintErrorEscapes(t *testing.T) {
	var b bytes.Buffer
	printError(&b, "darrm: ledger l: run \"\x1b]0;owned\x07\x1b[2J\r\" refused\nsecond line")
	if got, want := b.String(), "darrm: ledger l: run \"\\x1b]0;owned\\x07\\x1b[2J\\x0d\" refused\nsecond line\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
}
