package setup

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/fixtures"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestParse: the flags of a gamma go with the mechanisms that sample one,
// --gamma and --no-solve exclude each other, and a --gamma of one relation
// is refused for the mechanisms of the other (tableRelation).
func TestParse(t *testing.T) {
	g := fixtures.Path("gamma-K11-m3.json") // private teachers
	for _, c := range []struct {
		f     MechanismConfig
		names []provenance.MechanismName
		want  string
	}{
		{MechanismConfig{}, []provenance.MechanismName{ensemble.DaRRM{}.Name(), ensemble.RR{}.Name()}, ""},
		{MechanismConfig{GammaFile: g}, []provenance.MechanismName{ensemble.DaRRM{}.Name()}, ""},
		{MechanismConfig{NoSolve: true}, []provenance.MechanismName{ensemble.RR{}.Name()}, "--no-solve applies to the mechanisms that sample a gamma"},
		{MechanismConfig{GammaFile: g, NoSolve: true}, []provenance.MechanismName{ensemble.DaRRM{}.Name()}, "--gamma and --no-solve exclude each other"},
		{MechanismConfig{GammaFile: g}, []provenance.MechanismName{ensemble.OneVoteDaRRM{}.Name()}, "darrm-one-vote releases in the one-vote relation: use --mechanism darrm"},
		{MechanismConfig{}, []provenance.MechanismName{"bogus"}, `--mechanism "bogus": must be one of`},
	} {
		_, err := c.f.Parse(&cobra.Command{}, NewMechanisms(ensemble.Mechanisms()), "mechanism", c.names)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v %v: %v", c.f, c.names, err)
		case c.want != "" && (!cli.IsUsage(err) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v %v: %v, want a usage error containing %q", c.f, c.names, err, c.want)
		case c.want == "" && c.f.GammaFile != "":
			src, err := c.f.Source(nil, MechanismInfo{Relation: accountant.PrivateTeachers})
			if err != nil || c.f.table == nil || src.Given == nil || src.Name != "the gamma of "+g {
				t.Errorf("%+v: the --gamma file not kept: source %+v, %v", c.f, src, err)
			}
		}
	}
}

// TestTableRelation: a gamma fits a mechanism of its own relation; for
// mechanisms of the other relation the error names them and the mechanism
// that samples a gamma in the gamma's relation.
func TestTableRelation(t *testing.T) {
	ms := NewMechanisms(ensemble.Mechanisms())
	darrm, _ := ms.Lookup(ensemble.DaRRM{}.Name(), votefile.TwoClass)
	oneVote, _ := ms.Lookup(ensemble.OneVoteDaRRM{}.Name(), votefile.TwoClass)
	for _, c := range []struct {
		rel   accountant.Relation
		infos []MechanismInfo
		want  string
	}{
		{accountant.PrivateTeachers, []MechanismInfo{darrm}, ""},
		{accountant.OneVote, []MechanismInfo{darrm, oneVote}, ""},
		{accountant.OneVote, []MechanismInfo{darrm}, "darrm releases in the private-teachers relation: use --mechanism darrm-one-vote, or a gamma that darrm solve wrote for the private-teachers relation"},
		{accountant.PrivateTeachers, []MechanismInfo{oneVote}, "darrm-one-vote releases in the one-vote relation: use --mechanism darrm, or a gamma that darrm solve wrote for the one-vote relation"},
	} {
		err := tableRelation(ms, "g.json", c.rel, c.infos)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v gamma for %v: %v", c.rel, c.infos[0].Name, err)
		case c.want != "" && (!cli.IsUsage(err) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v gamma for %v: %v, want a usage error containing %q", c.rel, c.infos[0].Name, err, c.want)
		}
	}
}
