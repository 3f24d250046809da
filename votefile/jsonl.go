package votefile

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/darrm/darrm/internal/plural"
)

// The JSON lines layout of a vote file: one object per row, with its id
// and votes, scanned by hand; encoding/json only decodes a string with
// escapes and checks a numeric id.

func (r *voteReader) firstJSONL(line []byte, opts readOptions) error {
	id, n, err := r.scanJSONL(line, nil)
	if err != nil {
		return err
	}
	switch {
	case opts.ID == present && !id:
		return r.errorf(0, "no \"id\": the id column was declared")
	case opts.ID == absent && id:
		return r.errorf(0, "\"id\" given, but the id column was ruled out")
	}
	r.hasID = id
	if err := r.settle(n, opts); err != nil {
		return err
	}
	_, _, err = r.scanJSONL(line, r.q.Votes)
	return err
}

func (r *voteReader) parseJSONL(line []byte) error {
	id, n, err := r.scanJSONL(line, r.q.Votes)
	if err != nil {
		return err
	}
	switch {
	case id && !r.hasID:
		return r.errorf(0, "\"id\" given, but the first row has none")
	case !id && r.hasID:
		return r.errorf(0, "no \"id\", but the first row has one")
	case n != r.k:
		return r.errorf(0, "%s, want K = %d (as in the first data row)", plural.Of(n, "vote", "votes"), r.k)
	}
	r.count()
	return nil
}

// jsonScan walks one JSON line.
type jsonScan struct {
	r    *voteReader
	line []byte
	i    int
}

func (s *jsonScan) ws() {
	for s.i < len(s.line) {
		switch s.line[s.i] {
		case ' ', '\t', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScan) errorf(format string, args ...any) *formatError {
	return s.r.errorf(s.i+1, format, args...)
}

// token returns the bytes of a scalar token at s.i (up to a delimiter).
func (s *jsonScan) token() []byte {
	j := s.i
	for j < len(s.line) && !delimiter(s.line[j]) {
		j++
	}
	return s.line[s.i:j]
}

func delimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\r', ',', ']', '}', ':':
		return true
	}
	return false
}

// str scans a JSON string at s.i and returns its raw bytes (with quotes).
func (s *jsonScan) str() ([]byte, error) {
	start := s.i
	for j := s.i + 1; j < len(s.line); j++ {
		switch c := s.line[j]; {
		case c == '\\':
			j++
		case c == '"':
			s.i = j + 1
			return s.line[start:s.i], nil
		case c < 0x20:
			return nil, s.r.errorf(j+1, "control character in a JSON string")
		}
	}
	return nil, s.errorf("JSON string is not closed on this line")
}

// decodeStr returns the text of a raw JSON string, decoding it into *buf
// only when it has escapes.
func (s *jsonScan) decodeStr(raw []byte, col int, buf *[]byte) ([]byte, error) {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		if !utf8.Valid(inner) {
			return nil, s.r.errorf(col, "JSON string is not valid UTF-8")
		}
		return inner, nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, s.r.errorf(col, "invalid JSON string: %v", err)
	}
	*buf = append((*buf)[:0], v...)
	return *buf, nil
}

// scanJSONL parses one line: it returns whether it has an id and how many
// votes it holds, storing up to len(votes) of them.
func (r *voteReader) scanJSONL(line []byte, votes []byte) (hasID bool, n int, err error) {
	s := &jsonScan{r: r, line: line}
	s.ws()
	switch {
	case s.i < len(line) && line[s.i] == '[':
		if n, err = s.votes(votes); err != nil {
			return false, 0, err
		}
	case s.i < len(line) && line[s.i] == '{':
		if hasID, n, err = s.object(votes); err != nil {
			return false, 0, err
		}
	default:
		return false, 0, s.errorf("want a JSON array of votes or an object {\"id\": ..., \"votes\": [...]} (not a CSV or JSON lines vote file?)")
	}
	s.ws()
	if s.i < len(line) {
		return false, 0, s.errorf("unexpected data after the JSON value")
	}
	return hasID, n, nil
}

