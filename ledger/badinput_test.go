package ledger

import (
	"errors"
	"testing"
)

// TestBadInputErrors: the errors of the caller's input that no other
// package names report themselves as bad input (the command's exit
// status 2), with their messages.
func TestBadInputErrors(t *testing.T) {
	for _, tc := range []struct {
		err error
		msg string
	}{
		{&bindError{Err: errors.New("no K")}, "ledger: no K"},
		{&versionError{Path: "l", Version: 9}, "ledger l is of version 9; this darrm reads versions 3 to 5: use a newer darrm"},
		{&bindingError{Path: "l"}, "ledger l is bound to ensemble : K = 0, no teachers' guarantee, relation private-teachers, kind unstated, partition unstated; this release states : a ledger keeps the budget of one ensemble, and releases of other teachers or in another relation cannot share a budget"},
		{&recordFileError{Path: "r", Reason: "damaged"}, "ledger record r: damaged; if the ledger you use is the right one, record it as it is with: darrm ledger adopt LEDGER"},
	} {
		var bi interface{ BadInput() bool }
		if !errors.As(tc.err, &bi) || !bi.BadInput() || tc.err.Error() != tc.msg {
			t.Errorf("%T: %q, want bad input %q", tc.err, tc.err, tc.msg)
		}
	}
}
