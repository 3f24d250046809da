package votefile

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/quotetest"
)

// npyHeader returns the preamble and header of a NumPy file of version
// 1.0 whose data follow, as numpy.save writes them.
func npyHeader(descr string, shape []int, fortran bool) []byte {
	return npyFile(descr, shape, fortran, nil)
}

// repeatedDeflate returns a raw deflate stream of head followed by n
// copies of chunk, and the CRC-32 and size of what it inflates to,
// without compressing n copies: each part is compressed alone and
// flushed to a byte boundary (a block from a fresh compressor refers to
// nothing before it, so the same bytes decode anywhere in a stream), and
// a final empty block ends the stream.
func repeatedDeflate(t *testing.T, head, chunk []byte, n int) (stream []byte, crc uint32, size uint64) {
	t.Helper()
	part := func(b []byte) []byte {
		var buf bytes.Buffer
		w, err := flate.NewWriter(&buf, flate.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	h, c := part(head), part(chunk)
	stream = append(make([]byte, 0, len(h)+n*len(c)+2), h...)
	crc = crc32.ChecksumIEEE(head)
	for range n {
		stream = append(stream, c...)
		crc = crc32.Update(crc, crc32.IEEETable, chunk)
	}
	stream = append(stream, 3, 0) // a final fixed-Huffman block holding nothing
	return stream, crc, uint64(len(head)) + uint64(n)*uint64(len(chunk))
}

// hostileArchive writes to path an .npz archive whose member votes.npy
// is an int64 array of rows x cols, compressed: rows/per copies of a
// chunk of per rows of [5, 0, ..., 0], inflating to 8·rows·cols bytes
// from a few MB.
func hostileArchive(t *testing.T, path string, rows, cols, per int, fortran bool) {
	t.Helper()
	chunk := make([]byte, per*cols*8)
	for i := range per {
		binary.LittleEndian.PutUint64(chunk[i*cols*8:], 5)
	}
	stream, crc, size := repeatedDeflate(t, npyHeader("<i8", []int{rows, cols}, fortran), chunk, rows/per)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	w, err := z.CreateRaw(&zip.FileHeader{Name: "votes.npy", Method: zip.Deflate, CRC32: crc, CompressedSize64: uint64(len(stream)), UncompressedSize64: size})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(stream)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// allocated returns the bytes allocated while f ran (all of them, freed
// or not: a bound on the most held at once). No test of this package
// runs in parallel.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// readFile reads every query of the vote file path as opts says, from
// an *os.File with its size (read in place where it can be) or as a
// stream, and returns their number and their counts folded into a
// checksum.
func readFile(t *testing.T, path string, opts Options, stream bool) (queries int, sum uint64, err error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if stream {
		r = struct{ io.Reader }{f} // no io.ReaderAt: read as a stream
	} else {
		st, _ := f.Stat()
		opts.Size = st.Size()
	}
	in, _, err := readVotes(r, path, opts)
	if err != nil {
		return 0, 0, err
	}
	for in.Next() {
		queries++
		for c, n := range in.Query().Counts {
			sum = sum*31 + uint64(c+1)*uint64(n)
		}
	}
	return queries, sum, in.Err()
}

// TestNPYHostileArchive is the red team's archive: 6.8 MB whose member
// declares 25,000,000 x 10 int64 counts (2 GB) in Fortran order, so that
// a query is a column of the data. A compressed member cannot be read in
// place, and this one is larger than what is gathered in memory: it is
// refused, naming the bound, before a byte of its data is read (it once
// took 4.45 GB and ended in Go's "fatal error: out of memory").
func TestNPYHostileArchive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hostile.npz")
	hostileArchive(t, path, 25_000_000, 10, 8000, true)
	if st, _ := os.Stat(path); st.Size() > 8<<20 {
		t.Fatalf("the archive has %d bytes, want a few MB", st.Size())
	}
	var err error
	used := allocated(func() { _, _, err = readFile(t, path, Options{Array: "votes"}, false) })
	var fe *formatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "shape (25000000, 10) of <i8 (2000000000 bytes)") ||
		!strings.Contains(err.Error(), fmt.Sprintf("at most %d bytes (256 MiB)", maxGather)) {
		t.Fatalf("error %v, want the bound on an array read whole", err)
	}
	if used > 8<<20 {
		t.Errorf("%d bytes allocated to refuse it", used)
	}
	t.Logf("refused after %d bytes allocated: %v", used, err)
}

// TestNPYColumnsInPlace: an array of which a query is a column (PATE's
// teachers x queries labels), 32 MiB of data, two tiles, is read in place
// from a .npy file and from an uncompressed .npz member in less memory
// than the array, and from a stream whole, within the bound; every query
// has the counts of its labels each way.
func TestNPYColumnsInPlace(t *testing.T) {
	const teachers, queries, classes = 64, 65536, 10
	label := func(j, q int) int64 { return int64((7*j + q*q) % classes) }
	// The file's data made in place after its header: a copy of 32 MiB
	// more would cost as much as a read.
	header := npyHeader("<i8", []int{teachers, queries}, false)
	file := append(make([]byte, 0, len(header)+teachers*queries*8), header...)
	for j := range teachers {
		for q := range queries {
			file = binary.LittleEndian.AppendUint64(file, uint64(label(j, q)))
		}
	}
	data := file[len(header):]
	dir := t.TempDir()
	npyPath, npzPath := filepath.Join(dir, "v.npy"), filepath.Join(dir, "v.npz")
	if err := os.WriteFile(npyPath, file, 0o644); err != nil {
		t.Fatal(err)
	}
	writeArchive(t, npzPath, zip.Store, map[string][]byte{"votes.npy": file})
	var want uint64
	for q := range queries {
		counts := make([]int, classes)
		for j := range teachers {
			counts[label(j, q)]++
		}
		for c, n := range counts {
			want = want*31 + uint64(c+1)*uint64(n)
		}
	}
	opts := Options{Classes: classes, Orientation: TeachersInRows}
	npz := opts
	npz.Array = "votes"
	for _, tc := range []struct {
		name   string
		path   string
		opts   Options
		stream bool
		most   uint64 // bytes allocated at most
	}{
		{"npy in place", npyPath, opts, false, 20 << 20},
		{"npz member in place", npzPath, npz, false, 20 << 20},
		{"npy streamed, gathered whole", npyPath, opts, true, uint64(len(data)) + 20<<20},
	} {
		var n int
		var sum uint64
		var err error
		used := allocated(func() { n, sum, err = readFile(t, tc.path, tc.opts, tc.stream) })
		if err != nil || n != queries || sum != want {
			t.Errorf("%s: %d queries, checksum %d (want %d of %d), %v", tc.name, n, sum, queries, want, err)
		}
		if used > tc.most {
			t.Errorf("%s: %d bytes allocated for %d bytes of data, want at most %d", tc.name, used, len(data), tc.most)
		}
		t.Logf("%s: %d bytes allocated for %d bytes of data", tc.name, used, len(data))
	}
}

// writeArchive writes an .npz archive of members to path, each stored by
// method (zip.Store as numpy.savez, zip.Deflate as savez_compressed). The
// archive goes straight to the file: gathered in a growing buffer first,
// TestNPYColumnsInPlace's 32 MiB member cost more CPU in copies than its
// reads.
func writeArchive(t *testing.T, path string, method uint16, members map[string][]byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for name, data := range members {
		w, err := z.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestNPYLargeBoundedMemory reads the red team's sizes whole (without
// -short: it reads 2 GB twice): 25,000,000 x 10 int64 counts as a
// compressed member in C order, a query a row, streamed; and the same
// shape in Fortran order, a query a column, from a .npy file (sparse,
// its data zeros: class labels 0), read in place. Each allocates a few
// MiB, not the array's 2 GB.
func TestNPYLargeBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads 2 GB of data twice")
	}
	const rows, cols = 25_000_000, 10
	dir := t.TempDir()
	npz, npy := filepath.Join(dir, "counts.npz"), filepath.Join(dir, "labels.npy")
	hostileArchive(t, npz, rows, cols, 8000, false)
	head := npyHeader("<i8", []int{rows, cols}, true)
	if err := os.WriteFile(npy, head, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(npy, int64(len(head))+rows*cols*8); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		opts Options
	}{
		{"compressed member, a query a row", npz, Options{Array: "votes"}},
		{".npy, a query a column, in place", npy, Options{Classes: 3, Orientation: QueriesInRows}},
	} {
		var n int
		var err error
		used := allocated(func() { n, _, err = readFile(t, tc.path, tc.opts, false) })
		if err != nil || n != rows {
			t.Errorf("%s: %d queries, %v", tc.name, n, err)
		}
		if used > 32<<20 {
			t.Errorf("%s: %d bytes allocated for 2 GB of data", tc.name, used)
		}
		t.Logf("%s: %d queries, %d bytes allocated", tc.name, n, used)
	}
}

// archiveBytes returns an .npz archive of one member, votes.npy, stored
// by method.
func archiveBytes(method uint16, member []byte) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	w, _ := z.CreateHeader(&zip.FileHeader{Name: "votes.npy", Method: method})
	w.Write(member)
	z.Close()
	return b.Bytes()
}

