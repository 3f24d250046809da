package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/plan"
	"github.com/darrm/darrm/votefile"
)

// Plan is the document of darrm plan: a mechanism's parameters, each
// under the name of the aggregate flag it feeds (threshold, sigma1,
// sigma2, target_eps, m, delta, ...), the queries that fit the budget,
// the total to publish of the plan's target and its theorem (one run's:
// at the budget's delta, the least eps of every composition valid for the
// run; a new ledger's, for a plan for one: its budget), what a
// run charged to a new ledger of that budget may release and spend, and,
// for a plan of parameters, what it fits the queries to (one run or a new
// ledger), the parameter chosen, its neighbour 5% more generous that does
// not fit, the expected utility with what it was computed on, and for a
// ledger the ledger init that declares the planned labels.
type Plan struct {
	Plan   plan.Plan
	Chosen bool   // a plan of parameters, not a count
	Tuning string // how the proxy votes were used, if any
	// LedgerInit is the darrm ledger init that declares the planned
	// labels as a new ledger's use, for a plan for a ledger (nil else):
	// its words, each quoted for a shell.
	LedgerInit []string
	// Analyst is whom the plan is for, when it is for an analyst's share
	// of a new ledger (Plan.Request.Share).
	Analyst string
}

// Write prints the document in format f.
func (d Plan) Write(w io.Writer, f cliout.Format) error {
	p := d.Plan
	r := p.Request
	c := p.Count
	rec := cliout.Record{field("mechanism", string(r.Mechanism.Name())), field("K", r.K)}
	in := ensemble.VotesOf(r.Mechanism, r.Classes)
	if in == votefile.ManyClasses {
		rec = append(rec, field("classes", r.Classes))
	}
	// Its settings that are numbers, by their flags, with the teachers'
	// guarantee of which m·eps is the target, and the per-query delta
	// last.
	// A ledger that declares the planned use releases only at its
	// settings to the last digit, which its ledger init line states: the
	// table states them so too.
	ns, exact := numbers(r.Mechanism, in), d.LedgerInit != nil
	for _, n := range ns {
		switch {
		case n.flag == "delta":
		case n.flag == "m" && r.Teachers != nil:
			rec = append(rec, field("m", settingIn(f, n, exact)), field("eps", r.Teachers.Eps), field("Delta", r.Teachers.Delta))
		default:
			rec = append(rec, field(strings.ReplaceAll(n.flag, "-", "_"), settingIn(f, n, exact)))
		}
	}
	if hasDelta(ns) {
		rec = append(rec, field("delta", c.PerQuery.Delta))
	}
	queries := c.Run
	if d.Chosen {
		queries = p.Queries
	}
	// A total is printed as every command prints one: rounded up in a
	// table, exact in JSON and CSV; a count at accountant.CountLimit says
	// in a table that the accountant counts no further.
	count := func(n int) any {
		switch {
		case f == cliout.Table && n == accountant.Unlimited:
			return "every query (the teachers' cap is within the budget)"
		case f == cliout.Table && n >= accountant.CountLimit:
			return Allowed(n, "query", "queries")
		}
		return n
	}
	rec = append(rec, field("queries", count(queries)), field("budget_eps", r.Budget.Eps), field("budget_delta", r.Budget.Delta))
	// The total to publish is the plan's target's: for a plan for a
	// ledger, what the ledger publishes after the planned labels, its
	// budget (LedgerWhy), not what they spend; else one run's of
	// run_queries.
	publish, why := c.Total, "one run of run_queries queries with these parameters: the least eps at the budget's delta of every composition valid for a run whose parameters are fixed before its first query"
	switch {
	case c.Total.Cap != nil:
		why = "the teachers are fixed models (--kind fixed): their cap, within the budget at its delta, bounds every release from them, however many, " +
			"in one run or on a ledger, and is their only bound (composing per-query guarantees is not proved for fixed teachers)"
	case d.Chosen && r.For == plan.ForLedger:
		publish, why = c.LedgerPublish, LedgerWhy(c.LedgerPublish)
	}
	rec = append(rec, field("per_query_eps", BoundIn(f, c.PerQuery.Eps)), field("per_query_delta", BoundIn(f, c.PerQuery.Delta)),
		field("run_queries", count(c.Run)), field("publish_eps", BoundIn(f, publish.Guarantee.Eps)), field("publish_delta", BoundIn(f, publish.Guarantee.Delta)),
		field("publish_method", publish.Name()), field("publish_reference", publish.Reference()), field("publish_why", why),
		field("ledger_filter", c.Filter.String()), field("ledger_queries", count(c.Ledger)),
		field("ledger_spent_eps", BoundIn(f, c.LedgerTotal.Eps)), field("ledger_spent_delta", BoundIn(f, c.LedgerTotal.Delta)), field("ledger_reference", filterReference(c.Filter)))
	if publish.Inexact != "" {
		rec = append(rec, field("publish_note", publish.Inexact))
	}
	if c.LedgerNote != "" {
		rec = append(rec, field("ledger_note", c.LedgerNote))
	}
	if r.Share != 0 {
		// ledger_queries and ledger_spent are the analyst's, against the
		// share; the ledger publishes its one budget, whoever spends it.
		rec = append(rec, field("analyst", d.Analyst), field("share", r.Share), field("ledger_all_queries", count(c.LedgerAll)),
			field("share_note", "ledger_queries are what the share allows the analyst at release (of a declared use, floor(share x ledger_all_queries)), ledger_spent what they spend against the share; a share is an allocation inside the ledger's one budget, not a guarantee: what is published is the ledger's"))
	}
	if d.Chosen {
		rec = append(rec, field("for", r.For.String()), field("planned", p.Flag))
		// At the largest value allowed (m = K) there is no neighbour: the
		// values are absent (null, empty) and at_limit says why.
		var nb, nq any
		if !p.AtLimit {
			nb, nq = p.Neighbour, p.NeighbourRun
		}
		rec = append(rec, field("neighbour", nb), field("neighbour_queries", nq), field("at_limit", p.AtLimit))
	}
	if u := p.Utility; u != nil {
		rec = append(rec, field("expected_correct", u.Correct), field("expected_answered", u.Answered), field("utility_on", u.On))
		if len(u.Thresholds) > 0 {
			rec = append(rec, field("thresholds", thresholdsText(u.Thresholds)), field("threshold_note", thresholdNote+gnmaxNote))
		}
	}
	if d.Tuning != "" {
		rec = append(rec, field("tuning", d.Tuning))
	}
	if d.LedgerInit != nil && f != cliout.Table {
		rec = append(rec, field("ledger_init", strings.Join(d.LedgerInit, " ")))
	}
	// A table keeps within cliout.Width columns: a long text (a theorem,
	// a note) is a numbered note under it (cliout.WriteRecord).
	if err := cliout.WriteRecord(w, f, rec); err != nil || d.LedgerInit == nil || f != cliout.Table {
		return err
	}
	// The command, to be run as printed: its lines continued, not wrapped.
	_, err := fmt.Fprintf(w, "\nTo make the ledger (LEDGER: a new file; VOTES: the votes to release, whose header binds it):\n%s\n",
		ShellLines(d.LedgerInit, cliout.Width))
	return err
}

