package votefile

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"testing"
)

// BenchmarkCountsNPYvsCSV reads 500,000 and 5,000,000 queries of 10
// vote counts (K = 250) as an int64 NumPy file and as CSV, the same
// counts, each from a stream made on the fly (a block of 1,000 queries
// repeated), so that B/op is the reader's own memory: the same at both
// sizes, flat in the number of queries.
func BenchmarkCountsNPYvsCSV(b *testing.B) {
	for _, queries := range []int{500_000, 5_000_000} {
		benchmarkCounts(b, queries)
	}
}

func benchmarkCounts(b *testing.B, queries int) {
	const classes, block = 10, 1000
	rows := make([][]int, block)
	for i := range rows {
		rows[i] = make([]int, classes)
		left := 250
		for j := range classes - 1 {
			n := (i*7 + j*31) % (left + 1) / 2
			rows[i][j], left = n, left-n
		}
		rows[i][classes-1] = left
	}
	var csv []byte
	var vals []float64
	for _, r := range rows {
		for j, n := range r {
			if j > 0 {
				csv = append(csv, ',')
			}
			csv = strconv.AppendInt(csv, int64(n), 10)
			vals = append(vals, float64(n))
		}
		csv = append(csv, '\n')
	}
	npyData := npyFile("<i8", []int{queries, classes}, false, vals)
	head := npyData[:len(npyData)-len(vals)*8]
	npyBlock := npyData[len(head):]
	inputs := []struct {
		name        string
		head, block []byte
	}{
		{"npy-int64", head, npyBlock},
		{"csv", nil, csv},
	}
	for _, in := range inputs {
		b.Run(fmt.Sprintf("%s/%dx%d", in.name, queries, classes), func(b *testing.B) {
			size := int64(len(in.head)) + int64(len(in.block))*int64(queries/block)
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				r := io.MultiReader(bytes.NewReader(in.head), &repeatReader{line: in.block, n: queries / block})
				f, err := open(r, in.name, FormatAuto)
				if err != nil {
					b.Fatal(err)
				}
				cr, err := f.Classes(classOptions{Input: inputCounts})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for cr.Next() {
					n++
				}
				if cr.Err() != nil || n != queries {
					b.Fatalf("%d queries, %v", n, cr.Err())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(queries), "ns/query")
		})
	}
}
