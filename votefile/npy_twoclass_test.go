package votefile

import (
	"archive/zip"
	"bytes"
	"errors"
	"strings"
	"testing"
)

// twoClassMeta is the header of K = 5 private teachers' 0/1 votes, as a
// sidecar of NumPy votes states it.
func twoClassMeta(k int) *Meta {
	eps, delta := 0.1, 1e-5
	return &Meta{Ensemble: "np-two", K: k, Classes: 2, Layout: LayoutVotes, Relation: "private-teachers", Kind: "fixed", Partition: "shared",
		Teachers: []TeacherGroup{{Count: k, Eps: &eps, Delta: &delta, Source: TeacherSource{Method: "stated", Neighbours: AddRemove}}}}
}

// TestNPYTwoClass: a NumPy array of 0/1 votes, queries x K, whose header
// (a sidecar) states two classes in layout votes is read as 0/1 votes,
// each teacher's vote (Query.Votes), which the two-class mechanisms need:
// in C or Fortran order, as .npy or from an archive; as the CSV file of
// the same votes is. A value other than 0 or 1, a width other than K or
// an orientation of teachers in rows is refused.
func TestNPYTwoClass(t *testing.T) {
	votes := [][]int{{0, 1, 1, 0, 1}, {1, 1, 1, 1, 1}, {0, 0, 0, 1, 0}, {1, 0, 1, 0, 0}}
	m := twoClassMeta(5)
	var csv strings.Builder
	for _, v := range votes {
		for j, x := range v {
			if j > 0 {
				csv.WriteByte(',')
			}
			csv.WriteByte('0' + byte(x))
		}
		csv.WriteByte('\n')
	}
	read := func(r Reader) [][]byte {
		var out [][]byte
		for r.Next() {
			q := r.Query()
			if len(q.Counts) != 2 || q.Counts[0]+q.Counts[1] != r.K() {
				t.Fatalf("counts %v of K = %d", q.Counts, r.K())
			}
			out = append(out, bytes.Clone(q.Votes))
		}
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
		return out
	}
	in, _, err := readVotes(strings.NewReader(csv.String()), "v.csv", Options{Meta: m, MetaFile: "v.csv.meta.json"})
	if err != nil {
		t.Fatal(err)
	}
	want := read(in)
	cOrder := npyFile("|u1", []int{4, 5}, false, floats(votes))
	fortran := npyFile("<i8", []int{4, 5}, true, floats(transpose(votes)))
	for _, tc := range []struct {
		name string
		data []byte
		opts Options
	}{
		{"C order", cOrder, Options{}},
		{"Fortran order, streamed", fortran, Options{}},
		{"Fortran order, in place", fortran, Options{Size: int64(len(fortran))}},
		{"archive", archiveBytes(zip.Deflate, fortran), Options{Array: "votes"}},
		{"rows stated", cOrder, Options{Orientation: QueriesInRows}},
	} {
		tc.opts.Meta, tc.opts.MetaFile = m, "v.npy.meta.json"
		if tc.opts.Array != "" {
			tc.opts.Size = int64(len(tc.data))
		}
		in, _, err := readVotes(bytes.NewReader(tc.data), "v.npy", tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if in.Input() != TwoClass || in.Format() != FormatNPY || in.K() != 5 || in.Classes() != 2 || in.HasID() {
			t.Errorf("%s: read as %v of K = %d, C = %d, format %v", tc.name, in.Input(), in.K(), in.Classes(), in.Format())
		}
		if got := read(in); !equalRows(got, want) {
			t.Errorf("%s: votes %v, want %v", tc.name, got, want)
		}
	}
	for _, tc := range []struct {
		name string
		data []byte
		opts Options
		want string
	}{
		{"a vote of 2", npyFile("<i4", []int{2, 5}, false, []float64{0, 1, 1, 0, 1, 1, 1, 2, 1, 1}), Options{},
			"element [1, 2] = 2 (query 2, vote of teacher 3): a vote must be 0 or 1"},
		{"abstention", npyFile("<i4", []int{1, 5}, false, []float64{0, 1, -1, 0, 1}), Options{}, "element [0, 2] = -1"},
		{"a fraction", npyFile("<f8", []int{1, 5}, false, []float64{0, 1, 0.5, 0, 1}), Options{}, "element [0, 2] = 0.5"},
		{"K teachers in the other axis", npyFile("<i8", []int{5, 4}, false, floats(transpose(votes))), Options{},
			"shape (5, 4): 4 votes a query (a row per query: two-class 0/1 votes), but the metadata header (v.npy.meta.json) states K = 5"},
		{"teachers in rows", cOrder, Options{Orientation: TeachersInRows}, "Options.Orientation = teachers-in-rows reads class labels (Options.Classes = C), a row per teacher"},
	} {
		tc.opts.Meta, tc.opts.MetaFile = m, "v.npy.meta.json"
		in, _, err := readVotes(bytes.NewReader(tc.data), "v.npy", tc.opts)
		if err == nil {
			for in.Next() {
			}
			err = in.Err()
		}
		var bad interface{ BadInput() bool }
		if err == nil || !errors.As(err, &bad) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// Without a header a NumPy array holds counts (or class labels).
	if in, _, err := readVotes(bytes.NewReader(cOrder), "v.npy", Options{}); err == nil && in.Input() != ManyClasses {
		t.Errorf("without a header: read as %v", in.Input())
	}
}

func equalRows(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
