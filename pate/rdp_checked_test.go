package pate

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noisymax"
)

// The analyses of rdp.go one at a time, each checking its own arguments,
// as the tests call them: an account checks its votes and settings once
// (bounds.go) and calls the analyses unchecked.

// checkedGNMaxLogQ is gnmaxLogQ with its arguments checked.
func checkedGNMaxLogQ(counts []int, sigma float64, noise noisymax.Noise) (float64, error) {
	top, err := checkGNMaxCounts(counts, sigma, noise)
	if err != nil {
		return 0, err
	}
	return gnmaxLogQ(testMemo, counts, top, sigma, noise), nil
}

// checkedGNMaxNeighbourLogQ is gnmaxNeighbourLogQ with its arguments
// checked: counts that sum as the relation rel says.
func checkedGNMaxNeighbourLogQ(counts []int, sigma float64, noise noisymax.Noise, rel neighbours) (float64, error) {
	if _, err := checkGNMaxCounts(counts, sigma, noise); err != nil {
		return 0, err
	}
	if s := castVotes(counts); s > rel.teachers || (!rel.abstain && s != rel.teachers) {
		return 0, fmt.Errorf("GNMax q: %w", &param.Error{Name: "votes", Value: float64(s), Rule: countsRule(rel)})
	}
	return gnmaxNeighbourLogQ(testMemo, counts, sigma, noise, rel), nil
}

// checkGNMaxCounts checks the arguments of checkedGNMaxLogQ and returns the first
// class with the most votes.
func checkGNMaxCounts(counts []int, sigma float64, noise noisymax.Noise) (int, error) {
	if len(counts) < 2 {
		return 0, fmt.Errorf("GNMax q: %w", &param.Error{Name: "classes", Value: float64(len(counts)), Rule: "must be >= 2"})
	}
	if err := noise.Check("sigma", sigma); err != nil {
		return 0, fmt.Errorf("GNMax q: %w", err)
	}
	for i, n := range counts {
		if n < 0 {
			return 0, fmt.Errorf("GNMax q: %w", &param.Error{Name: fmt.Sprintf("count[%d]", i), Value: float64(n), Rule: "must be >= 0"})
		}
	}
	return argmax(counts), nil
}

// checkedThresholdLogQ is thresholdLogQ with its arguments checked.
func checkedThresholdLogQ(maxCount int, threshold, sigma1 float64, noise noisymax.Noise) (logq, p float64, err error) {
	if err := checkThreshold(maxCount, threshold, sigma1, noise); err != nil {
		return 0, 0, err
	}
	logq, p = thresholdLogQ(maxCount, threshold, sigma1, noise)
	return logq, p, nil
}

// thresholdNeighbourLogQ returns log Q̃ for the threshold step at largest
// count v in the relation rel, as thresholdTable computes it for
// BothDirections, with its arguments checked.
func thresholdNeighbourLogQ(maxCount int, rel neighbours, classes int, threshold, sigma1 float64, noise noisymax.Noise) (float64, error) {
	if err := param.Count("teachers", rel.teachers, 1); err != nil {
		return 0, fmt.Errorf("threshold q: %w", err)
	}
	if err := param.Count("classes", classes, 2); err != nil {
		return 0, fmt.Errorf("threshold q: %w", err)
	}
	lo := rel.leastMax(classes)
	if maxCount < lo || maxCount > rel.teachers {
		return 0, fmt.Errorf("threshold q: %w", &param.Error{Name: "largest count", Value: float64(maxCount),
			Rule: fmt.Sprintf("must be in [%d, K = %d]", lo, rel.teachers)})
	}
	if err := checkThreshold(maxCount, threshold, sigma1, noise); err != nil {
		return 0, err
	}
	return maxNear(func(w int) float64 {
		l, _ := thresholdLogQ(w, threshold, sigma1, noise)
		return l
	}, maxCount, lo, rel.teachers), nil
}

func checkThreshold(maxCount int, threshold, sigma1 float64, noise noisymax.Noise) error {
	if maxCount < 0 {
		return fmt.Errorf("threshold q: %w", &param.Error{Name: "largest count", Value: float64(maxCount), Rule: "must be >= 0"})
	}
	if math.IsNaN(threshold) || math.IsInf(threshold, 0) {
		return fmt.Errorf("threshold q: %w", &param.Error{Name: "threshold", Value: threshold, Rule: "must be a finite number"})
	}
	if err := noise.Check("sigma1", sigma1); err != nil {
		return fmt.Errorf("threshold q: %w", err)
	}
	return nil
}

// gnmaxRDPIndependent returns GNMax's data-independent Rényi DP at
// order λ with noise σ, λ/σ² (gnmaxSlope), its arguments checked.
func gnmaxRDPIndependent(sigma, order float64) (float64, error) {
	if err := param.Positive("sigma", sigma); err != nil {
		return 0, fmt.Errorf("GNMax RDP: %w", err)
	}
	if err := param.Alpha(order); err != nil {
		return 0, fmt.Errorf("GNMax RDP: %w", err)
	}
	return newCurve(testMemo, gnmaxSlope(sigma), order).ind.Hi, nil
}

// thresholdRDPIndependent returns the threshold step's data-independent
// Rényi DP at order λ with noise σ1, λ/(2σ1²), its arguments checked.
func thresholdRDPIndependent(sigma1, order float64) (float64, error) {
	if err := param.Positive("sigma1", sigma1); err != nil {
		return 0, fmt.Errorf("threshold RDP: %w", err)
	}
	if err := param.Alpha(order); err != nil {
		return 0, fmt.Errorf("threshold RDP: %w", err)
	}
	return newCurve(testMemo, thresholdSlope(sigma1), order).ind.Hi, nil
}

// gnmaxRDP returns GNMax's data-dependent Rényi DP at order λ with
// noise σ given q̃ = e^logq (curve), its arguments checked.
func gnmaxRDP(logq, sigma, order float64) (float64, error) {
	if err := checkRDPArgs(logq, sigma, order); err != nil {
		return 0, fmt.Errorf("GNMax RDP: %w", err)
	}
	return newCurve(testMemo, gnmaxSlope(sigma), order).at(logq).Hi, nil
}

// thresholdRDP returns the threshold step's data-dependent Rényi DP at
// order λ with noise σ1 given q̃ = e^logq (curve), its arguments checked.
func thresholdRDP(logq, sigma1, order float64) (float64, error) {
	if err := checkRDPArgs(logq, sigma1, order); err != nil {
		return 0, fmt.Errorf("threshold RDP: %w", err)
	}
	return newCurve(testMemo, thresholdSlope(sigma1), order).at(logq).Hi, nil
}

func checkRDPArgs(logq, sigma, order float64) error {
	if !(logq <= 0) {
		return &param.Error{Name: "log q", Value: logq, Rule: "must be <= 0"}
	}
	if err := param.Positive("sigma", sigma); err != nil {
		return err
	}
	return param.Alpha(order)
}
