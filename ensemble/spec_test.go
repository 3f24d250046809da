package ensemble

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// countVerify makes opts count the exhaustive certificates it computes.
func countVerify(opts *Options) *atomic.Int64 {
	var n atomic.Int64
	opts.verify = func(ctx context.Context, p constraints.Problem, g gamma.Gamma, vo gamma.VerifyOptions) (gamma.Certificate, error) {
		n.Add(1)
		return gamma.Verify(ctx, p, g, vo)
	}
	return &n
}

// releaseSpec is a seeded release of the header-less 0/1 votes by darrm
// for p, its gamma from src, its labels into a file of dir.
func releaseSpec(t *testing.T, votes string, p constraints.Problem, src optimal.Source, dir string) ReleaseSpec {
	t.Helper()
	in, err := votefile.Open("votes.csv", votefile.Options{In: strings.NewReader(votes)})
	if err != nil {
		t.Fatal(err)
	}
	return ReleaseSpec{
		Votes: in, Mechanism: DaRRM{Target: built(p), Gamma: src}, Teachers: ptr(teachers(p)),
		Sink: LabelSink{Path: filepath.Join(dir, "labels.csv"), Format: votefile.FormatCSV}, DeltaPrime: 1e-5,
		Random: noise.NewSeededSource(1), Options: ReleaseOptions{Experiment: true},
	}
}

