package main

import (
	"encoding/json"
	"slices"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/curveplot"
	"github.com/darrm/darrm/internal/figure"
	"github.com/darrm/darrm/internal/report"
	"github.com/darrm/darrm/shuffleg"
)

func init() { subcommands = append(subcommands, newPlotCmd) }

func newPlotCmd() *cobra.Command {
	return newGroupCmd("plot", "Draw figures of several settings from saved JSON results",
		newPlotGammaCmd(), newPlotShufflegCmd())
}

// plotFlags are the flags every plot subcommand has.
type plotFlags struct {
	out, title string
	cols       int
	format     formatFlag
}

func (f *plotFlags) add(cmd *cobra.Command, cols int) {
	fs := cmd.Flags()
	fs.StringVar(&f.out, "out", "", "figure file, .png (300 dpi) or .svg (required)")
	fs.StringVar(&f.title, "title", "", "title above the figure")
	fs.IntVar(&f.cols, "cols", cols, "panels (or columns) per row")
	f.format.add(cmd)
}

// check validates the flags and returns the output format.
func (f *plotFlags) check(cmd *cobra.Command) (cliout.Format, error) {
	if err := requireFlags(cmd, "out"); err != nil {
		return "", err
	}
	if err := figure.CheckPath(f.out); err != nil {
		return "", &usageError{err}
	}
	if f.cols < 1 {
		return "", usageErrorf("--cols = %d: must be >= 1", f.cols)
	}
	return f.format.parse()
}

// readJSON decodes each named file (- for standard input) into a T.
func readJSON[T any](cmd *cobra.Command, names []string) ([]T, error) {
	out := make([]T, len(names))
	for i, name := range names {
		r, err := openInput(cmd, name)
		if err != nil {
			return nil, err
		}
		err = json.NewDecoder(r).Decode(&out[i])
		r.Close()
		if err != nil {
			return nil, usageErrorf("%s: not a JSON result of darrm: %v", displayName(name), err)
		}
	}
	return out, nil
}

func newPlotGammaCmd() *cobra.Command {
	var (
		f    plotFlags
		bars bool
	)
	cmd := &cobra.Command{
		Use:   "gamma FILE... --out FIGURE",
		Short: "Draw the noise functions of several solve --compare results (thesis Figures 3.2, B.4-B.7)",
		Long: `gamma draws the JSON outputs of "darrm solve --compare --format json" as the
thesis' Figures 3.2 and B.4-B.7: one column per problem (K, m, eps, Delta,
delta), the shape of each gamma over l above its error when every teacher
votes 1 with probability p, and with --bars the expected errors under the
actual distributions below. Results of the same problem under different
priors share a column (Figure B.7). A noise function that is not certified
is drawn dashed: every gamma's certificate is computed again in this run from
its values, never taken from the file. It prints, per file and mechanism, the
numbers behind the figure.`,
		Example: `  for m in 1 3 5 7; do darrm solve --K 11 --m $m --compare --format json > m$m.json; done
  darrm plot gamma m1.json m3.json m5.json m7.json --out fig-3.2.png`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := f.check(cmd)
			if err != nil {
				return err
			}
			docs, err := readJSON[report.Solve](cmd, args)
			if err != nil {
				return err
			}
			var settings []figure.Setting
			var rows []cliout.Record
			for i, d := range docs {
				if len(d.Gamma) < 2 || d.K != len(d.Gamma)-1 || len(d.Compare) == 0 {
					return usageErrorf("%s: not the output of darrm solve --compare --format json", displayName(args[i]))
				}
				if !slices.EqualFunc(d.Errors, docs[0].Errors, func(a, b gamma.ErrorEstimate) bool { return a.Actual == b.Actual }) {
					return usageErrorf("%s: its actual distributions differ from %s's: give every solve the same --actual", displayName(args[i]), displayName(args[0]))
				}
				if err := reverify(cmd, &docs[i], args[i]); err != nil {
					return err
				}
				d = docs[i]
				settings = append(settings, setting(d))
				for _, m := range d.Mechanisms() {
					ev := m.Evaluation
					r := cliout.Record{{Key: "K", Val: d.K}, {Key: "m", Val: d.M}, {Key: "eps", Val: d.Eps}, {Key: "Delta", Val: d.Delta},
						{Key: "delta", Val: d.TargetDelta}, {Key: "prior", Val: d.Prior}, {Key: "mechanism", Val: m.Name},
						{Key: "objective", Val: ev.Utility}, {Key: "surrogate_error", Val: ev.SurrogateError}}
					for _, e := range ev.Errors {
						r = append(r, cliout.Field{Key: "error " + e.Actual, Val: e.Mean})
					}
					rows = append(rows, append(r, cliout.Field{Key: "ratio", Val: ev.Certificate.Ratio}, cliout.Field{Key: "status", Val: ev.Certificate.Status.String()}))
				}
			}
			if err := figure.WriteGammas(f.out, f.title, settings, f.cols, bars); err != nil {
				return err
			}
			return cliout.WriteRecords(cmd.OutOrStdout(), format, cliout.Record{{Key: "figure", Val: f.out}}, rows)
		},
	}
	f.add(cmd, 4)
	cmd.Flags().BoolVar(&bars, "bars", false, "add a row of the expected errors under the actual distributions (Figure B.7)")
	return cmd
}

