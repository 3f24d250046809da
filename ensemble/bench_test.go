package ensemble

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/fixtures"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// benchVotes returns n CSV rows of K = 11 votes.
func benchVotes(n int, id bool) []byte {
	src := noise.NewSeededSource(1)
	var b bytes.Buffer
	for i := range n {
		if id {
			b.WriteString("q")
			b.WriteString(strings.Repeat("7", 1+i%6))
			b.WriteByte(',')
		}
		for j := range 11 {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('0' + byte(src.Uint64()&1))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func BenchmarkReadCSV(b *testing.B) {
	data := benchVotes(100000, false)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		vr, err := votefile.Open("bench", votefile.Options{In: bytes.NewReader(data)})
		if err != nil {
			b.Fatal(err)
		}
		for vr.Next() {
		}
		if vr.Err() != nil {
			b.Fatal(vr.Err())
		}
	}
}

// BenchmarkRelease is aggregate's loop without the process: read CSV,
// DaRRM with crypto/rand, write CSV labels. One op is 100,000 queries.
func BenchmarkRelease(b *testing.B) {
	for _, tc := range []struct {
		name string
		id   bool
	}{{"plain", false}, {"id", true}} {
		b.Run(tc.name, func(b *testing.B) {
			p := constraints.New(11, 3, 0.1, 1e-5)
			r, err := benchDaRRM(p)
			if err != nil {
				b.Fatal(err)
			}
			data := benchVotes(100000, tc.id)
			b.SetBytes(int64(len(data)))
			src := noise.NewSource()
			for b.Loop() {
				vr, err := votefile.Open("bench", votefile.Options{In: bytes.NewReader(data)})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ReleaseTo(context.Background(), vr, r, src, LabelSink{Stdout: io.Discard, Format: votefile.FormatCSV}, -1, ReleaseOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAggregate(b *testing.B) {
	ctx := context.Background()
	p := constraints.New(11, 3, 0.1, 1e-5)
	d, err := benchDaRRM(p)
	if err != nil {
		b.Fatal(err)
	}
	s, _ := newSubsample(ctx, p, Options{})
	r, _ := newRR(ctx, p, accountant.Simple, 0, Options{})
	g, _ := newGNMax(p, noisymax.GNMaxGrid)
	votes := arrange(11, 7, 0)
	for _, agg := range []Aggregator{d, s, r, g} {
		for _, src := range []struct {
			name string
			src  *noise.Source
		}{{"crypto", noise.NewSource()}, {"seeded", noise.NewSeededSource(1)}} {
			b.Run(string(agg.Name())+"/"+src.name, func(b *testing.B) {
				for b.Loop() {
					if _, err := agg.Aggregate(votes, src.src); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchDaRRM is DaRRM with gamma_opt for constraints.New(11, 3, 0.1, 1e-5).
func benchDaRRM(p constraints.Problem) (Aggregator, error) {
	g, err := fixtures.GammaK11M3()
	if err != nil {
		return nil, err
	}
	return newPrivateDaRRM(context.Background(), p, g, Options{})
}

// benchCounts returns n CSV rows of the vote counts of K = 250 teachers
// over C = 10 classes, each with a plurality of 150-249 votes.
func benchCounts(n int) []byte {
	src := noise.NewSeededSource(2)
	var b bytes.Buffer
	row := make([]int, 10)
	for range n {
		clear(row)
		top := 150 + src.IntN(100)
		row[src.IntN(10)] += top
		for range 250 - top {
			row[src.IntN(10)]++
		}
		for j, x := range row {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(x))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// benchMulti are the multi-class aggregators of PATE's MNIST setting:
// Confident-GNMax (T = 200, σ1 = 150, σ2 = 40), GNMax (σ = 40) and LNMax
// (b = 20), for K = 250 and C = 10.
func benchMulti(b *testing.B) []Labeler {
	cg, err := classOf(ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: GNMax{Sigma2: 40, Noise: noisymax.DiscreteNoise}}, 250, 10, 1e-5)
	if err != nil {
		b.Fatal(err)
	}
	g, _ := classOf(GNMax{Sigma2: 40, Noise: noisymax.DiscreteNoise}, 250, 10, 1e-5)
	l, _ := newLNMax(20, 250, 10)
	return []Labeler{cg, g, l}
}

// BenchmarkClassLabel is one label of each multi-class aggregator with
// crypto/rand: ten exact noise draws (eleven with the threshold step).
func BenchmarkClassLabel(b *testing.B) {
	q := &votefile.Query{Counts: []int{180, 30, 10, 10, 5, 5, 4, 3, 2, 1}}
	src := noise.NewSource()
	for _, agg := range benchMulti(b) {
		b.Run(string(agg.Name()), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := agg.Answer(q, src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReleaseMulti is aggregate's multi-class loop without the
// process: read a CSV counts file, label with crypto/rand, write CSV
// labels. One op is 10,000 queries.
func BenchmarkReleaseMulti(b *testing.B) {
	data := benchCounts(10000)
	for _, agg := range benchMulti(b) {
		b.Run(string(agg.Name()), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			src := noise.NewSource()
			for b.Loop() {
				in, err := votefile.Open("bench", votefile.Options{In: bytes.NewReader(data), Layout: votefile.LayoutCounts})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ReleaseTo(context.Background(), in, agg, src, LabelSink{Stdout: io.Discard, Format: votefile.FormatCSV}, -1, ReleaseOptions{Partition: provenance.KeyedHash}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*10000/b.Elapsed().Seconds(), "queries/s")
		})
	}
}

// BenchmarkOneVoteDaRRM builds DaRRM in the one-vote relation with its
// certificate and its label's privacy profile, and composes 1,000 labels
// with the profile (the cost a summary adds).
func BenchmarkOneVoteDaRRM(b *testing.B) {
	for _, c := range []struct {
		k          int
		eps, delta float64
	}{{11, 0.2654, 3e-4}, {1001, 0.05, 1e-5}, {10001, 0.01, 1e-6}} {
		p := constraints.NewOneVote(c.k, c.eps, c.delta)
		g := oneVoteGamma(b, p)
		b.Run("K="+strconv.Itoa(c.k), func(b *testing.B) {
			for b.Loop() {
				d, err := newOneVoteDaRRM(context.Background(), p, g, Options{})
				if err != nil {
					b.Fatal(err)
				}
				priv := d.Privacy()
				if _, _, err := accountant.ComposeProfile(priv.Guarantee, priv.Profile, 1000, 1e-5); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCachedGammaRelease compares a release of 10 rows with
// gamma_opt from the cache (Release: the cache entry checked, the
// aggregator built, the labels written) with one exhaustive certificate
// of that gamma (gamma.Verify, what darrm verify computes): the release
// certifies its gamma once, so the two should be close (measured at
// K = 101 on 2 loaded cores: release 8.4 ms, verify 8.1 ms, the two-step
// load-then-build 16.1 ms). The labels go to io.Discard: a label file's
// fsync would measure the disk.
func BenchmarkCachedGammaRelease(b *testing.B) {
	ctx := context.Background()
	const k = 101
	p := constraints.New(k, 3, 0.1, 1e-5)
	d, err := cache.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	prior := gamma.UniformPrior()
	l, err := optimal.Source{Cache: d, Prior: prior}.Load(ctx, p)
	if err != nil {
		b.Fatal(err)
	}
	src := noise.NewSeededSource(1)
	var votes strings.Builder
	for range 10 {
		for j := range k {
			if j > 0 {
				votes.WriteByte(',')
			}
			votes.WriteByte('0' + byte(src.Uint64()&1))
		}
		votes.WriteByte('\n')
	}
	b.Run("verify", func(b *testing.B) {
		for b.Loop() {
			if _, err := gamma.Verify(ctx, p, l.Gamma, gamma.VerifyOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The two steps a caller can still take, Source.Load then Build,
	// certify the gamma twice: the cache's check, then the aggregator's.
	b.Run("load-then-build", func(b *testing.B) {
		for b.Loop() {
			src := optimal.Source{Cache: d, Prior: prior, CacheOnly: true}
			l, err := src.Load(ctx, p)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := New(ctx, DaRRM{Target: built(p), Gamma: optimal.Source{Given: l.Gamma}}, p.K, 2, teachers(p), Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("release", func(b *testing.B) {
		for b.Loop() {
			in, err := votefile.Open("votes.csv", votefile.Options{In: strings.NewReader(votes.String())})
			if err != nil {
				b.Fatal(err)
			}
			_, err = Release(ctx, ReleaseSpec{
				Votes: in, Mechanism: DaRRM{Target: built(p), Gamma: optimal.Source{Cache: d, Prior: prior, CacheOnly: true}},
				Teachers: ptr(teachers(p)), DeltaPrime: 1e-5,
				Sink: LabelSink{Stdout: io.Discard, Format: votefile.FormatCSV},
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