func (s *jsonScan) object(votes []byte) (hasID bool, n int, err error) {
	s.i++ // {
	seenVotes := false
	r := s.r
	r.q.ID, r.q.IDNumber = nil, false
	for {
		s.ws()
		if s.i < len(s.line) && s.line[s.i] == '}' && !hasID && !seenVotes {
			return false, 0, s.errorf("empty object: want {\"id\": ..., \"votes\": [...]}")
		}
		if s.i >= len(s.line) || s.line[s.i] != '"' {
			return false, 0, s.errorf("want a key in quotes")
		}
		col := s.i + 1
		raw, err := s.str()
		if err != nil {
			return false, 0, err
		}
		key, err := s.decodeStr(raw, col, &r.scratch)
		if err != nil {
			return false, 0, err
		}
		s.ws()
		if s.i >= len(s.line) || s.line[s.i] != ':' {
			return false, 0, s.errorf("want ':' after the key")
		}
		s.i++
		s.ws()
		switch string(key) {
		case "id":
			if hasID {
				return false, 0, r.errorf(col, "duplicate key \"id\"")
			}
			hasID = true
			if err := s.id(); err != nil {
				return false, 0, err
			}
		case "votes":
			if seenVotes {
				return false, 0, r.errorf(col, "duplicate key \"votes\"")
			}
			seenVotes = true
			if s.i >= len(s.line) || s.line[s.i] != '[' {
				return false, 0, s.errorf("\"votes\" must be an array of 0/1")
			}
			if n, err = s.votes(votes); err != nil {
				return false, 0, err
			}
		default:
			return false, 0, r.errorf(col, "unknown key %s: want \"id\" and \"votes\"", show(key))
		}
		s.ws()
		if s.i < len(s.line) && s.line[s.i] == ',' {
			s.i++
			continue
		}
		if s.i < len(s.line) && s.line[s.i] == '}' {
			s.i++
			break
		}
		return false, 0, s.errorf("want ',' or '}'")
	}
	if !seenVotes {
		return false, 0, r.errorf(0, "no \"votes\" array")
	}
	return hasID, n, nil
}

// id scans the value of "id": a string or a number.
func (s *jsonScan) id() error {
	col := s.i + 1
	r := s.r
	if s.i < len(s.line) && s.line[s.i] == '"' {
		raw, err := s.str()
		if err != nil {
			return err
		}
		text, err := s.decodeStr(raw, col, &r.idBuf)
		if err != nil {
			return err
		}
		if !validID(text) {
			return r.errorf(col, "id must be text without NUL bytes or line breaks")
		}
		r.q.ID = text
		return nil
	}
	tok := s.token()
	if len(tok) == 0 || !(tok[0] == '-' || (tok[0] >= '0' && tok[0] <= '9')) || !json.Valid(tok) {
		return r.errorf(col, "id %s: must be a JSON string or number", show(tok))
	}
	// A number beyond float64 is infinity to most JSON readers (Python,
	// JavaScript, jq): 1e999 and 2e999 would be one id to them.
	if _, err := strconv.ParseFloat(string(tok), 64); err != nil {
		return r.errorf(col, "id %s: a numeric id must be within the range of a float64 (readers take a larger one for infinity): write it as a string", show(tok))
	}
	s.i += len(tok)
	r.q.ID, r.q.IDNumber = tok, true
	return nil
}

// votes scans an array of 0/1 at s.i, storing up to len(dst) of them.
func (s *jsonScan) votes(dst []byte) (int, error) {
	s.i++ // [
	s.ws()
	if s.i < len(s.line) && s.line[s.i] == ']' {
		s.i++
		return 0, nil
	}
	n := 0
	for {
		s.ws()
		tok := s.token()
		if len(tok) != 1 || (tok[0] != '0' && tok[0] != '1') {
			if len(tok) == 0 && s.i < len(s.line) {
				tok = s.line[s.i : s.i+1]
			}
			return 0, s.errorf("vote %d: %s: must be 0 or 1%s", n+1, voteShown(tok), countsHint(tok))
		}
		if n < len(dst) {
			dst[n] = tok[0] - '0'
		}
		n++
		s.i++
		s.ws()
		if s.i >= len(s.line) {
			return 0, s.errorf("array of votes is not closed on this line")
		}
		switch s.line[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return n, nil
		default:
			return 0, s.errorf("want ',' or ']' after vote %d", n)
		}
	}
}
