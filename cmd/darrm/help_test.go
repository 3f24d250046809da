package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
)

// helpScreen is the most lines a command's help may take besides its
// lists of flags and subcommands (one line each): its description, usage
// and examples then fit one screen of a standard 24-line terminal, read
// without scrolling, and what a flag means stays one line of the list.
// Longer explanations belong in docs/*.md, to which every help points.
const helpScreen = 24

// maxExamples is the most examples a help shows: the two or three most
// used ways to run the command; the docs hold the others.
const maxExamples = 3

// helpOf returns the help that "darrm PATH --help" prints.
func helpOf(t *testing.T, path []string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := runWith(testMemo, context.Background(), append(path, "--help"), strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("darrm %s --help: exit %d: %s", strings.Join(path, " "), code, errb.String())
	}
	return out.String()
}

// commandPaths walks darrm's command tree, with the help and completion
// commands that cobra adds, and returns the path of every command.
func commandPaths() [][]string {
	root := newRootCmd()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var paths [][]string
	walk(root, func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		paths = append(paths, strings.Fields(c.CommandPath())[1:])
	})
	return paths
}

// helpSections splits a help into the lines of its lists (flags and
// subcommands, one line each) and the rest, and returns its examples (a
// command continued after a trailing backslash is one example).
func helpSections(help string) (lists, rest, examples []string) {
	section := ""
	for _, l := range strings.Split(strings.TrimRight(help, "\n"), "\n") {
		if l != "" && !strings.HasPrefix(l, " ") && strings.HasSuffix(l, ":") {
			section = l
			rest = append(rest, l)
			continue
		}
		switch {
		case l != "" && (section == "Flags:" || section == "Global Flags:" || section == "Available Commands:"):
			lists = append(lists, l)
		case section == "Examples:" && l != "":
			if n := len(examples); n > 0 && strings.HasSuffix(examples[n-1], "\\") {
				examples[n-1] = strings.TrimSuffix(examples[n-1], "\\") + " " + strings.TrimSpace(l)
			} else {
				examples = append(examples, strings.TrimSpace(l))
			}
			rest = append(rest, l)
		default:
			rest = append(rest, l)
		}
	}
	return lists, rest, examples
}

// TestHelpWidths runs "--help" of every command of the tree and fails on
// a line wider than cliout.Width columns: usage, description, examples,
// and one line per flag and per subcommand.
func TestHelpWidths(t *testing.T) {
	for _, path := range commandPaths() {
		for _, l := range strings.Split(helpOf(t, path), "\n") {
			if n := utf8.RuneCountInString(l); n > cliout.Width {
				t.Errorf("darrm %s --help: a line of %d columns: %q", strings.Join(path, " "), n, l)
			}
		}
	}
}

// TestHelpShort: every command's help, besides its lists of flags and
// subcommands, fits helpScreen lines; it shows at most maxExamples
// examples; and darrm's own commands point to the docs that explain them
// in full: a file docs/NAME.md (or README.md) that exists.
func TestHelpShort(t *testing.T) {
	docRef := regexp.MustCompile(`docs/[a-z]+\.md|README\.md`)
	for _, path := range commandPaths() {
		name := "darrm " + strings.Join(path, " ")
		help := helpOf(t, path)
		_, rest, examples := helpSections(help)
		if len(rest) > helpScreen && !slices.Contains(path, "completion") { // cobra's generated scripts' help
			t.Errorf("%s --help: %d lines besides its lists, want at most %d:\n%s", name, len(rest), helpScreen, help)
		}
		if len(examples) > maxExamples {
			t.Errorf("%s --help: %d examples, want at most %d", name, len(examples), maxExamples)
		}
		if len(path) > 0 && (path[0] == "help" || path[0] == "completion") {
			continue // cobra's own
		}
		refs := docRef.FindAllString(help, -1)
		if len(refs) == 0 {
			t.Errorf("%s --help points to no docs/*.md", name)
		}
		for _, ref := range refs {
			if _, err := os.Stat(filepath.Join("..", "..", ref)); err != nil {
				t.Errorf("%s --help points to %s: %v", name, ref, err)
			}
		}
	}
}

