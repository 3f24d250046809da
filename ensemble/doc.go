// Package ensemble releases private majority votes of K teachers (thesis
// Chapter 3, Problem 3.1.1): one private label per query from the teachers'
// 0/1 votes, with a per-query (ε, δ) guarantee and the argument behind it.
//
// A mechanism is a value of one closed set of types, each with its
// settings (Mechanism): on the teachers' 0/1 votes, each an Aggregator,
//
//   - DaRRM (Algorithm 1) with any noise function gamma that passes the
//     exhaustive certificate (gamma.Verify) for (K, m·ε, δ), and
//     OneVoteDaRRM, DaRRM in the one-vote relation;
//   - RR, randomized response with p_const of Lemma B.1.1 (Algorithm 7);
//   - Subsample and DSub, the majority of s teachers drawn without
//     replacement (Algorithm 8): s = ⌊m⌋, or s = 2⌊m⌋-1 (Theorem 3.5.1);
//   - GNMax (Papernot et al. 2018; App. B.4.1), Gaussian noise on the two
//     class counts with σ from the accountant;
//
// and on vote counts of C classes GNMax, Confident-GNMax (GNMax after a
// noisy threshold step), LNMax and ProgressiveGNMax (fresh noisy
// histograms down a ladder of levels until a gap clears its bar, each draw
// charged to a Gaussian-DP filter before it is drawn: Smith and Thakurta
// 2022). New builds any of them.
//
// Each one is DaRRM with some gamma (Lemmas 3.4.1 and 3.4.3), which Gamma
// returns: Pr[label = majority | L] = (1 + gamma(L))/2 for the vote count L.
// That form gives the exact output distribution and agreement with the majority, the
// certificate of RR and Subsample, and the tests' reference.
//
// Randomness comes from a noise.Source: crypto/rand, read in blocks, for
// private releases; a seeded ChaCha8 stream for experiments, which is not
// for release. The aggregators, Release and ReleaseTo never print, log or return a
// query's un-noised majority or vote count (only Simulate, an experiment
// on synthetic votes, compares labels with it).
//
// The votes come from a votefile.Reader and the labels go to a label file
// of package votefile. Release is a release in one call: from a
// ReleaseSpec (the votes, the mechanism, its gamma's source, the budget,
// the ledger and the sink) it builds and certifies the aggregator, checks
// it against the votes' header, checked once (provenance.CheckHeader,
// ReleaseSpec.Header),
// accounts for it and charges the ledger, and ReleaseTo writes the labels
// under the query limit of the budget; Registry.FromHeader reads a label file's
// header back into its mechanism; Simulate compares the mechanisms on
// synthetic teachers.
//
// Reference: Shuli Jiang, "Communication Efficient and Differentially
// Private Optimization", PhD thesis, Carnegie Mellon University,
// CMU-RI-TR-25-46, 2025 ("the thesis": lemma, section, table and figure
// numbers are its own). Its Chapter 3 and Appendix B are based
// on Jiang, Zhang and Joshi, "Optimized Tradeoffs for Private Prediction
// with Majority Ensembling", TMLR 2024.
package ensemble
