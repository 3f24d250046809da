package main

import (
	"embed"
	"slices"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/outputs"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/experiments/datasets"
)

// helpFiles hold the long descriptions and examples of the commands.
//
//go:embed help/*.txt
var helpFiles embed.FS

// withHelp sets the long description and the examples of cmd from
// help/NAME.txt (cli.WithHelp); TestHelpFiles checks that every command's
// file is there.
func withHelp(name string, cmd *cobra.Command) *cobra.Command {
	return cli.WithHelp(helpFiles, "help/"+name+".txt", cmd)
}

// newCmd completes cmd: its long help and examples from help/HELP.txt
// (withHelp; none when help is ""), the flags of the tagged fields of the
// struct flags points to (setup.BindFlags). It returns cmd.
func newCmd(help string, cmd *cobra.Command, flags any) *cobra.Command {
	if help != "" {
		withHelp(help, cmd)
	}
	setup.BindFlags(cmd, flags)
	return cmd
}

// subcommand is one of darrm's commands: its name, as the first argument
// of a run gives it (newRootCmdOf), and its constructor, given the
// mechanisms of release of the run (those of the commands that release,
// plan or account with a mechanism).
type subcommand struct {
	name  string
	build func(*setup.Mechanisms) *cobra.Command
}

// plain is the constructor of a command that takes no mechanism.
func plain(build func() *cobra.Command) func(*setup.Mechanisms) *cobra.Command {
	return func(*setup.Mechanisms) *cobra.Command { return build() }
}

// subcommands holds darrm's commands. Each command file registers its
// command in an init function, so that commands can be added without
// editing this file.
var subcommands []subcommand

// newRootCmdOf builds darrm's command tree for a run on args, whose
// commands release, plan and account with the mechanisms ms: of darrm's
// commands, only the one that args[0] names exactly, if it names one,
// since the run cannot reach another; else (no args, help, completion, a
// misspelt command, a flag first) all of them, which it lists or suggests
// from; for --version alone, none. Building every command, hundreds of
// flags bound by reflection, was most of the start-up work of a short
// run. Help, usage, errors and exit statuses are the same either way
// (TestOneCommandTree).
func newRootCmdOf(ms *setup.Mechanisms, args ...string) *cobra.Command {
	root := withHelp("darrm", &cobra.Command{
		Use:     "darrm",
		Short:   "Certified optimal private majority ensembling (DaRRM)",
		Version: cli.Version(),
		Args:    cli.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		// Every command checks its flags tagged required and its output files
		// before it runs.
		PersistentPreRunE: preRun,
		SilenceUsage:      true,
		SilenceErrors:     true,
	})
	root.SetVersionTemplate("darrm {{.Version}}\n")
	root.SetUsageTemplate(cli.UsageTemplate)
	root.SetFlagErrorFunc(cli.FlagErrorFunc)
	named := len(args) > 0 && slices.ContainsFunc(subcommands, func(c subcommand) bool { return c.name == args[0] })
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-v") {
		return root // the version alone: no command to build
	}
	for _, c := range subcommands {
		if !named || c.name == args[0] {
			root.AddCommand(c.build(ms))
		}
	}
	return root
}

// newGroupCmd returns a command that only holds subcommands (cli.Group),
// with its help from help/USE.txt.
func newGroupCmd(use, short string, children ...*cobra.Command) *cobra.Command {
	return cli.Group(withHelp(use, &cobra.Command{Use: use, Short: short}), children...)
}

// preRun checks, before any command runs, its standard streams (first,
// so that no message of a later check goes into a file darrm keeps), its
// required flags and its output files (Check), and spells a data
// set's name as darrm does (canonicalDataset).
func preRun(cmd *cobra.Command, args []string) error {
	protect := outputs.Protected(cmd, args)
	if err := cli.CheckStreams(cmd.OutOrStdout(), cmd.ErrOrStderr(), protect...); err != nil {
		return err
	}
	if err := cli.CheckRequired(cmd, args); err != nil {
		return err
	}
	if err := setup.CheckFlagRules(cmd); err != nil {
		return err
	}
	setup.WarnPassword(cmd, args)
	setup.WarnSeeded(cmd)
	if err := canonicalDataset(cmd); err != nil {
		return err
	}
	return outputs.Check(cmd, args, protect)
}

// canonicalDataset spells the --dataset given to cmd, in any case, as
// darrm names it (datasets.Canonical: "MNIST58" is mnist58), so that
// every command that takes a data set reads it, keys its caches on it and
// prints it in one spelling.
func canonicalDataset(cmd *cobra.Command) error {
	f := cmd.Flags().Lookup("dataset")
	if f == nil || !f.Changed {
		return nil
	}
	return f.Value.Set(datasets.Canonical(f.Value.String()))
}
