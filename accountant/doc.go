// Package accountant computes privacy guarantees for darrm: composition of
// (ε, δ)-DP mechanisms, Rényi DP of Gaussian-type mechanisms and its
// conversion to (ε, δ)-DP, the noise calibrations of GNMax and of the
// DP-ShuffleG family, and randomized response's constant probability.
//
// Every function cites the result it implements. Formulas of the thesis
// ("Optimized tradeoffs for private prediction with majority ensembling",
// Ch. 3 and App. B; "Differentially private shuffled gradient methods",
// Ch. 4) are the defaults; tighter alternatives (the optimal composition of
// Kairouz, Oh and Viswanath; the improved RDP conversion of Canonne, Kamath
// and Steinke / Balle et al.) are offered beside them and are used only when
// asked for.
//
// Bad input (NaN, ±Inf, out-of-domain values) is reported as a *ParamError
// naming the parameter, its value and the rule; no function clamps an input
// or panics on one.
//
// The package is a leaf: it imports nothing else from darrm.
package accountant
