package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/report"
	"github.com/darrm/darrm/ledger"
)

func init() { subcommands = append(subcommands, newAggregateCmd) }

type aggregateFlags struct {
	problem     problemFlags
	mech        mechanismFlags
	format      formatFlag
	comp        compositionFlags
	mechanism   string
	out         string
	outFormat   string
	inFormat    string
	header      string
	id          string
	seed        uint64
	budgetEps   float64
	budgetDelta float64
	ledger      string
}

func newAggregateCmd() *cobra.Command {
	var f aggregateFlags
	cmd := &cobra.Command{
		Use:   "aggregate [VOTES] [flags]",
		Short: "Release one private majority label per query from K teachers' votes",
		Long: `aggregate reads a vote file (VOTES, or standard input): one row per query, an
optional id column, then the 0/1 votes of K teachers, as CSV (header optional)
or JSON lines ([0,1,...] or {"id": ..., "votes": [...]}). K is taken from the
first data row and enforced on every other. For each query it releases one
private label, (m·eps, delta)-DP, and writes "id,label" (or JSON lines) to --out
(a temporary file renamed at the end, so a failed run leaves nothing) or to
standard output. Queries without an id are numbered from 1.

Mechanisms (--mechanism), all held to the same (m·eps, delta):
  darrm      DaRRM (Algorithm 1) with gamma_opt from the cache (solved on
             demand, or --no-solve) or with --gamma FILE; the gamma actually
             sampled is certified exhaustively before the first label
  subsample  majority of floor(m) teachers drawn without replacement
  dsub       majority of 2·floor(m)-1 teachers (Theorem 3.5.1; Delta = 0)
  rr         randomized response with p_const of Lemma B.1.1
  gnmax      GNMax, Gaussian noise on the class counts (PATE; it assumes each
             record changes one teacher's vote, not private teachers)

At the end it prints the per-query guarantee and the total over the answered
queries under simple, general (Theorem 3.3.3) and optimal composition (table,
or --format json/csv), on standard output, or on standard error when the labels
go to standard output. --budget-eps/--budget-delta stop before the total under
--composition would exceed the budget: the output then holds exactly the
answered queries and the exit status is 4.

K is the number of votes in the first row (--K, if given, must match); m,
eps, Delta and delta take the shared defaults (m = 3, the thesis' main
setting), which the output echoes. Earlier spellings --budget-method,
--rr-method and --gnmax-sigma are still accepted.

Randomness comes from crypto/rand. --seed switches to a seeded generator for
experiments: such labels are NOT for release, and every output says so.
No output ever contains a query's un-noised majority or vote count.

Exit status: 0 done; 2 bad input (no --out file is left; labels that already
reached standard output stay there, and the error says how many); 3 the gamma
is not certified; 4 the budget stopped the release; 1 other failures.`,
		Example: `  darrm aggregate votes.csv --out labels.csv
  darrm aggregate votes.jsonl --m 3 --mechanism subsample --format json --out labels.jsonl
  darrm aggregate votes.csv --m 3 --budget-eps 10 --budget-delta 1e-3 --out labels.csv
  darrm solve --K 11 --m 3 --format json > g.json && darrm aggregate votes.csv --gamma g.json --out labels.csv`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runAggregate(cmd, &f, args) },
	}
	f.problem.add(cmd)
	f.mech.add(cmd)
	f.format.add(cmd)
	f.comp.add(cmd)
	fs := cmd.Flags()
	flagSeed.add(fs, &f.seed)
	flagBudgetEps.add(fs, &f.budgetEps)
	flagBudgetDelta.add(fs, &f.budgetDelta)
	fs.StringVar(&f.mechanism, "mechanism", "darrm", "aggregator: "+listNames(mechanismNames))
	fs.StringVar(&f.out, "out", "-", "file for the labels, written atomically (- for standard output)")
	fs.StringVar(&f.outFormat, "out-format", "auto", "labels as csv or jsonl (auto: the format of the votes)")
	fs.StringVar(&f.inFormat, "input-format", "auto", "votes as csv or jsonl (auto: JSON lines if the first line starts with [ or {)")
	fs.StringVar(&f.header, "header", "auto", "CSV header row: auto, yes or no")
	fs.StringVar(&f.id, "id", "auto", "id column: auto, yes or no")
	flagLedger.add(fs, &f.ledger)
	aliases(cmd, map[string]string{"budget-method": "composition", "rr-method": "rr-composition", "gnmax-sigma": "gnmax-search"})
	return cmd
}

