package ledger

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/darrm/darrm/internal/param"
)

// exactKeys checks that raw, the JSON of a ledger line or of its content,
// names each field of the type that keys describes by its exact JSON
// name, at most once, in every object it holds. encoding/json matches a
// key to a field ignoring case, the last match winning, where
// PostgreSQL's jsonb, which the database's trigger reads a line with,
// matches exactly: a line with "run" and "Run" would be one run to the
// trigger and another to darrm, which could then take it for another
// analyst's settlement. A line darrm writes passes (it writes each field
// once, by its name); what the decoder refuses anyway (an unknown key, a
// value of the wrong type) is left to it.
func exactKeys(raw []byte, keys *keyTree) error {
	i, err := keys.scan(raw, 0, 0)
	if err == nil && blanks(raw, i) != len(raw) {
		err = errTruncated
	}
	return err
}

// maxDepth bounds the nesting of a line's values: darrm's lines nest
// seven deep at most (a header's declared use: line, header, use, its
// runs, a run's profile, a point), and a scan's work and memory grow
// with the depth.
// encoding/json's own bound (10,000) let a forged line of 40 KB hold
// exactKeys' 20,000 nested scans at once.
const maxDepth = 32

// keyError is a key that exactKeys refuses, at the path of keys and
// indices that leads to it, which is built as the error returns through
// the values that hold it, not while every value is scanned.
type keyError struct {
	path []pathStep // innermost first
	msg  string
}

// pathStep is a step of a keyError's path: a key, or an index of an
// array (index >= 0).
type pathStep struct {
	key   string
	index int
}

// Error names the key by its path, each key shown (shown): a key of a
// map (an analyst's share) or one refused may be as long as its line.
func (e *keyError) Error() string {
	var b strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		s := e.path[i]
		if s.index >= 0 {
			fmt.Fprintf(&b, "[%d]", s.index)
			continue
		}
		if i < len(e.path)-1 {
			b.WriteByte('.')
		}
		b.WriteString(shown(s.key))
	}
	return fmt.Sprintf("key %s: %s", b.String(), e.msg)
}

// shown returns s, a text of a line, as an error shows it: as it is, or
// quoted cut (param.Quote) when it is long or not plain text. A forged
// line's key, run id, mechanism or digest may be as long as the line,
// and hold the escape sequences of a terminal.
func shown(s string) string {
	if q := param.Quote(s); q != `"`+s+`"` {
		return q
	}
	return s
}

// within returns err with step before its path when it is a *keyError.
func within(err error, step pathStep) error {
	if ke, ok := err.(*keyError); ok {
		ke.path = append(ke.path, step)
	}
	return err
}

// keyTree is what exactKeys knows of a type that encoding/json decodes
// into: the fields of a struct by their JSON names, the element of a
// slice, array or map; nil for a type whose keys are not fields (a type
// that decodes itself, an interface).
type keyTree struct {
	fields map[string]*keyTree
	elem   *keyTree
	isMap  bool
}

// The key trees of the lines of a ledger, made once: read only after.
var (
	lineKeys   = keysOf(reflect.TypeFor[line]())
	spendKeys  = keysOf(reflect.TypeFor[Spend]())
	endKeys    = keysOf(reflect.TypeFor[ending]())
	headerKeys = keysOf(reflect.TypeFor[Header]())
)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// keysOf returns the key tree of t.
func keysOf(t reflect.Type) *keyTree {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		k := &keyTree{fields: map[string]*keyTree{}}
		fieldsOf(t, k.fields)
		return k
	case reflect.Slice, reflect.Array:
		return &keyTree{elem: keysOf(t.Elem())}
	case reflect.Map:
		return &keyTree{elem: keysOf(t.Elem()), isMap: true}
	}
	return nil
}

