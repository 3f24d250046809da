package main

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/internal/decimal"
)

// The baselines solve --compare sets beside gamma_opt: gamma.Baselines,
// and randomized response's (gamma.RRBaseline) with the composition of
// --rr-composition.

// omittedBaselines returns the baselines that solve --compare leaves out at
// problem p, each with the reason: gamma_DSub unless the teachers and the
// release are pure DP (Theorem 3.5.1 is a result for pure DP); in the
// one-vote relation gamma_Sub and gamma_DSub, which are not private there
// for the deltas of interest. The reason prints delta as the problem's
// description does (decimal.FormatBound), so one output says it once.
func omittedBaselines(p constraints.Problem) []report.Omitted {
	if p.Relation == accountant.OneVote {
		return append([]report.Omitted(nil), oneVoteOmitted...)
	}
	if p.Delta == 0 && p.TargetDelta == 0 {
		return nil
	}
	return []report.Omitted{{Name: "dsub", Reason: fmt.Sprintf("Theorem 3.5.1 makes it (m·eps)-DP for pure-DP teachers only (Delta = delta = 0); here Delta = %g and delta = %s", p.Delta, decimal.FormatBound(p.TargetDelta))}}
}

// oneVoteOmitted are the baselines of DaRRM's relation that the one-vote
// relation leaves out, and why.
var oneVoteOmitted = []report.Omitted{
	{Name: "sub", Reason: "subsampling s teachers releases 1 with probability 0 below (s+1)/2 votes for 1 and a positive one at (s+1)/2 (Lemma 3.4.1), a ratio no eps bounds: in the one-vote relation it is private only for delta at least that probability"},
	{Name: "dsub", Reason: "gamma_DSub subsamples 2m-1 teachers and fails as gamma_Sub does; Theorem 3.5.1 is a result for private teachers"},
}
