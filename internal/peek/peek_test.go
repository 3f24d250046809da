package peek

import (
	"bufio"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// TestLines: the first non-blank lines, trimmed, with the input left
// whole; fewer at the end of the input or when the buffer is full, and
// never a line cut by the buffer's end; the same from a reader that
// gives one byte at a time, and from one already partly read.
func TestLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		size int
		want []string
	}{
		{"a\nb\nc\n", 2, 64, []string{"a", "b"}},
		{"\xef\xbb\xbf a \r\n\n  \nb", 5, 64, []string{"a", "b"}},
		{"", 1, 64, nil},
		{"\n\n", 1, 64, nil},
		{"x,y\n" + strings.Repeat("1", 40) + "\n", 2, 16, []string{"x,y"}},
		{strings.Repeat("1", 40), 1, 16, nil},
	} {
		for name, wrap := range map[string]func(io.Reader) io.Reader{"whole": func(r io.Reader) io.Reader { return r }, "bytes": iotest.OneByteReader} {
			br := bufio.NewReaderSize(wrap(strings.NewReader(tc.in)), tc.size)
			var got []string
			for _, l := range Lines(br, tc.n) {
				got = append(got, string(l))
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Errorf("%s: Lines(%q, %d) = %q, want %q", name, tc.in, tc.n, got, tc.want)
			}
			if rest, _ := io.ReadAll(br); string(rest) != tc.in {
				t.Errorf("%s: Lines(%q) consumed input: %q left", name, tc.in, rest)
			}
		}
	}
	for _, r := range []io.Reader{strings.NewReader("head\n1\n2\n3\n4"), iotest.HalfReader(strings.NewReader("head\n1\n2\n3\n4"))} {
		br := bufio.NewReaderSize(r, 16)
		br.ReadString('\n')
		if got := Lines(br, 2); len(got) != 2 || string(got[0]) != "1" || string(got[1]) != "2" {
			t.Errorf("after a line was read: %q", got)
		}
	}
}

// TestKeys: the keys of the object at the start, as far as it goes; none
// of anything else.
func TestKeys(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`{"a":1,"b":{"c":2},"d":[1]}`, []string{"a", "b", "d"}},
		{"{\n  \"a\": 1,\n  \"b\": [1, 2", []string{"a", "b"}},
		{`[{"a":1}]`, nil},
		{"a,b\n", nil},
		{"", nil},
	} {
		if got := Keys([]byte(tc.in)); !slices.Equal(got, tc.want) {
			t.Errorf("Keys(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestHead: comment lines are offered to object, then the first other
// line, to object if it holds JSON and to line otherwise; a document
// spread over lines is offered from its start, and one that object does
// not know is multiline only when its brace stands alone; the input is
// left whole.
func TestHead(t *testing.T) {
	object := func(b []byte) string {
		if keys := Keys(b); len(keys) > 0 {
			return "object:" + keys[0]
		}
		return ""
	}
	line := func(b []byte) string {
		if strings.HasPrefix(string(b), "K,") {
			return "line:csv"
		}
		return ""
	}
	for _, tc := range []struct{ in, want string }{
		{`{"header":1}` + "\n1,0\n", "object:header"},
		{"# NOT FOR RELEASE\n" + `# {"labels":1}` + "\n1\n", "object:labels"},
		{"# a\n# b\n# c\n# d\n" + `{"late":1}` + "\n", ""}, // more comments than passed over
		{"K,gamma\n11,0.5\n", "line:csv"},
		{"0,1,1\n", ""},
		{"{\n  \"gamma\": [1]\n}\n", "object:gamma"},
		{"{\n  \"other\": 1\n", "object:other"},
		{"[\n  1, 2\n]\n", "multi"},
		{"[1,\n2]\n", ""},
		{"", ""},
	} {
		br := bufio.NewReaderSize(strings.NewReader(tc.in), 256)
		if got := Head(br, 3, object, line, "multi"); got != tc.want {
			t.Errorf("Head(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if rest, _ := io.ReadAll(br); string(rest) != tc.in {
			t.Errorf("Head(%q) consumed input: %q left", tc.in, rest)
		}
	}
}
