package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/darrm/darrm/accountant"
)

// scanLegacy reads a ledger of an earlier version (version 1, or 2 with
// or without its chain) from the start: it checks every line and the
// chain, if any, and collects the spend of every run (the last record of
// each), which those versions kept in no line; rec, if any, names a line
// whose hash to remember. ReadOnly shows such ledgers and Upgrade carries
// them over; no release is charged to them.
func (l *Ledger) scanLegacy(rec *Record) error {
	r := newLineReader(io.NewSectionReader(l.f, 0, math.MaxInt64))
	index := map[string]int{}
	l.spends = nil
	n := 0
	prev := l.headerHash
	var recHash string
	var markAt int64
	for {
		b, err := r.next()
		if err == io.EOF {
			break
		}
		n++
		if err := l.lineErr(n, b, err); err != nil {
			return err
		}
		if n == 1 {
			if rec != nil && rec.Lines == 1 {
				recHash = prev
			}
			continue
		}
		if l.marked {
			return &CorruptError{Path: l.path, Line: n, Reason: "a line after the mark of an upgrade"}
		}
		if isMarker(b) {
			l.marked, markAt = true, r.end-int64(len(b))-1
			continue
		}
		s, h, err := l.parseLegacySpend(b, prev, n)
		if err != nil {
			return err
		}
		if i, ok := index[s.Run]; ok {
			l.spends[i] = s
		} else {
			index[s.Run] = len(l.spends)
			l.spends = append(l.spends, s)
		}
		prev = h
		if rec != nil && rec.Lines == n {
			recHash = h
		}
	}
	l.chain = chain{n: n, head: prev, runs: len(l.spends)}
	l.size = r.end
	if l.marked {
		l.chain.n, l.size = n-1, markAt
	}
	for _, s := range l.spends {
		var err error
		if l.chain.spent, err = l.chain.spent.Add(accountant.Guarantee{Eps: s.Eps, Delta: s.Delta}, s.Queries); err != nil {
			return &CorruptError{Path: l.path, Line: n, Reason: fmt.Sprintf("spends: %v", err)}
		}
	}
	l.recHash, l.tail = recHash, r.tail
	return nil
}

// parseLegacySpend checks spend line n, b, of a ledger of an earlier
// version, after the line of hash prev, and returns its spend and hash.
func (l *Ledger) parseLegacySpend(b []byte, prev string, n int) (Spend, string, error) {
	corrupt := func(format string, args ...any) (Spend, string, error) {
		return Spend{}, "", &CorruptError{Path: l.path, Line: n, Reason: fmt.Sprintf(format, args...)}
	}
	chained := l.format == chained2
	var ln line
	dec := json.NewDecoder(bytes.NewReader(b))
	if chained {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&ln); err != nil {
		return corrupt("not a ledger line: %v", err)
	}
	if ln.Spend == nil || ln.Header != nil {
		return corrupt("want a header on the first line and spends after it")
	}
	if chained {
		switch {
		case ln.Prev == nil || *ln.Prev != prev:
			return corrupt("the chain is broken: this line does not follow line %d (a line was removed, inserted or changed)", n-1)
		case chainHash(2, prev, "spend", *ln.Spend) != ln.SHA256:
			return corrupt("sha256 does not match the content: the line was changed")
		}
	} else if v1Hash(*ln.Spend) != ln.SHA256 {
		return corrupt("sha256 does not match the content: the line was changed")
	}
	var s Spend
	dec = json.NewDecoder(bytes.NewReader(*ln.Spend))
	if chained {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&s); err != nil {
		return corrupt("spend: %v", err)
	}
	if s.Prior != nil {
		return corrupt("spend: prior: not a field of version %d", l.version)
	}
	if err := checkSpend(s); err != nil {
		return corrupt("spend: %v", err)
	}
	return s, ln.SHA256, nil
}
