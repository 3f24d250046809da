package votefile

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	"codeberg.org/sbinet/npyio/npy"
	"github.com/darrm/darrm/internal/param"
)

// The NumPy layout of a vote file: a 2-D array in the NPY format
// (https://numpy.org/neps/nep-0001-npy-format.html), read by
// codeberg.org/sbinet/npyio. The library reads and checks the header
// (magic string, version, dtype, order, shape); its reader holds a whole
// array in memory, so the data are streamed here, one query at a time,
// each value decoded with encoding/binary and checked (whole, in range)
// before the checks of a row. Memory is bounded whatever the header
// declares: a query whose values lie in the data's order is read as it
// comes; one that is a column of the data is gathered a tile of queries
// at a time (tileBytes) from the file itself, read in place, or, when it
// cannot be (a compressed .npz member, a stream), from the array read
// whole into memory, which is refused before any of it is read when it
// is larger than maxGather.

// npyPreamble is the magic string, the version and the header's length
// (2 bytes in version 1, 4 from version 2 on): what is read before the
// header.
const npyPreamble = 10

// maxNPYHeader bounds the header of a NumPy file, which is read whole
// before it is parsed, within the read buffer: NumPy itself refuses a
// header above 10,000 bytes unless told otherwise.
const maxNPYHeader = 1 << 15

// tileBytes bounds the values gathered at once when a query is a column
// of the data: the queries of a tile, read in place with one ReadAt per
// value of a query. A query's values (at most MaxClasses of 8 bytes)
// always fit.
const tileBytes = 16 << 20

// maxGather bounds the bytes of a matrix held whole in memory: an array
// of which a query is a column, when it cannot be read in place (a
// compressed .npz member, standard input or a pipe), and a CSV file of
// class labels read a row per teacher. 256 MiB holds PATE's published
// votes many times over (250 x 26,032 int64 labels are 52 MB); a larger
// array is read in place from a .npy file or an uncompressed archive
// (numpy.savez), or streamed when its queries are its rows.
const maxGather = 256 << 20

// npyMagic starts every NumPy file; zipMagic every zip archive, as
// NumPy's .npz.
var (
	npyMagic = npy.Magic[:]
	zipMagic = []byte("PK\x03\x04")
)

// isNPY reports whether b, the start of a file, is NumPy's magic string.
func isNPY(b []byte) bool { return bytes.HasPrefix(b, npyMagic) }

// openNPYFile opens the NumPy file vr reads.
func openNPYFile(vr *voteReader) (*voteFile, error) {
	if vr.format != FormatAuto && vr.format != FormatNPY {
		return nil, adviceError(vr.name, advise("a NumPy file, not %v (leave out %v, or give npy)", vr.format, Hint{optFormat, ""}))
	}
	a, err := openNPY(vr.br, vr.name, 2)
	if err != nil {
		return nil, err
	}
	vr.format, vr.array, a.vr = FormatNPY, true, vr
	return &voteFile{vr: vr, npy: a}, nil
}

// npyArray streams the queries of a 2-D NumPy array. A query is a row of
// the array (counts of C classes, or the class labels of K teachers), or
// with TeachersInRows a column (PATE's published (teachers, queries)
// label matrices). A query whose values lie in the order of the data
// (a row of a C-order array, a column of a Fortran-order one) is read
// from the file as it comes; otherwise the whole array is read first and
// each query gathered from it.
type npyArray struct {
	vr    *voteReader // the name, the buffered file, the query count and bytes read
	order binary.ByteOrder
	kind  reflect.Kind
	size  int    // bytes of a value
	dtype string // the header's, e.g. <i8
	shape [2]int
	qAxis int // the shape's axis of the queries
	// queries and width are the number of queries and of values per
	// query; byRow is whether a query's values are contiguous.
	queries, width int
	byRow          bool
	buf            []byte
	q              int  // queries read
	oneD           bool // a 1-D array (labels), read as a column
	// head is the file's preamble and header as read, and dataOff where
	// its data start.
	head    []byte
	dataOff int64
	// file is the file itself, of fileSize bytes, when it can be read in
	// place (place); drain says to read the stream along, a tile's bytes
	// at a time, so that an archive member's checksum is checked at its
	// end, as a streamed member's is.
	file     io.ReaderAt
	fileSize int64
	drain    bool
	// at reads the data when a query is a column of them, from off: the
	// file (inPlace), or the array held whole in memory (memArray).
	at      io.ReaderAt
	off     int64
	inPlace bool
	// tile holds the values of the queries [t0, t0+tn): value j of query
	// t0+i at (j*tn+i)*size.
	tile   []byte
	t0, tn int
}

