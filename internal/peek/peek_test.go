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