// fieldsOf adds to fields the JSON name and key tree of each field that
// encoding/json decodes into a struct of type t: its exported fields, by
// their tag's name or their own, then those of the structs it embeds
// without a tag, which its own fields hide.
func fieldsOf(t reflect.Type, fields map[string]*keyTree) {
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case f.Anonymous && name == "" && ft.Kind() == reflect.Struct:
			embedded = append(embedded, ft)
		case !f.IsExported():
		default:
			if name == "" {
				name = f.Name
			}
			fields[name] = keysOf(f.Type)
		}
	}
	for _, e := range embedded {
		promoted := map[string]*keyTree{}
		fieldsOf(e, promoted)
		for name, k := range promoted {
			if _, hidden := fields[name]; !hidden {
				fields[name] = k
			}
		}
	}
}

// scan reads the JSON value that begins at b[i] (after blanks), to be
// decoded into the type of k, depth values deep in the line, checking its
// objects' keys (exactKeys), and returns the index just past it. A key
// with an escape is read as both decoders read it, unescaped ("r\u0075n"
// is run to both).
func (k *keyTree) scan(b []byte, i, depth int) (int, error) {
	i = blanks(b, i)
	if i >= len(b) {
		return i, errTruncated
	}
	if depth == maxDepth && (b[i] == '{' || b[i] == '[') {
		return i, fmt.Errorf("values nested more than %d deep (darrm's lines nest a few)", maxDepth)
	}
	switch b[i] {
	case '{':
		// A map, as an object may hold thousands of keys, each checked
		// against those before it.
		seen := map[string]bool{}
		i = blanks(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return i, errTruncated
			}
			end, escaped := stringEnd(b, i)
			if end < 0 {
				return i, errTruncated
			}
			key := string(b[i+1 : end-1])
			if escaped && json.Unmarshal(b[i:end], &key) != nil {
				return i, errTruncated
			}
			if seen[key] {
				return i, &keyError{path: []pathStep{{key: key, index: -1}}, msg: "given twice"}
			}
			seen[key] = true
			var next *keyTree
			switch {
			case k != nil && k.fields != nil:
				f, ok := k.fields[key]
				if !ok {
					return i, &keyError{path: []pathStep{{key: key, index: -1}}, msg: "not a field of the line (darrm names each by its exact name)"}
				}
				next = f
			case k != nil && k.isMap:
				next = k.elem
			}
			i = blanks(b, end)
			if i >= len(b) || b[i] != ':' {
				return i, errTruncated
			}
			var err error
			if i, err = next.scan(b, i+1, depth+1); err != nil {
				return i, within(err, pathStep{key: key, index: -1})
			}
			i = blanks(b, i)
			switch {
			case i < len(b) && b[i] == ',':
				i = blanks(b, i+1)
			case i < len(b) && b[i] == '}':
				return i + 1, nil
			default:
				return i, errTruncated
			}
		}
	case '[':
		var elem *keyTree
		if k != nil && !k.isMap {
			elem = k.elem
		}
		i = blanks(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for n := 0; ; n++ {
			var err error
			if i, err = elem.scan(b, i, depth+1); err != nil {
				return i, within(err, pathStep{index: n})
			}
			i = blanks(b, i)
			switch {
			case i < len(b) && b[i] == ',':
				i++
			case i < len(b) && b[i] == ']':
				return i + 1, nil
			default:
				return i, errTruncated
			}
		}
	case '"':
		end, _ := stringEnd(b, i)
		if end < 0 {
			return i, errTruncated
		}
		return end, nil
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[i])) {
		i++
	}
	return i, nil
}

// stringEnd returns the index just past the JSON string that begins at
// b[i] (its opening quote), -1 when it does not end, and whether it holds
// an escape.
func stringEnd(b []byte, i int) (int, bool) {
	escaped := false
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i + 1, escaped
		}
	}
	return -1, escaped
}

// errTruncated is JSON that ends before its value does, or is no JSON.
var errTruncated = errors.New("not JSON")

// blanks returns the index of the first byte of b from i on that is not
// JSON's white space.
func blanks(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}