// notForRelease is said by every output of a seeded run.
const notForRelease = "NOT FOR RELEASE: --seed makes the noise reproducible, so anyone who knows the seed can remove it"

func runAggregate(cmd *cobra.Command, f *aggregateFlags, args []string) error {
	start := time.Now()
	fs := cmd.Flags()
	format, err := f.format.parse()
	if err != nil {
		return err
	}
	opts := ensemble.ReadOptions{}
	if opts.Format, err = ensemble.ParseFormat(f.inFormat); err != nil {
		return usageErrorf("--input-format: %v", err)
	}
	if opts.Header, err = ensemble.ParsePresence(f.header); err != nil {
		return usageErrorf("--header %v", err)
	}
	if opts.ID, err = ensemble.ParsePresence(f.id); err != nil {
		return usageErrorf("--id %v", err)
	}
	outFormat, err := ensemble.ParseFormat(f.outFormat)
	if err != nil {
		return usageErrorf("--out-format: %v", err)
	}
	budgetMethod, deltaPrime, err := f.comp.parse()
	if err != nil {
		return err
	}
	var budget *accountant.Guarantee
	switch eps, delta := fs.Changed("budget-eps"), fs.Changed("budget-delta"); {
	case eps && delta:
		budget = &accountant.Guarantee{Eps: f.budgetEps, Delta: f.budgetDelta}
	case eps || delta:
		return usageErrorf("--budget-eps and --budget-delta go together: a budget must bound both")
	}
	mech, err := f.mech.parse(cmd, "mechanism", []string{f.mechanism})
	if err != nil {
		return err
	}
	if err := checkOutPath("out", f.out); err != nil {
		return err
	}

	name := "-"
	if len(args) == 1 {
		name = args[0]
	}
	if err := checkDistinct(name, f.out); err != nil {
		return err
	}
	in, err := openInput(cmd, name)
	if err != nil {
		return err
	}
	defer in.Close()
	votes, err := ensemble.NewVoteReader(in, displayName(name), opts)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if outFormat == ensemble.FormatAuto {
		outFormat = votes.Format()
	}
	p, err := aggregateParams(cmd, f, mech, votes.K(), displayName(name))
	if err != nil {
		return err
	}
	agg, label, err := mech.newAggregator(cmd, f.mechanism, p.Params)
	if err != nil {
		return err
	}
	priv := agg.Privacy()
	limit := -1
	var bout *report.Budget
	if budget != nil {
		if limit, err = accountant.MaxSteps(priv.Guarantee, *budget, budgetMethod, deltaPrime); err != nil {
			return usageErrorf("budget: %v", err)
		}
		bout = &report.Budget{Eps: budget.Eps, Delta: budget.Delta, Method: budgetMethod.String(), DeltaPrime: deltaPrime, MaxQueries: limit}
	}
	var led *ledger.Ledger
	if f.ledger != "" {
		if led, limit, err = openLedger(f.ledger, f.mechanism, priv, limit); err != nil {
			return err
		}
		defer led.Close()
	}
	reserve := func(int) error { return nil }
	if led != nil {
		reserve = led.Reserve
	}

	src := ensemble.NewSource()
	rnd := report.Randomness{Source: "crypto/rand"}
	if fs.Changed("seed") {
		src = ensemble.NewSeededSource(f.seed)
		rnd = report.Randomness{Source: "seeded ChaCha8 (math/rand/v2)", Seed: &f.seed, Note: notForRelease}
		fmt.Fprintf(cmd.ErrOrStderr(), "darrm: warning: --seed %d: %s\n", f.seed, notForRelease)
	}

	ctx := cmd.Context()
	total := int64(-1)
	if st, err := os.Stat(name); err == nil && st.Mode().IsRegular() && name != "-" {
		total = st.Size()
	}
	prog := cliout.NewProgress(cmd.ErrOrStderr(), total, "releasing labels")
	var res ensemble.ReleaseResult
	var lw *ensemble.LabelWriter
	stream := func(w io.Writer) error {
		var err error
		if lw, err = ensemble.NewLabelWriter(w, outFormat); err != nil {
			return err
		}
		res, err = ensemble.Release(ctx, votes, agg, src, lw, limit, ensemble.ReleaseOptions{Experiment: fs.Changed("seed"), Reserve: reserve, Progress: func(n int, b int64) {
			if total > 0 {
				prog.Set(b)
			} else {
				prog.Set(int64(n))
			}
		}})
		if err == nil && led != nil {
			// The labels are in the file; they leave when it is renamed.
			err = led.Settle(res.Answered)
		}
		return err
	}
	toStdout := f.out == "" || f.out == "-"
	if toStdout {
		err = stream(cmd.OutOrStdout())
		if err != nil && lw != nil && lw.Written() > 0 {
			err = fmt.Errorf("%w (%d labels were already written to standard output: their privacy cost is that of %d queries at %v)", err, lw.Written(), lw.Written(), priv.Guarantee)
		}
		if err != nil && led != nil {
			err = errors.Join(err, led.Settle(lw.Written()))
		}
	} else {
		err = atomicfile.Write(f.out, 0o644, func(file *os.File) error { return stream(file) })
		if err != nil && led != nil {
			err = errors.Join(err, led.Settle(0)) // the file was removed: nothing left
		}
	}
	prog.Done()
	if err != nil {
		return releaseError(err)
	}

	elapsed := time.Since(start).Seconds()
	out := report.Aggregate{
		Input: displayName(name), InputFormat: votes.Format().String(), Header: votes.HasHeader(), IDColumn: votes.HasID(),
		Output: displayOut(f.out), OutputFormat: outFormat.String(), Mechanism: f.mechanism, Label: label,
		Problem:  p.out(),
		PerQuery: report.PerQuery{Eps: priv.Eps, Delta: priv.Delta, Source: priv.Source, Relation: priv.Relation.String(), RelationText: priv.Relation.Describe()},
		Gamma:    agg.Gamma(), Certificate: priv.Certificate,
		Answered: res.Answered, Unanswered: res.Unanswered,
		Budget:     bout,
		Randomness: rnd, ForRelease: !fs.Changed("seed"),
		Seconds: elapsed, QueriesPerSecond: float64(res.Answered+res.Unanswered) / elapsed,
	}
	if res.Answered > 0 {
		out.Totals = accountant.Totals(priv.Guarantee, res.Answered, deltaPrime)
	}
	if g, ok := agg.(*ensemble.GNMax); ok {
		sigma, _ := g.Sigma()
		out.Sigma = &sigma
	}
	if bout != nil {
		bout.Stopped = res.Unanswered > 0
	}
	if led != nil {
		if out.Ledger, err = ledgerOut(f.ledger, led, priv.Guarantee); err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	if toStdout {
		w = cmd.ErrOrStderr()
	}
	if err := out.Write(w, format); err != nil {
		return err
	}
	if res.Unanswered > 0 {
		return fmt.Errorf("%w: answered %d of %d queries, %d left unanswered; %s holds the %d answered",
			errBudget, res.Answered, res.Answered+res.Unanswered, res.Unanswered, displayOut(f.out), res.Answered)
	}
	return nil
}

// aggregateParams returns the problem: from the flags with K from the vote
// file, or, with --gamma, from the flags and what the gamma file states
// (as darrm verify does).
func aggregateParams(cmd *cobra.Command, f *aggregateFlags, mech mechanisms, k int, input string) (problem, error) {
	if cmd.Flags().Changed("K") && f.problem.k != k {
		return problem{}, usageErrorf("--K = %d but %s has %d votes per row", f.problem.k, input, k)
	}
	if mech.table != nil {
		if kg := mech.table.Gamma.K(); kg != k {
			return problem{}, usageErrorf("--gamma %s is for K = %d teachers but %s has %d votes per row", mech.tableName, kg, input, k)
		}
		return f.problem.withTable(cmd, *mech.table)
	}
	return f.problem.paramsForK(cmd, k)
}

// checkDistinct refuses to write the labels over the vote file.
func checkDistinct(in, out string) error {
	if in == "-" || out == "" || out == "-" {
		return nil
	}
	a, errA := os.Stat(in)
	b, errB := os.Stat(out)
	if errA == nil && errB == nil && os.SameFile(a, b) {
		return usageErrorf("--out %s is the vote file: write the labels elsewhere", out)
	}
	return nil
}

// releaseError maps an error of the release: malformed votes are bad
// input (exit 2).
func releaseError(err error) error {
	var fe *ensemble.FormatError
	if errors.As(err, &fe) {
		return usageErrorf("%v", err)
	}
	return err
}

func displayOut(out string) string {
	if out == "" || out == "-" {
		return "standard output"
	}
	return out
}