// TestReleaseCertifiesOnce: a release with gamma_opt from the cache
// computes the exhaustive certificate once, of the gamma it samples; a
// cache entry whose gamma is not private is refused by that certificate,
// never sampled, and solved again unless the source may only read the
// cache.
func TestReleaseCertifiesOnce(t *testing.T) {
	ctx := context.Background()
	p := constraints.New(11, 3, 0.1, 1e-5)
	d, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prior := gamma.UniformPrior()
	solved, err := optimal.Source{Cache: d, Prior: prior}.Load(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	votes := "1,1,1,1,1,1,1,0,0,0,0\n0,0,0,0,0,0,0,0,1,1,1\n"

	s := releaseSpec(t, votes, p, optimal.Source{Cache: d, Prior: prior, CacheOnly: true}, t.TempDir())
	n := countVerify(&s.Certificate)
	var checked []gamma.Certificate
	s.Mechanism = DaRRM{Target: built(p), Gamma: certifiedBy{optimal.Source{Cache: d, Prior: prior, CacheOnly: true}, &checked}}
	out, err := Release(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 1 {
		t.Errorf("a release from the cache computed %d certificates, want 1", got)
	}
	if out.Result.Released != 2 || out.Label != "DaRRM with gamma_opt (prior uniform) from the cache" {
		t.Errorf("release from the cache: %d answered, %q", out.Result.Released, out.Label)
	}
	sampled := out.Aggregator.(*darrmAggregator).Gamma()
	if cert := out.Aggregator.Privacy().Certificate; cert == nil || cert.Status != gamma.Certified || len(checked) != 1 || !reflect.DeepEqual(*cert, checked[0]) {
		t.Errorf("the aggregator's certificate %+v is not the one the cache entry was checked with", cert)
	}
	if _, want := newTable(solved.Gamma); !slices.Equal(sampled, want) {
		t.Errorf("sampled %v, want gamma_opt as sampled %v", sampled, want)
	}

	tampered := *solved.Entry
	tampered.Gamma = slices.Repeat([]float64{1}, len(solved.Gamma)) // the exact majority: not private
	if err := d.Put(&tampered); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s = releaseSpec(t, votes, p, optimal.Source{Cache: d, Prior: prior, CacheOnly: true}, dir)
	n = countVerify(&s.Certificate)
	_, err = Release(ctx, s)
	var re *ReleaseError
	var ce *cache.CorruptError
	if !errors.As(err, &re) || re.Step != StepGamma || !errors.As(err, &ce) {
		t.Errorf("tampered entry, cache only: %v, want a corrupt entry at the gamma step", err)
	}
	if got := n.Load(); got != 1 {
		t.Errorf("a tampered entry was certified %d times, want 1", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "labels.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused release left labels behind: %v", err)
	}

	var told []error
	out, err = Release(ctx, releaseSpec(t, votes, p, optimal.Source{Cache: d, Prior: prior, OnCorrupt: func(err error) { told = append(told, err) }}, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if len(told) != 1 || !strings.HasSuffix(out.Label, "solved now") || slices.Equal(out.Aggregator.(*darrmAggregator).Gamma(), tampered.Gamma) {
		t.Errorf("tampered entry: told %v, %q, sampled %v", told, out.Label, out.Aggregator.(*darrmAggregator).Gamma())
	}
}

// certifiedBy is a gamma source that keeps each certificate that the
// release's check of a gamma from before returned.
type certifiedBy struct {
	GammaSource
	certs *[]gamma.Certificate
}

func (s certifiedBy) Gamma(ctx context.Context, p constraints.Problem, certify func(context.Context, constraints.Problem, gamma.Gamma) (gamma.Certificate, error)) (gamma.Gamma, string, error) {
	return s.GammaSource.Gamma(ctx, p, func(ctx context.Context, q constraints.Problem, g gamma.Gamma) (gamma.Certificate, error) {
		cert, err := certify(ctx, q, g)
		*s.certs = append(*s.certs, cert)
		return cert, err
	})
}

// TestReleaseBudgetStop: a release its budget stops writes the labels it
// answered and returns no error, its result the counts (an outcome, not
// a failure), as does one of MaxQueries, whose later queries are not
// requested, not stopped; each step's failure names its step.
func TestReleaseBudgetStop(t *testing.T) {
	ctx := context.Background()
	p := constraints.Problem{K: 3, M: 1, Eps: 0.5, TargetDelta: 0}
	votes := "1,1,0\n0,0,1\n1,1,1\n0,1,0\n"
	spec := func(budget *accountant.Guarantee, name provenance.MechanismName, delta float64) ReleaseSpec {
		s := releaseSpec(t, votes, p, optimal.Source{}, t.TempDir())
		q := p
		q.Delta, q.TargetDelta = delta, delta
		s.Mechanism, s.Teachers = mechanismOf(name, q, optimal.Source{}), ptr(teachers(q))
		if budget != nil {
			s.Budget = &accountant.Budget{Guarantee: *budget}
		}
		return s
	}
	for _, tc := range []struct {
		name   string
		budget *accountant.Guarantee
		max    int
		want   ReleaseResult
	}{
		{"budget", &accountant.Guarantee{Eps: 1}, 0, ReleaseResult{Released: 2, StoppedByBudget: 2}},
		{"max queries", nil, 3, ReleaseResult{Released: 3, NotRequested: 1}},
		{"max queries within the budget", &accountant.Guarantee{Eps: 1}, 1, ReleaseResult{Released: 1, NotRequested: 3}},
		{"budget before max queries", &accountant.Guarantee{Eps: 1}, 3, ReleaseResult{Released: 2, StoppedByBudget: 1, NotRequested: 1}},
		{"max queries beyond the votes", nil, 9, ReleaseResult{Released: 4}},
	} {
		s := spec(tc.budget, Subsample{}.Name(), 0)
		s.MaxQueries = tc.max
		out, err := Release(ctx, s)
		if err != nil {
			t.Fatalf("%s: %v, want no error: the counts say what stopped the release", tc.name, err)
		}
		if out.Result != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, out.Result, tc.want)
		}
		labels, err := os.ReadFile(s.Sink.Path)
		if err != nil || strings.Count(string(labels), "\n") != 3+tc.want.Released {
			t.Errorf("%s: labels %q, %v", tc.name, labels, err)
		}
	}
	s := spec(nil, Subsample{}.Name(), 0)
	s.MaxQueries = -1
	if _, err := Release(ctx, s); err == nil || !strings.Contains(err.Error(), "MaxQueries") {
		t.Errorf("MaxQueries -1: %v, want refused naming the field", err)
	}
	cacheOnly := spec(nil, DaRRM{}.Name(), 0)
	cacheOnly.Mechanism = DaRRM{Target: built(p), Gamma: optimal.Source{CacheOnly: true}}
	for _, tc := range []struct {
		name string
		spec ReleaseSpec
		step Step
	}{
		{"no mechanism", spec(nil, "nosuch", 0), StepBuild},
		{"dsub needs Delta = 0", spec(nil, DSub{}.Name(), 1e-5), StepBuild},
		{"gamma from a cache only, without one", cacheOnly, StepGamma},
		{"one-vote votes without a partition", spec(nil, GNMax{}.Name(), 1e-5), StepBinding},
	} {
		_, err := Release(ctx, tc.spec)
		var re *ReleaseError
		if !errors.As(err, &re) || re.Step != tc.step {
			t.Errorf("%s: %v, want a failure at step %d", tc.name, err, tc.step)
		}
	}
}

// TestCertifiedOnce: building the same aggregator again with one Memo (a
// plan's last probe, its count, its simulation) reuses the certificate of
// exactly its problem and gamma; another gamma or problem is certified
// anew, and a gamma that failed its certificate fails it again without a
// new one. Without a Memo each build certifies.
func TestCertifiedOnce(t *testing.T) {
	ctx := context.Background()
	p := constraints.New(11, 3, 0.1, 1e-5)
	g := optGamma(t, p)
	opts := Options{Memo: new(accountant.Memo)}
	n := countVerify(&opts)
	for range 3 {
		if _, err := newPrivateDaRRM(ctx, p, g, opts); err != nil {
			t.Fatal(err)
		}
	}
	if got := n.Load(); got != 1 {
		t.Errorf("three builds of one gamma computed %d certificates, want 1", got)
	}
	other := slices.Clone(g)
	other[0] *= 0.5
	other[len(other)-1] *= 0.5
	if _, err := newPrivateDaRRM(ctx, p, other, opts); err != nil {
		t.Fatal(err)
	}
	// At another problem the same gamma gets a certificate of its own,
	// whatever it finds.
	if _, err := newPrivateDaRRM(ctx, constraints.New(11, 3, 0.11, 1e-5), g, opts); err != nil && !errors.Is(err, gamma.ErrNotCertified) {
		t.Fatal(err)
	}
	if got := n.Load(); got != 3 {
		t.Errorf("two new (problem, gamma) pairs: %d certificates in all, want 3", got)
	}
	one := slices.Repeat([]float64{1}, len(g))
	for range 2 {
		if _, err := newPrivateDaRRM(ctx, p, one, opts); !errors.Is(err, gamma.ErrNotCertified) {
			t.Errorf("the exact majority: err = %v, want ErrNotCertified", err)
		}
	}
	if got := n.Load(); got != 4 {
		t.Errorf("the exact majority built twice: %d certificates in all, want 4", got)
	}
	if _, err := newPrivateDaRRM(ctx, p, g, Options{verify: opts.verify}); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 5 {
		t.Errorf("a build without a Memo: %d certificates in all, want 5", got)
	}
}
