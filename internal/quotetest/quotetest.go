// Package quotetest checks, for tests, that an error about a file of
// others is short and quotes no long run of the file. Such an error is
// printed to a terminal and kept in logs, and the file may be huge or
// hold what its author would not have printed.
package quotetest

import (
	"strings"
	"testing"
)

// run is the longest run of the input an error may quote: longer than
// any value a reader quotes cut (param.Quote), shorter than a row.
const run = 100

// Check fails t if msg is longer than most bytes or holds a run of 100
// bytes of in.
func Check(t testing.TB, msg string, in []byte, most int) {
	t.Helper()
	if len(msg) > most {
		t.Fatalf("an error of %d bytes: %.300s...", len(msg), msg)
	}
	for i := 0; i+run <= len(in); i++ {
		if strings.Contains(msg, string(in[i:i+run])) {
			t.Fatalf("the error quotes %d bytes of the input from byte %d: %.300s", run, i, msg)
		}
	}
}
