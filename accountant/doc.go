// Package accountant computes privacy guarantees for darrm: the privacy
// curves of a described mechanism and their composition ((ε, δ) per step,
// Rényi DP, exact privacy profiles, filters for parameters chosen
// adaptively), the conversion of Rényi DP to (ε, δ)-DP, the teachers'
// post-processing cap, and the noise calibrations of the DP-ShuffleG
// family and randomized response.
//
// Compose a run of steps, each described by its mechanism (a Spend), with
// ComposeRun or an Account (of several runs fixed in advance: a
// schedule), and a ledger's steps with a Filter; Composition.Compose and
// its variants compose a step known only by its (ε, δ). The analyses of
// PATE's noisy-max aggregators (GNMax, Confident-GNMax, LNMax) are package
// noisymax's, built on this one.
//
// The package keeps nothing from one call to the next of its own: a
// function that composes takes a *Memo, its caller's, which keeps what it
// computed for the calls that ask the same again (a release's count, its
// total and its ledger's charges compose the same step); nil keeps
// nothing.
//
// Every function cites the result it implements. Formulas of the thesis
// (Chapter 3 and Appendix B for private majority ensembling, Chapter 4 for
// DP-ShuffleG) are the defaults; tighter alternatives (the optimal composition of
// Kairouz, Oh and Viswanath; the improved RDP conversion of Canonne, Kamath
// and Steinke / Balle et al.) are offered beside them and are used only when
// asked for.
//
// Bad input (NaN, ±Inf, out-of-domain values) is reported as a parameter error
// naming the parameter, its value and the rule; no function clamps an input
// or panics on one. Settings that do not go together are reported as a
// setting error. Callers tell the two by behaviour (docs/design.md,
// "Conventions"): a bad parameter has Param() (name string, value any,
// rule string), a setting Setting() (name, value, rule string), as the
// parameter errors of the other packages do.
//
// Of darrm it imports only the bound on the scale of discrete noise that
// the exact samplers take (discrete.MaxScale), which the settings of the
// mechanisms that draw it must respect.
//
// Reference: Shuli Jiang, "Communication Efficient and Differentially
// Private Optimization", PhD thesis, Carnegie Mellon University,
// CMU-RI-TR-25-46, 2025 ("the thesis": lemma, section, table and figure
// numbers are its own).
// Chapter 3 is based on Jiang, Zhang and Joshi, "Optimized Tradeoffs for
// Private Prediction with Majority Ensembling", TMLR 2024; Chapter 4 on
// Jiang, Sharma, Wu and Joshi, "Improving the Convergence of Private
// Shuffled Gradient Methods with Public Data", 2026.
package accountant