// openNPY reads the header of the NumPy file br starts with, an array
// of dims dimensions: 2 for votes, 1 for labels (then read as a column,
// shape (n, 1)).
func openNPY(br *bufio.Reader, name string, dims int) (*npyArray, error) {
	bad := func(format string, args ...any) error {
		return &formatError{File: name, Msg: "NumPy file: " + fmt.Sprintf(format, args...)}
	}
	pre, err := br.Peek(npyPreamble)
	if err != nil {
		return nil, bad("truncated in its header (%d bytes)", len(pre))
	}
	var hlen, plen int
	switch pre[6] {
	case 1:
		hlen, plen = int(binary.LittleEndian.Uint16(pre[8:])), npyPreamble
	case 2:
		if pre, err = br.Peek(npyPreamble + 2); err != nil {
			return nil, bad("truncated in its header (%d bytes)", len(pre))
		}
		hlen, plen = int(binary.LittleEndian.Uint32(pre[8:])), npyPreamble+2
	default:
		return nil, bad("format version %d.%d: this darrm reads versions 1.0 and 2.0 (numpy.save writes them)", pre[6], pre[7])
	}
	if hlen > maxNPYHeader {
		return nil, bad("a header of %d bytes: must be at most %d", hlen, maxNPYHeader)
	}
	if _, err := br.Peek(plen + hlen); err != nil {
		return nil, bad("truncated in its header")
	}
	head, _ := br.Peek(plen + hlen)
	head = bytes.Clone(head)
	r, err := newNPYReader(br)
	if err != nil {
		return nil, bad("unreadable header: %v", err)
	}
	h := r.Header.Descr
	a := &npyArray{dtype: strings.Trim(h.Type, "'\""), head: head, dataOff: int64(len(head))}
	if err := a.setType(); err != nil {
		return nil, bad("%v", err)
	}
	switch {
	case dims == 1 && len(h.Shape) == 1:
		a.shape, a.oneD = [2]int{h.Shape[0], 1}, true
	case dims == 1:
		return nil, bad("shape %s: want a 1-D array of labels, one per query", shapeText(h.Shape))
	case len(h.Shape) != 2:
		return nil, bad("shape %s: want a 2-D array, queries x classes (vote counts) or a matrix of class labels, one per query and teacher", shapeText(h.Shape))
	default:
		a.shape = [2]int{h.Shape[0], h.Shape[1]}
	}
	switch {
	case a.shape[0] < 1 || a.shape[1] < 1:
		return nil, bad("shape %s: want at least one query and one value per query", shapeText(h.Shape))
	case a.shape[0] > math.MaxInt/a.shape[1]/a.size:
		return nil, bad("shape %s: more values than this machine can address", shapeText(h.Shape))
	}
	if h.Fortran && !a.oneD {
		// A Fortran-order array's data are its transpose's in C order.
		a.qAxis = 1
	}
	return a, nil
}

// place lets the array's data be read in place when a query is a column
// of them: at holds the file from its start, size bytes; drain for an
// archive's member, whose stream checks its checksum at its end. It does
// not when at does not start with the preamble and header that were read
// (a file not read from its start).
func (a *npyArray) place(at io.ReaderAt, size int64, drain bool) {
	b := make([]byte, len(a.head))
	if size < int64(len(a.head)) {
		return
	}
	if n, _ := at.ReadAt(b, 0); n != len(b) || !bytes.Equal(b, a.head) {
		return
	}
	a.file, a.fileSize, a.drain = at, size, drain
}

