package ensemble

import (
	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/provenance"
)

// Setting is a setting that a registered mechanism needs or takes
// (MechanismInfo.Needs and Takes), named as the library holds it; a
// caller maps each to its own way of giving it (darrm aggregate: a flag).
// The problem's: SettingM, the allowance m; SettingEps and SettingDelta,
// the teachers' (ε, Δ); SettingTargetDelta, the per-query δ;
// SettingTargetEps, the per-query ε of a one-vote release (Problem.Eps at
// m = 1). The gamma's source: SettingPrior, the prior of gamma_opt
// (optimal.Source.Prior); SettingGamma, a gamma given (Mechanism.Gamma);
// SettingNoSolve, the cache only (optimal.Source.CacheOnly). The
// Mechanism's: SettingRRComposition and SettingRRDeltaPrime (RR's Method
// and DeltaPrime); SettingGNMaxSearch (GNMaxSearch);
// SettingThreshold, SettingSigma1 and SettingSigma2 (GNMax);
// SettingLaplaceScale (LNMax.Scale).
type Setting int

// The settings of the registered mechanisms.
const (
	SettingM Setting = iota
	SettingEps
	SettingDelta
	SettingTargetDelta
	SettingTargetEps
	SettingPrior
	SettingGamma
	SettingNoSolve
	SettingRRComposition
	SettingRRDeltaPrime
	SettingGNMaxSearch
	SettingThreshold
	SettingSigma1
	SettingSigma2
	SettingLaplaceScale
)

var settingNames = enum.Names[Setting]{What: "setting", List: []string{
	SettingM: "m", SettingEps: "eps", SettingDelta: "Delta", SettingTargetDelta: "delta", SettingTargetEps: "target eps",
	SettingPrior: "prior", SettingGamma: "gamma", SettingNoSolve: "cache only",
	SettingRRComposition: "RR composition", SettingRRDeltaPrime: "RR delta'", SettingGNMaxSearch: "GNMax search",
	SettingThreshold: "threshold", SettingSigma1: "sigma1", SettingSigma2: "sigma2", SettingLaplaceScale: "Laplace scale",
}}

// String returns the setting's name, e.g. "sigma2" or "RR delta'".
func (s Setting) String() string { return settingNames.String(s) }

// statedIn reports whether a label file's header states s (its
// mechanism's settings).
func (s Setting) statedIn(st provenance.Settings) bool {
	switch s {
	case SettingThreshold:
		return st.Threshold != nil
	case SettingSigma1:
		return st.Sigma1 != nil
	case SettingSigma2:
		return st.Sigma2 != nil
	case SettingLaplaceScale:
		return st.LaplaceScale != nil
	}
	return false
}

// SettingValue is a setting with its value as text.
type SettingValue struct {
	Setting Setting
	Value   string
}
