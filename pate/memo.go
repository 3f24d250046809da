package pate

import (
	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/outward"
)

// memo is what the package keeps for the calls that ask again, each
// table a pure function of its key and bounded: PTR's tables and plans
// (a search of a plan's N tests every bound at the same settings and
// order, and its plans' σ searches start at the same σs), and the terms,
// curves and conditions of GNMax's data-dependent bound, which every
// account of the same noise makes again. It lives in its caller's
// accountant.Memo (memoIn).
type memo struct {
	thresholds kept[ptrThresholdKey, [2][]outward.Interval]
	rules      kept[ptrRuleKey, PTRResult]
	bits       kept[ptrBitKey, float64]
	classTerms kept[classTermsKey, *classTerms]
	curves     kept[curveKey, *curve]
	conditions kept[conditionsKey, conditions]
}

// memoKey is the key of the package's memo in an accountant.Memo.
type memoKey struct{}

// memoIn returns the package's memo that m keeps; a new one, kept
// nowhere, when m is nil: the call that asks keeps what it makes for
// itself alone.
func memoIn(m *accountant.Memo) *memo {
	return m.Keep(memoKey{}, func() any {
		return &memo{
			thresholds: kept[ptrThresholdKey, [2][]outward.Interval]{limit: maxThresholdIntervals},
			rules:      kept[ptrRuleKey, PTRResult]{limit: maxRules},
			bits:       kept[ptrBitKey, float64]{limit: maxBits},
			classTerms: kept[classTermsKey, *classTerms]{limit: maxKeptClassTerms},
			curves:     kept[curveKey, *curve]{limit: maxCurves},
			conditions: kept[conditionsKey, conditions]{limit: maxConditions},
		}
	}).(*memo)
}
