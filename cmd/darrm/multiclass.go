package main

import (
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/cli"
)

// pateFlags are the parameters of a multi-class aggregator.
type pateFlags struct {
	Sigma2       float64 `flag:"sigma2" help:"gnmax, confident-gnmax: deviation of the noise on each class count (> 0)"`
	Threshold    float64 `flag:"threshold" help:"confident-gnmax: answer when the largest count plus noise reaches this"`
	Sigma1       float64 `flag:"sigma1" help:"confident-gnmax: deviation of the threshold step's noise (> 0)"`
	LaplaceScale float64 `flag:"laplace-scale" help:"lnmax: scale b of the Laplace noise on each class count (> 0; 1/gamma in Papernot et al. 2017)"`
}

// mechanismFlags lists, per multi-class mechanism, the flags it needs;
// every other flag of pateFlags is refused with it.
var multiMechanismFlags = map[string][]string{
	"gnmax":           {"sigma2"},
	"confident-gnmax": {"sigma2", "threshold", "sigma1"},
	"lnmax":           {"laplace-scale"},
}

// checkMech checks that the flags given are those of mechanism name.
func (f *pateFlags) checkMech(cmd *cobra.Command, name string) error {
	need, ok := multiMechanismFlags[name]
	if !ok {
		return cli.Usagef("--mechanism %s is binary (0/1 votes): multi-class votes need one of %s", name, strings.Join(ensemble.MultiMechanisms, ", "))
	}
	for _, fl := range []string{"sigma2", "threshold", "sigma1", "laplace-scale"} {
		if cmd.Flags().Changed(fl) && !slices.Contains(need, fl) {
			return cli.Usagef("--%s is not a parameter of %s, which takes %s", fl, name, "--"+strings.Join(need, ", --"))
		}
	}
	return cli.RequireFlags(cmd, need...)
}

// gnmax returns the GNMax-family parameters with noise.
func (f *pateFlags) gnmax(cmd *cobra.Command, noise accountant.PATENoise) (accountant.ConfidentGNMax, error) {
	m := accountant.ConfidentGNMax{Sigma2: f.Sigma2, Noise: noise}
	if cmd.Flags().Changed("sigma1") {
		if !(f.Sigma1 > 0) {
			return m, cli.Usagef("--sigma1 = %v: must be > 0", f.Sigma1)
		}
		m.Threshold, m.Sigma1 = f.Threshold, f.Sigma1
	}
	return m, flagError(m.Validate(), nil)
}

// aggregator returns the release's aggregator name for K teachers and C
// classes, the GNMax family's per-query guarantee at delta.
func (f *pateFlags) aggregator(cmd *cobra.Command, name string, k, c int, delta float64) (ensemble.MultiAggregator, error) {
	if name == "lnmax" {
		agg, err := ensemble.NewLNMax(accountant.LNMax{Scale: f.LaplaceScale}, k, c)
		return agg, flagError(err, map[string]string{"laplace scale": "--laplace-scale"})
	}
	m, err := f.gnmax(cmd, accountant.DiscreteNoise)
	if err != nil {
		return nil, err
	}
	agg, err := ensemble.NewMultiGNMax(m, k, c, delta)
	return agg, flagError(err, nil)
}

// multiInputFlags say how to read multi-class votes: a counts file
// (--input-format counts), class indices (--classes C), or what the
// metadata header states.
type multiInputFlags struct {
	Classes  int               `flag:"classes" help:"number of classes C: the votes are class indices 0..C-1 (with --input-format counts, every row must have C counts; a metadata header states C, which this may repeat)"`
	InFormat ensemble.Format   `flag:"input-format" help:"votes as csv or jsonl, or counts: rows of C vote counts (auto: JSON lines if the first line starts with [ or {; a metadata header states the layout)"`
	Header   ensemble.Presence `flag:"header" help:"CSV header row: auto, yes or no"`
	ID       ensemble.Presence `flag:"id" help:"id column: auto, yes or no"`
}

// openVotes reads the start of the vote file r (its metadata header) and
// reports whether it is to be read as multi-class votes: the flags ask
// for counts or class indices, or the header states them.
func (f *multiInputFlags) openVotes(cmd *cobra.Command, r io.Reader, name string) (*ensemble.VoteFile, bool, error) {
	if cmd.Flags().Changed("classes") && (f.Classes < 2 || f.Classes > ensemble.MaxClasses) {
		return nil, false, cli.Usagef("--classes %d: must be in [2, %d] (at most as many classes as a row of counts can hold within a line's %d bytes)", f.Classes, ensemble.MaxClasses, ensemble.MaxLineBytes)
	}
	vf, err := ensemble.OpenVoteFile(r, name, f.InFormat)
	if err != nil {
		return nil, false, formatError(err)
	}
	multi := f.InFormat == ensemble.FormatCounts || cmd.Flags().Changed("classes") || vf.MultiClass()
	return vf, multi, nil
}

// multi reads vf as counts or class indices: the layout, C and K of its
// metadata header, which the flags may repeat but not contradict, or
// without one, those the flags give.
func (f *multiInputFlags) multi(cmd *cobra.Command, vf *ensemble.VoteFile, name string) (*ensemble.MultiReader, error) {
	fs := cmd.Flags()
	opts := ensemble.MultiOptions{Header: f.Header, ID: f.ID, Classes: f.Classes}
	switch {
	case f.InFormat == ensemble.FormatCounts:
		opts.Input = ensemble.InputCounts
	case fs.Changed("classes"):
		opts.Input = ensemble.InputClasses
	}
	if m := vf.Meta(); m != nil {
		counts := m.Layout == ensemble.LayoutCounts
		switch {
		case fs.Changed("classes") && f.Classes != m.Classes:
			return nil, cli.Usagef("--classes %d contradicts the metadata header of %s, which states classes = %d", f.Classes, name, m.Classes)
		case f.InFormat == ensemble.FormatCounts && !counts:
			return nil, cli.Usagef("--input-format counts contradicts the metadata header of %s, which states layout %v (class indices)", name, m.Layout)
		}
		opts.Input = ensemble.InputFromHeader
	}
	mr, err := vf.Multi(opts)
	if err != nil {
		return nil, formatError(err)
	}
	return mr, nil
}

// formatError makes a malformed vote file (*ensemble.FormatError) bad
// input; other errors, such as a failed read, stay what they are.
func formatError(err error) error {
	if fe := (*ensemble.FormatError)(nil); errors.As(err, &fe) {
		return cli.Usagef("%v", err)
	}
	return err
}
