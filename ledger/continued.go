package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
)

// A ledger that continues another (Header.Upgraded: one that Upgrade
// made of a ledger of an earlier version) carries that ledger's lines,
// each as it was, in a line of its own after its header (a past line,
// {"prev":"<hash>","past":<the old line>,"sha256":"<hash>"}), then the
// spend of each of its runs (the last line of each, with the totals of
// those before it), as Upgrade writes them. A reader checks the old
// lines as the old ledger's own chain, their number, last hash and
// digest against the header's claim, and each run carried against the
// old ledger's; so a record or a witness of the old ledger is satisfied
// only by the old ledger's actual line at its number (continues), and a
// ledger that claims to continue another without carrying its lines (one
// that an earlier darrm upgraded) satisfies none.

// pastChain is the ledger that a ledger continues, as its past lines are
// read.
type pastChain struct {
	claim upgraded
	// head is the continuing ledger's header, which must be the old
	// one's but for what an upgrade gives it (sameHeader).
	head     Header
	ensemble string  // the continuing ledger's, which the old one must be of
	old      *Ledger // its header, once read
	c        chain   // its chain, up to its line c.n
	n        int     // its lines read
	off      int64   // their bytes
	sum      hash.Hash
	// runs are the digests of the old ledger's runs' spends (spendDigest
	// of the last line of each), in order, once its lines are read; carried
	// counts those that the continuing ledger's spend lines have matched.
	runs    [][sha256.Size]byte
	carried int
}

// newPast returns the past of a ledger of header h, which claims to
// continue another (h.Upgraded).
func newPast(h Header) *pastChain {
	return &pastChain{claim: *h.Upgraded, head: h, ensemble: h.Ensemble, sum: sha256.New()}
}

