// Package shuffleexp runs the DP-ShuffleG experiments of the thesis'
// Chapter 4 with package shuffleg, as darrm shuffleg and darrm account
// shuffleg state them: an experiment stated by names and numbers (Spec),
// which owns the rules of which parameter applies to which task and
// dataset and the thesis' defaults (Section 4.7.4); repeated seeded runs
// and the learning-rate grid search on all cores (Experiment); their
// report (Report); and the noise of each algorithm under each conversion
// (NoiseRequest, EpsVariants).
//
// It is an experiment runner of the thesis, which darrm's command runs, and
// no part of darrm's library API: Go lets another module import it, but its
// names change with the experiments, without notice (docs/design.md,
// "Packages and layering").
//
// Reference: Shuli Jiang, "Communication Efficient and Differentially
// Private Optimization", PhD thesis, Carnegie Mellon University,
// CMU-RI-TR-25-46, 2025 ("the thesis"), Chapter 4.
package shuffleexp
