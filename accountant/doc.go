// Package accountant computes privacy guarantees for darrm: composition of
// (ε, δ)-DP mechanisms, Rényi DP of Gaussian-type mechanisms and its
// conversion to (ε, δ)-DP, the noise calibrations of GNMax and of the
// DP-ShuffleG family, and randomized response's constant probability.
//
// Every function cites the result it implements. Formulas of the thesis
// (Chapter 3 and Appendix B for private majority ensembling, Chapter 4 for
// DP-ShuffleG) are the defaults; tighter alternatives (the optimal composition of
// Kairouz, Oh and Viswanath; the improved RDP conversion of Canonne, Kamath
// and Steinke / Balle et al.) are offered beside them and are used only when
// asked for.
//
// Bad input (NaN, ±Inf, out-of-domain values) is reported as a *ParamError
// naming the parameter, its value and the rule; no function clamps an input
// or panics on one. Settings that do not go together are reported as a
// *SettingError. Callers tell the two by behaviour (docs/design.md,
// "Conventions"): a bad parameter has Param() (name string, value any,
// rule string), a setting Setting() (name, value, rule string), as the
// parameter errors of the other packages do.
//
// Of darrm it imports only the bound on the scale of discrete noise that
// the exact samplers take (noise.MaxScale), which the settings of the
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
