package main

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

func init() { subcommands = append(subcommands, subcommand{"sidecar", plain(newSidecarCmd)}) }

// sidecarFlags say how to read a vote file, as aggregate reads it, and
// the parts of its metadata header that its votes cannot say: the
// ensemble's id, relation, kind, partition and the teachers' guarantee.
type sidecarFlags struct {
	setup.VoteReadFlags
	ensembleFlags
	Relation accountant.Relation `flag:"relation" help:"private-teachers or one-vote: the guarantee's neighbours"`
	Out      string              "flag:\"out\" help:\"the `FILE` to write (default VOTES.meta.json)\""
	Replace  bool                `flag:"replace" help:"replace the file there (only on purpose)"`
}

// sidecarUsage is the help, a line each, of the flags sidecar has from
// aggregate and ledger init, as they say in sidecar (the shared flags
// --K, --eps and --Delta say the same in every command).
var sidecarUsage = map[string]string{
	"ensemble":         "id of the teacher ensemble that voted",
	"kind":             "fixed (trained models) or per-query",
	"partition":        "keyed-hash, file-position or shared: how the data were split",
	"classes":          "the votes are class labels 0..C-1 (C = 2: 0/1 votes)",
	"teachers-in-rows": "class labels as teachers x queries (PATE's layout)",
	"queries-in-rows":  "class labels as queries x teachers",
	"input-format":     "csv, jsonl, npy, or counts: C vote counts a query",
	"header":           "CSV header row: auto, yes or no",
	"id":               "id column: auto, yes or no",
	"array":            "the array to read in an .npz archive",
}

func newSidecarCmd() *cobra.Command {
	f := sidecarFlags{}
	cmd := newCmd("sidecar", &cobra.Command{
		Use:         "sidecar VOTES --ensemble ID --relation R --kind K --partition P [--eps E --Delta D]",
		Short:       "Write the metadata header of votes that hold none (NumPy) to a file beside them",
		Args:        cobra.ExactArgs(1),
		Annotations: map[string]string{"input": "the vote file"},
		RunE:        func(cmd *cobra.Command, args []string) error { return f.write(cmd, args[0]) },
	}, &f)
	for name, usage := range sidecarUsage {
		cmd.Flags().Lookup(name).Usage = usage
	}
	for _, name := range []string{"relation", "kind", "partition"} {
		cmd.Flags().Lookup(name).DefValue = "" // required: no default
	}
	// The private-teachers relation needs both, one-vote neither: no
	// default (pflag shows none for a zero).
	for _, name := range []string{"eps", "Delta"} {
		cmd.Flags().Lookup(name).DefValue = "0"
	}
	return cmd
}

// write writes the sidecar of the vote file name: its K, classes, layout
// and orientation as the votes, read as the flags say, have them (the
// flags may state them), the rest from the flags; checked by the rules of
// every header, and against every query of the votes
// (votefile.Meta.WriteSidecar).
func (f *sidecarFlags) write(cmd *cobra.Command, name string) error {
	if err := cli.RequireFlags(cmd, "ensemble", "relation", "kind", "partition"); err != nil {
		return err
	}
	out := f.Out
	switch {
	case name == cli.Std:
		return cli.Usagef("VOTES: a sidecar describes a vote file, read twice: give its name, not - (standard input)")
	case out == cli.Std:
		return cli.Usagef("--out -: a sidecar is a file of its own")
	case out == "":
		out = votefile.SidecarPath(name)
	}
	b, err := f.stated(cmd)
	if err != nil {
		return err
	}
	b.Relation = f.Relation
	// What the votes say of themselves, read without a header.
	r, opts, done, err := f.Input(cmd, "VOTES", name)
	if err != nil {
		return err
	}
	opts.In = r
	in, err := votefile.Open(name, opts)
	done.Close()
	switch {
	case err != nil:
		return err
	case in.Meta() != nil:
		return cli.Usagef("VOTES %s has a metadata header on its first line, which a sidecar would contradict: a vote file has one header", name)
	}
	if b.K == 0 {
		b.K = in.K()
	}
	m := b.Header(in.Classes(), in.Layout())
	if m.Input() == votefile.ManyClasses && m.Layout == votefile.LayoutVotes {
		m.Orientation = opts.Orientation // class labels: a matrix that reads either way
	}
	if err := m.Validate(); err != nil {
		return headerFlagError(err)
	}
	ensemble, err := provenance.Check(m, provenance.Stated{})
	if err != nil {
		return headerFlagError(err)
	}
	// The votes read whole with the header, which is then written.
	if r, opts, done, err = f.Input(cmd, "VOTES", name); err != nil {
		return err
	}
	defer done.Close()
	queries, err := m.WriteSidecar(cmd.Context(), out, r, name, opts, f.Replace)
	switch {
	case errors.Is(err, fs.ErrExist):
		return cli.Usagef("%s is there: a sidecar is replaced only on purpose (--replace), or written elsewhere (--out FILE, which commands then read with --meta FILE)", out)
	case err != nil:
		return err
	}
	return report.Sidecar{Path: out, Votes: name, Ensemble: ensemble, Meta: m, Queries: queries}.Write(cmd.OutOrStdout())
}

// headerFieldFlags are the flags of sidecar that set each field of the
// header it writes.
var headerFieldFlags = map[string]string{
	"ensemble": "--ensemble", "K": "--K", "classes": "--classes", "layout": "--input-format", "relation": "--relation",
	"kind": "--kind", "partition": "--partition", "orientation": "--teachers-in-rows", "eps": "--eps", "Delta": "--Delta",
	"source.method": "--eps and --Delta",
}

// numberFields are the header's fields that hold a number.
var numberFields = map[string]bool{"K": true, "classes": true, "eps": true, "Delta": true}

// headerFlagError is the rule of the header that the flags broke (a
// *votefile.HeaderError), said as the flag that sets its field.
func headerFlagError(err error) error {
	var he *votefile.HeaderError
	if !errors.As(err, &he) {
		return err
	}
	field := he.Field
	if i := strings.LastIndex(field, "]."); i >= 0 {
		field = field[i+2:] // teachers[0].eps: eps
	}
	flag, ok := headerFieldFlags[field]
	if !ok {
		return cli.Usagef("%v", err)
	}
	if he.Value == "" || field == "source.method" {
		return cli.Usagef("%s: %s", flag, he.Rule)
	}
	if numberFields[field] {
		// As every command names a number's flag (setup.CheckFlagRules).
		return cli.Usagef("%s = %s: %s", flag, he.Value, he.Rule)
	}
	return cli.Usagef("%s %s: %s", flag, he.Value, he.Rule)
}