// newNPYReader is npy.NewReader, whose parser of a malformed header
// can panic (an index out of range): that is the file's fault, an error.
// The library's errors of a shape element and of the order quote the
// value whole, up to the header's 32 KiB: they are said again with it
// cut (param.Quote).
func newNPYReader(r io.Reader) (rr *npy.Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			rr, err = nil, fmt.Errorf("malformed dictionary")
		}
	}()
	rr, err = npy.NewReader(r)
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return nil, fmt.Errorf("shape element %s: want a whole number", param.Quote(ne.Num))
	}
	if err != nil {
		const orderErr = "npy: invalid 'fortran_order' value ("
		if v, ok := strings.CutPrefix(err.Error(), orderErr); ok {
			return nil, fmt.Errorf("fortran_order %s: want True or False", param.Quote(strings.TrimSuffix(v, ")")))
		}
	}
	return rr, err
}

// setType sets the value's kind, size and byte order from the dtype,
// which the library parses: integers and floats, none other.
func (a *npyArray) setType() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("dtype %s: not a NumPy dtype this darrm reads", param.Quote(a.dtype))
		}
	}()
	if len(a.dtype) < 2 {
		return fmt.Errorf("dtype %s: not a NumPy dtype this darrm reads", param.Quote(a.dtype))
	}
	t := npy.TypeFrom(a.dtype)
	a.kind, a.size = t.Kind(), int(t.Size())
	switch a.kind {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
	default:
		return fmt.Errorf("dtype %s (%v): want an integer or a float array of whole numbers", param.Quote(a.dtype), t)
	}
	a.order = binary.LittleEndian
	if a.dtype[0] == '>' {
		a.order = binary.BigEndian
	}
	return nil
}

