package report

import (
	"bytes"
	"encoding/csv"
	"io"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/experiments/shuffleexp"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/shuffleg"
)

// TestAccountDocuments checks the columns of each account document, which
// scripts read: their names and order in the CSV header, the values of a
// first row, and that the table and JSON renderings succeed.
func TestAccountDocuments(t *testing.T) {
	step := accountant.Guarantee{Eps: 0.1, Delta: 1e-6}
	total := accountant.Guarantee{Eps: 1.5, Delta: 2e-5}
	plan := shuffleg.Plan{Algorithm: shuffleg.PrivPub, Epochs: 10, PrivEpochs: 5}
	cal := func(sigma float64, c accountant.Conversion, r accountant.AlphaRule) shuffleg.Calibration {
		return shuffleg.Calibration{Sigma: sigma, Eps: 1, Delta: 1e-6, Alpha: 8, AlphaRule: r, Conversion: c, Reference: "Lemma 4.5.2"}
	}
	variants := []shuffleg.Calibration{
		cal(6, accountant.PaperConversion, accountant.AlphaTable43), cal(5, accountant.PaperConversion, accountant.AlphaExact), cal(4, accountant.ImprovedConversion, accountant.AlphaExact),
	}
	for _, tc := range []struct {
		name string
		doc  interface {
			Write(io.Writer, cliout.Format) error
		}
		header string
		row    string
	}{
		{"compose, general", AccountCompose{Method: accountant.General, DeltaPrime: 1e-5, Steps: 10, Step: step, Total: total},
			"method,reference,steps,step_eps,step_delta,delta_prime,eps,delta", "general," + accountant.General.Reference() + ",10,0.1,1e-06,1e-05,1.5,2e-05"},
		{"compose, simple: no delta'", AccountCompose{Method: accountant.Simple, DeltaPrime: 1e-5, Steps: 10, Step: step, Total: total},
			"method,reference,steps,step_eps,step_delta,eps,delta", ""},
		{"queries", AccountQueries{Method: accountant.Optimal, DeltaPrime: 1e-5, Step: step, Budget: accountant.Guarantee{Eps: 2, Delta: 1e-4}, Queries: 7, Total: total},
			"method,reference,step_eps,step_delta,budget_eps,budget_delta,delta_prime,queries,eps,delta", ""},
		{"queries, none", AccountQueries{Method: accountant.Simple, Step: step, Budget: accountant.Guarantee{Eps: 0.05}},
			"method,reference,step_eps,step_delta,budget_eps,budget_delta,queries,eps,delta", "simple," + accountant.Simple.Reference() + ",0.1,1e-06,0.05,0,0,,"},
		{"step-eps", AccountStepEps{Method: accountant.General, DeltaPrime: 1e-5, Steps: 100, BudgetEps: 2, Step: 0.01, Total: total},
			"method,reference,steps,budget_eps,step_delta,delta_prime,step_eps,eps,delta", ""},
		{"gaussian", AccountGaussian{Run: accountant.Gaussian{Sensitivity: 1, Sigma: 2, Steps: 10}, Rho: 1.25, Conversion: accountant.PaperConversion, Alpha: 4, Eps: 6, Delta: 1e-5},
			"sensitivity,sigma,steps,rho,conversion,reference,alpha,rdp,eps,delta", "1,2,10,1.25,paper," + accountant.PaperConversion.Reference() + ",4,5,6,1e-05"},
		{"dpsgd", AccountDPSGD{Run: accountant.SGM{Q: 0.01, Sigma: 1.1, Steps: 1000}, Conversion: accountant.ImprovedConversion, Alpha: 12, Eps: 0.9, Delta: 1e-5},
			"sigma,sampling_rate,steps,conversion,reference,alpha,eps,delta", ""},
		{"gnmax, one target", AccountGNMax{Search: noisymax.GNMaxGrid, Conversion: accountant.PaperConversion, Delta: 1e-5, Rows: []GNMaxNoise{{Eps: 0.5, Sigma: 2, Lambda: 8}}},
			"search,conversion,reference,delta,eps,sigma,lambda,rdp", "grid,paper," + accountant.PaperConversion.Reference() + ",1e-05,0.5,2,8,2"},
		{"gnmax, two targets", AccountGNMax{Search: noisymax.GNMaxExact, Conversion: accountant.PaperConversion, Delta: 1e-5, Rows: []GNMaxNoise{{Eps: 0.5, Sigma: 2, Lambda: 8}, {Eps: 1, Sigma: 1, Lambda: 4}}},
			"search,conversion,delta,eps,sigma,lambda,rdp,reference", ""},
		{"gnmax, tight", AccountGNMax{Search: noisymax.GNMaxTight, Conversion: accountant.PaperConversion, K: 11, Delta: 3e-4, Rows: []GNMaxNoise{{Eps: 0.2654, Sigma: 7.7}}},
			"search,K,reference,delta,eps,sigma", "tight,11," + tightReference + ",0.0003,0.2654,7.7"},
		{"shuffleg, calibrated", AccountShuffleg{Delta: 1e-6, G: 1, Epochs: 10, S: new(5), Rows: []shuffleexp.Noise{{Plan: plan, Target: 1, Calibrations: variants}}},
			"delta,G,epochs,S,algorithm,private_epochs,eps,conversion,alpha_rule,alpha,sigma,ratio,reference", "1e-06,1,10,5,priv-pub,5,1,paper,table-4.3,8,6,1.2,Lemma 4.5.2; " + accountant.PaperConversion.Reference()},
		{"shuffleg, at sigma", AccountShuffleg{Delta: 1e-6, G: 1, Epochs: 10, N: new(10), Rows: []shuffleexp.Noise{{Plan: plan, Calibrations: variants[1:]}}},
			"delta,G,epochs,n,n_d,algorithm,private_epochs,sigma,conversion,alpha,eps,reference", "1e-06,1,10,10,0,priv-pub,5,5,paper,8,1,Lemma 4.5.2; " + accountant.PaperConversion.Reference()},
		{"rr", AccountRR{Problem: constraints.Problem{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: 3e-5}, Method: accountant.General, DeltaPrime: 1e-5, RR: gamma.RRConst{Tau: 2, Lambda: 1e-4, PConst: 0.25}},
			"K,eps,Delta,m,delta,method,delta_prime,reference,tau,lambda,p_const", "11,0.1,1e-05,3,3e-05,general,1e-05,Lemma B.1.1; tau, lambda by " + accountant.General.Reference() + ",2,0.0001,0.25"},
	} {
		var b bytes.Buffer
		if err := tc.doc.Write(&b, cliout.CSV); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		recs, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
		if err != nil || len(recs) < 2 {
			t.Fatalf("%s: CSV %q (%v)", tc.name, b.String(), err)
		}
		if got := strings.Join(recs[0], ","); got != tc.header {
			t.Errorf("%s: header\n%s\nwant\n%s", tc.name, got, tc.header)
		}
		if got := strings.Join(recs[1], ","); tc.row != "" && got != tc.row {
			t.Errorf("%s: row\n%s\nwant\n%s", tc.name, got, tc.row)
		}
		for _, f := range []cliout.Format{cliout.Table, cliout.JSON} {
			if err := tc.doc.Write(&bytes.Buffer{}, f); err != nil {
				t.Errorf("%s, %s: %v", tc.name, f, err)
			}
		}
	}
}

