package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/cli"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/report"
	"github.com/darrm/darrm/ledger"
)

// runAggregateMulti releases labels of multi-class votes (a counts file or
// class indices) by gnmax or confident-gnmax.
func runAggregateMulti(cmd *cobra.Command, f *aggregateFlags, args []string) error {
	start := time.Now()
	fs := cmd.Flags()
	if !slices.Contains(ensemble.MultiMechanisms, f.Mechanism) {
		return cli.Usagef("--mechanism %s is binary (0/1 votes): multi-class votes need one of %s", f.Mechanism, strings.Join(ensemble.MultiMechanisms, ", "))
	}
	if (f.Mechanism == "confident-gnmax") != fs.Changed("threshold") {
		return cli.Usagef("--threshold and --sigma1 are confident-gnmax's threshold step: give them with it, and only with it")
	}
	if err := cli.RequireFlags(cmd, "sigma2", "delta"); err != nil {
		return err
	}
	m, err := f.pateFlags.mech(cmd, accountant.DiscreteNoise)
	if err != nil {
		return err
	}
	if err := cli.CheckOutPath("out", f.Out); err != nil {
		return err
	}
	name := cli.InputArg(args)
	if cli.SameFile(name, f.Out) {
		return cli.Usagef("--out %s is the vote file: write the labels elsewhere", f.Out)
	}
	file, err := cli.OpenInput(cmd.InOrStdin(), name)
	if err != nil {
		return err
	}
	defer file.Close()
	in, err := f.multiInputFlags.open(cmd, file, cli.InputName(name))
	if err != nil {
		return err
	}
	if fs.Changed("K") && f.K != in.K() {
		return cli.Usagef("--K = %d but %s has K = %d teachers", f.K, cli.InputName(name), in.K())
	}
	agg, err := ensemble.NewMultiGNMax(m, in.K(), in.Classes(), f.Target)
	if err != nil {
		return flagError(err, nil)
	}
	priv := agg.Privacy()
	limit := -1
	if fs.Changed("budget-eps") != fs.Changed("budget-delta") {
		return cli.Usagef("--budget-eps and --budget-delta go together: a budget must bound both")
	}
	if fs.Changed("budget-eps") {
		if limit, err = accountant.MaxSteps(priv.Guarantee, accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}, f.Method, f.DeltaPrime); err != nil {
			return cli.Usagef("budget: %v", err)
		}
	}
	sink := ensemble.LabelSink{Path: f.Out, Stdout: cmd.OutOrStdout(), Format: f.OutFormat}
	if sink.Format == ensemble.FormatAuto {
		sink.Format = in.Format()
	}
	var led *ledger.Ledger
	if f.Ledger != "" {
		if led, limit, err = ledger.OpenRun(f.Ledger, f.Mechanism, priv.Relation.String(), priv.Guarantee, limit); err != nil {
			return cli.Usagef("--ledger: %v", err)
		}
		defer led.Close()
		sink.Ledger = led
	}
	src, seed := ensemble.NewSource(), cli.Given(fs, "seed", f.Seed)
	if seed != nil {
		src = ensemble.NewSeededSource(*seed)
		fmt.Fprintf(cmd.ErrOrStderr(), "darrm: warning: --seed %d: %s\n", *seed, report.NotForRelease)
	}
	res, err := ensemble.ReleaseMultiTo(cmd.Context(), in, agg, src, sink, limit, ensemble.ReleaseOptions{Experiment: seed != nil})
	if fe := (*ensemble.FormatError)(nil); errors.As(err, &fe) {
		return cli.Usagef("%v", err)
	} else if err != nil {
		return err
	}
	rec := cliout.Record{
		{Key: "input", Val: cli.InputName(name)}, {Key: "output", Val: cli.OutputName(f.Out)},
		{Key: "mechanism", Val: f.Mechanism}, {Key: "teachers", Val: in.K()}, {Key: "classes", Val: in.Classes()},
		{Key: "threshold", Val: optional(m.Confident(), m.Threshold)}, {Key: "sigma1", Val: optional(m.Confident(), m.Sigma1)}, {Key: "sigma2", Val: m.Sigma2},
		{Key: "noise", Val: "discrete Gaussian (exact sampler), ties broken uniformly"},
		{Key: "per_query_eps", Val: priv.Eps}, {Key: "per_query_delta", Val: priv.Delta}, {Key: "per_query_source", Val: priv.Source},
		{Key: "relation", Val: priv.Relation.String()},
		{Key: "released", Val: res.Answered}, {Key: "labelled", Val: res.Answered - res.Withheld}, {Key: "withheld", Val: res.Withheld},
		{Key: "unanswered", Val: res.Unanswered},
		{Key: "seconds", Val: time.Since(start).Seconds()},
	}
	if res.Answered > 0 {
		for _, t := range accountant.Totals(priv.Guarantee, res.Answered, f.DeltaPrime) {
			if t.Err == nil {
				rec = append(rec, cliout.Field{Key: "total_" + t.Method.String(), Val: fmt.Sprintf("(%.6g, %.3g)", t.Guarantee.Eps, t.Guarantee.Delta)})
			}
		}
	}
	if seed != nil {
		rec = append(rec, cliout.Field{Key: "seed", Val: *seed}, cliout.Field{Key: "warning", Val: report.NotForRelease})
	}
	w := cmd.OutOrStdout()
	if sink.ToStdout() {
		w = cmd.ErrOrStderr()
	}
	if err := cliout.WriteRecord(w, f.Format, rec); err != nil {
		return err
	}
	if res.Unanswered > 0 {
		return fmt.Errorf("%w: released %d of %d queries, %d left unanswered", errBudget, res.Answered, res.Answered+res.Unanswered, res.Unanswered)
	}
	return nil
}

func optional(ok bool, v float64) any {
	if ok {
		return v
	}
	return nil
}