// TestHelpNamesRealFlags: help and behaviour agree on the flags. Every
// flag an example gives is one the command it runs has, and every flag a
// description names is one of its command's, or of a command it names.
func TestHelpNamesRealFlags(t *testing.T) {
	root := newRootCmd()
	root.InitDefaultHelpCmd()
	flagRe := regexp.MustCompile(`(?:^|[\s(,"])--([A-Za-z][A-Za-z0-9-]*)`)
	has := func(c *cobra.Command, name string) bool {
		return c.Flags().Lookup(name) != nil || c.InheritedFlags().Lookup(name) != nil || name == "help" || name == "version"
	}
	anywhere := map[string]bool{}
	walk(root, func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { anywhere[f.Name] = true })
	})
	walk(root, func(c *cobra.Command) {
		_, _, examples := helpSections(helpOf(t, strings.Fields(c.CommandPath())[1:]))
		for _, ex := range examples {
			for _, cmdline := range strings.Split(ex, "&&") {
				for _, part := range strings.Split(cmdline, "|") {
					words := strings.Fields(part)
					i := slices.Index(words, "darrm")
					if i < 0 {
						continue
					}
					target, _, err := root.Find(words[i+1:])
					if err != nil {
						t.Errorf("%s: example %q runs no darrm command: %v", c.CommandPath(), ex, err)
						continue
					}
					for _, m := range flagRe.FindAllStringSubmatch(strings.Join(words[i+1:], " "), -1) {
						if !has(target, m[1]) {
							t.Errorf("%s: example %q gives --%s, which %s does not have", c.CommandPath(), ex, m[1], target.CommandPath())
						}
					}
				}
			}
		}
		for _, m := range flagRe.FindAllStringSubmatch(c.Long, -1) {
			if !has(c, m[1]) && !anywhere[m[1]] {
				t.Errorf("%s: its help names --%s, a flag of no command", c.CommandPath(), m[1])
			}
		}
	})
}

// TestHelpSigmaUnits: every command that takes --sigma says in its help
// in what units, as the shared flag's line says it does: a multiple of
// the sensitivity, except account shuffleg's, the noise's standard
// deviation itself with --G apart, which read as a multiple of G < 1
// reported a far smaller eps than the run's.
func TestHelpSigmaUnits(t *testing.T) {
	for _, c := range []struct {
		path []string
		says string
	}{
		{[]string{"account", "shuffleg"}, "sigma is the standard deviation of the noise added to each clipped gradient, in the gradients' own units: not in units of --G"},
		{[]string{"account", "dpsgd"}, "noise multiplier --sigma"},
		{[]string{"account", "gaussian"}, "noise --sigma, in units of --sensitivity"},
		{[]string{"teachers", "train"}, "sigma = 12 (DP-SGD's noise multiplier, in units of the clipping norm)"},
		{[]string{"teachers", "vote"}, "--sigma is DP-SGD's noise multiplier, in units of the clipping norm"},
		{[]string{"teachers", "tune"}, "--sigma is the trial teachers' DP-SGD noise multiplier, in units of the clipping norm"},
	} {
		if help := strings.Join(strings.Fields(helpOf(t, c.path)), " "); !strings.Contains(help, c.says) {
			t.Errorf("darrm %s --help does not say %q", strings.Join(c.path, " "), c.says)
		}
	}
}

// TestAggregateHelpListsMechanisms keeps the mechanisms aggregate's help
// lists in step with those it releases by.
func TestAggregateHelpListsMechanisms(t *testing.T) {
	help := helpOf(t, []string{"aggregate"})
	for _, info := range testMechanisms().All() {
		if !regexp.MustCompile(`[\s(:]` + regexp.QuoteMeta(string(info.Name)) + `[,;. )\s]`).MatchString(help) {
			t.Errorf("aggregate --help does not list the mechanism %s", info.Name)
		}
	}
}

// TestLedgerInitHelp: ledger init's help fits a screen and a half (it was
// 67 lines): the flags it shares with aggregate, with aggregate's meaning
// and help (how to read the votes, a mechanism's settings), are named in
// groups in its description, not listed; every other flag is listed; and
// every flag of the command is one or the other.
func TestLedgerInitHelp(t *testing.T) {
	help := helpOf(t, []string{"ledger", "init"})
	if n := strings.Count(help, "\n"); n > 48 {
		t.Errorf("ledger init --help: %d lines, want at most 48:\n%s", n, help)
	}
	root := newRootCmd()
	initCmd, _, _ := root.Find([]string{"ledger", "init"})
	aggregate, _, _ := root.Find([]string{"aggregate"})
	lists, _, _ := helpSections(help)
	listed := map[string]bool{}
	for _, l := range lists {
		if i := strings.Index(l, "--"); i >= 0 {
			listed[strings.Fields(l[i+2:])[0]] = true
		}
	}
	initCmd.Flags().VisitAll(func(f *pflag.Flag) {
		named := strings.Contains(initCmd.Long, "--"+f.Name+",") || strings.Contains(initCmd.Long, "--"+f.Name+")") || strings.Contains(initCmd.Long, "--"+f.Name+".")
		grouped := slices.Contains(initAsAggregate(testMechanisms()), f.Name)
		switch {
		case grouped && (!named || listed[f.Name] || !f.Hidden):
			t.Errorf("--%s: named in the description %v, listed %v, hidden %v: want named only", f.Name, named, listed[f.Name], f.Hidden)
		case grouped:
			if a := aggregate.Flags().Lookup(f.Name); a == nil || a.Usage != f.Usage {
				t.Errorf("--%s: named as aggregate's, whose is %+v", f.Name, a)
			}
		case !listed[f.Name]:
			t.Errorf("--%s is neither listed nor named in ledger init's help", f.Name)
		}
	})
}
