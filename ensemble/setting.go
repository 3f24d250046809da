package ensemble

import (
	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/provenance"
)

// Setting is a setting that a registered mechanism needs or takes
// (MechanismInfo.Needs and Takes), known by its flag (Flag: the name of
// darrm aggregate's flag that gives it, from which UnmarshalText reads
// it). The problem's: m, the allowance; eps and Delta, the teachers'
// (ε, Δ); delta, the per-query δ;
// target-eps, the per-query ε of a one-vote release (Problem.Eps at
// m = 1). The gamma's source: prior, the prior of gamma_opt
// (optimal.Source.Prior); gamma, a gamma given (Mechanism.Gamma);
// no-solve, the cache only (optimal.Source.CacheOnly). The Mechanism's:
// rr-composition and rr-delta-prime (RR's Method and DeltaPrime);
// gnmax-search (GNMaxSearch); threshold, sigma1 and sigma2 (GNMax);
// laplace-scale (LNMax.Scale).
type Setting int

// The settings of the registered mechanisms.
const (
	settingM Setting = iota
	settingEps
	settingDelta
	settingTargetDelta
	settingTargetEps
	settingPrior
	settingGamma
	settingNoSolve
	settingRRComposition
	settingRRDeltaPrime
	settingGNMaxSearch
	settingThreshold
	settingSigma1
	settingSigma2
	settingLaplaceScale
)

var settingNames = enum.Names[Setting]{What: "setting", List: []string{
	settingM: "m", settingEps: "eps", settingDelta: "Delta", settingTargetDelta: "delta", settingTargetEps: "target eps",
	settingPrior: "prior", settingGamma: "gamma", settingNoSolve: "cache only",
	settingRRComposition: "RR composition", settingRRDeltaPrime: "RR delta'", settingGNMaxSearch: "GNMax search",
	settingThreshold: "threshold", settingSigma1: "sigma1", settingSigma2: "sigma2", settingLaplaceScale: "Laplace scale",
}}

// settingFlags are the settings' flags, without their dashes.
var settingFlags = enum.Names[Setting]{What: "setting", List: []string{
	settingM: "m", settingEps: "eps", settingDelta: "Delta", settingTargetDelta: "delta",
	settingTargetEps: "target-eps", settingPrior: "prior", settingGamma: "gamma", settingNoSolve: "no-solve",
	settingRRComposition: "rr-composition", settingRRDeltaPrime: "rr-delta-prime", settingGNMaxSearch: "gnmax-search",
	settingThreshold: "threshold", settingSigma1: "sigma1", settingSigma2: "sigma2", settingLaplaceScale: "laplace-scale",
}}

// String returns the setting's name, e.g. "sigma2" or "RR delta'".
func (s Setting) String() string { return settingNames.String(s) }

// Flag returns the flag that gives the setting, without its dashes, e.g.
// "sigma2" or "rr-delta-prime".
func (s Setting) Flag() string { return settingFlags.String(s) }

// UnmarshalText sets s to the setting whose flag is b (Flag), or returns
// an error naming every flag; s is unchanged on error.
func (s *Setting) UnmarshalText(b []byte) error { return settingFlags.Unmarshal(s, b) }

// statedIn reports whether a label file's header states s (its
// mechanism's settings).
func (s Setting) statedIn(st provenance.Settings) bool {
	switch s {
	case settingThreshold:
		return st.Threshold != nil
	case settingSigma1:
		return st.Sigma1 != nil
	case settingSigma2:
		return st.Sigma2 != nil
	case settingLaplaceScale:
		return st.LaplaceScale != nil
	}
	return false
}
