package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/darrm/darrm/internal/param"
)

// ending is the last line of a ledger that no release may charge any more,
// chained as every line is, so that every analyst who reads the ledger
// sees it: a ledger retired because a new ledger replaced it (Create
// with replace), the copy of a ledger that Options.Export writes, an
// archive for reading and for Options.Import, never a second live ledger,
// or a ledger file that Options.Import moved into PostgreSQL, which then
// is the ledger.
type ending struct {
	// Reason is reasonRetired, reasonExported or reasonImported.
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	// By, for a ledger retired, is who retired it (Options.Analyst, or the
	// database user).
	By string `json:"by,omitempty"`
	// Successor, for a ledger retired, is the identity of the ledger that
	// replaced it, and Where where that ledger is (a URL without its
	// password); for a file imported, Where is the ledger it became.
	Successor string `json:"successor,omitempty"`
	Where     string `json:"where,omitempty"`
	// From, for a copy exported, is where the ledger is kept (a URL
	// without its password, or a file's path).
	From string `json:"from,omitempty"`
}

// The reasons of an ending.
const (
	reasonRetired  = "retired"
	reasonExported = "exported"
	reasonImported = "imported"
)

// endLine returns the end line of a ledger of the given version after the
// line of hash prev, with its line end, and its hash.
func endLine(version int, prev string, e ending) ([]byte, string, error) {
	return encodeLine(version, prev, e)
}

// isEndLine reports whether b, a chained line, is an end line: its kind
// is the first key after prev.
func isEndLine(b []byte) bool {
	const head = `{"prev":"`
	const n = 64
	return len(b) > len(head)+n && bytes.HasPrefix(b[len(head)+n:], []byte(`","end":`))
}

// parseEndLine reads b as an end line of the given version: its prev, its
// end, and its hash, checked against its content.
func parseEndLine(version int, b []byte) (prev string, e ending, hash string, err error) {
	var ln line
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ln); err != nil {
		return "", e, "", fmt.Errorf("not a ledger line: %v", param.CutJSON(err))
	}
	if err := exactKeys(b, lineKeys); err != nil {
		return "", e, "", fmt.Errorf("not a ledger line: %v", err)
	}
	if ln.End == nil || ln.Prev == nil || ln.Spend != nil || ln.Header != nil {
		return "", e, "", errors.New("an end line states its end and nothing else")
	}
	if chainHash(version, *ln.Prev, "end", *ln.End) != ln.SHA256 {
		return "", e, "", errors.New("sha256 does not match the content: the line was changed")
	}
	dec = json.NewDecoder(bytes.NewReader(*ln.End))
	dec.DisallowUnknownFields()
	if err := exactKeys(*ln.End, endKeys); err != nil {
		return "", e, "", fmt.Errorf("end: %v", err)
	}
	if err := dec.Decode(&e); err != nil {
		return "", e, "", fmt.Errorf("end: %v", param.CutJSON(err))
	}
	switch {
	case e.Reason != reasonRetired && e.Reason != reasonExported && e.Reason != reasonImported:
		return "", e, "", fmt.Errorf("end: reason %s: want %q, %q or %q", param.Quote(e.Reason), reasonRetired, reasonExported, reasonImported)
	case e.Reason == reasonRetired && e.Successor == "":
		return "", e, "", errors.New("end: a ledger retired names the ledger that replaced it")
	case e.Reason == reasonImported && e.Where == "":
		return "", e, "", errors.New("end: a ledger imported names the ledger it became")
	}
	return *ln.Prev, e, ln.SHA256, nil
}

// endedError refuses a run on a ledger that has ended (ending): retired,
// or a copy exported; line is the end line's number.
type endedError struct {
	path string
	end  ending
	line int
}

func (e *endedError) Error() string { return e.say("ledger " + e.path) }

// say returns the message of e with subject naming the ledger: the
// ledger's path in an error, "it" in a note of a ledger read, which
// darrm prints after the ledger's path.
func (e *endedError) say(subject string) string {
	if e.end.Reason == reasonImported {
		return fmt.Sprintf("%s was imported into %s on %s (its line %d ends it): that is the ledger now, and no release may charge this file, or the ledger's spends would be counted apart; release on %s", subject, e.end.Where, e.end.At.Format(time.RFC3339), e.line, e.end.Where)
	}
	if e.end.Reason == reasonExported {
		return fmt.Sprintf("%s is a copy of a ledger exported from %s (its line %d ends it): a copy is for reading (darrm ledger show, verify) and for darrm ledger import, and no release may charge it, or the ledger's spends would be counted apart; release on the ledger it was exported from", subject, e.end.From, e.line)
	}
	where := ""
	if e.end.Where != "" {
		where = ", at " + e.end.Where
	}
	by := ""
	if e.end.By != "" {
		by = " by " + e.end.By
	}
	return fmt.Sprintf("%s was retired on %s%s (its line %d ends it): ledger %s replaced it%s, with a budget of its own; no release may charge a retired ledger: release on the ledger that replaced it", subject, e.end.At.Format(time.RFC3339), by, e.line, e.end.Successor, where)
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *endedError) BadInput() bool { return true }

// endErr is the *endedError of a ledger that has ended, nil while it is
// live.
func (l *Ledger) endErr() error {
	if e := l.ended(); e != nil {
		return e
	}
	return nil
}

// ended is what endErr returns, as its type, nil while the ledger is
// live.
func (l *Ledger) ended() *endedError {
	if l.chain.closedBy == nil {
		return nil
	}
	return &endedError{path: l.path, end: *l.chain.closedBy, line: l.chain.n}
}

// end appends the end e to a ledger opened for a run (Open) with no run
// of its own under way: no release may charge it from then on.
func (l *Ledger) end(ctx context.Context, e ending) error {
	switch {
	case l.readOnly:
		return fmt.Errorf("ledger %s: opened read-only", l.path)
	case l.run != "":
		return fmt.Errorf("ledger %s: a run is under way", l.path)
	case l.chain.closedBy != nil:
		return l.endErr()
	}
	b, hash, err := endLine(l.version, l.chain.head, e)
	if err != nil {
		return fmt.Errorf("ledger %s: %w", l.path, err)
	}
	if err := l.store.append(ctx, pos{n: l.chain.n, off: l.size}, l.chain.head, b, hash); err != nil {
		return err
	}
	l.size += int64(len(b))
	l.chain.n, l.chain.head, l.chain.end, l.chain.closedBy = l.chain.n+1, hash, l.size, &e
	if l.state != nil {
		return l.state.advance(ctx, l.chain.n, l.size, l.chain.head)
	}
	return nil
}

// isArchive reports whether the ledger is an export's copy: its end line
// says it was exported.
func (l *Ledger) isArchive() bool {
	return l.chain.closedBy != nil && l.chain.closedBy.Reason == reasonExported
}