// FuzzNPZ: no archive makes Read panic or allocate beyond its bounds,
// and an array it reads from one has rows of C counts each within [0,
// K]. Given a member (member true), the archive that stores it
// uncompressed, whose array may be read in place, gives the queries of
// the one that compresses it, which is streamed, or fails as it does.
// No error quotes more of the member than a value (quotetest.Check).
func FuzzNPZ(f *testing.F) {
	for _, m := range [][]byte{
		npyFile("<i8", []int{3, 3}, false, []float64{3, 1, 1, 0, 1, 4, 1, 4, 0}),
		npyFile("<i2", []int{5, 3}, true, []float64{3, 1, 1, 0, 1, 4, 1, 4, 0, 2, 2, 2, 1, 1, 0}),
		npyFile("<i8", []int{2_000_000, 10}, true, nil),
	} {
		f.Add(archiveBytes(zip.Store, m), false, false)
		f.Add(archiveBytes(zip.Deflate, m), false, true)
		f.Add(m, true, false)
		f.Add(m, true, true)
	}
	f.Add(npyDict("{'descr': '<i8', 'fortran_order': "+strings.Repeat("9", 200)+", 'shape': (3, 3), }"), true, false)
	f.Fuzz(func(t *testing.T, data []byte, member, labels bool) {
		opts := Options{Array: "votes"}
		if labels {
			opts.Classes, opts.Orientation = 5, TeachersInRows
		}
		if !member {
			if _, err := fuzzReadNPZ(t, data, opts); err != nil {
				quotetest.Check(t, err.Error(), data, 1000)
			}
			return
		}
		stored, errStored := fuzzReadNPZ(t, archiveBytes(zip.Store, data), opts)
		deflated, errDeflated := fuzzReadNPZ(t, archiveBytes(zip.Deflate, data), opts)
		switch {
		case (errStored == nil) != (errDeflated == nil):
			t.Fatalf("stored: %v; compressed: %v", errStored, errDeflated)
		case errStored == nil && !reflect.DeepEqual(stored, deflated):
			t.Fatalf("stored %v, compressed %v", stored, deflated)
		case errStored != nil:
			quotetest.Check(t, errStored.Error(), data, 1000)
			quotetest.Check(t, errDeflated.Error(), data, 1000)
		}
	})
}