// sameHeader reports whether h, the header of a ledger that continues
// the ledger of header old, is old's but for what Upgrade gives it: its
// version, identity, filter (version3Filter) and claim. An upgrade keeps
// the budget, δ', relation, teachers, creation, shares and use: a
// continuation that changes one is a new budget that passes for the old.
func sameHeader(h, old Header) bool {
	h.Version, h.ID, h.Filter, h.Upgraded = old.Version, old.ID, old.Filter, old.Upgraded
	a, errA := json.Marshal(h)
	b, errB := json.Marshal(old)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// encodePast returns the past line of a ledger of the given version after
// the line of hash prev that carries the old line b (without its line
// end), with its line end, and its hash.
func encodePast(version int, prev string, b []byte) ([]byte, string) {
	h := chainHash(version, prev, "past", b)
	line := append([]byte(`{"prev":"`+prev+`","past":`), b...)
	return append(line, `,"sha256":"`+h+"\"}\n"...), h
}

// isPastLine reports whether b, a chained line, is a past line.
func isPastLine(b []byte) bool {
	const head = `{"prev":"`
	const n = 64
	return len(b) > len(head)+n && bytes.HasPrefix(b[len(head)+n:], []byte(`","past":`))
}

// parsePastLine reads b as a past line of the given version: its prev,
// the old line it carries and its hash, checked against its content.
func parsePastLine(version int, b []byte) (prev string, old []byte, hash string, err error) {
	const head, mid, tail = `{"prev":"`, `","past":`, `,"sha256":"`
	const n = 64
	t := len(b) - 2 - n - len(tail)
	if !isPastLine(b) || t < len(head)+n+len(mid) || string(b[t:t+len(tail)]) != tail || string(b[len(b)-2:]) != `"}` {
		return "", nil, "", errors.New("not a ledger line: a past line is {\"prev\":...,\"past\":<a line of the ledger it continues>,\"sha256\":...}")
	}
	prev, old, hash = string(b[len(head):len(head)+n]), b[len(head)+n+len(mid):t], string(b[t+len(tail):len(b)-2])
	if chainHash(version, prev, "past", old) != hash {
		return "", nil, "", errors.New("sha256 does not match the content: the line was changed")
	}
	return prev, old, hash, nil
}

// spendDigest is the digest of a run's spend as a continuing ledger
// carries it: all but its totals before it, which are the new ledger's.
func spendDigest(s Spend) [sha256.Size]byte {
	s.Prior = nil
	b, _ := json.Marshal(s)
	return sha256.Sum256(b)
}

// nextPast checks b as the next past line of the chain c of a ledger
// that continues another (c.past), and moves c on to it.
func (c *chain) nextPast(path string, b []byte) error {
	n, p := c.n+1, c.past
	corrupt := func(format string, args ...any) error {
		return &CorruptError{Path: path, Line: n, Reason: fmt.Sprintf(format, args...)}
	}
	if !isPastLine(b) {
		return corrupt("it claims to continue ledger %s of %d lines, but carries %d of them: a ledger that continues another carries its lines after its header", short(p.claim.ID), p.claim.Lines, p.n)
	}
	prev, old, h, err := parsePastLine(c.rule.version, b)
	switch {
	case err != nil:
		return corrupt("%v", err)
	case prev != c.head:
		return corrupt("%s", chainBroken(c.n))
	}
	oldPath := fmt.Sprintf("%s (its line %d, line %d of the ledger it continues)", path, n, p.n+1)
	if p.n == 0 {
		p.old = &Ledger{path: oldPath, readOnly: true}
		hh, err := p.old.parseHeader(old)
		if err != nil {
			return err
		}
		switch {
		case p.old.header.ID != p.claim.ID || p.old.version != p.claim.Version || p.old.header.Ensemble != p.ensemble:
			return corrupt("it carries the header of ledger %s of version %d, ensemble %s; it claims to continue ledger %s of version %d, of its own ensemble", short(p.old.header.ID), p.old.version, p.old.header.Ensemble, short(p.claim.ID), p.claim.Version)
		case p.claim.Version != version3:
			// A ledger of version 4 or later is never upgraded: one that
			// claims to continue it, carrying its lines and a line more,
			// would settle a run of it anew.
			return corrupt("it claims to continue ledger %s of version %d, but darrm continues (upgrades) only ledgers of version 3: this is no upgrade of it", short(p.claim.ID), p.claim.Version)
		case !sameHeader(p.head, p.old.header):
			return corrupt("its header is not that of ledger %s, which it claims to continue: an upgrade keeps the budget, delta', relation, teachers, creation, shares and use of the ledger it upgrades", short(p.claim.ID))
		}
		p.c = start(p.old.header.rule(nil), hh, int64(len(old))+1)
	} else {
		before := p.c.last
		if err := p.c.next(oldPath, old); err != nil {
			return err
		}
		if before.Run != "" && p.c.last.Run != before.Run {
			p.runs = append(p.runs, spendDigest(before))
		}
	}
	p.n++
	p.off += int64(len(old)) + 1
	p.sum.Write(old)
	p.sum.Write([]byte{'\n'})
	if p.n == p.claim.Lines {
		if p.c.last.Run != "" {
			p.runs = append(p.runs, spendDigest(p.c.last))
		}
		if p.c.head != p.claim.Head || hex.EncodeToString(p.sum.Sum(nil)) != p.claim.SHA256 {
			return corrupt("the %d lines it carries are not those of the ledger it claims to continue: their last hash or their digest is not the one its header states", p.n)
		}
	}
	c.n, c.head, c.end = n, h, c.end+int64(len(b))+1
	return nil
}

// carry checks that s, a spend line of a ledger that continues another,
// is the spend carried of the old ledger's next run, while runs remain
// to be carried ("" if so, or if none remains).
func (p *pastChain) carry(s Spend) string {
	if p.carried == len(p.runs) {
		return ""
	}
	if spendDigest(s) != p.runs[p.carried] {
		return fmt.Sprintf("it carries run %d of the %d of the ledger it continues, but not as that ledger's lines count it (run, labels, guarantee)", p.carried+1, len(p.runs))
	}
	p.carried++
	return ""
}

// done reports why the past of a ledger read to its end is not whole
// ("" if it is): it carries fewer lines or runs than it claims.
func (p *pastChain) done() string {
	switch {
	case p == nil:
		return ""
	case p.n < p.claim.Lines:
		return fmt.Sprintf("it claims to continue ledger %s of %d lines, but ends after carrying %d of them", short(p.claim.ID), p.claim.Lines, p.n)
	case p.carried < len(p.runs):
		return fmt.Sprintf("it carries %d of the %d runs of the ledger it continues", p.carried, len(p.runs))
	}
	return ""
}

// continues checks rec, a record or witness of the ledger that this one
// claims to continue (Header.Upgraded; false for any other), against the
// lines it carries: rec must have seen that ledger's line at its number,
// with its hash and where it ends. A ledger that carries none of them (an
// earlier darrm's upgrade) cannot be checked, and satisfies no record
// or witness of the old ledger: a *RecordError, as one that carries
// another past.
func (l *Ledger) continues(ctx context.Context, rec *Record, e *RecordError) (bool, error) {
	u := l.header.Upgraded
	if u == nil || u.ID == "" || rec.LedgerID != u.ID {
		return false, nil
	}
	e.kind, e.ID = pastDiffers, l.header.ID
	if u.Past == 0 {
		e.kind = unchecked
		return true, e
	}
	if rec.Lines > u.Lines {
		return true, e
	}
	c, _, _, _, err := l.walk(ctx, pos{n: 1 + rec.Lines, off: everything.off}, nil)
	if err != nil {
		return true, err
	}
	p := c.past
	if p == nil || p.n != rec.Lines || p.c.head != rec.Head || rec.Size > 0 && p.off != rec.Size {
		return true, e
	}
	return true, nil
}

// continuesNote says what ledger one with header h continues, and
// whether it carries that ledger's lines to check it by; "" for a
// ledger that continues none.
func (h Header) continuesNote() string {
	u := h.Upgraded
	switch {
	case u == nil:
		return ""
	case u.Past == 0:
		return fmt.Sprintf("continues ledger %s (version %d, %d lines), it says, but carries none of its lines (an upgrade by a darrm before it carried them): no record or witness of that ledger vouches for this one", short(u.ID), u.Version, u.Lines)
	}
	return fmt.Sprintf("continues ledger %s (version %d, %d lines): it carries them all, each checked as that ledger's line, and the spend of each of its runs, so that a record or witness of that ledger is checked against its very line", short(u.ID), u.Version, u.Lines)
}
