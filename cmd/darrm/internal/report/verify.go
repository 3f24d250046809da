package report

import (
	"fmt"
	"io"
	"slices"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/peek"
)

// Verify is the document darrm verify prints.
type Verify struct {
	Problem
	Gamma       []float64         `json:"gamma"`
	Certificate gamma.Certificate `json:"certificate"`
	Seconds     float64           `json:"seconds"`
}

// WriteVerdict writes the document in format f and then fails, with the
// certificate's error (gamma.Certificate.Err, exit status 3), when it
// does not certify the gamma: the end of verify and separate merge.
func (out Verify) WriteVerdict(w io.Writer, f cliout.Format) error {
	if err := out.Write(w, f); err != nil {
		return err
	}
	return out.Certificate.Err()
}

// Write renders the document in format f.
func (out Verify) Write(w io.Writer, f cliout.Format) error {
	cert := out.Certificate
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, out)
	case cliout.CSV:
		return cliout.WriteCSV(w, []string{"K", "m", "eps", "Delta", "delta", "status", "max_f", "budget", "ratio", "err_bound"}, [][]string{{
			fmt.Sprint(out.K), cliout.Float(out.M), cliout.Float(out.Eps), cliout.Float(out.Delta), cliout.Float(out.TargetDelta),
			cert.Status.String(), cliout.Float(cert.MaxF), cliout.Float(cert.Budget), cliout.Float(cert.Ratio), cliout.Float(cert.ErrBound)}})
	}
	t := cliout.NewText(w)
	t.Line("gamma for %s", out.Describe())
	writeCertificate(t, "certificate", cert)
	if cert.Status == gamma.Tight {
		t.Line("  scaling gamma by %.15g (= 1 - 2·bound/budget) would certify it", 1-2*cert.ErrBound/cert.Budget)
	}
	return t.Close()
}

// Shard is the file darrm separate writes: one shard of the exhaustive
// certificate of a gamma for a problem (gamma.Shard.Verify), which darrm
// separate merge combines with the others (gamma.MergeShards).
type Shard struct {
	Problem    Problem                `json:"problem"`
	Gamma      []float64              `json:"gamma"`
	Separation constraints.Separation `json:"separation"`
	Seconds    float64                `json:"seconds"`
}

// IsShard reports whether obj, the JSON object at the start of a file, is
// a part of darrm separate's certificate (a Shard), or holds a gamma with
// its problem, as a part does.
func IsShard(obj []byte) bool {
	keys := peek.Keys(obj)
	return slices.Contains(keys, "separation") || slices.Contains(keys, "problem") && slices.Contains(keys, "gamma")
}

// Written says in one line that the part was written to path, for the
// person who ran separate: which part, what it covered, what comes next.
func (d Shard) Written(path string) string {
	sep := d.Separation
	return fmt.Sprintf("part %d/%d of the certificate of K = %d: %s corner multisets, max f = %.15g, in %.3g s, written to %s; combine all %d parts with darrm separate merge",
		sep.Shard, sep.Shards, d.Problem.K, groupDigits(sep.Configs.String()), sep.MaxF, d.Seconds, path, sep.Shards)
}

// MergeShards combines the shards docs, read from the files names, into
// the certificate of their gamma (gamma.MergeShards). The shards must be
// of one problem, valid, one gamma and one split, each once; an error
// names the files at fault.
func MergeShards(names []string, docs []Shard) (Verify, error) {
	first := docs[0]
	parts := make([]constraints.Separation, len(docs))
	seen := map[int]string{} // shard index -> file
	for i, d := range docs {
		s := d.Separation
		switch prev, repeated := seen[s.Shard]; {
		case d.Problem != first.Problem || !slices.Equal(d.Gamma, first.Gamma):
			return Verify{}, fmt.Errorf("%s is a shard of another problem or gamma than %s", names[i], names[0])
		case s.Shards != first.Separation.Shards:
			return Verify{}, fmt.Errorf("%s is shard %d of %d, %s shard %d of %d: shards of one split are needed", names[i], s.Shard, s.Shards, names[0], first.Separation.Shard, first.Separation.Shards)
		case repeated:
			return Verify{}, fmt.Errorf("%s and %s are both shard %d of %d", prev, names[i], s.Shard, s.Shards)
		}
		seen[s.Shard] = names[i]
		parts[i] = s
	}
	p := first.Problem.Params()
	if err := p.Validate(); err != nil {
		return Verify{}, fmt.Errorf("%s: %w", names[0], err)
	}
	cert, err := gamma.MergeShards(p, gamma.Gamma(first.Gamma), parts)
	return Verify{Problem: first.Problem, Gamma: first.Gamma, Certificate: cert}, err
}
