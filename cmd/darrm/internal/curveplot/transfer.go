package curveplot

import (
	"fmt"

	"github.com/darrm/darrm/internal/transfer"
)

// mechanismLabels name transfer's mechanisms as the thesis' tables do.
var mechanismLabels = map[string]string{"gnmax": "GNMax", "gnmax-tight": "GNMax, tight σ", "darrm-sub": "DaRRM, γ_{Sub}", "darrm-opt": "DaRRM, γ_{opt}",
	"rr": "RR, γ_{const}", "majority": "majority, no noise"}

// WriteTransfer writes the figure of darrm transfer's results on dataset
// for k teachers (TransferPanel) to path.
func WriteTransfer(path, dataset string, k int, results []transfer.Result) error {
	p := TransferPanel(dataset, k, results)
	fig := Figure{Panels: []*Panel{&p}, Notes: []string{"Lines: mean accuracy over the redraws of the queries; shaded: ± one standard deviation."}}
	return fig.Write(path)
}

// TransferPanel is the panel of a transfer experiment on dataset with k
// teachers: each mechanism's label accuracy, mean and one standard
// deviation over the redraws, against the number of queries Q, under a
// title that says the privacy of each label (the majority's is the
// teachers' K-fold composition).
func TransferPanel(dataset string, k int, results []transfer.Result) Panel {
	p := Panel{Title: dataset, XLabel: "queries Q", YLabel: "label accuracy"}
	if len(results) > 0 {
		r := results[0]
		p.Title = fmt.Sprintf("%s, K = %d, m = %g: each noisy label (%.4g, %.2g)-DP", dataset, k, r.M, r.QueryEps, r.QueryDelta)
	}
	for _, name := range transfer.Mechanisms {
		s := Series{Label: mechanismLabels[name]}
		for _, r := range results {
			if r.Mechanism == name {
				s.X = append(s.X, float64(r.Queries))
				s.Mean = append(s.Mean, r.AccuracyMean)
				s.Std = append(s.Std, r.AccuracyStd)
			}
		}
		if len(s.Mean) > 0 {
			p.Series = append(p.Series, s)
		}
	}
	return p
}
