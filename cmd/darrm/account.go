package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/shuffleg"
)

func init() { subcommands = append(subcommands, newAccountCmd) }

func newAccountCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "account",
		Short: "Privacy accounting: composition, RDP conversion, GNMax, DP-ShuffleG, RR",
		Long: `account computes privacy guarantees with the accountant package. Every
result names the theorem or conversion that produced it. The paper's formulas
are the defaults; tighter ones (optimal composition, the improved RDP
conversion) are used only when asked for.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(
		newAccountComposeCmd(),
		newAccountQueriesCmd(),
		newAccountStepEpsCmd(),
		newAccountGaussianCmd(),
		newAccountGNMaxCmd(),
		newAccountShuffleGCmd(),
		newAccountRRCmd(),
	)
	return cmd
}

// field is one named value of a result; record keeps the order in which a
// command lists them, for tables, CSV columns and JSON keys alike.
type field struct {
	key string
	val any
}

type record []field

func (r record) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range r {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.val)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (r record) keys() []string {
	ks := make([]string, len(r))
	for i, f := range r {
		ks[i] = f.key
	}
	return ks
}

// values formats r's values: exactly (round-tripping floats) for CSV, with
// six significant digits for tables.
func (r record) values(exact bool) []string {
	vs := make([]string, len(r))
	for i, f := range r {
		switch v := f.val.(type) {
		case float64:
			if exact {
				vs[i] = cliout.Float(v)
			} else {
				vs[i] = cliout.FloatN(v, 6)
			}
		default:
			vs[i] = fmt.Sprint(v)
		}
	}
	return vs
}

// writeRecord prints one result: a two-column table, one CSV row, or a JSON
// object.
func writeRecord(w io.Writer, f cliout.Format, r record) error {
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, r)
	case cliout.CSV:
		return cliout.WriteCSV(w, r.keys(), [][]string{r.values(true)})
	}
	rows := make([][]string, len(r))
	for i, v := range r.values(false) {
		rows[i] = []string{r[i].key, v}
	}
	return cliout.WriteTable(w, []string{"quantity", "value"}, rows)
}

// writeRecords prints results that share their keys: a table or CSV with one
// row each, or a JSON object holding the common fields and the rows.
func writeRecords(w io.Writer, f cliout.Format, common record, rows []record) error {
	if len(rows) == 0 {
		return errors.New("no results")
	}
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, append(common, field{"rows", rows}))
	case cliout.CSV:
		out := make([][]string, len(rows))
		for i, r := range rows {
			out[i] = append(common.values(true), r.values(true)...)
		}
		return cliout.WriteCSV(w, append(common.keys(), rows[0].keys()...), out)
	}
	// Tables list each distinct reference once, below the rows.
	var header []string
	var refs []string
	seen := map[string]bool{}
	for _, f := range rows[0] {
		if f.key != "reference" {
			header = append(header, f.key)
		}
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		vs := r.values(false)
		for j, f := range r {
			if f.key != "reference" {
				out[i] = append(out[i], vs[j])
			} else if ref := fmt.Sprint(f.val); !seen[ref] {
				seen[ref] = true
				refs = append(refs, ref)
			}
		}
	}
	if err := cliout.WriteTable(w, header, out); err != nil {
		return err
	}
	var setting []string
	for i, v := range common.values(false) {
		setting = append(setting, common[i].key+"="+v)
	}
	if _, err := fmt.Fprintln(w, strings.Join(setting, "  ")); err != nil {
		return err
	}
	for _, ref := range refs {
		if _, err := fmt.Fprintln(w, "reference: "+ref); err != nil {
			return err
		}
	}
	return nil
}

// paramFlags maps the accountant's parameter names to darrm's flags.
var paramFlags = map[string]string{
	"eps":          "--eps",
	"delta":        "--delta",
	"delta'":       "--delta-prime",
	"k":            "--k",
	"alpha":        "--alpha",
	"sigma":        "--sigma",
	"sensitivity":  "--sensitivity",
	"budget eps":   "--budget-eps",
	"budget delta": "--budget-delta",
	"eps total":    "--eps-total",
	"G":            "--G",
	"epochs":       "--epochs",
	"S":            "--S",
	"n":            "--n",
	"n_d":          "--nd",
	"m":            "--m",
	"tau":          "--tau",
	"lambda":       "--lambda",
}

// accountError turns an accountant error into darrm's: a parameter outside
// its domain is a usage error (exit 2) naming the flag, the value and the
// rule; rename overrides paramFlags for commands whose flags differ.
func accountError(cmd string, err error, rename map[string]string) error {
	var pe *accountant.ParamError
	if !errors.As(err, &pe) {
		return withCode(exitFailure, fmt.Errorf("account %s: %w", cmd, err))
	}
	name, ok := rename[pe.Name]
	if !ok {
		name, ok = paramFlags[pe.Name]
	}
	if !ok {
		name = pe.Name
	}
	return usageErrorf("account %s: %s = %v: %s", cmd, name, pe.Value, pe.Rule)
}

// compositionFlags are the flags of the commands that compose guarantees.
type compositionFlags struct {
	method     string
	deltaPrime float64
}

func (c *compositionFlags) register(cmd *cobra.Command, use string) {
	cmd.Flags().StringVar(&c.method, "method", "general", use+": simple, general or optimal")
	cmd.Flags().Float64Var(&c.deltaPrime, "delta-prime", 0, "slack delta' in (0, 1) of general and optimal composition")
}

// parse validates --format and --method, in that order.
func (c compositionFlags) parse(format string) (cliout.Format, accountant.Method, error) {
	f, err := parseFormat(format)
	if err != nil {
		return "", 0, err
	}
	m, err := parseMethod(c.method)
	return f, m, err
}

func registerFormat(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVar(format, "format", "table", "output format: table, json or csv")
}

func parseFormat(s string) (cliout.Format, error) {
	f, err := cliout.ParseFormat(s)
	if err != nil {
		return "", usageErrorf("%v", err)
	}
	return f, nil
}

func parseMethod(s string) (accountant.Method, error) {
	m, err := accountant.ParseMethod(s)
	if err != nil {
		return 0, usageErrorf("--%v", err)
	}
	return m, nil
}

func parseConversion(s string) (accountant.Conversion, error) {
	c, err := accountant.ParseConversion(s)
	if err != nil {
		return 0, usageErrorf("--%v", err)
	}
	return c, nil
}

// slackField lists δ' for the methods that use it.
func slackField(m accountant.Method, deltaPrime float64) record {
	if m == accountant.Simple {
		return nil
	}
	return record{{"delta_prime", deltaPrime}}
}

type composeParams struct {
	step   accountant.Guarantee
	k      int
	comp   compositionFlags
	format string
}

func newAccountComposeCmd() *cobra.Command {
	var p composeParams
	cmd := &cobra.Command{
		Use:   "compose",
		Short: "Total privacy of k composed (eps, delta)-DP steps (e.g. Q queries)",
		Long: `compose prints the total (eps, delta) of k adaptively composed (eps, delta)-DP
