package report

import "github.com/darrm/darrm/ensemble"

// SettingFlag is the flag that gives each setting of a registered
// mechanism (ensemble.Setting), without its dashes: the one table from the
// library's names to the command's, which reports name a planned setting by.
var SettingFlag = map[ensemble.Setting]string{
	ensemble.SettingM: "m", ensemble.SettingEps: "eps", ensemble.SettingDelta: "Delta", ensemble.SettingTargetDelta: "delta",
	ensemble.SettingTargetEps: "target-eps", ensemble.SettingPrior: "prior", ensemble.SettingGamma: "gamma", ensemble.SettingNoSolve: "no-solve",
	ensemble.SettingRRComposition: "rr-composition", ensemble.SettingRRDeltaPrime: "rr-delta-prime", ensemble.SettingGNMaxSearch: "gnmax-search",
	ensemble.SettingThreshold: "threshold", ensemble.SettingSigma1: "sigma1", ensemble.SettingSigma2: "sigma2", ensemble.SettingLaplaceScale: "laplace-scale",
}
