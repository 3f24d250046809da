package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/curveplot"
	"github.com/darrm/darrm/cmd/darrm/internal/figure"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/experiments/shuffleexp"
	"github.com/darrm/darrm/gamma"
)

func init() { subcommands = append(subcommands, subcommand{"plot", plain(newPlotCmd)}) }

func newPlotCmd() *cobra.Command {
	return newGroupCmd("plot", "Draw figures of several settings from saved JSON results",
		newPlotGammaCmd(), newPlotShufflegCmd())
}

// plotFlags are the flags every plot subcommand has.
type plotFlags struct {
	Out    string        `flag:"out" help:"figure file, .png (300 dpi) or .svg (required)" required:""`
	Title  string        `flag:"title" help:"title above the figure"`
	Note   string        `flag:"note" help:"text under the legend (a newline starts a paragraph)"`
	Cols   int           `flag:"cols" help:"panels (or columns) per row"`
	Format cliout.Format `flag:"format"`
}

// newPlot builds the plot subcommand use, whose flags are the tagged
// fields of *f (which embeds plotFlags); draw reads the documents named by
// the arguments, draws them and returns the numbers it drew.
func newPlot(use, short string, f any, p *plotFlags, draw func(cmd *cobra.Command, args []string) ([]cliout.Record, error)) *cobra.Command {
	return newCmd("plot-"+use, &cobra.Command{
		Use: use + " FILE... --out FIGURE", Short: short, Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := setup.CheckPlot(p.Out); err != nil {
				return err
			}
			if err := figure.CheckCols(p.Cols); cmd.Flags().Changed("cols") && err != nil {
				return cli.Usagef("--%v", err)
			}
			rows, err := draw(cmd, args)
			if err != nil {
				return err
			}
			return cliout.WriteRecords(cmd.OutOrStdout(), p.Format, cliout.Record{{Key: "figure", Val: p.Out}}, rows)
		},
	}, f)
}

func newPlotGammaCmd() *cobra.Command {
	f := struct {
		plotFlags
		Expected bool `flag:"expected" help:"add a row of the expected errors (Figure B.7)"`
	}{plotFlags: plotFlags{Cols: 4}}
	return newPlot("gamma", "Draw several solve --compare results (thesis Figures 3.2, B.4-B.7)", &f, &f.plotFlags, func(cmd *cobra.Command, args []string) ([]cliout.Record, error) {
		docs, err := setup.ReadJSON[report.Solve](cmd, "FILE", args, setup.WantSolve)
		if err != nil {
			return nil, err
		}
		var settings []figure.Setting
		var rows []cliout.Record
		for i := range docs {
			if err := docs[i].CheckDrawable(&docs[0], cli.InputName(args[0])); err != nil {
				return nil, cli.Usagef("%s: %v", cli.InputName(args[i]), err)
			}
			if err := certifyAgain(cmd.Context(), &docs[i]); err != nil {
				return nil, cli.Usagef("%s: %v", cli.InputName(args[i]), err)
			}
			s, err := docs[i].Setting()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", cli.InputName(args[i]), err)
			}
			settings, rows = append(settings, s), append(rows, docs[i].Rows()...)
		}
		return rows, figure.GammaFigure{Title: f.Title, Settings: settings, Cols: f.Cols, Expected: f.Expected, Notes: notes(f.Note)}.Write(cmd.Context(), f.Out)
	})
}

// certifyAgain replaces each certificate that doc, read from a file,
// states by the one computed now from its gamma's values (gamma.Verify),
// so that a figure never shows a status the file merely claims.
func certifyAgain(ctx context.Context, doc *report.Solve) error {
	gs, certs := doc.Certificates()
	for i, g := range gs {
		var err error
		if *certs[i], err = gamma.Verify(ctx, doc.Params(), g, gamma.VerifyOptions{}); err != nil {
			return err
		}
	}
	return nil
}

func newPlotShufflegCmd() *cobra.Command {
	f := struct {
		plotFlags
		Metric    curveplot.Metric `flag:"plot-metric"`
		Reference []string         `flag:"reference" help:"reports to compare with, drawn thin and dashed"`
	}{}
	return newPlot("shuffleg", "Draw several shuffleg results as panels of one figure (thesis Figures 4.2, C.1-C.4)", &f, &f.plotFlags, func(cmd *cobra.Command, args []string) ([]cliout.Record, error) {
		reports, err := setup.ReadJSON[shuffleexp.Report](cmd, "FILE", args, setup.WantShuffleg)
		if err != nil {
			return nil, err
		}
		refs, err := setup.ReadJSON[shuffleexp.Report](cmd, "--reference", f.Reference, setup.WantShuffleg)
		if err != nil {
			return nil, err
		}
		var rows []cliout.Record
		for i := range reports {
			if len(reports[i].Results) == 0 {
				return nil, cli.Usagef("%s: not the output of darrm shuffleg --format json", cli.InputName(args[i]))
			}
			rows = append(rows, report.Shuffleg{Report: &reports[i]}.Rows()...)
		}
		for i := range refs {
			if len(refs[i].Results) == 0 {
				return nil, cli.Usagef("--reference %s: not the output of darrm shuffleg --format json", cli.InputName(f.Reference[i]))
			}
		}
		fig, err := curveplot.ShufflegFigure(reports, refs, f.Metric, f.Title, f.Cols)
		if err != nil {
			return nil, cli.AsUsage(err)
		}
		fig.Notes = append(fig.Notes, notes(f.Note)...)
		return rows, fig.Write(cmd.Context(), f.Out)
	})
}

// notes splits --note into its paragraphs.
func notes(note string) []string {
	if note == "" {
		return nil
	}
	return strings.Split(note, "\n")
}