steps: simple (Theorem 3.3.2), general with slack delta' (Theorem 3.3.3) or the
exact optimal composition of Kairouz, Oh and Viswanath (Thm 3.3) with the same
slack. JSON fields "eps" and "delta" are the totals.`,
		Example: `  darrm account compose --eps 0.1 --delta 1e-5 --k 10 --delta-prime 0.1 --method general
  darrm account compose --eps 0.2676 --delta 3e-4 --k 100 --delta-prime 1e-4 --method optimal --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCompose(cmd.OutOrStdout(), p) },
	}
	fl := cmd.Flags()
	fl.Float64Var(&p.step.Eps, "eps", 0, "eps of one step (> 0)")
	fl.Float64Var(&p.step.Delta, "delta", 0, "delta of one step, in [0, 1)")
	fl.IntVar(&p.k, "k", 0, "number of composed steps (>= 1)")
	p.comp.register(cmd, "composition")
	registerFormat(cmd, &p.format)
	_ = cmd.MarkFlagRequired("eps")
	_ = cmd.MarkFlagRequired("k")
	return cmd
}

func runCompose(w io.Writer, p composeParams) error {
	f, m, err := p.comp.parse(p.format)
	if err != nil {
		return err
	}
	total, err := accountant.Compose(p.step, p.k, m, p.comp.deltaPrime)
	if err != nil {
		return accountError("compose", err, nil)
	}
	r := record{
		{"method", m.String()},
		{"reference", m.Reference()},
		{"k", p.k},
		{"step_eps", p.step.Eps},
		{"step_delta", p.step.Delta},
	}
	r = append(r, slackField(m, p.comp.deltaPrime)...)
	r = append(r, field{"eps", total.Eps}, field{"delta", total.Delta})
	return writeRecord(w, f, r)
}

