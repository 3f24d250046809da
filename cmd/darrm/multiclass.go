package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/votefile"
)

// pateFlags are the settings of the multi-class mechanisms.
type pateFlags struct {
	Sigma2       float64 `flag:"sigma2" help:"gnmax, confident-gnmax: deviation of the noise on each class count (> 0)"`
	Threshold    float64 `flag:"threshold" help:"confident-gnmax: answer when the largest count plus noise reaches this"`
	Sigma1       float64 `flag:"sigma1" help:"confident-gnmax: deviation of the threshold step's noise (> 0)"`
	LaplaceScale float64 `flag:"laplace-scale" help:"lnmax: scale b of the Laplace noise on each class count (> 0; 1/gamma in Papernot et al. 2017)"`
}

// settings returns the settings the flags give (nil: not given).
func (f *pateFlags) settings(cmd *cobra.Command) votefile.Settings {
	fs := cmd.Flags()
	return votefile.Settings{Threshold: cli.Given(fs, "threshold", f.Threshold), Sigma1: cli.Given(fs, "sigma1", f.Sigma1),
		Sigma2: cli.Given(fs, "sigma2", f.Sigma2), LaplaceScale: cli.Given(fs, "laplace-scale", f.LaplaceScale)}
}

// gnmaxOf returns the GNMax-family parameters of settings s (a
// threshold step when s has sigma1) with noise.
func gnmaxOf(s votefile.Settings, noise accountant.PATENoise) (accountant.ConfidentGNMax, error) {
	m := accountant.ConfidentGNMax{Noise: noise}
	if s.Sigma2 != nil {
		m.Sigma2 = *s.Sigma2
	}
	if s.Sigma1 != nil {
		if !(*s.Sigma1 > 0) {
			return m, cli.Usagef("--sigma1 = %v: must be > 0", *s.Sigma1)
		}
		m.Sigma1 = *s.Sigma1
		if s.Threshold != nil {
			m.Threshold = *s.Threshold
		}
	}
	return m, flagError(m.Validate(), nil)
}

// checkSettings refuses the flag of a setting (a flag that a registered
// mechanism needs or takes) that mechanism info does not take, and asks
// for each it needs that neither a flag nor stated (a label file's
// header) gives.
func checkSettings(cmd *cobra.Command, info ensemble.MechanismInfo, stated votefile.Settings) error {
	fs := cmd.Flags()
	takes := append(slices.Clone(info.Needs), info.Takes...)
	for _, r := range ensemble.Registry() {
		for _, name := range append(slices.Clone(r.Needs), r.Takes...) {
			// An earlier spelling of another flag (account pate's --delta)
			// looks the other flag up: it is not this setting.
			if fl := fs.Lookup(name); fl == nil || fl.Name != name || !fl.Changed || slices.Contains(takes, name) {
				continue
			}
			msg := fmt.Sprintf("--%s is not a setting of %s on %v, which takes --%s", name, info.Name, info.Input, strings.Join(takes, ", --"))
			if others := takenBy(name); r.Input != info.Input {
				msg += fmt.Sprintf(" (--%s is a setting of %s on %v: --input-format counts, --classes C, or a metadata header that states them)", name, others, r.Input)
			} else {
				msg += fmt.Sprintf(" (--%s is a setting of %s)", name, others)
			}
			return cli.Usagef("%s", msg)
		}
	}
	for _, name := range info.Needs {
		if fl := fs.Lookup(name); fl != nil && fl.Name == name && !fl.Changed && !stated.Has(name) {
			return cli.Usagef("--%s is required by %s", name, info.Name)
		}
	}
	return nil
}

// takenBy names the mechanisms that take the setting name.
func takenBy(name string) string {
	var names []votefile.Mechanism
	for _, r := range ensemble.Registry() {
		if (slices.Contains(r.Needs, name) || slices.Contains(r.Takes, name)) && !slices.Contains(names, r.Name) {
			names = append(names, r.Name)
		}
	}
	return votefile.JoinMechanisms(names, ", ")
}

// classInputFlags say how to read multi-class votes: a counts file
// (--input-format counts), class indices (--classes C), or what the
// metadata header states.
type classInputFlags struct {
	Classes  int               `flag:"classes" help:"number of classes C: the votes are class indices 0..C-1 (with --input-format counts, every row must have C counts; a metadata header states C, which this may repeat)"`
	InFormat votefile.Format   `flag:"input-format" help:"votes as csv or jsonl, or counts: rows of C vote counts, or npy (auto: a NumPy file by its start, JSON lines if the first line starts with [ or {; a metadata header states the layout)"`
	Header   votefile.Presence `flag:"header" help:"CSV header row: auto, yes or no"`
	ID       votefile.Presence `flag:"id" help:"id column: auto, yes or no"`
	// A NumPy file is recognised by its start; these say how to read it.
	TeachersInRows bool   `flag:"teachers-in-rows" help:"class labels (with --classes C, NumPy or CSV) as teachers x queries, a row per teacher, the layout of PATE's published votes, rather than queries x teachers"`
	Array          string `flag:"array" help:"the array to read in a NumPy .npz archive (VOTES must then be a file)"`
	size           int64  // the vote file's size, -1 when not known
}

