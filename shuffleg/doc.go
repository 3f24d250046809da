// Package shuffleg implements the private shuffled gradient methods of the
// thesis' Chapter 4: one engine for the generalised shuffled
// gradient framework (Algorithm 3), instantiated as DP-ShuffleG (Section
// 4.5), Priv-Pub-ShuffleG, Pub-Priv-ShuffleG and Interleaved-ShuffleG
// (Algorithms 4-6) and the Public Only baseline (Section 4.7.3), each with
// the IG, SO and RR sample orders (Algorithm 2).
//
// Every gradient step clips the per-sample gradient to a norm G (the
// Lipschitz constant of Assumption 4.4.3) and the regulariser ψ is applied
// once per epoch by its proximal operator (line 12 of Algorithm 3). The noise
// standard deviation of each algorithm is calibrated to a target (ε, δ) by
// the shared accountant from the per-epoch Rényi DP of Lemmas 4.5.2 and
// 4.6.2; see Plan.Calibrate.
//
// A Problem is a Task (a Loss and a Regularizer) on a private Dataset and
// an optional public one, with its non-private optimum computed to high
// accuracy (Problem.Optimum). NewPlan schedules an algorithm on it,
// Plan.Calibrate calibrates its noise, and Run trains one model and
// returns the per-epoch objective G(x; D) on the private data and its
// excess over the optimum (Trace).
//
// Reference: Shuli Jiang, "Communication Efficient and Differentially
// Private Optimization", PhD thesis, Carnegie Mellon University,
// CMU-RI-TR-25-46, 2025 ("the thesis": lemma, section, table and figure
// numbers are its own), Chapter 4 and Appendix C; and Jiang, Sharma, Wu and
// Joshi, "Improving the Convergence of Private Shuffled Gradient Methods
// with Public Data", 2026 ("the DP-ShuffleG paper").
package shuffleg