type queriesParams struct {
	step, budget accountant.Guarantee
	comp         compositionFlags
	format       string
}

func newAccountQueriesCmd() *cobra.Command {
	var p queriesParams
	cmd := &cobra.Command{
		Use:   "queries",
		Short: "Largest number of (eps, delta)-DP queries within a total budget",
		Long: `queries prints the largest Q such that Q composed (eps, delta)-DP queries stay
within the budget (--budget-eps, --budget-delta) under the chosen composition,
and the total privacy of those Q queries.`,
		Example: `  darrm account queries --eps 0.2676 --delta 3e-4 --budget-eps 10 --budget-delta 0.02 --delta-prime 1e-4 --method optimal`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runQueries(cmd.OutOrStdout(), p) },
	}
	fl := cmd.Flags()
	fl.Float64Var(&p.step.Eps, "eps", 0, "eps of one query (> 0)")
	fl.Float64Var(&p.step.Delta, "delta", 0, "delta of one query, in [0, 1)")
	fl.Float64Var(&p.budget.Eps, "budget-eps", 0, "total eps budget (> 0)")
	fl.Float64Var(&p.budget.Delta, "budget-delta", 0, "total delta budget, in [0, 1)")
	p.comp.register(cmd, "composition")
	registerFormat(cmd, &p.format)
	for _, name := range []string{"eps", "budget-eps"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

func runQueries(w io.Writer, p queriesParams) error {
	f, m, err := p.comp.parse(p.format)
	if err != nil {
		return err
	}
	q, err := accountant.MaxSteps(p.step, p.budget, m, p.comp.deltaPrime)
	if err != nil {
		return accountError("queries", err, nil)
	}
	r := record{
		{"method", m.String()},
		{"reference", m.Reference()},
		{"step_eps", p.step.Eps},
		{"step_delta", p.step.Delta},
		{"budget_eps", p.budget.Eps},
		{"budget_delta", p.budget.Delta},
	}
	r = append(r, slackField(m, p.comp.deltaPrime)...)
	r = append(r, field{"queries", q})
	if q > 0 {
		total, err := accountant.Compose(p.step, q, m, p.comp.deltaPrime)
		if err != nil {
			return accountError("queries", err, nil)
		}
		r = append(r, field{"eps", total.Eps}, field{"delta", total.Delta})
	}
	return writeRecord(w, f, r)
}

type stepEpsParams struct {
	epsTotal, delta float64
	k               int
	comp            compositionFlags
	format          string
}

func newAccountStepEpsCmd() *cobra.Command {
	var p stepEpsParams
	cmd := &cobra.Command{
		Use:   "step-eps",
		Short: "Largest per-step eps whose k-fold composition meets a total eps",
		Long: `step-eps prints the largest eps such that k composed (eps, delta)-DP steps have
total eps at most --eps-total under the chosen composition, and the totals.`,
		Example: `  darrm account step-eps --eps-total 1 --delta 1e-6 --k 100 --delta-prime 1e-5 --method optimal`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runStepEps(cmd.OutOrStdout(), p) },
	}
	fl := cmd.Flags()
	fl.Float64Var(&p.epsTotal, "eps-total", 0, "target total eps (> 0)")
	fl.Float64Var(&p.delta, "delta", 0, "delta of one step, in [0, 1)")
	fl.IntVar(&p.k, "k", 0, "number of composed steps (>= 1)")
	p.comp.register(cmd, "composition")
	registerFormat(cmd, &p.format)
	_ = cmd.MarkFlagRequired("eps-total")
	_ = cmd.MarkFlagRequired("k")
	return cmd
}

