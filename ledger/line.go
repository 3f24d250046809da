package ledger

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/darrm/darrm/internal/peek"
)

// maxLineBytes bounds a line of a ledger: a header or a spend is a few
// hundred bytes, so a longer line is damage, and reading stops there
// instead of filling memory.
const maxLineBytes = 1 << 20

// line is how a header or a spend is stored. Versions 2 and 3 chain the
// lines: Prev is the SHA256 of the line before ("" for the header), and
// SHA256 hashes the version, Prev, the kind of line and its JSON
// (chainHash). Version 1 had no Prev, and its SHA256 hashed the JSON alone.
type line struct {
	Prev   *string          `json:"prev,omitempty"`
	Header *json.RawMessage `json:"header,omitempty"`
	Spend  *json.RawMessage `json:"spend,omitempty"`
	End    *json.RawMessage `json:"end,omitempty"`
	Past   *json.RawMessage `json:"past,omitempty"`
	SHA256 string           `json:"sha256"`
}

// chainHash is the hash of a chained line of a ledger of the given
// version (2 or 3): it covers the line before (prev), so that a line
// removed, replaced or moved breaks the chain; the version keeps a line
// of one version from passing for a line of another.
func chainHash(version int, prev, kind string, raw []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "darrm-ledger/%d\n%s\n%s\n", version, prev, kind)
	h.Write(raw)
	return hex.EncodeToString(h.Sum(nil))
}

// encodeLine returns the line of a ledger of the given version of v (a
// Header, a Spend or an ending) after the line of hash prev, with its line end, and
// its hash.
func encodeLine(version int, prev string, v any) ([]byte, string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, "", err
	}
	msg := json.RawMessage(raw)
	l := line{Prev: &prev}
	var kind string
	switch v.(type) {
	case Header:
		kind, l.Header = "header", &msg
	case ending:
		kind, l.End = "end", &msg
	default:
		kind, l.Spend = "spend", &msg
	}
	l.SHA256 = chainHash(version, prev, kind, raw)
	b, err := json.Marshal(l)
	return append(b, '\n'), l.SHA256, err
}

// linePrefix is how every chained line after the one of hash prev begins:
// a torn last line must begin so, or be a beginning of it.
func linePrefix(prev string) []byte { return []byte(`{"prev":"` + prev + `",`) }

// lineReader reads a file line by line, no line longer than maxLineBytes,
// counting the bytes of the whole lines read.
type lineReader struct {
	br   *bufio.Reader
	long []byte
	// end is the offset just past the last whole line read.
	end int64
	// tail is what follows the last line end, at the end of the file.
	tail []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// errLongLine is a line over maxLineBytes.
var errLongLine = fmt.Errorf("a line longer than %d bytes", maxLineBytes)

// next returns the next whole line without its line end; io.EOF at the
// end, with tail set to any bytes after the last line end. The line is
// valid until the next call.
func (r *lineReader) next() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.long = append(r.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(r.long) > maxLineBytes {
				return nil, errLongLine
			}
			b, err = r.br.ReadSlice('\n')
			r.long = append(r.long, b...)
		}
		b = r.long
	}
	switch {
	case err == io.EOF:
		if len(b) > maxLineBytes {
			return nil, errLongLine
		}
		r.tail = bytes.Clone(b)
		return nil, io.EOF
	case err != nil:
		return nil, err
	case len(b) > maxLineBytes+1:
		return nil, errLongLine
	}
	r.end += int64(len(b))
	return b[:len(b)-1], nil
}

// lineEndingAt returns the line of f that ends at byte end (its line end
// at end-1), without the line end: the line a record vouches for, read
// without reading what comes before it. It reports false when the byte
// at end-1 is no line end, or the line is longer than maxLineBytes.
func lineEndingAt(f io.ReaderAt, end int64) ([]byte, bool, error) {
	if end < 1 {
		return nil, false, nil
	}
	for window := int64(4 << 10); ; window *= 2 {
		start := max(0, end-window)
		b := make([]byte, end-start)
		if _, err := f.ReadAt(b, start); err != nil {
			if err == io.EOF {
				return nil, false, nil // the file is shorter than the record says
			}
			return nil, false, err
		}
		if b[len(b)-1] != '\n' {
			return nil, false, nil
		}
		if i := bytes.LastIndexByte(b[:len(b)-1], '\n'); i >= 0 {
			return b[i+1 : len(b)-1], true, nil
		}
		if start == 0 {
			return b[:len(b)-1], true, nil
		}
		if window > maxLineBytes {
			return nil, false, nil
		}
	}
}

// IsLedger reports whether obj, the JSON object at the start of a file,
// is a ledger's first line: a header line, with its hash.
func IsLedger(obj []byte) bool {
	keys := peek.Keys(obj)
	return slices.Contains(keys, "header") && slices.Contains(keys, "sha256")
}
