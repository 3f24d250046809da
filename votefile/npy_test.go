package votefile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio/npy"

	"github.com/darrm/darrm/internal/quotetest"
)

// npyFile builds a NumPy file of version 1.0 as numpy.save writes it:
// the header dictionary padded with spaces to a multiple of 64 bytes,
// then the values, each written by put in the byte order of descr.
func npyFile(descr string, shape []int, fortran bool, vals []float64) []byte {
	order := "False"
	if fortran {
		order = "True"
	}
	b := bytes.NewBuffer(npyDict(fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, order, shapeText(shape))))
	var bo binary.ByteOrder = binary.LittleEndian
	if descr[0] == '>' {
		bo = binary.BigEndian
	}
	for _, v := range vals {
		switch descr[1:] {
		case "i1", "u1":
			b.WriteByte(byte(int8(v)))
		case "i2":
			binary.Write(b, bo, int16(v))
		case "i4":
			binary.Write(b, bo, int32(v))
		case "i8":
			binary.Write(b, bo, int64(v))
		case "u8":
			binary.Write(b, bo, uint64(v))
		case "f4":
			binary.Write(b, bo, float32(v))
		case "f8":
			binary.Write(b, bo, v)
		default:
			b.WriteByte(0)
		}
	}
	return b.Bytes()
}

// npyDict returns the preamble and header of a NumPy file of version
// 1.0 whose header is the dictionary dict, padded as numpy.save pads it.
func npyDict(dict string) []byte {
	pad := 64 - (10+len(dict)+1)%64
	dict += strings.Repeat(" ", pad%64) + "\n"
	var b bytes.Buffer
	b.Write(npy.Magic[:])
	b.Write([]byte{1, 0})
	binary.Write(&b, binary.LittleEndian, uint16(len(dict)))
	b.WriteString(dict)
	return b.Bytes()
}

// floats converts rows of ints to the values of an array in C order.
func floats(rows [][]int) []float64 {
	var out []float64
	for _, r := range rows {
		for _, v := range r {
			out = append(out, float64(v))
		}
	}
	return out
}

// transpose returns the columns of rows as rows.
func transpose(rows [][]int) [][]int {
	out := make([][]int, len(rows[0]))
	for j := range out {
		for _, r := range rows {
			out[j] = append(out[j], r[j])
		}
	}
	return out
}

// readNPY reads every query's counts, or the error that stops the file.
func readNPY(data []byte, opts classOptions) ([][]int, *classReader, error) {
	f, err := open(bytes.NewReader(data), "v.npy", FormatAuto)
	if err != nil {
		return nil, nil, err
	}
	r, err := f.Classes(opts)
	if err != nil {
		return nil, nil, err
	}
	var out [][]int
	for r.Next() {
		out = append(out, append([]int(nil), r.Query().Counts...))
	}
	return out, r, r.Err()
}