func runStepEps(w io.Writer, p stepEpsParams) error {
	f, m, err := p.comp.parse(p.format)
	if err != nil {
		return err
	}
	eps, err := accountant.StepEps(p.epsTotal, p.delta, p.k, m, p.comp.deltaPrime)
	if err != nil {
		return accountError("step-eps", err, nil)
	}
	total, err := accountant.Compose(accountant.Guarantee{Eps: eps, Delta: p.delta}, p.k, m, p.comp.deltaPrime)
	if err != nil {
		return accountError("step-eps", err, nil)
	}
	r := record{
		{"method", m.String()},
		{"reference", m.Reference()},
		{"k", p.k},
		{"eps_total_target", p.epsTotal},
		{"step_delta", p.delta},
	}
	r = append(r, slackField(m, p.comp.deltaPrime)...)
	r = append(r, field{"step_eps", eps}, field{"eps", total.Eps}, field{"delta", total.Delta})
	return writeRecord(w, f, r)
}

type gaussianParams struct {
	sensitivity, sigma float64
	k                  int
	delta, alpha       float64
	alphaSet           bool
	conversion         string
	format             string
}

func newAccountGaussianCmd() *cobra.Command {
	var p gaussianParams
	cmd := &cobra.Command{
		Use:   "gaussian",
		Short: "RDP of k composed Gaussian mechanisms and their (eps, delta)-DP",
		Long: `gaussian prints the Renyi DP of k composed Gaussian mechanisms with L2
sensitivity --sensitivity and noise --sigma, rdp(alpha) = k·alpha·sensitivity²/(2·sigma²)
(Mironov 2017 Prop. 7, composition Prop. 1), and the (eps, delta)-DP it implies
under --conversion: at --alpha if given, else at the exactly optimal alpha.`,
		Example: `  darrm account gaussian --sigma 5 --k 100 --delta 1e-5 --conversion improved`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p.alphaSet = cmd.Flags().Changed("alpha")
			return runGaussian(cmd.OutOrStdout(), p)
		},
	}
	fl := cmd.Flags()
	fl.Float64Var(&p.sensitivity, "sensitivity", 1, "L2 sensitivity (> 0)")
	fl.Float64Var(&p.sigma, "sigma", 0, "noise standard deviation (> 0)")
	fl.IntVar(&p.k, "k", 1, "number of composed mechanisms (>= 1)")
	fl.Float64Var(&p.delta, "delta", 0, "target delta, in (0, 1)")
	fl.Float64Var(&p.alpha, "alpha", 0, "Renyi order (> 1); default: the order that minimises eps")
	fl.StringVar(&p.conversion, "conversion", "paper", "RDP to DP conversion: paper or improved")
	registerFormat(cmd, &p.format)
	_ = cmd.MarkFlagRequired("sigma")
	_ = cmd.MarkFlagRequired("delta")
	return cmd
}

func runGaussian(w io.Writer, p gaussianParams) error {
	f, err := parseFormat(p.format)
	if err != nil {
		return err
	}
	c, err := parseConversion(p.conversion)
	if err != nil {
		return err
	}
	if p.k < 1 {
		return usageErrorf("account gaussian: --k = %d: must be an integer >= 1", p.k)
	}
	one, err := accountant.GaussianRho(p.sensitivity, p.sigma)
	if err != nil {
		return accountError("gaussian", err, nil)
	}
	rho := float64(p.k) * one
	var eps, alpha float64
	if p.alphaSet {
		alpha = p.alpha
		eps, err = accountant.ConvertRDP(rho*alpha, alpha, p.delta, c)
	} else {
		eps, alpha, err = accountant.RhoToDP(rho, p.delta, c)
	}
	if err != nil {
		return accountError("gaussian", err, nil)
	}
	return writeRecord(w, f, record{
		{"sensitivity", p.sensitivity},
		{"sigma", p.sigma},
		{"k", p.k},
		{"rho", rho},
		{"conversion", c.String()},
		{"reference", c.Reference()},
		{"alpha", alpha},
		{"rdp", rho * alpha},
		{"eps", eps},
		{"delta", p.delta},
	})
}

