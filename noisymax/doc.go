// Package noisymax gives the privacy analyses of PATE's noisy-max
// aggregators: GNMax, Confident-GNMax and LNMax, their noise, noise
// calibrations and data-independent guarantees, as functions of plain
// numbers (Steps: the threshold step and the label step of the GNMax
// family; their settings as mechanisms of release are package
// ensemble's).
//
// GNMax releases the class whose vote count plus Gaussian noise is
// largest; Confident-GNMax first checks with noise that the largest count
// passes a threshold (Papernot, Song, Mironov, Raghunathan, Talwar and
// Erlingsson, "Scalable Private Learning with PATE", ICLR 2018); LNMax adds
// Laplace noise instead (Papernot et al., ICLR 2017). This package derives
// their per-query data-independent Rényi DP, the noise σ
// a per-query target needs (the thesis' grid search, App. B.4.1, its exact
// minimum, and the exact privacy curve of two-class GNMax's bit), and the
// description of each query (accountant.Spend) through which package
// accountant composes a run. Their data-dependent analysis (the PATE
// paper's Theorem 6 and the smooth-sensitivity release GNSS) is package
// pate's account of a vote file.
//
// It is built on accountant, whose guarantees, conversions and
// compositions it uses, and whose error types it reports: a number out of
// its domain is a parameter error, settings that do not go
// together a setting error.
package noisymax
