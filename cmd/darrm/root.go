package main

import (
	"embed"
	"errors"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpFiles hold the long descriptions and examples of the commands.
//
//go:embed help/*.txt
var helpFiles embed.FS

// withHelp sets the long description and the examples of cmd from
// help/NAME.txt, which holds them as "darrm help" prints them: the
// description, then a line "Examples:" and the examples.
func withHelp(name string, cmd *cobra.Command) *cobra.Command {
	var err error
	if cmd.Long, cmd.Example, err = readHelp(name); err != nil {
		panic(err) // every command's file is embedded; TestHelpFiles checks
	}
	return cmd
}

func readHelp(name string) (long, example string, err error) {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	text := "\n\n" + strings.TrimSuffix(string(b), "\n")
	long, example, _ = strings.Cut(text, "\n\nExamples:\n")
	return strings.TrimPrefix(long, "\n\n"), example, err
}

// subcommands holds the constructors of darrm's commands. Each command file
// registers its constructor in an init function, so that commands can be
// added without editing this file.
var subcommands []func() *cobra.Command

func newRootCmd() *cobra.Command {
	root := withHelp("darrm", &cobra.Command{
		Use:           "darrm",
		Short:         "Certified optimal private majority ensembling (DaRRM)",
		Version:       version(),
		Args:          noArgs,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		SilenceUsage:  true,
		SilenceErrors: true,
	})
	root.SetVersionTemplate("darrm {{.Version}}\n")
	root.SetFlagErrorFunc(flagValueError)
	for _, newCmd := range subcommands {
		root.AddCommand(newCmd())
	}
	return root
}

// flagValueError makes a bad flag a usage error; a value that a library
// type refused is reported as --flag: the library's reason.
func flagValueError(_ *cobra.Command, err error) error {
	var ive *pflag.InvalidValueError
	if errors.As(err, &ive) {
		if _, ok := ive.GetFlag().Value.(textFlag); ok {
			return usageErrorf("--%s: %v", ive.GetFlag().Name, ive.Unwrap())
		}
	}
	return &usageError{err}
}

// version describes the build: the module version and, for a build from a
// checkout, the commit.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown version)"
	}
	v := info.Main.Version
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " (commit " + rev
		if modified == "true" {
			v += ", modified"
		}
		v += ")"
	}
	return v + " " + info.GoVersion
}

// newGroupCmd returns a command that only holds subcommands: without one it
// prints its help, and an unknown one is a usage error.
func newGroupCmd(use, short string, children ...*cobra.Command) *cobra.Command {
	cmd := withHelp(use, &cobra.Command{
		Use: use, Short: short,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown command %q for %q; run %q for its commands", args[0], cmd.CommandPath(), cmd.CommandPath()+" --help")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	})
	cmd.AddCommand(children...)
	return cmd
}

// noArgs refuses positional arguments as bad input.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.HasSubCommands() {
			return usageErrorf("unknown command %q for %q; run %q for the list", args[0], cmd.CommandPath(), cmd.CommandPath()+" --help")
		}
		return usageErrorf("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}

// maxArgs allows at most n positional arguments.
func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usageErrorf("%s takes at most %d argument(s), got %d: %q", cmd.CommandPath(), n, len(args), args)
		}
		return nil
	}
}

// requireFlags reports the first of names that was not given.
func requireFlags(cmd *cobra.Command, names ...string) error {
	for _, name := range names {
		if !cmd.Flags().Changed(name) {
			f := cmd.Flags().Lookup(name)
			return usageErrorf("--%s is required: %s", name, f.Usage)
		}
	}
	return nil
}