func newPlotShufflegCmd() *cobra.Command {
	var (
		f      plotFlags
		metric string
	)
	cmd := &cobra.Command{
		Use:   "shuffleg FILE... --out FIGURE",
		Short: "Draw several shuffleg results as panels of one figure (thesis Figures 4.2, C.1-C.4)",
		Long: `shuffleg draws the JSON reports of "darrm shuffleg --format json" as panels of
one figure, like the thesis' Figure 4.2: each algorithm's mean curve over the
runs with a band of one standard deviation, a panel per report; datasets
that are not the thesis' own are marked "substitute" in their panel's title.
It prints, per report and algorithm, the final values drawn.`,
		Example: `  darrm plot shuffleg mnist69-eps5.json mnist69-eps10.json --out fig-4.2-mnist69.png`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := f.check(cmd)
			if err != nil {
				return err
			}
			m, err := curveplot.ParseMetric(metric)
			if err != nil {
				return usageErrorf("--plot-metric: %v", err)
			}
			reports, err := readJSON[shuffleg.Report](cmd, args)
			if err != nil {
				return err
			}
			var panels []curveplot.Panel
			var rows []cliout.Record
			for i := range reports {
				r := &reports[i]
				if len(r.Results) == 0 {
					return usageErrorf("%s: not the output of darrm shuffleg --format json", displayName(args[i]))
				}
				panels = append(panels, curveplot.ReportPanel(r, m))
				for _, a := range r.Results {
					rows = append(rows, cliout.Record{{Key: "dataset", Val: r.Dataset}, {Key: "thesis_dataset", Val: r.ThesisDataset},
						{Key: "task", Val: r.Task}, {Key: "eps", Val: r.Eps}, {Key: "p", Val: r.Fraction}, {Key: "order", Val: r.Order},
						{Key: "alpha_rule", Val: r.AlphaRule}, {Key: "optimum", Val: r.Optimum.Value}, {Key: "algorithm", Val: a.Label},
						{Key: "lr", Val: a.LR}, {Key: "sigma", Val: a.Sigma}, {Key: "final_loss_mean", Val: a.FinalLossMean}, {Key: "final_loss_std", Val: a.FinalLossStd}})
				}
			}
			if err := curveplot.Write(f.out, f.title, panels, f.cols); err != nil {
				return err
			}
			return cliout.WriteRecords(cmd.OutOrStdout(), format, cliout.Record{{Key: "figure", Val: f.out}}, rows)
		},
	}
	f.add(cmd, 2)
	cmd.Flags().StringVar(&metric, "plot-metric", "loss", "quantity to plot: loss (G(x; D), linear axis) or excess (G(x; D) - G(x*), log axis)")
	return cmd
}

// reverify replaces the certificates stored in a solve document by ones
// computed now from the gammas' values, so that a figure never shows a
// status the file merely claims.
func reverify(cmd *cobra.Command, d *report.Solve, name string) error {
	p := constraints.Params{K: d.K, M: d.M, Eps: d.Eps, Delta: d.Delta, TargetDelta: d.TargetDelta}
	check := func(g []float64, c *gamma.Certificate) error {
		cert, err := gamma.Verify(cmd.Context(), p, g, 0, nil)
		if err != nil {
			return usageErrorf("%s: %v", displayName(name), err)
		}
		*c = cert
		return nil
	}
	if err := check(d.Gamma, &d.Certificate); err != nil {
		return err
	}
	for i := range d.Compare {
		if err := check(d.Compare[i].Gamma, &d.Compare[i].Certificate); err != nil {
			return err
		}
	}
	return nil
}