type gnmaxParams struct {
	target     accountant.Guarantee
	method     string
	conversion string
	format     string
}

func newAccountGNMaxCmd() *cobra.Command {
	var p gnmaxParams
	cmd := &cobra.Command{
		Use:   "gnmax",
		Short: "Noise sigma of GNMax for a per-query (eps, delta) target",
		Long: `gnmax prints the noise sigma with which GNMax, which is (lambda, lambda/sigma²)-RDP,
is (eps, delta)-DP per query, and the lambda used. --method grid is the paper's
search (App. B.4.1: lambda from log(1/delta)/eps + 1 to 500 in steps of 0.5, with
Theorem B.4.1's conversion); --method exact minimises over lambda exactly, with
--conversion paper (the same objective) or improved.`,
		Example: `  darrm account gnmax --eps 0.2676 --delta 3e-4 --method grid --format json
  darrm account gnmax --eps 0.2676 --delta 3e-4 --method exact --conversion improved`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runGNMax(cmd.OutOrStdout(), p) },
	}
	fl := cmd.Flags()
	fl.Float64Var(&p.target.Eps, "eps", 0, "per-query eps (> 0)")
	fl.Float64Var(&p.target.Delta, "delta", 0, "per-query delta, in (0, 1)")
	fl.StringVar(&p.method, "method", "exact", "grid (the paper's search) or exact")
	fl.StringVar(&p.conversion, "conversion", "paper", "RDP to DP conversion for --method exact: paper or improved")
	registerFormat(cmd, &p.format)
	_ = cmd.MarkFlagRequired("eps")
	_ = cmd.MarkFlagRequired("delta")
	return cmd
}

func runGNMax(w io.Writer, p gnmaxParams) error {
	f, err := parseFormat(p.format)
	if err != nil {
		return err
	}
	c, err := parseConversion(p.conversion)
	if err != nil {
		return err
	}
	var sigma, lambda float64
	reference := c.Reference()
	switch p.method {
	case "grid":
		if c != accountant.PaperConversion {
			return usageErrorf("account gnmax: --method grid is the paper's search and uses --conversion paper only")
		}
		reference = "App. B.4.1 grid search, " + reference
		sigma, lambda, err = accountant.GNMaxSigmaGrid(p.target)
	case "exact":
		sigma, lambda, err = accountant.GNMaxSigma(p.target, c)
	default:
		return usageErrorf("--method %q: must be one of grid, exact", p.method)
	}
	if err != nil {
		return accountError("gnmax", err, nil)
	}
	return writeRecord(w, f, record{
		{"method", p.method},
		{"conversion", c.String()},
		{"reference", reference},
		{"eps", p.target.Eps},
		{"delta", p.target.Delta},
		{"sigma", sigma},
		{"lambda", lambda},
		{"rdp", lambda / (sigma * sigma)},
	})
}

type shufflegParams struct {
	algorithms []string
	calibrate  bool // --eps given: find sigma; else --sigma given: find eps
	eps        []float64
	sigma      float64
	delta      float64
	epochs     int
	s, n, nd   int
	g          float64
	format     string
}