// shapeText writes a shape as NumPy does: (5, 10), (5,).
func shapeText(s []int) string {
	parts := make([]string, len(s))
	for i, n := range s {
		parts[i] = strconv.Itoa(n)
	}
	if len(s) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// settle fixes which axis holds the queries: the first, or the second
// with teachersInRows (class labels only); the data's order then says
// whether a query is read as it comes or gathered. A query holds at most
// MaxClasses values, as many as a text file's row can: its buffer is
// allocated before a value is read.
func (a *npyArray) settle(teachersInRows bool) error {
	major := a.qAxis // the axis whose index changes slowest in the data
	a.qAxis = 0
	if teachersInRows {
		a.qAxis = 1
	}
	a.queries, a.width = a.shape[a.qAxis], a.shape[1-a.qAxis]
	if a.width > MaxClasses {
		return a.errorf("shape %s: %d values a query: at most %d, as many as a row of a text vote file can hold", shapeText(a.shape[:]), a.width, MaxClasses)
	}
	// With one query, or one value a query, the data's order is a query's
	// either way (but for a CSV matrix, held in memory already).
	a.byRow = a.qAxis == major || (a.queries == 1 || a.width == 1) && a.at == nil
	a.buf = make([]byte, a.width*a.size)
	return nil
}

// index names the array's element j of query q as NumPy indexes it.
func (a *npyArray) index(q, j int) string {
	if a.oneD {
		return fmt.Sprintf("[%d]", q)
	}
	if a.qAxis == 1 {
		q, j = j, q
	}
	return fmt.Sprintf("[%d, %d]", q, j)
}

// nextNonBlank returns the bytes of the next query's values; io.EOF
// after the last (and a format error if data follow it).
func (a *npyArray) nextNonBlank() ([]byte, error) {
	if a.q == a.queries {
		// Data read in place leave the stream at their start, but a
		// member's, drained; their end was checked against the file's
		// before the first was read.
		if !a.inPlace || a.drain {
			if _, err := a.vr.br.Peek(1); err == nil {
				return nil, a.errorf("data after the %d x %d values the header states (shape %s)", a.shape[0], a.shape[1], shapeText(a.shape[:]))
			} else if err != io.EOF {
				return nil, a.readError(err)
			}
		}
		return nil, io.EOF
	}
	n := a.width * a.size
	if a.byRow {
		if _, err := io.ReadFull(a.vr.br, a.buf); err != nil {
			return nil, a.truncated(err, a.q)
		}
	} else {
		if a.q < a.t0 || a.q >= a.t0+a.tn {
			if err := a.fill(); err != nil {
				return nil, err
			}
		}
		i := a.q - a.t0
		if a.size == 8 {
			// A move of fixed size where copy calls memmove, once a value
			// of every teacher of every query: 8-byte values (int64,
			// float64) are numpy's defaults.
			for j := range a.width {
				*(*[8]byte)(a.buf[j*8:]) = *(*[8]byte)(a.tile[(j*a.tn+i)*8:])
			}
		} else {
			for j := range a.width {
				copy(a.buf[j*a.size:(j+1)*a.size], a.tile[(j*a.tn+i)*a.size:])
			}
		}
	}
	a.q++
	a.vr.line = a.q
	a.vr.bytes += int64(n)
	return a.buf, nil
}

// dataBytes returns the bytes of data the header states.
func (a *npyArray) dataBytes() int64 {
	return int64(a.shape[0]) * int64(a.shape[1]) * int64(a.size)
}

// fill reads the tile of queries from the next, a.q: at the first, it
// checks the data in place against the file's size, or reads them whole
// into memory when they cannot be read in place.
func (a *npyArray) fill() error {
	if a.tn == 0 {
		if err := a.gather(); err != nil {
			return err
		}
	}
	per := a.width * a.size // at most MaxClasses values of 8 bytes
	n := min(max(tileBytes/per, 1), a.queries-a.q)
	if a.tile == nil {
		a.tile = make([]byte, n*per) // the first tile is the largest
	}
	a.tile = a.tile[:n*per]
	row := int64(a.queries) * int64(a.size) // a value's stride, from one query's to the next's
	for j := range a.width {
		p := a.tile[j*n*a.size : (j+1)*n*a.size]
		if k, err := a.at.ReadAt(p, a.off+int64(j)*row+int64(a.q)*int64(a.size)); k < len(p) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF // the file shrank since its size was taken
			}
			return a.truncated(err, a.q)
		}
	}
	if a.drain {
		if _, err := io.CopyN(io.Discard, a.vr.br, int64(len(a.tile))); err != nil {
			return a.truncated(err, a.q)
		}
	}
	a.t0, a.tn = a.q, n
	return nil
}

// gather readies the data of which a query is a column: in place, the
// file must hold them exactly (checked before any is read); else the
// array is read whole into memory, at most maxGather bytes, which is
// checked before any is read.
func (a *npyArray) gather() error {
	if a.at != nil {
		return nil // a CSV matrix, read whole (csvMatrix)
	}
	total := a.dataBytes()
	if a.file != nil {
		switch have := a.fileSize - a.dataOff; {
		case have < total:
			return a.truncated(io.ErrUnexpectedEOF, int(have/int64(a.size)/int64(a.width)))
		case have > total:
			return a.errorf("data after the %d x %d values the header states (shape %s)", a.shape[0], a.shape[1], shapeText(a.shape[:]))
		}
		a.at, a.off, a.inPlace = a.file, a.dataOff, true
		return nil
	}
	if total > maxGather {
		return a.errorf("shape %s of %s (%d bytes): a query is a column of the data, gathered from the whole array, and an array that cannot be read in place (a compressed .npz member, a stream) is held in memory, at most %d bytes (%d MiB): give a .npy file or an uncompressed archive (numpy.savez), read in place, or a query per row, streamed",
			shapeText(a.shape[:]), a.dtype, total, maxGather, maxGather>>20)
	}
	m, n, err := readMem(a.vr.br, total)
	if err != nil {
		return a.readError(err)
	}
	if n < total {
		return a.truncated(io.ErrUnexpectedEOF, int(n/int64(a.size)/int64(a.width)))
	}
	a.at, a.off = m, 0
	return nil
}

