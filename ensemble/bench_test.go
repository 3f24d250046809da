package ensemble

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/internal/fixtures"
)

// benchVotes returns n CSV rows of K = 11 votes.
func benchVotes(n int, id bool) []byte {
	src := NewSeededSource(1)
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
		vr, err := NewVoteReader(bytes.NewReader(data), "bench", ReadOptions{})
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
			p := problem(11, 3, 1e-5)
			r, err := benchDaRRM(p)
			if err != nil {
				b.Fatal(err)
			}
			data := benchVotes(100000, tc.id)
			b.SetBytes(int64(len(data)))
			src := NewSource()
			for b.Loop() {
				vr, err := NewVoteReader(bytes.NewReader(data), "bench", ReadOptions{})
				if err != nil {
					b.Fatal(err)
				}
				lw, _ := NewLabelWriter(io.Discard, FormatCSV)
				if _, err := Release(context.Background(), vr, r, src, lw, -1, ReleaseOptions{Experiment: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAggregate(b *testing.B) {
	ctx := context.Background()
	p := problem(11, 3, 1e-5)
	d, err := benchDaRRM(p)
	if err != nil {
		b.Fatal(err)
	}
	s, _ := NewSubsample(ctx, p, Options{})
	r, _ := NewRR(ctx, p, accountant.Simple, 0, Options{})
	g, _ := NewGNMax(p, accountant.GNMaxGrid)
	votes := arrange(11, 7, 0)
	for _, agg := range []Aggregator{d, s, r, g} {
		for _, src := range []struct {
			name string
			src  *Source
		}{{"crypto", NewSource()}, {"seeded", NewSeededSource(1)}} {
			b.Run(agg.Name()+"/"+src.name, func(b *testing.B) {
				for b.Loop() {
					if _, err := agg.Aggregate(votes, src.src); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchDaRRM is DaRRM with gamma_opt for problem(11, 3, 1e-5).
func benchDaRRM(p constraints.Params) (*DaRRM, error) {
	g, err := fixtures.GammaK11M3()
	if err != nil {
		return nil, err
	}
	return NewDaRRM(context.Background(), p, g, Options{})
}
