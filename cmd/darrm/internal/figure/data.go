package figure

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/noisymax"
)

// This file turns GNMax's calibration into the plain data of its figure.

// GNMaxTargetOf is the GNMax figure's data of a per-query target: the
// objective of App. B.4.1's search on its grid, and the grid's and the
// exact minimum.
func GNMaxTargetOf(t accountant.Guarantee) (GNMaxTarget, error) {
	ft := GNMaxTarget{Eps: t.Eps, Delta: t.Delta, LambdaMin: -outward.Ln(t.Delta)/t.Eps + 1}
	var err error
	if ft.Lambda, ft.Sigma2, err = noisymax.GNMaxObjective(t, nil); err != nil {
		return ft, err
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
	var fine []float64
	for i := 0; lo+0.01*float64(i) <= math.Max(ft.Grid.Lambda, ft.Exact.Lambda)+6; i++ {
		fine = append(fine, lo+0.01*float64(i))
	}
	ft.FineLambda, ft.FineSigma2, err = noisymax.GNMaxObjective(t, fine)
	return ft, err
}