// fuzzReadNPZ reads the array votes of the archive data as opts says and
// returns its queries' counts, checking each (FuzzNPZ), or the error
// that stopped it.
func fuzzReadNPZ(t *testing.T, data []byte, opts Options) ([][]int, error) {
	opts.Size = int64(len(data))
	r, _, err := readVotes(bytes.NewReader(data), "f.npz", opts)
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

// TestNPZChecksum: an archive member whose data do not match its
// checksum is a damaged file (exit 2), whether its array is streamed (a
// query a row: the checksum is checked at its end) or read in place (a
// query a column: checked first).
func TestNPZChecksum(t *testing.T) {
	labels := []float64{3, 1, 1, 0, 1, 4, 1, 4, 0}
	for _, fortran := range []bool{false, true} {
		member := npyFile("<i8", []int{3, 3}, fortran, labels)
		data := archiveBytes(zip.Store, member)
		i := bytes.Index(data, member)
		if i < 0 {
			t.Fatal("the member is not stored as it is")
		}
		// The first label, 3, becomes 2: a label as valid as any.
		data[i+len(member)-len(labels)*8]--
		_, err := fuzzReadNPZ(t, data, Options{Array: "votes", Classes: 5, Orientation: QueriesInRows})
		var fe *formatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "a damaged archive member: zip: checksum error") {
			t.Errorf("Fortran order %v: %v", fortran, err)
		}
	}
}