func TestNPYReader(t *testing.T) {
	// Three queries of K = 5 teachers over C = 3 classes, as labels and
	// as the counts they make.
	labels := [][]int{{0, 0, 1, 2, 0}, {2, 2, 2, 1, 2}, {1, 0, 1, 1, 1}}
	counts := [][]int{{3, 1, 1}, {0, 1, 4}, {1, 4, 0}}
	abstain := [][]int{{0, -1, 1, 2, 0}, {2, 2, 2, 1, -1}, {-1, -1, -1, -1, -1}}
	abstainCounts := [][]int{{2, 1, 1}, {0, 1, 3}, {0, 0, 0}}
	classes := classOptions{Input: inputClasses, Classes: 3, K: 5, Orientation: QueriesInRows}
	inRows := classOptions{Input: inputClasses, Classes: 3, Orientation: TeachersInRows, K: 5}
	// Wide labels: 2 queries of 5 teachers, more teachers than queries.
	wide := [][]int{{0, 0, 1, 2, 0}, {2, 2, 2, 1, 2}}
	tests := []struct {
		name  string
		data  []byte
		opts  classOptions
		want  [][]int
		k     int
		error string
	}{
		{"int64 counts", npyFile("<i8", []int{3, 3}, false, floats(counts)), classOptions{}, counts, 5, ""},
		{"float64 whole counts", npyFile("<f8", []int{3, 3}, false, floats(counts)), classOptions{}, counts, 5, ""},
		{"float32 counts", npyFile("<f4", []int{3, 3}, false, floats(counts)), classOptions{Input: inputCounts}, counts, 5, ""},
		{"uint8 counts", npyFile("|u1", []int{3, 3}, false, floats(counts)), classOptions{}, counts, 5, ""},
		{"big-endian int32 counts", npyFile(">i4", []int{3, 3}, false, floats(counts)), classOptions{}, counts, 5, ""},
		{"Fortran-order counts", npyFile("<i2", []int{3, 3}, true, floats(transpose(counts))), classOptions{}, counts, 5, ""},
		{"labels, queries x teachers", npyFile("<i8", []int{3, 5}, false, floats(labels)), classes, counts, 5, ""},
		{"labels, teachers x queries", npyFile("<i8", []int{5, 3}, false, floats(transpose(labels))), inRows, counts, 5, ""},
		{"labels, teachers x queries, Fortran", npyFile("<i4", []int{5, 3}, true, floats(labels)), inRows, counts, 5, ""},
		{"abstentions in labels", npyFile("<i8", []int{3, 5}, false, floats(abstain)), classes, abstainCounts, 5, ""},
		{"abstentions in counts, K stated", npyFile("<i8", []int{3, 3}, false, floats(abstainCounts)), classOptions{K: 5}, abstainCounts, 5, ""},
		{"abstentions in counts, K not stated", npyFile("<i8", []int{3, 3}, false, floats(abstainCounts)), classOptions{}, nil, 0,
			"query 3: counts do not sum to K = 4 (as in the first data row) (not quoted: a query's votes are private; a row may sum to fewer, teachers abstaining, when K is stated"},
		{"counts above a stated K", npyFile("<i8", []int{3, 3}, false, floats(counts)), classOptions{K: 4}, nil, 0, "query 1: counts sum to more than K = 4"},
		{"fractional count", npyFile("<f8", []int{3, 3}, false, []float64{3, 1, 1, 0, 1.5, 3.5, 1, 4, 0}), classOptions{}, nil, 0,
			"element [1, 1] = 1.5 (query 2, count of class 1): a vote count must be a whole number"},
		{"NaN count", npyFile("<f8", []int{3, 3}, false, []float64{3, 1, math.NaN(), 0, 1, 4, 1, 4, 0}), classOptions{}, nil, 0, "element [0, 2] = NaN"},
		{"negative count", npyFile("<i8", []int{3, 3}, false, []float64{3, 1, 1, -1, 2, 4, 1, 4, 0}), classOptions{}, nil, 0,
			"element [1, 0] = -1 (query 2, count of class 0): a vote count must be a whole number in [0, 999999999]"},
		{"label -2", npyFile("<i8", []int{3, 5}, false, []float64{0, 0, 1, 2, 0, 2, 2, -2, 1, 2, 1, 0, 1, 1, 1}), classes, nil, 0,
			"element [1, 2] = -2 (query 2, class label of teacher 3): a class label must be a class in [0, 3), or -1"},
		{"label of no class", npyFile("<i8", []int{5, 3}, false, floats(transpose([][]int{{0, 0, 1, 2, 0}, {2, 2, 2, 3, 2}, {1, 0, 1, 1, 1}}))), inRows, nil, 0,
			"element [3, 1] = 3 or above (not quoted: a teacher's vote is private) (query 2, class label of teacher 4)"},
		{"uint64 beyond int64", npyFile("<u8", []int{1, 2}, false, []float64{1 << 63, 1}), classOptions{}, nil, 0, "element [0, 0] = 9223372036854775808"},
		{"truncated", npyFile("<i8", []int{3, 3}, false, floats(counts))[:128+8*7], classOptions{}, nil, 0,
			"NumPy file truncated: the header states shape (3, 3) of <i8 (72 bytes of data), but the data end within query 3"},
		{"truncated, gathered", npyFile("<i8", []int{5, 3}, false, floats(transpose(labels)))[:128+8*14], inRows, nil, 0, "truncated"},
		{"data after the array", append(npyFile("<i8", []int{3, 3}, false, floats(counts)), 0), classOptions{}, nil, 0, "data after the 3 x 3 values"},
		{"labels read as counts", npyFile("<i8", []int{3, 5}, false, floats(labels)), classOptions{}, nil, 0,
			"give Options.Classes = C with its orientation, Options.Orientation = teachers-in-rows (the layout of PATE's published votes) or Options.Orientation = queries-in-rows"},
		// Whatever the shape, class labels need their orientation stated;
		// a stated one is trusted.
		{"labels, orientation unstated", npyFile("<i8", []int{3, 5}, false, floats(labels)), classOptions{Input: inputClasses, Classes: 3}, nil, 0,
			"a matrix of class labels, shape (3, 5), without a metadata header: state which axis holds the teachers, Options.Orientation = teachers-in-rows (a row per teacher, the layout of PATE's published votes) or Options.Orientation = queries-in-rows (a row per query)"},
		{"square labels, orientation unstated", npyFile("<i8", []int{3, 3}, false, floats(counts)), classOptions{Input: inputClasses, Classes: 5, K: 3}, nil, 0, "state which axis holds the teachers"},
		{"more teachers than queries, stated", npyFile("<i8", []int{2, 5}, false, floats(wide)), classOptions{Input: inputClasses, Classes: 3, Orientation: QueriesInRows}, [][]int{{3, 1, 1}, {0, 1, 4}}, 5, ""},
		{"more teachers than queries, in rows", npyFile("<i8", []int{5, 2}, false, floats(transpose(wide))), classOptions{Input: inputClasses, Classes: 3, Orientation: TeachersInRows}, [][]int{{3, 1, 1}, {0, 1, 4}}, 5, ""},
		{"K along the other axis", npyFile("<i8", []int{5, 3}, false, floats(transpose(labels))), classOptions{Input: inputClasses, Classes: 3, K: 5, Orientation: QueriesInRows}, nil, 0,
			"shape (5, 3) read as queries x teachers (Options.Orientation = queries-in-rows) has 3 teachers, but K = 5 is stated, the number along the other axis: is the orientation Options.Orientation = teachers-in-rows?"},
		{"teachers in rows for counts", npyFile("<i8", []int{3, 3}, false, floats(counts)), classOptions{Orientation: TeachersInRows}, nil, 0, "Options.Orientation = teachers-in-rows reads class labels"},
		{"queries in rows for counts", npyFile("<i8", []int{3, 3}, false, floats(counts)), classOptions{Orientation: QueriesInRows}, counts, 5, ""},
		{"1-D", npyFile("<i8", []int{3}, false, []float64{1, 2, 3}), classOptions{}, nil, 0, "shape (3,): want a 2-D array"},
		{"3-D", npyFile("<i8", []int{1, 1, 2}, false, []float64{1, 2}), classOptions{}, nil, 0, "shape (1, 1, 2): want a 2-D array"},
		{"empty", npyFile("<i8", []int{0, 3}, false, nil), classOptions{}, nil, 0, "shape (0, 3): want at least one query"},
		{"too wide", npyFile("<i8", []int{1, 1 << 58}, false, nil), classOptions{}, nil, 0, "shape (1, 288230376151711744): 288230376151711744 values a query: at most 524288"},
		{"beyond the address space", npyFile("<i8", []int{1 << 32, 1 << 32}, false, nil), classOptions{}, nil, 0, "more values than this machine can address"},
		{"strings", npyFile("<U3", []int{1, 2}, false, nil), classOptions{}, nil, 0, "dtype \"<U3\""},
		{"bool", npyFile("|b1", []int{1, 2}, false, nil), classOptions{}, nil, 0, "dtype \"|b1\" (bool): want an integer or a float array"},
		{"not a dtype", npyFile("<x9", []int{1, 2}, false, nil), classOptions{}, nil, 0, "dtype \"<x9\": not a NumPy dtype"},
		{"version 3", append(append(append([]byte{}, npy.Magic[:]...), 3, 0), make([]byte, 8)...), classOptions{}, nil, 0, "format version 3.0"},
		{"header truncated", npyFile("<i8", []int{3, 3}, false, nil)[:40], classOptions{}, nil, 0, "truncated in its header"},
		{"header too long", append(append(append([]byte{}, npy.Magic[:]...), 2, 0, 0, 0, 0, 1), make([]byte, 8)...), classOptions{}, nil, 0, "a header of 16777216 bytes: must be at most 32768"},
		{"malformed dictionary", append(append(append([]byte{}, npy.Magic[:]...), 1, 0, 4, 0), []byte("{}\n\n")...), classOptions{}, nil, 0, "unreadable header"},
		{"order neither True nor False", npyDict("{'descr': '<i8', 'fortran_order': Maybe, 'shape': (1, 2), }"), classOptions{}, nil, 0, `unreadable header: fortran_order "Maybe": want True or False`},
		{"a shape element no number", npyDict("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2x), }"), classOptions{}, nil, 0, `unreadable header: shape element "2x": want a whole number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, r, err := readNPY(tc.data, tc.opts)
			if tc.error != "" {
				if err == nil || !strings.Contains(err.Error(), tc.error) {
					t.Fatalf("error %v, want %q", err, tc.error)
				}
				if fe, ok := err.(*formatError); !ok || !fe.BadInput() {
					t.Errorf("error %T: want a *formatError, the caller's input", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("counts %v, want %v", got, tc.want)
			}
			if r.K() != tc.k || r.Format() != FormatNPY || r.Input() != ManyClasses {
				t.Errorf("K = %d, format %v, many classes %v: want K = %d, npy", r.K(), r.Format(), r.Input() == ManyClasses, tc.k)
			}
		})
	}
}

// TestNPYAbstained checks that the votes not cast are counted, and that
// a file of class labels, or counts under a stated K, says a teacher may
// abstain.
// TestCSVTeachersInRows: a CSV matrix of class labels, a row per teacher,
// reads as the same array in NumPy, and one read the other way round is
// refused when its size shows it.
func TestCSVTeachersInRows(t *testing.T) {
	const csv = "0,2,1\n0,2,0\n1,2,1\n2,1,1\n0,2,1\n"
	want := [][]int{{3, 1, 1}, {0, 1, 4}, {1, 4, 0}}
	for _, tc := range []struct {
		name, data string
		opts       classOptions
	}{
		{"plain", csv, classOptions{}},
		{"header row of query names", "q1,q2,q3\n" + csv, classOptions{}},
		{"teacher names", "t1,0,2,1\nt2,0,2,0\nt3,1,2,1\nt4,2,1,1\nt5,0,2,1\n", classOptions{ID: present}},
		{"integral floats", "0.0,2.0,1.0\n0,2,0\n1,2,1\n2,1,1\n0,2,1\n", classOptions{}},
	} {
		tc.opts.Input, tc.opts.Classes, tc.opts.Orientation, tc.opts.K = inputClasses, 3, TeachersInRows, 5
		r, err := newClassReader(strings.NewReader(tc.data), "m.csv", tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got [][]int
		for r.Next() {
			got = append(got, append([]int(nil), r.Query().Counts...))
		}
		if r.Err() != nil || !reflect.DeepEqual(got, want) || r.K() != 5 || r.Format() != FormatCSV {
			t.Errorf("%s: %v, K = %d, %v, %v; want %v, K = 5, csv", tc.name, got, r.K(), r.Format(), r.Err(), want)
		}
	}
	for _, tc := range []struct {
		name, data string
		opts       classOptions
		want       string
	}{
		{"a label of no class", "0,2,1\n0,3,0\n", classOptions{Input: inputClasses, Classes: 3, Orientation: TeachersInRows}, "m.csv: element [1, 1] = 3 or above (not quoted: a teacher's vote is private) (query 2, class label of teacher 2)"},
		{"a ragged row", "0,2,1\n0,2\n", classOptions{Input: inputClasses, Classes: 3, Orientation: TeachersInRows}, "line 2: 2 class labels, want 3"},
		{"not a label", "0,2,1\n0,x,1\n", classOptions{Input: inputClasses, Classes: 3, Orientation: TeachersInRows}, "line 2, column 2: class label \"x\""},
		{"counts", "0,2,1\n", classOptions{Input: inputCounts, Orientation: TeachersInRows}, "Options.Orientation = teachers-in-rows reads class labels"},
		{"orientation unstated", "0,2,1,0,1,1\n0,2,1,0,1,1\n", classOptions{Input: inputClasses, Classes: 3}, "m.csv: a matrix of class labels without a metadata header: state which axis holds the teachers"},
	} {
		r, err := newClassReader(strings.NewReader(tc.data), "m.csv", tc.opts)
		if err == nil {
			for r.Next() {
			}
			err = r.Err()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A stated orientation is trusted, whatever the shape: 2 queries of 6
	// teachers.
	if r, err := newClassReader(strings.NewReader("0,2,1,0,1,1\n0,2,1,0,1,1\n"), "m.csv", classOptions{Input: inputClasses, Classes: 3, Orientation: QueriesInRows}); err != nil || r.K() != 6 {
		t.Errorf("queries in rows: %v", err)
	}
}

func TestNPYAbstained(t *testing.T) {
	abstain := [][]int{{0, -1, 1, 2, 0}, {2, 2, 2, 1, -1}, {-1, -1, -1, -1, -1}}
	_, r, err := readNPY(npyFile("<i8", []int{3, 5}, false, floats(abstain)), classOptions{Input: inputClasses, Classes: 3, K: 5, Orientation: QueriesInRows})
	if err != nil {
		t.Fatal(err)
	}
	if r.Abstained() != 7 || !r.MayAbstain() {
		t.Errorf("abstained %d, may abstain %v: want 7, true", r.Abstained(), r.MayAbstain())
	}
	_, r, err = readNPY(npyFile("<i8", []int{1, 2}, false, []float64{3, 1}), classOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Abstained() != 0 || r.MayAbstain() {
		t.Errorf("counts without K: abstained %d, may abstain %v: want 0, false", r.Abstained(), r.MayAbstain())
	}
}

// TestNPYLikeCSV: the same counts read from a CSV file and from NumPy
// files of every dtype give the same queries.
func TestNPYLikeCSV(t *testing.T) {
	counts := [][]int{{240, 5, 5}, {200, 30, 20}, {0, 0, 250}, {83, 83, 84}}
	var csv strings.Builder
	for _, r := range counts {
		fmt.Fprintf(&csv, "%d,%d,%d\n", r[0], r[1], r[2])
	}
	want, _, err := func() ([][]int, *classReader, error) {
		f, err := open(strings.NewReader(csv.String()), "v.csv", FormatAuto)
		if err != nil {
			return nil, nil, err
		}
		r, err := f.Classes(classOptions{Input: inputCounts})
		if err != nil {
			return nil, nil, err
		}
		var out [][]int
		for r.Next() {
			out = append(out, append([]int(nil), r.Query().Counts...))
		}
		return out, r, r.Err()
	}()
	if err != nil {
		t.Fatal(err)
	}
	for _, descr := range []string{"<i2", "<i4", "<i8", "<u8", ">i8", "<f4", "<f8", ">f8"} {
		got, _, err := readNPY(npyFile(descr, []int{4, 3}, false, floats(counts)), classOptions{})
		if err != nil {
			t.Fatalf("%s: %v", descr, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", descr, got, want)
		}
	}
}

// TestNPYFromLibrary reads an array that npyio itself wrote (a float64
// matrix, its one 2-D writer) and labels it writes back.
func TestNPYFromLibrary(t *testing.T) {
	var b bytes.Buffer
	if err := npy.Write(&b, [2][3]float64{{3, 1, 1}, {0, 1, 4}}); err != nil {
		t.Fatal(err)
	}
	got, _, err := readNPY(b.Bytes(), classOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{3, 1, 1}, {0, 1, 4}}; !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}

func TestNPYLabelWriter(t *testing.T) {
	var b bytes.Buffer
	lw, err := NewLabelWriter(&b, FormatNPY, true, "# a comment a NumPy file has no room for")
	if err != nil {
		t.Fatal(err)
	}
	reserved := -1
	lw.Reserve = func(n int) error { reserved = n; return nil }
	q := &Query{}
	for i, l := range []int{3, 0, -1, 9} {
		q.Index = i + 1
		if err := lw.WriteLabel(q, max(l, 0), l >= 0); err != nil {
			t.Fatal(err)
		}
	}
	if b.Len() != 0 {
		t.Fatalf("%d bytes written before Flush", b.Len())
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	if reserved != 4 || lw.Written() != 4 {
		t.Errorf("reserved %d, written %d: want 4, 4", reserved, lw.Written())
	}
	raw := b.Bytes()
	if !isNPY(raw) {
		t.Fatalf("no NumPy magic string: % x", raw[:8])
	}
	// NPY format 2.0: a 4-byte little-endian header length, and a header
	// ending in a line feed, then the data.
	hlen := int(binary.LittleEndian.Uint32(raw[8:12]))
	if raw[6] != 2 || raw[12+hlen-1] != '\n' || !strings.HasPrefix(string(raw[12:12+hlen]), "{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }") {
		t.Errorf("header %q", raw[:12+hlen])
	}
	var labels []int64
	if err := npy.Read(bytes.NewReader(raw), &labels); err != nil {
		t.Fatal(err)
	}
	if want := []int64{3, 0, -1, 9}; !reflect.DeepEqual(labels, want) {
		t.Errorf("labels %v, want %v", labels, want)
	}
	if err := lw.WriteLabel(q, 1, true); err == nil {
		t.Error("a label written after the NumPy file")
	}
	lr, err := NewLabelReader(bytes.NewReader(raw), "l.npy")
	if err != nil {
		t.Fatal(err)
	}
	var rows []labelRow
	for lr.Next() {
		rows = append(rows, *lr.Row())
	}
	want := []labelRow{{1, 1, "1", 3, true, 0}, {2, 2, "2", 0, true, 0}, {3, 3, "3", -1, false, 0}, {4, 4, "4", 9, true, 0}}
	if lr.Err() != nil || !reflect.DeepEqual(rows, want) || lr.Meta() != nil {
		t.Errorf("rows %v, %v, want %v", rows, lr.Err(), want)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"-2", npyFile("<i8", []int{3}, false, []float64{1, -2, 0}), "l.npy: NumPy file: element [1] = -2 (query 2): a label must be a class"},
		{"fraction", npyFile("<f8", []int{2}, false, []float64{1, 0.5}), "element [1] = 0.5 (query 2)"},
		{"2-D", npyFile("<i8", []int{1, 2}, false, []float64{1, 0}), "shape (1, 2): want a 1-D array of labels"},
	} {
		lr, err := NewLabelReader(bytes.NewReader(tc.data), "l.npy")
		if err == nil {
			for lr.Next() {
			}
			err = lr.Err()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestOpenNPZ(t *testing.T) {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for name, data := range map[string][]byte{
		"votes.npy": npyFile("<i8", []int{2, 3}, false, []float64{3, 1, 1, 0, 1, 4}),
		"other.npy": npyFile("<f8", []int{1}, false, []float64{1}),
	} {
		w, _ := z.Create(name)
		w.Write(data)
	}
	z.Close()
	path := filepath.Join(t.TempDir(), "a.npz")
	os.WriteFile(path, b.Bytes(), 0o644)
	zf, _ := os.Open(path)
	defer zf.Close()
	st, _ := zf.Stat()
	for _, name := range []string{"votes", "votes.npy"} {
		r, _, err := readVotes(zf, "a.npz", Options{Array: name, Size: st.Size()})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for r.Next() {
			n++
		}
		if r.(*classReader).member != nil {
			t.Errorf("%s: the archive's array is not closed at the end of its rows", name)
		}
		if r.Err() != nil || n != 2 || r.K() != 5 {
			t.Errorf("%s: %d queries of K = %d, %v", name, n, r.K(), r.Err())
		}
	}
	if _, _, err := readVotes(zf, "a.npz", Options{Array: "nope", Size: st.Size()}); err == nil || !strings.Contains(err.Error(), "no array \"nope\" in the archive, which holds") {
		t.Errorf("error %v", err)
	}
	if _, err := open(bytes.NewReader(b.Bytes()), "a.npz", FormatAuto); err == nil || !strings.Contains(err.Error(), "Options.Array = NAME") {
		t.Errorf("an archive opened as a vote file: %v", err)
	}
	// An array in the archive twice (under one name, or with and without
	// .npy): NumPy reads the last, a zip reader the first, so the votes
	// are ambiguous and refused.
	for _, names := range [][2]string{{"votes.npy", "votes.npy"}, {"votes", "votes.npy"}} {
		var b bytes.Buffer
		z := zip.NewWriter(&b)
		for i, name := range names {
			w, _ := z.Create(name)
			w.Write(npyFile("<i8", []int{2, 3}, false, []float64{3, 1, 1, float64(i), 1, 4}))
		}
		z.Close()
		if _, _, err := readVotes(bytes.NewReader(b.Bytes()), "twice.npz", Options{Array: "votes", Size: int64(b.Len())}); err == nil || !strings.Contains(err.Error(), `array "votes" is in the archive 2 times`) {
			t.Errorf("%v: %v, want the array refused as ambiguous", names, err)
		}
	}
}

// FuzzNPY: no NumPy file makes the vote or the label reader panic, a
// vote file it reads has rows of C counts each within [0, K] (of 0/1
// votes, each 0 or 1, with a header of two classes), and a label is
// answered exactly when it is a class. Read in place (from an
// io.ReaderAt) an array gives the queries it gives streamed, and fails
// when it fails streamed. No error quotes more of the file than a value
// (quotetest.Check): its header may be 32 KiB.
func FuzzNPY(f *testing.F) {
	f.Add(npyFile("<i8", []int{3, 3}, false, []float64{3, 1, 1, 0, 1, 4, 1, 4, 0}), false, false)
	f.Add(npyFile("<f8", []int{2, 2}, true, []float64{3, 1, 1, 3}), false, false)
	f.Add(npyFile("<i4", []int{2, 5}, false, []float64{0, -1, 1, 2, 0, 2, 2, 2, 1, 2}), true, false)
	f.Add(npyFile("<i2", []int{5, 2}, false, []float64{0, 1, 1, 2, 0, 2, 2, 2, 1, 2}), true, true)
	f.Add(npyFile("<i2", []int{5, 2}, true, []float64{0, 1, 1, 2, 0, 2, 2, 2, 1, 2}), true, false)
	f.Add(npyFile("<i2", []int{5, 2}, false, []float64{0, 1, 1, 2, 0, 2, 2, 2, 1, 2, 7}), true, true)
	f.Add(npyFile("<i2", []int{5, 2}, false, []float64{0, 1, 1, 2, 0, 2, 2}), true, true)
	f.Add(npyFile("<u1", []int{1, 2}, false, []float64{1, 1})[:20], false, false)
	f.Add(npyFile("<i8", []int{4}, false, []float64{3, 0, -1, 9}), false, false)
	f.Add(npyFile("<i8", []int{4}, true, []float64{3, 0, -1, 9}), false, false)
	f.Add(npyFile("|u1", []int{2, 5}, false, []float64{0, 1, 1, 0, 1, 1, 1, 0, 0, 0}), false, false)
	long := strings.Repeat("9", 200)
	f.Add(npyDict("{'descr': '<i8', 'fortran_order': "+long+", 'shape': (3, 3), }"), false, false)
	f.Add(npyDict("{'descr': '<i8', 'fortran_order': False, 'shape': (3, "+long+"x), }"), false, false)
	f.Fuzz(func(t *testing.T, data []byte, labels, inRows bool) {
		opts := classOptions{}
		if labels {
			opts = classOptions{Input: inputClasses, Classes: 3, Orientation: map[bool]Orientation{true: TeachersInRows, false: QueriesInRows}[inRows]}
		}
		lr, errLabels := NewLabelReader(bytes.NewReader(data), "l.npy")
		if errLabels == nil {
			for lr.Next() {
				if row := lr.Row(); row.Answered != (row.Label >= 0) {
					t.Fatalf("label %d, answered %v", row.Label, row.Answered)
				}
			}
			errLabels = lr.Err()
		}
		in, _, errVotes := readVotes(bytes.NewReader(data), "f.npy", Options{Meta: twoClassMeta(5)})
		if errVotes == nil {
			for in.Next() {
				if q := in.Query(); len(q.Votes) != 5 || q.Counts[0]+q.Counts[1] != 5 || bytes.IndexFunc(q.Votes, func(r rune) bool { return r > 1 }) >= 0 {
					t.Fatalf("0/1 votes %v, counts %v", q.Votes, q.Counts)
				}
			}
			errVotes = in.Err()
		}
		streamed, errStreamed := fuzzReadNPY(t, data, opts, false)
		inPlace, errInPlace := fuzzReadNPY(t, data, opts, true)
		switch {
		case (errStreamed == nil) != (errInPlace == nil):
			t.Fatalf("streamed: %v; in place: %v", errStreamed, errInPlace)
		case errStreamed == nil && !reflect.DeepEqual(streamed, inPlace):
			t.Fatalf("streamed %v, in place %v", streamed, inPlace)
		}
		for _, err := range []error{errLabels, errVotes, errStreamed, errInPlace} {
			if err != nil {
				quotetest.Check(t, err.Error(), data, 1000)
			}
		}
	})
}

// fuzzReadNPY reads the NumPy vote file data as opts says, streamed or in
// place, and returns its queries' counts, checking each (FuzzNPY), or the
// error that stopped it.
func fuzzReadNPY(t *testing.T, data []byte, opts classOptions, inPlace bool) ([][]int, error) {
	f, err := open(bytes.NewReader(data), "f.npy", FormatNPY)
	if err != nil {
		return nil, err
	}
	if inPlace {
		f.npy.place(bytes.NewReader(data), int64(len(data)), false)
	}
	r, err := f.Classes(opts)
	if err != nil {
		return nil, err
	}
	var out [][]int
	for r.Next() {
		sum := 0
		for _, n := range r.Query().Counts {
			if n < 0 {
				t.Fatalf("count %d", n)
			}
			sum += n
		}
		if sum > r.K() || len(r.Query().Counts) != r.Classes() {
			t.Fatalf("counts %v of K = %d, C = %d", r.Query().Counts, r.K(), r.Classes())
		}
		out = append(out, slices.Clone(r.Query().Counts))
	}
	return out, r.Err()
}

// FuzzClassLabelsText: class labels in CSV (a row per query, or per
// teacher), -1 among them, never panic, each query's counts and
// abstentions add up to K, and no error quotes more of the file than a
// value (quotetest.Check).
func FuzzClassLabelsText(f *testing.F) {
	f.Add("0,1,-1\n2,2,1\n", 3, false)
	f.Add("q1,0,-1,1\nq2,-1,-1,-1\n", 2, false)
	f.Add("[0,-1,1]\n[1,1,1]\n", 2, false)
	f.Add(",0,1\n0,3.0,1.0\n1,2.0,2.0\n", 0, false)
	f.Add("0,1,-1\n2,2,1\n", 3, true)
	f.Fuzz(func(t *testing.T, data string, classes int, inRows bool) {
		opts := classOptions{Input: inputCounts}
		if classes >= 2 && classes <= 16 {
			opts = classOptions{Input: inputClasses, Classes: classes, Orientation: map[bool]Orientation{true: TeachersInRows, false: QueriesInRows}[inRows]}
		}
		r, err := newClassReader(strings.NewReader(data), "f", opts)
		if err != nil {
			quotetest.Check(t, err.Error(), []byte(data), 1000)
			return
		}
		var cast int64
		n := 0
		for r.Next() {
			n++
			for _, c := range r.Query().Counts {
				if c < 0 {
					t.Fatalf("count %d", c)
				}
				cast += int64(c)
			}
		}
		if err := r.Err(); err != nil {
			quotetest.Check(t, err.Error(), []byte(data), 1000)
		} else if opts.Input == inputClasses && cast+r.Abstained() != int64(n)*int64(r.K()) {
			t.Fatalf("%d votes cast and %d abstained in %d queries of K = %d", cast, r.Abstained(), n, r.K())
		}
	})
}

// TestWriteCountsNPY: counts written as NumPy read back as they were, and
// counts that do not all sum to the first query's K are not written.
func TestWriteCountsNPY(t *testing.T) {
	counts := [][]int{{240, 5, 5}, {200, 30, 20}, {0, 0, 250}}
	var b bytes.Buffer
	if err := WriteCountsNPY(&b, counts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "{'descr': '<i8', 'fortran_order': False, 'shape': (3, 3), }") {
		t.Errorf("header %q", b.Bytes()[:80])
	}
	got, r, err := readNPY(b.Bytes(), classOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, counts) || r.K() != 250 {
		t.Errorf("%v of K = %d, want %v of K = 250", got, r.K(), counts)
	}
	if err := WriteCountsNPY(&b, [][]int{{240, 5, 5}, {200, 30, 19}}); err == nil || !strings.Contains(err.Error(), "query 2: sum to 249, want K = 250") {
		t.Errorf("counts short of K written: %v", err)
	}
}

// TestOrientationStated: a file that states its orientation needs none
// given (a metadata header, JSON lines: a row per query) and refuses the
// other; a header-less CSV file of class labels needs one, whatever its
// shape, and reads as the one given: 250 x 100 labels are 250 queries of
// 100 teachers, or 100 queries of 250.
func TestOrientationStated(t *testing.T) {
	read := func(data string, opts classOptions) (*classReader, error) {
		opts.Input, opts.Classes = inputClasses, 3
		return newClassReader(strings.NewReader(data), "v", opts)
	}
	if r, err := read(classesHead+"0,1,2,2\n", classOptions{}); err != nil || r.K() != 4 {
		t.Errorf("metadata header, orientation unstated: %v", err)
	}
	if _, err := read(classesHead+"0,1,2,2\n", classOptions{Orientation: TeachersInRows}); err == nil || !strings.Contains(err.Error(), "the metadata header states orientation queries-in-rows: leave out Options.Orientation = teachers-in-rows") {
		t.Errorf("metadata header, teachers in rows: %v", err)
	}
	if r, err := read("[0,1,2,2]\n[2,2,1,0]\n", classOptions{}); err != nil || r.K() != 4 {
		t.Errorf("JSON lines, orientation unstated: %v", err)
	}
	row := strings.TrimSuffix(strings.Repeat("1,", 100), ",") + "\n"
	wide := strings.Repeat(row, 250)
	if _, err := read(wide, classOptions{}); err == nil || !strings.Contains(err.Error(), "state which axis holds the teachers") {
		t.Errorf("250 x 100, orientation unstated: %v", err)
	}
	for _, c := range []struct {
		o          Orientation
		k, queries int
	}{{QueriesInRows, 100, 250}, {TeachersInRows, 250, 100}} {
		r, err := read(wide, classOptions{Orientation: c.o})
		if err != nil {
			t.Fatalf("250 x 100, %v: %v", c.o, err)
		}
		n := 0
		for r.Next() {
			n++
		}
		if r.Err() != nil || r.K() != c.k || n != c.queries {
			t.Errorf("250 x 100, %v: K = %d, %d queries, %v; want K = %d, %d queries", c.o, r.K(), n, r.Err(), c.k, c.queries)
		}
	}
}