// memArray is data held in memory, in chunks of memChunk bytes but the
// last, so that reading them holds no more than them (no slice grown by
// doubling).
type memArray [][]byte

// memChunk is the size of a chunk of a memArray.
const memChunk = 1 << 20

// readMem reads at most total bytes of r into a memArray; n is how many
// there were.
func readMem(r io.Reader, total int64) (m memArray, n int64, err error) {
	for n < total {
		c := make([]byte, min(memChunk, total-n))
		k, err := io.ReadFull(r, c)
		n += int64(k)
		if k > 0 {
			m = append(m, c[:k])
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return m, n, nil
		}
		if err != nil {
			return nil, n, err
		}
	}
	return m, n, nil
}

// put appends b to m, filling its last chunk first.
func (m *memArray) put(b []byte) {
	for len(b) > 0 {
		if len(*m) == 0 || len((*m)[len(*m)-1]) == memChunk {
			*m = append(*m, make([]byte, 0, memChunk))
		}
		last := &(*m)[len(*m)-1]
		k := min(len(b), memChunk-len(*last))
		*last = append(*last, b[:k]...)
		b = b[k:]
	}
}

// ReadAt reads len(p) bytes from off.
func (m memArray) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		c, i := off/memChunk, off%memChunk
		if off < 0 || c >= int64(len(m)) || i >= int64(len(m[c])) {
			return n, io.EOF
		}
		k := copy(p[n:], m[c][i:])
		n += k
		off += int64(k)
	}
	return n, nil
}

// readError is the error of a read of the array that failed: a damaged
// archive member (its compressed data or its checksum) is the file's
// fault, a format error; anything else a failure to read.
func (a *npyArray) readError(err error) error {
	var corrupt flate.CorruptInputError
	if errors.Is(err, zip.ErrChecksum) || errors.Is(err, zip.ErrFormat) || errors.As(err, &corrupt) {
		return &formatError{File: a.vr.name, Msg: fmt.Sprintf("a damaged archive member: %v", err)}
	}
	return fmt.Errorf("read %s: %w", a.vr.name, err)
}

// truncated is the error of data that end within query q (from 0).
func (a *npyArray) truncated(err error, q int) error {
	if err != io.EOF && err != io.ErrUnexpectedEOF {
		return a.readError(err)
	}
	return &formatError{File: a.vr.name, Msg: fmt.Sprintf("NumPy file truncated: the header states shape %s of %s (%d bytes of data), but the data end within query %d", shapeText(a.shape[:]), a.dtype, a.dataBytes(), q+1)}
}

func (a *npyArray) errorf(format string, args ...any) error {
	msg := advise(format, args...)
	if a.vr.format == FormatNPY {
		msg.text = "NumPy file: " + msg.text
	}
	return adviceError(a.vr.name, msg)
}

// value returns the j-th value of a query's bytes b: whole is false for
// a float with a fraction (or NaN, ±Inf), and a value beyond the int64
// range is returned as math.MaxInt64, which no check accepts; text is
// how such a value reads (else "", the integer's digits).
func (a *npyArray) value(b []byte, j int) (n int64, whole bool, text string) {
	b = b[j*a.size:]
	switch a.kind {
	case reflect.Int8:
		return int64(int8(b[0])), true, ""
	case reflect.Uint8:
		return int64(b[0]), true, ""
	case reflect.Int16:
		return int64(int16(a.order.Uint16(b))), true, ""
	case reflect.Uint16:
		return int64(a.order.Uint16(b)), true, ""
	case reflect.Int32:
		return int64(int32(a.order.Uint32(b))), true, ""
	case reflect.Uint32:
		return int64(a.order.Uint32(b)), true, ""
	case reflect.Int64:
		return int64(a.order.Uint64(b)), true, ""
	case reflect.Uint64:
		u := a.order.Uint64(b)
		if u > math.MaxInt64 {
			return math.MaxInt64, true, strconv.FormatUint(u, 10)
		}
		return int64(u), true, ""
	}
	var f float64
	if a.kind == reflect.Float32 {
		f = float64(math.Float32frombits(a.order.Uint32(b)))
	} else {
		f = math.Float64frombits(a.order.Uint64(b))
	}
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f):
		return 0, false, strconv.FormatFloat(f, 'g', -1, 64)
	case math.Abs(f) > maxCount+1:
		return math.MaxInt64, true, strconv.FormatFloat(f, 'g', -1, 64)
	}
	return int64(f), true, ""
}