// TestAccountTableTotals checks that a table's total eps and delta never
// read below the JSON's: they were rounded to the nearest six digits, so
// account compose's 300 steps of 0.1 read eps 9.81004 for 9.810041930081985.
func TestAccountTableTotals(t *testing.T) {
	const eps, delta = 9.810041930081985, 1.2345612e-5 // each the six-digit decimal below it
	total := accountant.Guarantee{Eps: eps, Delta: delta}
	step := accountant.Guarantee{Eps: 0.1}
	plan := shuffleg.Plan{Algorithm: shuffleg.DPShuffleG, Epochs: 10, PrivEpochs: 10}
	cal := shuffleg.Calibration{Sigma: 1, Eps: eps, Delta: delta, Alpha: 2, Conversion: accountant.PaperConversion}
	for _, tc := range []struct {
		name string
		doc  interface {
			Write(io.Writer, cliout.Format) error
		}
		keys []string
	}{
		{"compose", AccountCompose{Method: accountant.General, DeltaPrime: 1e-5, Steps: 300, Step: step, Total: total}, []string{"eps", "delta"}},
		{"queries", AccountQueries{Method: accountant.General, DeltaPrime: 1e-5, Step: step, Budget: accountant.Guarantee{Eps: 10, Delta: 1e-4}, Queries: 300, Total: total}, []string{"eps", "delta"}},
		{"step-eps", AccountStepEps{Method: accountant.General, DeltaPrime: 1e-5, Steps: 300, BudgetEps: 10, Step: 0.1, Total: total}, []string{"eps", "delta"}},
		{"gaussian", AccountGaussian{Run: accountant.Gaussian{Sensitivity: 1, Sigma: 2, Steps: 10}, Rho: 1.25, Conversion: accountant.PaperConversion, Alpha: 4, Eps: eps, Delta: delta}, []string{"eps", "delta"}},
		{"dpsgd", AccountDPSGD{Run: accountant.SGM{Q: 0.01, Sigma: 1.1, Steps: 1000}, Conversion: accountant.PaperConversion, Alpha: 12, Eps: eps, Delta: delta}, []string{"eps", "delta"}},
		{"shuffleg, at sigma", AccountShuffleg{Delta: 1e-6, G: 1, Epochs: 10, Rows: []shuffleexp.Noise{{Plan: plan, Calibrations: []shuffleg.Calibration{cal}}}}, []string{"eps"}},
	} {
		var b bytes.Buffer
		if err := tc.doc.Write(&b, cliout.Table); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		text := b.String()
		for _, k := range tc.keys {
			want := map[string]string{"eps": "9.81005", "delta": "1.23457e-05"}[k]
			if !strings.Contains(text, want) {
				t.Errorf("%s: table's %s is not %s, its total rounded up:\n%s", tc.name, k, want, text)
			}
		}
	}
	// A setting the table gives to copy is rounded so that the copy keeps
	// its guarantee: a step's eps down (1.14286 for 8/7 composed to
	// 8.00002 over 7 steps), a noise up (sigma 22.46 for 22.460017).
	gnmax := AccountGNMax{Search: noisymax.GNMaxGrid, Conversion: accountant.PaperConversion, Delta: 3e-4, Rows: []GNMaxNoise{{Eps: 0.2556, Sigma: 22.460017495395803, Lambda: 62}}}
	calibrated := AccountShuffleg{Delta: 1e-6, G: 10, Epochs: 5, Rows: []shuffleexp.Noise{{Plan: plan, Target: 1, Calibrations: []shuffleg.Calibration{{Sigma: 28.14003, Alpha: 2}, {Sigma: 28.14003, Alpha: 2}}}}}
	for _, tc := range []struct {
		name string
		doc  interface {
			Write(io.Writer, cliout.Format) error
		}
		want string
	}{
		{"step-eps", AccountStepEps{Method: accountant.Simple, Steps: 7, BudgetEps: 8, Step: 8.0 / 7, Total: accountant.Guarantee{Eps: 8}}, "1.14285"},
		{"gnmax", gnmax, "22.4601"},
		{"shuffleg, calibrated", calibrated, "28.1401"},
	} {
		var b bytes.Buffer
		if err := tc.doc.Write(&b, cliout.Table); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("%s: table does not give the setting as %s, rounded toward its guarantee:\n%s", tc.name, tc.want, b.String())
		}
	}
}
