// Package outputs refuses an output file of a darrm command that cannot
// be written or that would overwrite a file the command reads or a file
// darrm keeps (the gamma cache, the records of the ledgers).
package outputs

import (
	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/internal/cachedir"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/votefile"
)

// Flags are the flags that name a file a command writes.
var Flags = []string{"out", "plot", "curves"}

// Check refuses an output file of cmd (Flags) that cannot be
// written, or that is a file the command reads or a file darrm keeps: the
// input files named as arguments, the --votes file, the sidecars of vote
// files and the --meta file (their metadata header), the --gamma file,
// the --ledger, the gamma cache's files (in the --cache-dir or the
// default one) and the ledgers' records, protect (cli.CheckOutput: by file
// identity, symbolic links followed). darrm checks standard output and
// standard error, when they are redirected to a file, the same way
// (cli.CheckStreams: nothing is printed on a standard error refused).
// Standard input redirected from a file is an input too. The annotation
// "input" of a command names its arguments in the error (e.g. "the vote
// file"); a command whose arguments are files it creates names them by
// the annotation "output" (e.g. "LEDGER"), and they are checked as
// outputs.
func Check(cmd *cobra.Command, args []string, protect []cli.Protected) error {
	for _, name := range Flags {
		if f := cmd.Flags().Lookup(name); f != nil {
			if f.Changed && f.Value.String() == "" {
				// Given empty, it was taken for standard output, or for
				// the default file, or failed at the write.
				return cli.Usagef("--%s is empty: name a file", name)
			}
			if err := cli.CheckOutput(name, f.Value.String(), protect...); err != nil {
				return err
			}
		}
	}
	if what := cmd.Annotations["output"]; what != "" {
		for _, a := range args {
			if ledger.IsURL(a) {
				continue // a ledger in PostgreSQL: no file
			}
			if err := cli.CheckOutputNamed(what, a, protect...); err != nil {
				return err
			}
		}
	}
	return nil
}

// Protected are the files an output of cmd must not be (Check).
func Protected(cmd *cobra.Command, args []string) []cli.Protected {
	what := cmd.Annotations["input"]
	if what == "" {
		what = "an input of " + cmd.CommandPath()
	}
	var protect []cli.Protected
	reads := cmd.Flags().Lookup("meta") != nil // votes, which may have a sidecar
	for _, a := range args {
		if cmd.Annotations["output"] == "" {
			protect = append(protect, cli.Protected{What: what, Path: a})
			if reads && a != cli.Std {
				protect = append(protect, cli.Protected{What: "the sidecar of " + what, Path: votefile.SidecarPath(a), Named: true})
			}
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
		cli.Protected{What: "the --meta file", Path: value("meta")})
	if f := cmd.Flags().Lookup("witness"); f != nil {
		for _, w := range f.Value.(interface{ GetSlice() []string }).GetSlice() {
			protect = append(protect, cli.Protected{What: "the --witness file", Path: w})
		}
	}
	if l := value("ledger"); !ledger.IsURL(l) {
		protect = append(protect, cli.Protected{What: "the ledger", Path: l})
	}
	if v := value("votes"); v != "" && v != cli.Std {
		protect = append(protect, cli.Protected{What: "the --votes file", Path: v})
		if reads {
			protect = append(protect, cli.Protected{What: "the sidecar of the --votes file", Path: votefile.SidecarPath(v), Named: true})
		}
	}
	cacheDir := value("cache-dir")
	if cacheDir == "" {
		cacheDir, _ = cachedir.Default()
	}
	protect = append(protect, cli.Protected{What: "the gamma cache", Path: cacheDir, Dir: true, Owns: cachedir.Owns})
	if d, err := statedir.Default(); err == nil {
		protect = append(protect, cli.Protected{What: "darrm's records of the ledgers", Path: d, Dir: true})
	}
	return protect
}