// parseNPY reads the values of one query into r.vals: counts >= 0, or
// class indices in [0, C) or -1 (a teacher that abstained), each a whole
// number of at most 9 digits.
func (r *classReader) parseNPY(b []byte) error {
	a := r.npy
	q := a.q - 1
	r.vals = r.vals[:0]
	for j := range a.width {
		n, whole, text := a.value(b, j)
		var rule string
		switch {
		case r.opts.Input == inputCounts && (!whole || n < 0 || n > maxCount):
			rule = "a vote count must be a whole number in [0, 999999999]"
		case r.opts.Input == inputClasses && (!whole || n < -1 || n >= int64(r.c)):
			rule = fmt.Sprintf("a class label must be a class in [0, %d), or -1 for a teacher that did not vote", r.c)
		}
		if rule != "" {
			switch {
			case text != "":
			case r.opts.Input == inputClasses && n >= 0 && n <= maxCount:
				text = classShown(int(n), r.c)
			default:
				text = strconv.FormatInt(n, 10)
			}
			what := "count of class " + strconv.Itoa(j)
			if r.opts.Input == inputClasses {
				what = "class label of teacher " + strconv.Itoa(j+1)
			}
			return a.errorf("element %s = %s (query %d, %s): %s%v", a.index(q, j), text, q+1, what, rule, r.abstainHint(text))
		}
		r.vals = append(r.vals, int(n))
	}
	return nil
}

// checkShape refuses an array of class labels whose teachers' axis, as
// its stated orientation has it, does not have the K stated; the
// orientation itself is trusted, whatever the shape.
func (a *npyArray) checkShape(opts classOptions) error {
	if opts.Input != inputClasses || opts.K == 0 || a.width == opts.K {
		return nil
	}
	s := shapeText(a.shape[:])
	as, flip := advise("queries x teachers (%v)", queriesInRows), advise("%v", teachersInRows)
	if opts.Orientation == TeachersInRows {
		as, flip = advise("teachers x queries (%v)", teachersInRows), advise("%v", queriesInRows)
	}
	if a.queries == opts.K {
		return a.errorf("shape %s read as %s has %d teachers, but K = %d is stated, the number along the other axis: is the orientation %s?", s, as, a.width, opts.K, flip)
	}
	return a.errorf("shape %s read as %s has %d teachers, but K = %d is stated", s, as, a.width, opts.K)
}