func newAccountShuffleGCmd() *cobra.Command {
	var p shufflegParams
	cmd := &cobra.Command{
		Use:   "shuffleg",
		Short: "Noise calibration of DP-ShuffleG, Priv-Pub, Pub-Priv and Interleaved",
		Long: `shuffleg calibrates the noise of the DP-ShuffleG algorithms (Lemma 4.5.2,
Lemma 4.6.2). With --eps it prints, for each algorithm and eps, the smallest
sigma meeting (eps, delta): with the paper's conversion at Table 4.3's alpha,
at the exactly optimal alpha, and with the improved conversion; "ratio" is
sigma over the paper conversion's at the optimal alpha. With --sigma it prints
the eps that noise gives under each conversion.

Each private epoch is (alpha, 2·alpha·G²/sigma²)-RDP (divided by n + 1 - n_d for
Interleaved); the private epochs are K (dp-shuffleg, interleaved), S (priv-pub)
and K - S (pub-priv).`,
		Example: `  darrm account shuffleg --algorithm all --eps 1,5,10 --delta 1e-6 --G 10 --epochs 50 --S 25 --n 1000 --nd 500
  darrm account shuffleg --algorithm interleaved --sigma 7 --delta 1e-6 --G 10 --epochs 50 --n 1000 --nd 500`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("eps") == cmd.Flags().Changed("sigma") {
				return usageErrorf("account shuffleg: give exactly one of --eps (calibrate sigma) and --sigma (compute eps)")
			}
			p.calibrate = cmd.Flags().Changed("eps")
			return runShuffleG(cmd.OutOrStdout(), p)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&p.algorithms, "algorithm", []string{"dp-shuffleg"}, "dp-shuffleg, priv-pub, pub-priv, interleaved, or all (comma-separated)")
	fl.Float64SliceVar(&p.eps, "eps", nil, "target eps (> 0), comma-separated for several")
	fl.Float64Var(&p.sigma, "sigma", 0, "noise standard deviation (> 0): print the eps it gives")
	fl.Float64Var(&p.delta, "delta", 0, "target delta, in (0, 1)")
	fl.Float64Var(&p.g, "G", 0, "Lipschitz constant / gradient clipping norm (> 0)")
	fl.IntVar(&p.epochs, "epochs", 0, "number of epochs K (>= 1)")
	fl.IntVar(&p.s, "S", 0, "priv-pub, pub-priv: epochs before the switch, in [1, K-1]")
	fl.IntVar(&p.n, "n", 0, "interleaved: steps per epoch n")
	fl.IntVar(&p.nd, "nd", 0, "interleaved: private steps per epoch n_d, in [1, n]")
	registerFormat(cmd, &p.format)
	for _, name := range []string{"delta", "G", "epochs"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

func runShuffleG(w io.Writer, p shufflegParams) error {
	f, err := parseFormat(p.format)
	if err != nil {
		return err
	}
	var algs []shuffleg.Algorithm
	for _, s := range p.algorithms {
		if s == "all" {
			algs = append(algs, shuffleg.DPShuffleG, shuffleg.PrivPub, shuffleg.PubPriv, shuffleg.Interleaved)
			continue
		}
		a, err := shuffleg.ParseAlgorithm(s)
		if err != nil {
			return usageErrorf("--%v (or all)", err)
		}
		algs = append(algs, a)
	}
	common := record{{"delta", p.delta}, {"G", p.g}, {"epochs", p.epochs}}
	for _, a := range algs {
		switch a {
		case shuffleg.PrivPub, shuffleg.PubPriv:
			common = append(common, field{"S", p.s})
		case shuffleg.Interleaved:
			common = append(common, field{"n", p.n}, field{"n_d", p.nd})
		}
	}
	common = dedup(common)
	var rows []record
	for _, a := range algs {
		plan, err := shuffleg.AccountingPlan(a, p.epochs, p.s, p.n, p.nd)
		if err != nil {
			return accountError("shuffleg", err, nil)
		}
		run := plan.PABI(p.g)
		if !p.calibrate {
			for _, c := range []accountant.Conversion{accountant.PaperConversion, accountant.ImprovedConversion} {
				eps, alpha, err := run.Eps(p.sigma, p.delta, c)
				if err != nil {
					return accountError("shuffleg", err, nil)
				}
				rows = append(rows, record{
					{"algorithm", a.String()}, {"private_epochs", run.Epochs}, {"sigma", p.sigma},
					{"conversion", c.String()}, {"alpha", alpha}, {"eps", eps}, {"reference", a.Reference() + "; " + c.Reference()},
				})
			}
			continue
		}
		for _, eps := range p.eps {
			target := accountant.Guarantee{Eps: eps, Delta: p.delta}
			base, baseAlpha, err := run.Sigma(target, accountant.PaperConversion)
			if err != nil {
				return accountError("shuffleg", err, nil)
			}
			t43, t43Alpha, err := run.SigmaTable43(target)
			if err != nil {
				return accountError("shuffleg", err, nil)
			}
			improved, impAlpha, err := run.Sigma(target, accountant.ImprovedConversion)
			if err != nil {
				return accountError("shuffleg", err, nil)
			}
			for _, v := range []struct {
				conv        accountant.Conversion
				rule        string
				sigma, alph float64
			}{
				{accountant.PaperConversion, "table-4.3", t43, t43Alpha},
				{accountant.PaperConversion, "optimal", base, baseAlpha},
				{accountant.ImprovedConversion, "optimal", improved, impAlpha},
			} {
				rows = append(rows, record{
					{"algorithm", a.String()}, {"private_epochs", run.Epochs}, {"eps", eps},
					{"conversion", v.conv.String()}, {"alpha_rule", v.rule}, {"alpha", v.alph},
					{"sigma", v.sigma}, {"ratio", v.sigma / base},
					{"reference", a.Reference() + "; " + v.conv.Reference()},
				})
			}
		}
	}
	return writeRecords(w, f, common, rows)
}

// dedup drops repeated keys, keeping the first.
func dedup(r record) record {
	seen := map[string]bool{}
	var out record
	for _, f := range r {
		if !seen[f.key] {
			seen[f.key] = true
			out = append(out, f)
		}
	}
	return out
}

type rrParams struct {
	K       int
	teacher accountant.Guarantee
	m       float64
	delta   float64
	comp    compositionFlags
	format  string
}

func newAccountRRCmd() *cobra.Command {
	var p rrParams
	cmd := &cobra.Command{
		Use:   "rr",
		Short: "Randomized response's p_const for the majority of K private teachers",
		Long: `rr prints tau and lambda (the majority of K (eps, Delta)-DP teachers is
(tau·eps, lambda)-DP by the chosen composition, App. B.4) and the largest
p_const with which randomized response on it is (m·eps, delta)-DP (Lemma B.1.1).
--delta defaults to 1 - (1 - Delta)^m (Section 3.7.1).`,
		Example: `  darrm account rr --K 35 --eps 0.1 --Delta 1e-5 --m 6.4521 --delta 0.1001 --method general --delta-prime 0.1`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("delta") {
				p.delta = -math.Expm1(p.m * math.Log1p(-p.teacher.Delta))
			}
			return runRR(cmd.OutOrStdout(), p)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&p.K, "K", 0, "number of teachers (>= 1)")
	fl.Float64Var(&p.teacher.Eps, "eps", 0, "eps of each teacher (> 0)")
	fl.Float64Var(&p.teacher.Delta, "Delta", 0, "delta of each teacher, in [0, 1)")
	fl.Float64Var(&p.m, "m", 0, "privacy allowance: the output is (m·eps, delta)-DP (> 0)")
	fl.Float64Var(&p.delta, "delta", 0, "delta of the output, in [0, 1) (default 1 - (1 - Delta)^m)")
	p.comp.register(cmd, "composition for tau, lambda")
	registerFormat(cmd, &p.format)
	for _, name := range []string{"K", "eps", "m"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

func runRR(w io.Writer, p rrParams) error {
	f, m, err := p.comp.parse(p.format)
	if err != nil {
		return err
	}
	rename := map[string]string{"k": "--K", "delta": "--Delta"}
	tau, lambda, err := accountant.RRParams(p.teacher, p.K, m, p.comp.deltaPrime)
	if err != nil {
		return accountError("rr", err, rename)
	}
	pc, err := accountant.PConst(p.teacher.Eps, p.m, p.delta, tau, lambda)
	if err != nil {
		return accountError("rr", err, map[string]string{
			"lambda": "lambda (the composed delta of the K teachers)",
			"tau":    "tau (the composed eps of the K teachers over eps)",
		})
	}
	r := record{
		{"K", p.K},
		{"eps", p.teacher.Eps},
		{"Delta", p.teacher.Delta},
		{"m", p.m},
		{"delta", p.delta},
		{"method", m.String()},
	}
	r = append(r, slackField(m, p.comp.deltaPrime)...)
	r = append(r,
		field{"reference", "Lemma B.1.1; tau, lambda by " + m.Reference()},
		field{"tau", tau},
		field{"lambda", lambda},
		field{"p_const", pc},
	)
	return writeRecord(w, f, r)
}
