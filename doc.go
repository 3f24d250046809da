// Package darrm maps darrm's packages to the tasks they serve, with each
// task's entry points. darrm is a toolkit for optimal private majority
// ensembling (DaRRM), PATE's GNMax family, exact privacy accounting, a
// persistent privacy ledger and the private shuffled gradient methods of
// DP-ShuffleG.
//
// This package holds no code. The command darrm (cmd/darrm) runs every
// task below from the command line; README.md and docs/*.md describe both.
// Packages under internal/ are the experiments' and the tests' plumbing,
// not part of the API.
//
// # Solve and certify gamma
//
// Package optimal computes gamma_opt, DaRRM's noise function of maximal
// utility (optimal.Solve; thesis Section 3.6) for a problem of package
// constraints (constraints.New: K teachers, m, eps, Delta;
// constraints.NewOneVote for non-private teachers on disjoint shares);
// optimal.Source gives a release its gamma from the cache, the solver or
// a table. Package gamma holds the baselines (gamma.Sub, gamma.DSub,
// gamma.Const), the exhaustive certificate that every gamma darrm uses
// must pass (gamma.Verify, gamma.Certify) and utility measures
// (gamma.Gamma.TVError). Package cache stores certified gammas on disk
// (cache.Open). Solving is the one step that needs cgo (internal/lp, HiGHS).
//
// # Release labels
//
// Package ensemble releases private majority votes: a mechanism is a value
// with its settings that describes itself (ensemble.Mechanism: its
// settings' tags, its header, its plan), darrm's registered in
// ensemble.Mechanisms beside any a program adds, ensemble.New builds it,
// and ensemble.Release is a release in one call, from an
// ensemble.ReleaseSpec (the votes, the mechanism, the teachers'
// guarantee, the budget, the ledger, the label sink;
// ensemble.ExampleRelease_ledger: from a NumPy file with its sidecar
// to labels on a ledger); ensemble.ReleaseTo writes the labels of an aggregator
// already built; ensemble.Simulate compares the mechanisms on synthetic
// teachers. Package noise draws the randomness: noise.NewSource from
// crypto/rand, noise.NewSeededSource for experiments not for release.
//
// # Account privacy
//
// Package accountant composes guarantees: accountant.ComposeRun totals a
// run of steps described by their mechanism (an accountant.Spend),
// accountant.Composition.Compose steps known only by their (ε, δ), an
// accountant.Conversion turns Rényi DP into (ε, δ)
// (accountant.Conversion.ConvertRDP), and accountant.Account is the account of a
// release: what a budget allows (accountant.Account.MaxSteps) and the total
// to publish (accountant.Account.Publish).
//
// # Keep a ledger
//
// Package ledger keeps a persistent, crash-safe record of the privacy spent
// on one teacher ensemble and enforces its total budget, in a file or in
// PostgreSQL: ledger.Create makes one for the ensemble of a vote file's
// header (ledger.VotesHeader), and ledger.Open opens one, a file or a
// PostgreSQL ledger alike, for a run or to read it (Options.ReadOnly),
// with the same ledger.Options (the folder of your records, the analyst,
// the callbacks); the caller opens it for a run and a release charges it
// before its labels leave (ensemble.ReleaseSpec.Ledger).
//
// # Plan from a budget
//
// Package plan inverts the accountant for a release: plan.Make counts the
// queries a budget buys, or finds the parameters that let a number of
// queries fit it (scored on proxy votes when given), and plan.Compare
// scores the mechanisms on proxy votes.
//
// # PATE analyses
//
// Package noisymax holds the analyses of GNMax and Confident-GNMax's
// noise and LNMax's, as functions of plain numbers (noisymax.Noise,
// noisymax.CalibrateGNMax, noisymax.LNMaxSpend); their settings are
// ensemble's mechanisms. Package pate accounts for
// a release of them, data-independently and data-dependently
// (pate.Account, with the smooth-sensitivity release
// pate.AccountResult.ReleaseOnce), and labels C-class votes (pate.Label).
//
// # Read and write vote files
//
// Package votefile reads vote files, CSV, JSON lines or NumPy, with their
// metadata header (votefile.Open, from a file or a reader, with the
// header of its sidecar in one call; votefile.ReadRows for votes held in
// memory), writes them (votefile.WriteVotes,
// votefile.WriteCounts) and reads and writes label files
// (votefile.NewLabelReader, votefile.NewLabelWriter). Package provenance
// checks what a release states of its teachers against the header
// (provenance.Check).
//
// # DP-ShuffleG
//
// Package shuffleg implements the private shuffled gradient methods of the
// thesis' Chapter 4: shuffleg.NewProblem on a private and a public data
// set, shuffleg.NewPlan to schedule an algorithm, shuffleg.Plan.Calibrate
// for its noise (through accountant.PABI) and shuffleg.Run to train.
//
// Reference: Shuli Jiang, "Communication Efficient and Differentially Private
// Optimization", PhD thesis, Carnegie Mellon University, CMU-RI-TR-25-46,
// 2025 ("the thesis": lemma, section, table and figure numbers are its own).
// Chapter 3 is based on Jiang, Zhang and Joshi, "Optimized Tradeoffs for
// Private Prediction with Majority Ensembling", TMLR 2024; Chapter 4 on
// Jiang, Sharma, Wu and Joshi, "Improving the Convergence of Private
// Shuffled Gradient Methods with Public Data", 2026.
package darrm