// openNPZ opens the array named array (with or without its .npy) in the
// NumPy archive r (.npz, a zip archive, as numpy.savez writes it), of
// size bytes, as open opens a vote file; name is used in errors. An
// uncompressed member (numpy.savez's) can be read in place; a compressed
// one (numpy.savez_compressed's) is streamed.
func openNPZ(r io.ReaderAt, size int64, name, array string) (*voteFile, error) {
	z, err := zip.NewReader(r, size)
	if err != nil && z == nil {
		return nil, &formatError{File: name, Msg: "not a NumPy .npz archive: " + err.Error()}
	}
	var match []*zip.File
	for _, zf := range z.File {
		if zf.Name == array || zf.Name == array+".npy" {
			match = append(match, zf)
		}
	}
	if len(match) > 1 {
		// NumPy's load reads the last of members of one name, a zip
		// reader the first: the two would see different votes.
		return nil, &formatError{File: name, Msg: fmt.Sprintf("array %s is in the archive %d times: which one is the votes is ambiguous (NumPy reads the last, darrm would the first); write the archive with it once", param.Quote(array), len(match))}
	}
	for _, zf := range match {
		rc, err := zf.Open()
		if err != nil {
			return nil, &formatError{File: name, Msg: fmt.Sprintf("array %s: %v", param.Quote(array), err)}
		}
		f, err := open(rc, name+"["+strings.TrimSuffix(zf.Name, ".npy")+"]", FormatNPY)
		if err != nil {
			rc.Close()
			return nil, err
		}
		f.member = rc
		if off, err := zf.DataOffset(); err == nil && zf.Method == zip.Store && zf.CompressedSize64 == zf.UncompressedSize64 &&
			zf.UncompressedSize64 <= uint64(size) && off >= 0 && off <= size-int64(zf.UncompressedSize64) {
			n := int64(zf.UncompressedSize64)
			f.npy.place(io.NewSectionReader(r, off, n), n, true)
		}
		return f, nil
	}
	const listed = 8 // the names an error lists
	var names []string
	for i, zf := range z.File {
		if i == listed {
			names = append(names, fmt.Sprintf("and %d more", len(z.File)-listed))
			break
		}
		names = append(names, param.Quote(strings.TrimSuffix(zf.Name, ".npy")))
	}
	holds := "which holds no array"
	if len(names) > 0 {
		holds = "which holds " + strings.Join(names, ", ")
	}
	return nil, &formatError{File: name, Msg: fmt.Sprintf("no array %s in the archive, %s", param.Quote(array), holds)}
}

// csvMatrix reads a whole CSV file of class labels, one row per teacher
// and one column per query (teachers x queries, as PATE publishes its
// votes), first the line first, into an array of which a query is a
// column, as a NumPy file of that layout is read: the class labels'
// checks are those of a NumPy file's. A first row that is not all
// numbers (query names) is a header row, and with --id yes the first
// column names the teachers; both are dropped.
func (r *classReader) csvMatrix(first []byte) (*npyArray, error) {
	vr := r.lr
	var data memArray
	var n int64 // bytes in data
	var val [4]byte
	width, teachers := -1, 0
	line := first
	for i := 0; ; i++ {
		fs, err := vr.split(line)
		if err != nil {
			return nil, err
		}
		if r.opts.ID == present {
			fs = fs[1:]
		}
		header := i == 0 && (r.opts.Header == present || r.opts.Header == autoDetect && !allNumbers(fs))
		if !header {
			if width < 0 {
				width = len(fs)
			} else if len(fs) != width {
				return nil, vr.errorf(0, "%d class labels, want %d, as in the first row: a row per teacher, a column per query", len(fs), width)
			}
			if n += 4 * int64(len(fs)); n > maxGather {
				return nil, vr.errorf(0, "a CSV file of class labels, a row per teacher, is read whole, 4 bytes a label: at most %d bytes (%d MiB), %d labels; write the labels a row per query (%v)",
					maxGather, maxGather>>20, maxGather/4, queriesInRows)
			}
			for j, f := range fs {
				v, ok := r.value(f.b)
				if !ok {
					return nil, vr.errorf(j+1, "class label %s: %s", show(f.b), r.valueRule())
				}
				binary.LittleEndian.PutUint32(val[:], uint32(int32(v))) // a label is at most maxCount
				data.put(val[:])
			}
			teachers++
		}
		if line, err = vr.nextNonBlank(); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
	}
	if teachers == 0 || width < 1 {
		return nil, vr.errorf(0, "no class labels")
	}
	vr.array = true
	return &npyArray{vr: vr, order: binary.LittleEndian, kind: reflect.Int32, size: 4, dtype: "<i4", shape: [2]int{teachers, width}, at: data}, nil
}
