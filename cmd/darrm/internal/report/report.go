// Package report holds the documents darrm's commands print: one type per
// command, whose JSON field names are stable, and its table and CSV
// renderings. Solve's and transfer's documents draw their figures too
// (figures.go). Commands build a document from library results, with its
// constructor where it has one (NewSolve, NewAggregate, NewSimulate,
// NewTransfer, NewLedgerShow, MergeShards), and call its Write method.
// Privacy quantities come from the libraries: NewAggregate has the
// accountant compose the released labels' totals (accountant.Account.Totals) and
// the ledger say its state; and MergeShards has gamma.MergeShards combine a certificate's
// shards. The account documents put the accountant's results side by side
// (the RDP ε at the order used, a ratio of two σ), and compute nothing
// else.
package report

import (
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/plural"
)

// Document is what a command prints: one of this package's documents,
// which writes itself in a format (table, JSON or CSV).
type Document interface {
	Write(w io.Writer, f cliout.Format) error
}

// Problem is a DaRRM problem (K, m, eps, Delta, delta) as outputs echo it,
// with which values took their defaults.
type Problem struct {
	K            int     `json:"K"`
	M            float64 `json:"m"`
	Eps          float64 `json:"eps"`
	Delta        float64 `json:"Delta"`
	TargetDelta  float64 `json:"delta"`
	MDefault     bool    `json:"m_is_default"`
	DeltaDefault bool    `json:"delta_is_default"`
	// Relation is the neighbouring relation, omitted for DaRRM's
	// (private-teachers), as in the documents of earlier versions. In the
	// one-vote relation m is 1, Delta 0 and eps the release's.
	Relation accountant.Relation `json:"relation,omitempty"`
}

// NewProblem is the problem p as outputs echo it.
func NewProblem(p resolve.Resolved) Problem {
	return Problem{K: p.K, M: p.M, Eps: p.Eps, Delta: p.Delta, TargetDelta: p.TargetDelta, MDefault: p.MDefault, DeltaDefault: p.DeltaDefault, Relation: p.Relation}
}

// Params is the problem the document states, for the library.
func (o Problem) Params() constraints.Problem {
	return constraints.Problem{K: o.K, M: o.M, Eps: o.Eps, Delta: o.Delta, TargetDelta: o.TargetDelta, Relation: o.Relation}
}

// Describe says the problem in words, marking defaults.
func (o Problem) Describe() string {
	if o.Relation == accountant.OneVote {
		deltaNote := ""
		if o.DeltaDefault {
			deltaNote = " (default)"
		}
		return fmt.Sprintf("K = %d %s, not necessarily private, on disjoint shares (one-vote relation: neighbouring vote vectors differ in one vote); each release (eps, delta)-DP with eps = %s, delta = %s%s",
			o.K, plural.Word(o.K, "teacher", "teachers"), decimal.FormatBound(o.Eps), decimal.FormatBound(o.TargetDelta), deltaNote)
	}
	mNote, deltaNote := "", ""
	if o.MDefault {
		mNote = " (default)"
	}
	if o.DeltaDefault {
		deltaNote = " = 1-(1-Delta)^m (default)"
	}
	return fmt.Sprintf("K = %d %s, each (eps = %g, Delta = %g)-DP; each release (m·eps, delta)-DP with m = %g%s, m·eps = %s, delta = %s%s",
		o.K, plural.Word(o.K, "teacher", "teachers"), o.Eps, o.Delta, o.M, mNote, decimal.FormatBound(o.Params().MEps()), decimal.FormatBound(o.TargetDelta), deltaNote)
}

// Verdict is a certificate's status in capitals, as tables show it.
func Verdict(s gamma.Status) string {
	switch s {
	case gamma.Certified:
		return "CERTIFIED"
	case gamma.Tight:
		return "TIGHT: not certified"
	}
	return "VIOLATED: not (m·eps, delta)-DP"
}

// writeCertificate prints a certificate in words.
func writeCertificate(t *cliout.Text, title string, c gamma.Certificate) {
	why := map[gamma.Status]string{
		gamma.Certified: "max f + rounding bound <= budget",
		gamma.Tight:     "max f equals the budget to within rounding",
		gamma.Violated:  "max f > budget",
	}[c.Status]
	t.Line("%s: %s: %s", title, Verdict(c.Status), why)
	if c.Relation == accountant.OneVote {
		t.Line("  max f = %.15g, budget e^eps - 1 + 2·delta = %.15g, ratio %.15f, rounding bound %.2g", c.MaxF, c.Budget, c.Ratio, c.ErrBound)
		if len(c.Worst) == 4 {
			// Corners (1,0) and (0,1): the one teacher whose vote changes.
			a, b := c.Worst[1]+c.Worst[2], c.Worst[1]+c.Worst[3]
			t.Line("  worst case: vote counts L = %d and L' = %d, output 1 (or %d and %d, output 0); %s pairs of neighbouring vote counts, %s inequalities, checked",
				a, b, c.Worst[0]+c.Worst[3], c.Worst[0]+c.Worst[2], groupDigits(c.Configs.String()), groupDigits(new(big.Int).Mul(c.Configs, big.NewInt(2)).String()))
		}
		return
	}
	t.Line("  max f = %.15g, budget e^(m·eps) - 1 + 2·delta = %.15g, ratio %.15f, rounding bound %.2g", c.MaxF, c.Budget, c.Ratio, c.ErrBound)
	var parts []string
	for j, n := range c.Worst {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d × (%.6g, %.6g)", n, c.Corners[j].P, c.Corners[j].Q))
		}
	}
	t.Line("  worst case: %s; %s corner multisets covered exhaustively", strings.Join(parts, " + "), groupDigits(c.Configs.String()))
}

// groupDigits writes 31824 as 31,824.
func groupDigits(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// g6 formats a number with 6 significant digits, as tables show them.
func g6(x float64) string { return cliout.FloatN(x, 6) }