// settingIn returns a mechanism's setting n as format f prints it: in a
// table to six digits, rounded toward more noise (number.text), unless
// exact.
func settingIn(f cliout.Format, n number, exact bool) any {
	switch {
	case f != cliout.Table:
		return n.v
	case exact:
		return cliout.Float(n.v)
	}
	return n.text(6)
}

// text says the setting n to digits significant digits for a table,
// rounded as its field's tag says, toward more noise, so that the value
// copied into aggregate releases the queries planned (to the nearest, a
// target_eps of 8/7 printed 1.14286 released 6 of the 7 queries planned,
// a laplace-scale of 48.7427 printed 48.74 299 of 300); a setting of no
// stated direction exactly.
func (n number) text(digits int) string {
	switch n.round {
	case roundDown:
		return decimal.Format(n.v, digits, false, 0)
	case roundUp:
		return decimal.Format(n.v, digits, true, 0)
	}
	return cliout.Float(n.v)
}

// thresholdNote says why a Confident-GNMax plan's threshold is as low as
// its least precision allows.
const thresholdNote = "every query is charged both steps, answered or not: a higher threshold only withholds labels, " +
	"so it costs correct labels and buys precision (--min-precision)"

// gnmaxNote says, beside a Confident-GNMax plan alone, where its
// threshold step's budget could go.
const gnmaxNote = "; the threshold step's budget spent on the label instead is GNMax (darrm plan --votes without --mechanism compares them)"

// thresholdsText says what a Confident-GNMax plan expects at its threshold
// and at higher ones: the expected correct of answered labels and the
// precision at each.
func thresholdsText(ts []plan.ThresholdUtility) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "T = %v: %.1f correct of %.1f answered (precision %.3f)", t.Threshold, t.Correct, t.Answered, t.Precision())
	}
	return b.String()
}

// filterReference names the theorem of a ledger's filter.
func filterReference(f accountant.Method) string {
	if f == accountant.Simple {
		return "simple composition as a filter (Rogers, Roth, Ullman and Vadhan 2016, Thm 5.1)"
	}
	return f.Reference()
}

// ShellLines joins the words of a shell command into lines of at most
// width columns where it can, a flag kept with its value, each line but
// the last ended by " \\" and the next indented, so that the command
// runs as printed.
func ShellLines(words []string, width int) string {
	var groups []string
	for i := 0; i < len(words); i++ {
		g := words[i]
		if strings.HasPrefix(g, "--") && !strings.Contains(g, "=") && i+1 < len(words) && !strings.HasPrefix(words[i+1], "--") {
			i++
			g += " " + words[i]
		}
		groups = append(groups, g)
	}
	var b strings.Builder
	n := 0
	for i, g := range groups {
		switch {
		case i > 0 && n+1+len(g)+2 > width:
			b.WriteString(" \\\n   ")
			n = 3
		case i > 0:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(g)
		n += len(g)
	}
	return b.String()
}
