// Package peek looks at the first lines of a buffered input without
// consuming them, so that a reader can recognise what a file holds (its
// kind, its layout) and still be handed the whole of it.
package peek

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Lines returns the first n lines of br's unread input that are not
// blank, without their line ends, trimmed of blanks and of a UTF-8
// byte-order mark at the start of the input, without consuming them. It
// waits until it has them, the input ends or fails, or br's buffer is
// full: it returns fewer then, and only complete lines (the last line of
// the input need not end with a line break). Reads of br after it see the
// whole input. The lines are valid until br is read.
func Lines(br *bufio.Reader, n int) [][]byte {
	type span struct{ from, to int }
	var spans []span
	from, seen := 0, 0 // the start of the line being read; bytes looked at
	for len(spans) < n {
		_, err := br.Peek(br.Buffered() + 1) // a byte more, or an error
		b, _ := br.Peek(br.Buffered())
		for len(spans) < n {
			i := bytes.IndexByte(b[seen:], '\n')
			if i < 0 {
				seen = len(b)
				break
			}
			if len(bytes.TrimSpace(b[from:seen+i])) > 0 {
				spans = append(spans, span{from, seen + i})
			}
			from, seen = seen+i+1, seen+i+1
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(spans) < n && len(bytes.TrimSpace(b[from:])) > 0 {
				spans = append(spans, span{from, len(b)})
			}
			break
		}
	}
	// Earlier slices of the buffer may have moved as it filled: cut the
	// lines from it as it is now.
	b, _ := br.Peek(br.Buffered())
	var lines [][]byte
	for _, s := range spans {
		line := bytes.TrimSpace(b[s.from:s.to])
		if s.from == 0 {
			line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")))
		}
		lines = append(lines, line)
	}
	return lines
}

// Keys returns the keys of the JSON object at the start of b, as far as
// b holds it (a file's first line, or the start of a document spread
// over lines): what a package looks at to recognise its own files. nil
// if b does not start with an object.
func Keys(b []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := tok.(string)
		keys = append(keys, key)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break
		}
	}
	return keys
}

// Head recognises what br's input starts with, without consuming it:
// after up to comments lines that start with '#', whose text after the
// mark object is asked about first (a header behind a comment mark), the
// first other line goes to object when it holds a JSON value, and to line
// otherwise. A line that opens a JSON document that does not end on it
// goes to object with the rest of the document as far as br's buffer
// holds it; if object does not know it and the opening brace or bracket
// stands alone on its line, Head returns multiline. It waits for the
// first lines only, and for the document's start. The zero K is "none".
func Head[K comparable](br *bufio.Reader, comments int, object, line func([]byte) K, multiline K) K {
	var none K
	for n := 1; n <= comments+1; n++ {
		lines := Lines(br, n)
		if len(lines) < n {
			return none
		}
		l := lines[n-1]
		switch {
		case l[0] == '#':
			if k := object(bytes.TrimSpace(l[1:])); k != none {
				return k
			}
			continue
		case l[0] == '{' || l[0] == '[':
			if json.Valid(l) {
				return object(l)
			}
			b, _ := br.Peek(br.Size())
			if k := object(b[max(bytes.Index(b, l), 0):]); k != none {
				return k
			}
			if len(l) == 1 {
				return multiline
			}
			return none
		}
		return line(l)
	}
	return none
}
