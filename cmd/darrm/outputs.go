package main

import (
	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/datasets"
	"github.com/darrm/darrm/ledger"
)

// outputFlags are the flags that name a file a command writes.
var outputFlags = []string{"out", "plot", "curves"}

// preRun checks, before any command runs, its standard streams (first,
// so that no message of a later check goes into a file darrm keeps), its
// required flags and its output files (checkOutputs), and spells a data
// set's name as darrm does (canonicalDataset).
func preRun(cmd *cobra.Command, args []string) error {
	protect := protected(cmd, args)
	if err := cli.CheckStreams(cmd.OutOrStdout(), cmd.ErrOrStderr(), protect...); err != nil {
		return err
	}
	if err := cli.CheckRequired(cmd, args); err != nil {
		return err
	}
	if err := canonicalDataset(cmd); err != nil {
		return err
	}
	return checkOutputs(cmd, args, protect)
}

// checkOutputs refuses an output file of cmd (outputFlags) that cannot be
// written, or that is a file the command reads or a file darrm keeps: the
// input files named as arguments, the --gamma file, the --ledger, the
// gamma cache's files (in the --cache-dir or the default one) and the
// ledgers' records, protect (cli.CheckOutput: by file identity, symbolic
// links followed). preRun checks standard output and standard error, when
// they are redirected to a file, the same way (cli.CheckStreams: nothing
// is printed on a standard error refused). Standard input redirected
// from a file is an input too. The
// annotation "input" of a command names its arguments in the error (e.g.
// "the vote file"); a command whose arguments are files it creates names
// them by the annotation "output" (e.g. "LEDGER"), and they are checked
// as outputs.
func checkOutputs(cmd *cobra.Command, args []string, protect []cli.Protected) error {
	for _, name := range outputFlags {
		if f := cmd.Flags().Lookup(name); f != nil {
			if err := cli.CheckOutput(name, f.Value.String(), protect...); err != nil {
				return err
			}
		}
	}
	if what := cmd.Annotations["output"]; what != "" {
		for _, a := range args {
			if err := cli.CheckOutputNamed(what, a, protect...); err != nil {
				return err
			}
		}
	}
	return nil
}

// protected are the files an output of cmd must not be (checkOutputs).
func protected(cmd *cobra.Command, args []string) []cli.Protected {
	what := cmd.Annotations["input"]
	if what == "" {
		what = "an input of " + cmd.CommandPath()
	}
	var protect []cli.Protected
	for _, a := range args {
		if cmd.Annotations["output"] == "" {
			protect = append(protect, cli.Protected{What: what, Path: a})
		}
	}
	if in, ok := cli.StdinProtected(cmd.InOrStdin(), what); ok {
		protect = append(protect, in)
	}
	value := func(name string) string {
		if f := cmd.Flags().Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	protect = append(protect,
		cli.Protected{What: "the --gamma file", Path: value("gamma")},
		cli.Protected{What: "the ledger", Path: value("ledger")})
	cacheDir := value("cache-dir")
	if cacheDir == "" {
		cacheDir, _ = cache.DefaultDir()
	}
	protect = append(protect, cli.Protected{What: "the gamma cache", Path: cacheDir, Dir: true, Owns: cache.Owns})
	if d, err := ledger.StateDir(); err == nil {
		protect = append(protect, cli.Protected{What: "darrm's records of the ledgers", Path: d, Dir: true})
	}
	return protect
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
