package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
)

// TestLedgerShow: a ledger without runs is one record; with runs, a row
// per run under the ledger's fields, among them the total to publish: the
// teachers' cap at the budget's delta, below the budget.
func TestLedgerShow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.ledger")
	t.Setenv(statedir.Env, t.TempDir())
	b := provenance.Binding{Ensemble: "e", Teachers: provenance.Teachers{K: 3, Each: accountant.Guarantee{Eps: 0.5, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: provenance.Fixed, Partition: provenance.SharedData}}
	if _, err := ledger.Create(context.Background(), path, ledger.NewHeader(b, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 10, Delta: 1e-3}}, 1e-5, accountant.Filter{Parts: []accountant.FilterPart{{Method: accountant.Simple, Delta: 1e-3}}}), ledger.Options{}); err != nil {
		t.Fatal(err)
	}
	common := "ledger,version,ensemble,relation,K,teachers_eps,teachers_Delta,kind,partition,budget_eps,budget_delta,delta_prime,publish_eps,publish_delta,publish_method,publish_why,spent_eps,spent_delta,spent_bound,composition,queries_eps,queries_delta,cap_eps,cap_delta,cap_rule,free,note"
	for _, tc := range []struct {
		name   string
		spend  int // labels charged before the document is read
		header string
		rows   int
	}{
		{"no run", 0, common, 1},
		{"a run", 3, common + ",time,run,mechanism,queries,eps,delta,final", 1},
	} {
		l, err := ledger.Open(context.Background(), path, ledger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Begin(context.Background(), "rr", b, accountant.ApproxStep(accountant.Guarantee{Eps: 0.5, Delta: 1e-6}), -1); err != nil {
			t.Fatal(err)
		}
		if tc.spend > 0 && (l.Reserve(context.Background(), tc.spend) != nil || l.Settle(context.Background(), tc.spend) != nil) {
			t.Fatalf("%s: charging %d labels failed", tc.name, tc.spend)
		}
		doc, err := NewLedgerShow(context.Background(), path, l)
		var b bytes.Buffer
		if err == nil {
			err = doc.Write(&b, cliout.CSV)
		}
		l.Close()
		recs, _ := csv.NewReader(&b).ReadAll()
		if err != nil || len(recs) != 1+tc.rows || strings.Join(recs[0], ",") != tc.header || recs[1][0] != path || recs[1][2] != "e" || recs[1][4] != "3" {
			t.Errorf("%s: %q (%v)", tc.name, recs, err)
		}
		if tc.spend > 0 && (!(doc.Balance.Total.Eps > 0 && doc.Balance.Total.Eps <= 1.5) || recs[1][len(recs[1])-4] != "3") {
			t.Errorf("%s: total %v, row %q", tc.name, doc.Balance.Total, recs[1])
		}
		if p := doc.Balance.Publish; p.Cap == nil || p.Guarantee.Delta != 1e-3 || !(p.Guarantee.Eps < doc.Balance.Cap.Eps) || recs[1][14] != "teachers' cap (optimal)" || !strings.Contains(recs[1][15], "their cap bounds every release") {
			t.Errorf("%s: publish %+v, row %q", tc.name, p, recs[1])
		}
	}
}