// openVotes reads the start of the vote file r, which path names on the
// command line (its metadata header, or a NumPy array's): with --array,
// of the array of that name in the .npz archive path. Close the Closer
// it returns (nil: none) after reading.
func (f *classInputFlags) openVotes(r io.Reader, path, name string) (*votefile.File, io.Closer, error) {
	f.size = cli.InputSize(path)
	if f.Array != "" {
		f.size = -1 // the archive's, not the array's
	}
	if f.Array == "" {
		vf, err := votefile.Open(r, name, f.InFormat)
		return vf, nil, err
	}
	if path == cli.Std {
		return nil, nil, cli.Usagef("--array %s: an .npz archive is read from a file, not from standard input", f.Array)
	}
	zf, err := os.Open(path)
	if err != nil {
		return nil, nil, cli.Usagef("VOTES %v", err)
	}
	st, err := zf.Stat()
	if err != nil {
		zf.Close()
		return nil, nil, err
	}
	vf, member, err := votefile.OpenNPZ(zf, st.Size(), name, f.Array)
	if err != nil {
		zf.Close()
		return nil, nil, err
	}
	return vf, closers{member, zf}, nil
}

// closers closes each of its closers in turn.
type closers []io.Closer

func (cs closers) Close() error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// input returns the kind of votes vf is to be read as: multi-class when
// the flags ask for counts or class indices, or the header states them,
// or, when neither says, the rows are evidently vote counts
// (votefile.File.DetectLayout, given the --K of a command that has
// it), which are then read as --input-format counts reads them, with a
// note on stderr that names the file name.
func (f *classInputFlags) input(cmd *cobra.Command, vf *votefile.File, name string) (votefile.Input, error) {
	fs := cmd.Flags()
	if f.InFormat == votefile.FormatCounts || fs.Changed("classes") || vf.ManyClasses() {
		return votefile.ManyClasses, nil
	}
	opts := votefile.ReadOptions{Header: f.Header, ID: f.ID}
	if k := fs.Lookup("K"); k != nil && k.Changed {
		opts.K, _ = fs.GetInt("K")
	}
	layout, err := vf.DetectLayout(opts)
	if err != nil {
		return 0, err
	}
	if layout == votefile.LayoutCounts && vf.Meta() == nil {
		f.InFormat = votefile.FormatCounts
		fmt.Fprintf(cmd.ErrOrStderr(), "darrm: %s holds vote counts, one column per class: read as counts (as --input-format counts says; docs/aggregate.md, \"Vote counts without a flag\")\n", name)
		return votefile.ManyClasses, nil
	}
	return votefile.TwoClass, nil
}

// reader reads vf as votes of kind in: 0/1 votes, or counts or class
// indices with the layout, C and K of its metadata header, which the
// flags may repeat but not contradict, or without one, those the flags
// give.
func (f *classInputFlags) reader(cmd *cobra.Command, vf *votefile.File, in votefile.Input, name string) (votefile.Reader, error) {
	if in == votefile.TwoClass {
		r, err := vf.Votes(votefile.ReadOptions{Format: f.InFormat, Header: f.Header, ID: f.ID})
		return r, err
	}
	fs := cmd.Flags()
	if fs.Changed("classes") && (f.Classes < 2 || f.Classes > votefile.MaxClasses) {
		return nil, cli.Usagef("--classes %d: must be in [2, %d] (at most as many classes as a row of counts can hold within a line's %d bytes)", f.Classes, votefile.MaxClasses, votefile.MaxLineBytes)
	}
	opts := votefile.ClassOptions{Header: f.Header, ID: f.ID, Classes: f.Classes, TeachersInRows: f.TeachersInRows, Size: max(f.size, 0)}
	if k := fs.Lookup("K"); k != nil && k.Changed && vf.Meta() == nil {
		// A K stated lets counts sum to fewer (teachers that abstained).
		opts.K, _ = fs.GetInt("K")
	}
	switch {
	case f.InFormat == votefile.FormatCounts:
		opts.Input = votefile.InputCounts
	case fs.Changed("classes"):
		opts.Input = votefile.InputClasses
	}
	if m := vf.Meta(); m != nil {
		if _, err := votefile.Check(m, votefile.Stated{Classes: f.Classes}); err != nil {
			return nil, fmt.Errorf("%s: %w (--classes)", name, err)
		}
		if f.InFormat == votefile.FormatCounts && m.Layout != votefile.LayoutCounts {
			return nil, cli.Usagef("--input-format counts contradicts the metadata header of %s, which states layout %v (class indices)", name, m.Layout)
		}
		opts.Input = votefile.InputFromHeader
	}
	r, err := vf.Classes(opts)
	return r, err
}

// openReader opens the vote file name (- for standard input) and reads it
// as the flags and its header say (reader). Close the file it returns.
func (f *classInputFlags) openReader(cmd *cobra.Command, name string) (votefile.Reader, io.Closer, error) {
	file, err := openInput(cmd, "VOTES", name, wantVotes)
	if err != nil {
		return nil, nil, err
	}
	vf, member, err := f.openVotes(file, name, cli.InputName(name))
	var done io.Closer = file
	if member != nil {
		done = closers{member, file}
	}
	var kind votefile.Input
	if err == nil {
		kind, err = f.input(cmd, vf, cli.InputName(name))
	}
	if err == nil {
		var in votefile.Reader
		if in, err = f.reader(cmd, vf, kind, cli.InputName(name)); err == nil {
			return in, done, nil
		}
	}
	done.Close()
	return nil, nil, err
}
