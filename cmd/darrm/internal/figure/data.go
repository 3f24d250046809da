package figure

import (
	"fmt"
	"math"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noisymax"
)

// This file turns darrm's results into the plain data of the gamma and
// GNMax figures.

// errorPoints is the resolution of the error curves over p.
const errorPoints = 201

// WriteSolve writes the gamma figure of one darrm solve document
// (SolveSetting) to path.
func WriteSolve(path string, out report.Solve) error {
	s, err := SolveSetting(out)
	if err != nil {
		return err
	}
	return GammaFigure{Settings: []Setting{s}}.Write(path)
}

// SolveSetting is the column of a gamma figure of a darrm solve document:
// its problem, and gamma_opt and the baselines with their certificates'
// status, error curves and expected errors.
func SolveSetting(out report.Solve) (Setting, error) {
	s := Setting{Problem: out.Params()}
	for _, m := range out.Mechanisms() {
		fm := Curve{Name: m.Name, Prior: out.Prior, Gamma: m.Gamma, Status: statusOf(m.Certificate.Status)}
		var err error
		if fm.Error, err = errorCurve(m.Gamma); err != nil {
			return s, fmt.Errorf("%s: %w", m.Name, err)
		}
		for _, e := range m.Errors {
			fm.Expected = append(fm.Expected, Expected{Actual: e.Actual, Mean: e.Mean})
		}
		if m.Name == "sub" {
			s.SubSize = subSize(m.Gamma, out.M)
		}
		s.Mechanisms = append(s.Mechanisms, fm)
	}
	return s, nil
}

// statusOf is a certificate's status as a figure shows it.
func statusOf(s gamma.Status) Status {
	switch s {
	case gamma.Certified:
		return Certified
	case gamma.Tight:
		return Tight
	}
	return Violated
}

// errorCurve is E(DaRRM_γ) when every teacher votes 1 with probability p,
// at errorPoints values of p from 0 to 1.
func errorCurve(g gamma.Gamma) ([]float64, error) {
	curve := make([]float64, errorPoints)
	probs := make([]float64, g.K())
	for i := range curve {
		for j := range probs {
			probs[j] = float64(i) / (errorPoints - 1)
		}
		var err error
		if curve[i], err = gamma.TVError(g, probs); err != nil {
			return nil, err
		}
	}
	return curve, nil
}

// subSize returns the number of teachers gamma_Sub g subsamples when it is
// not floor(m) (App. B.4's M, darrm solve --sub-size), read from its
// values: the size whose Lemma 3.4.1 noise function g is; else 0.
func subSize(g gamma.Gamma, m float64) int {
	for s := 1; s <= g.K(); s++ {
		if sub, err := gamma.Sub(g.K(), s); err == nil && slices.Equal(sub, g) {
			if s == gamma.SubSize(m) {
				return 0
			}
			return s
		}
	}
	return 0
}

// GNMaxTargetOf is the GNMax figure's data of a per-query target: the
// objective of App. B.4.1's search on its grid, and the grid's and the
// exact minimum.
func GNMaxTargetOf(t accountant.Guarantee) (GNMaxTarget, error) {
	ft := GNMaxTarget{Eps: t.Eps, Delta: t.Delta, LambdaMin: math.Log(1/t.Delta)/t.Eps + 1}
	grid, err := noisymax.GNMaxLambdaGrid(t)
	if err != nil {
		return ft, err
	}
	for _, l := range grid {
		s2, err := noisymax.GNMaxSigma2(t, l)
		if err != nil {
			return ft, err
		}
		if !math.IsInf(s2, 1) {
			ft.Lambda, ft.Sigma2 = append(ft.Lambda, l), append(ft.Sigma2, s2)
		}
	}
	if len(ft.Lambda) == 0 {
		return ft, fmt.Errorf("GNMax figure: target (%v, %v): no finite point on the grid", t.Eps, t.Delta)
	}
	if ft.Grid.Sigma, ft.Grid.Lambda, err = noisymax.CalibrateGNMax(t, noisymax.GNMaxGrid, accountant.PaperConversion); err != nil {
		return ft, err
	}
	if ft.Exact.Sigma, ft.Exact.Lambda, err = noisymax.CalibrateGNMax(t, noisymax.GNMaxExact, accountant.PaperConversion); err != nil {
		return ft, err
	}
	// σ² every 0.01 around both minima, for the figure's zoom
	lo := math.Max(math.Min(ft.Grid.Lambda, ft.Exact.Lambda)-6, ft.LambdaMin+0.01)
	for i := 0; lo+0.01*float64(i) <= math.Max(ft.Grid.Lambda, ft.Exact.Lambda)+6; i++ {
		l := lo + 0.01*float64(i)
		s2, err := noisymax.GNMaxSigma2(t, l)
		if err != nil {
			return ft, err
		}
		if !math.IsInf(s2, 1) {
			ft.FineLambda, ft.FineSigma2 = append(ft.FineLambda, l), append(ft.FineSigma2, s2)
		}
	}
	return ft, nil
}
