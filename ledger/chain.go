package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
)

// chain is a ledger of the current version read up to its line n: what
// the check of line n+1 needs, and the spends so far.
type chain struct {
	// rule is the ledger's: its version (its lines' hashes) and how a
	// spend adds to the sums.
	rule rule
	n    int
	runs int    // runs that lines 2 to n hold, when read from the start
	head string // the hash of line n
	// last is line n's spend (Run "" for the header), spent the sequence
	// of every run's spend up to line n: last.Prior and last's own.
	last  Spend
	spent accountant.Sequence
	// ended, for a ledger read from its start, holds the runs that ended
	// before the last line's run began (nil when read from a vouched
	// line, whose earlier runs are not known).
	ended *runSet
	// used, on a ledger whose use is declared, holds the spends read
	// whose labels are of the run whose turn it was (checkUse).
	used map[useKey]struct{}
	// end is where line n ends in the ledger's file form, after its line
	// end; bits the pair lists of the lines read.
	end  int64
	bits *pairBook
	// closedBy is the ledger's end, when line n is an end line: no line
	// follows it.
	closedBy *ending
	// past, for a ledger read from its start that continues another, is
	// that ledger as its lines are read.
	past *pastChain
}

// chainBroken is the reason of a line that does not follow line n, its
// predecessor, in the hash chain: every reader of a ledger says it so.
func chainBroken(n int) string {
	return fmt.Sprintf("the chain is broken: this line does not follow line %d (a line was removed, inserted or changed)", n)
}

// changedWhileRead is the reason of a line that is not the one darrm
// read when it opened the ledger.
const changedWhileRead = "it is not the line read when the ledger was opened: the ledger was changed while darrm read it"

// start returns the chain of a ledger of the given version read up to
// its header, of hash h, from its start: it keeps the runs that have
// ended. The header ends at byte end.
func start(r rule, h string, end int64) chain {
	return chain{rule: r, n: 1, head: h, ended: &runSet{}, end: end, bits: &pairBook{}}
}

// rule is how the spend lines of a ledger add to its sums: by their
// guarantee alone (version 3), by their description (version 4 and a
// declared use of version 5), or, on a version-5 ledger open to any use,
// by the charge of filter that each line states. On a ledger whose first
// run chooses its filter (firstRun), filter is nil until a line states it.
// On a ledger whose use is declared, use is its runs, which every line's
// labels must be of (chain.checkUse).
type rule struct {
	version  int
	filter   *accountant.Filter
	budget   accountant.Guarantee
	firstRun bool
	use      []UseRun
	memo     *accountant.Memo // what the charges keep (Options.Memo)
}

// withLine returns r as the spend line s sets it: on a ledger whose first
// run chose its filter, the filter s states, which must be the one every
// line before it stated (r.filter, when set) and a valid filter of the
// budget; on any other ledger r, and s may state no filter.
func (r rule) withLine(s Spend) (rule, error) {
	switch {
	case !r.firstRun && s.Filter != nil:
		return r, errors.New("a filter on a line of a ledger whose header fixes its composition")
	case !r.firstRun:
		return r, nil
	case len(s.Filter) == 0:
		return r, errors.New("no filter: a line of a ledger whose first run chose its filter states it")
	case r.filter != nil && !slices.Equal(r.filter.Parts, s.Filter):
		return r, fmt.Errorf("its filter %v is not the one the lines before it state, %v: a ledger's filter never changes", accountant.Filter{Parts: s.Filter}, *r.filter)
	case r.filter == nil:
		f := accountant.Filter{Parts: s.Filter}
		if err := f.Check(r.budget); err != nil {
			return r, fmt.Errorf("its filter: %v", err)
		}
		r.filter = &f
	}
	return r, nil
}

// add returns prior followed by k labels of the spend s.
func (r rule) add(prior accountant.Sequence, s Spend, k int) (accountant.Sequence, error) {
	switch {
	case r.version == version3:
		return prior.Add(accountant.Guarantee{Eps: s.Eps, Delta: s.Delta}, k)
	case r.filter != nil:
		if s.Charge == nil {
			return prior, errors.New("no charge: a line of a ledger open to any use states what its filter charges a label")
		}
		return r.filter.Add(prior, *s.Charge, k)
	}
	return prior.AddSpend(s.step(), k)
}

// charge returns what the filter of a ledger open to any use charges
// a label that step describes, a one-bit release by the pairs that a
// line holds of it (spendOf): the charge a run states, and that a check
// recomputes from the line (checkCharge).
func (r rule) charge(step accountant.Spend) (accountant.Charge, error) {
	if err := step.Check(); err != nil {
		return accountant.Charge{}, err
	}
	return r.filter.Charge(r.memo, step.Dominating(r.memo), r.budget)
}

// checkCharge reports whether the charge s states covers its
// description on a ledger open to any use (nil on any other ledger), a
// one-bit release's with its pairs (accountant.Filter.Covers): a line
// cannot charge less than its step costs, as this darrm computes it. A
// line of another build's darrm charges other last digits, above that
// by the margin its charge carries. A one-bit release without pairs (a
// line written before the lists were kept, pairBook.unlisted) is not
// checked.
func (r rule) checkCharge(s Spend, pairs []accountant.BitPair) error {
	if r.filter == nil {
		if s.Charge != nil {
			return errors.New("a charge on a ledger not open to any use")
		}
		return nil
	}
	if s.BitsSHA256 != "" && pairs == nil {
		return nil
	}
	step := s.charged(pairs)
	var cover error
	if s.Charge != nil && step.Check() == nil {
		if cover = r.filter.Covers(r.memo, step.Dominating(r.memo), r.budget, *s.Charge); cover == nil {
			return nil
		}
	}
	// Refused: recompute the charge to say why.
	want, err := r.charge(step)
	if err != nil {
		return fmt.Errorf("its step: %v", err)
	}
	if s.Charge == nil {
		return errors.New("no charge: a line of a ledger open to any use states what its filter charges a label")
	}
	w, _ := json.Marshal(want)
	got, _ := json.Marshal(s.Charge)
	err = fmt.Errorf("its charge %s is not the one the filter %v charges its step, %s (%v)", got, *r.filter, w, cover)
	if sameButRounding(w, got) {
		return &roundingError{err}
	}
	return err
}

// maxHeldPairs bounds the pairs of the distinct lists that a read of a
// ledger holds (16 bytes each): some 50,000 lists of a DaRRM label at
// K = 11.
const maxHeldPairs = 1 << 21

// pairBook holds the pair lists of the one-bit releases of a ledger
// being read, by their digest (Spend.BitsSHA256), with the lines that
// hold each.
type pairBook struct {
	lists map[string]*pairList
	held  int // pairs in lists
	// listed says that a line read holds its pairs or names the line
	// that does: every later line of a one-bit release must.
	listed bool
	// fetch, for a ledger read from the line its record vouches for,
	// line from, reads a line before it that a later line names (wanted,
	// of the list of digest want: readWanted); nil for a ledger read from
	// its start.
	fetch  func(ctx context.Context, at bitsAt) ([]byte, bool, error)
	from   int
	wanted bitsAt
	want   string
	// unlisted counts the lines of one-bit releases without pairs, read
	// before any line held some (lines of a darrm that kept the digest
	// alone), whose charge was not recomputed; first are the first few.
	unlisted int
	first    []int
}

// pairList is a pair list and the lines that hold it.
type pairList struct {
	pairs []accountant.BitPair
	at    []bitsAt
}

// errUnread says that a line names pairs that a line before the lines
// read holds (pairBook.wanted): it is read alone (readWanted), outside a
// read of the lines (a database connection reads one query at a time),
// and the lines are read again.
var errUnread = errors.New("ledger: the pairs a line names are held by a line not read")

// pairsOf returns the pairs of the spend s of line n: those it holds, or
// those of the line it names, which must hold the list of its digest
// (errUnread when that line comes before the lines read); nil for a line
// of no one-bit release, and for one without pairs before any line had
// them (counted in unlisted).
func (b *pairBook) pairsOf(n int, s Spend) ([]accountant.BitPair, error) {
	switch {
	case s.BitsSHA256 == "":
		return nil, nil
	case s.Bits != nil:
		b.listed = true
		if b.lists[s.BitsSHA256] == nil && b.held+len(s.Bits) > maxHeldPairs {
			return nil, fmt.Errorf("its pair list would bring the pairs of the distinct lists read to more than %d, which a read holds at most", maxHeldPairs)
		}
		return s.Bits, nil
	case s.BitsAt == nil && b.listed:
		return nil, errors.New("a one-bit release without its pairs (bits) or the line that holds them (bits_at): every such line after the first that has either has one")
	case s.BitsAt == nil:
		if b.unlisted++; len(b.first) < 5 {
			b.first = append(b.first, n)
		}
		return nil, nil
	}
	b.listed = true
	at := *s.BitsAt
	// The line's end says where to read it alone; among the lines read,
	// its number names it, so that a copy whose lines moved still reads.
	if l := b.lists[s.BitsSHA256]; l != nil && slices.ContainsFunc(l.at, func(a bitsAt) bool { return a.Line == at.Line }) {
		return l.pairs, nil
	}
	if at.Line >= n || b.fetch == nil || at.Line >= b.from || at.Line < 2 {
		return nil, fmt.Errorf("its pairs are at line %d (ending at byte %d), it says, but that line holds no pair list of digest %s", at.Line, at.End, shown(s.BitsSHA256))
	}
	b.wanted, b.want = at, s.BitsSHA256
	return nil, errUnread
}

// readWanted reads the line that pairsOf found wanted and keeps its
// pairs, and reports whether it holds the list wanted.
func (b *pairBook) readWanted(ctx context.Context, version int) (bool, error) {
	line, ok, err := b.fetch(ctx, b.wanted)
	if !ok || err != nil {
		return false, err
	}
	_, held, _, err := parseSpendLine(version, line)
	if err != nil || held.Bits == nil || held.BitsSHA256 != b.want {
		return false, nil
	}
	if _, err := b.pairsOf(b.wanted.Line, held); err != nil {
		return false, nil
	}
	b.keep(b.wanted, held)
	return true, nil
}

// keep adds the pairs the spend s of the line at holds, if any, to b
// (pairsOf has bounded them).
func (b *pairBook) keep(at bitsAt, s Spend) {
	if s.Bits == nil {
		return
	}
	if b.lists == nil {
		b.lists = make(map[string]*pairList)
	}
	l := b.lists[s.BitsSHA256]
	if l == nil {
		l = &pairList{pairs: s.Bits}
		b.lists[s.BitsSHA256], b.held = l, b.held+len(s.Bits)
	}
	l.at = append(l.at, at)
}

// name makes the spend s, to be written, name the line that holds its
// pairs, when b knows one, instead of holding them.
func (b *pairBook) name(s *Spend) {
	if l := b.lists[s.BitsSHA256]; s.Bits != nil && l != nil {
		at := l.at[0]
		s.Bits, s.BitsAt = nil, &at
	}
}

// note says which lines' charges were not recomputed (unlisted), "" if
// none.
func (b *pairBook) note() string {
	switch b.unlisted {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("charge of line %d not recomputed: its pair list is not in the ledger (a one-bit release written by a darrm that kept the list's digest alone: only the hash chain vouches for its charge)", b.first[0])
	}
	lines := make([]string, len(b.first))
	for i, n := range b.first {
		lines[i] = strconv.Itoa(n)
	}
	if b.unlisted > len(b.first) {
		lines = append(lines, "...")
	}
	return fmt.Sprintf("charges of %d lines not recomputed (lines %s): their pair lists are not in the ledger (one-bit releases written by a darrm that kept the lists' digests alone: only the hash chain vouches for their charges)", b.unlisted, strings.Join(lines, ", "))
}

// splitSpendLine cuts b, a spend line as encodeLine writes it,
// {"prev":"<hash>","spend":<raw>,"sha256":"<hash>"}, into its parts
// without decoding it; false for a line of any other layout.
func splitSpendLine(b []byte) (prev string, raw []byte, hash string, ok bool) {
	const head, mid, tail = `{"prev":"`, `","spend":`, `,"sha256":"`
	const n = 64 // hex digits of a SHA-256
	if len(b) < len(head)+n+len(mid)+len(tail)+n+2 || string(b[:len(head)]) != head || string(b[len(head)+n:len(head)+n+len(mid)]) != mid || string(b[len(b)-2:]) != `"}` {
		return "", nil, "", false
	}
	t := len(b) - 2 - n - len(tail)
	if string(b[t:t+len(tail)]) != tail {
		return "", nil, "", false
	}
	return string(b[len(head) : len(head)+n]), b[len(head)+n+len(mid) : t], string(b[t+len(tail) : len(b)-2]), true
}

// parseSpendLine reads b as a spend line of the given version (3 or the
// current one): its prev, its spend, checked on its own, and its hash,
// checked against its content.
func parseSpendLine(version int, b []byte) (prev string, s Spend, hash string, err error) {
	prev, raw, hash, ok := splitSpendLine(b)
	if !ok {
		var ln line
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ln); err != nil {
			return "", s, "", fmt.Errorf("not a ledger line: %v", param.CutJSON(err))
		}
		if err := exactKeys(b, lineKeys); err != nil {
			return "", s, "", fmt.Errorf("not a ledger line: %v", err)
		}
		if ln.Spend == nil || ln.Header != nil || ln.Prev == nil {
			return "", s, "", errors.New("want a header on the first line and spends after it, each with prev")
		}
		prev, raw, hash = *ln.Prev, *ln.Spend, ln.SHA256
	}
	if chainHash(version, prev, "spend", raw) != hash {
		return "", s, "", errors.New("sha256 does not match the content: the line was changed")
	}
	if err := exactKeys(raw, spendKeys); err != nil {
		return "", s, "", fmt.Errorf("spend: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return "", s, "", fmt.Errorf("spend: %v", param.CutJSON(err))
	}
	if err := checkSpend(version, s); err != nil {
		return "", s, "", fmt.Errorf("spend: %v", err)
	}
	if version == version3 && (s.Kind != accountant.ApproxSpend || s.Gaussian != nil || s.Discrete || s.Prior != nil && (s.Prior.Rho != 0 || s.Prior.Curveless != 0)) {
		return "", s, "", errors.New("spend: a description or zCDP sums in a version-3 line")
	}
	if s.Prior == nil {
		return "", s, "", errors.New("spend: no prior: the totals of the spends before it")
	}
	if err := s.Prior.Check(); err != nil {
		return "", s, "", fmt.Errorf("spend: prior: %v", err)
	}
	return prev, s, hash, nil
}

// at returns the chain of a ledger of rule r at its spend line n, s, of
// hash h and pairs (pairBook.pairsOf): the spends so far are the line's
// prior and its own, added by the rule (its charge checked against its
// description), so that a line whose description does not give the next
// line's prior breaks the ledger (chain.next).
func at(r rule, n int, h string, s Spend, pairs []accountant.BitPair) (chain, error) {
	r, err := r.withLine(s)
	if err != nil {
		return chain{}, err
	}
	if err := r.checkCharge(s, pairs); err != nil {
		return chain{}, err
	}
	spent, err := r.add(*s.Prior, s, s.Queries)
	return chain{rule: r, n: n, head: h, last: s, spent: spent}, err
}

// next checks b as line c.n+1, a spend, and moves c on to it: b must
// follow line c.n in the hash chain, and carry as its prior the spends of
// every run before its own (the prior of line c.n when that line is of
// the same run, else the spends up to line c.n).
func (c *chain) next(path string, b []byte) error {
	n := c.n + 1
	corrupt := func(format string, args ...any) error {
		return &CorruptError{Path: path, Line: n, Reason: fmt.Sprintf(format, args...)}
	}
	if c.closedBy != nil {
		return corrupt("a line after the ledger's end (line %d, %s): an ended ledger is never appended to", c.n, c.closedBy.Reason)
	}
	if c.past != nil && c.past.n < c.past.claim.Lines {
		return c.nextPast(path, b)
	}
	if isEndLine(b) {
		prev, e, h, err := parseEndLine(c.rule.version, b)
		switch {
		case err != nil:
			return corrupt("%v", err)
		case prev != c.head:
			return corrupt("%s", chainBroken(c.n))
		}
		c.n, c.head, c.end, c.closedBy = n, h, c.end+int64(len(b))+1, &e
		return nil
	}
	prev, s, h, err := parseSpendLine(c.rule.version, b)
	if err != nil {
		return corrupt("%v", err)
	}
	if prev != c.head {
		return corrupt("%s", chainBroken(c.n))
	}
	if reason := c.follows(s); reason != "" {
		return corrupt("%s", reason)
	}
	if c.past != nil {
		if reason := c.past.carry(s); reason != "" {
			return corrupt("%s", reason)
		}
	}
	want := c.spent
	if s.Run == c.last.Run {
		want = *c.last.Prior
	}
	if *s.Prior != want {
		return corrupt("its prior (the totals of the spends before it) does not follow from line %d", c.n)
	}
	pairs, err := c.bits.pairsOf(n, s)
	if err == errUnread {
		return err
	}
	if err == nil {
		err = c.checkUse(s, pairs)
	}
	if err != nil {
		return corrupt("spend: %v", err)
	}
	next, err := at(c.rule, n, h, s, pairs)
	if err != nil {
		return &CorruptError{Path: path, Line: n, Reason: "spend: " + err.Error(), rounding: errors.As(err, new(*roundingError))}
	}
	next.runs, next.ended, next.used, next.bits, next.end, next.past = c.runs, c.ended, c.used, c.bits, c.end+int64(len(b))+1, c.past
	next.bits.keep(bitsAt{Line: n, End: next.end}, s)
	if s.Run != c.last.Run {
		next.runs++
		if c.last.Run != "" {
			next.ended.add(c.last.Run)
		}
	}
	*c = next
	return nil
}

// follows says why the spend s cannot be the line after line c.n ("" if
// it can), by what a run writes (Ledger.Reserve, Ledger.Settle): its
// lines one after the other, under the lock; each reservation more
// labels than the one before; then at most one final line, of at most
// the labels reserved; and one mechanism and description throughout. A
// line appended to a sound chain, with its own hash, must still follow
// these rules, so that it cannot lower what a run counts: only a
// settlement lowers a run's count, once, to what its run handed out.
func (c *chain) follows(s Spend) string {
	p := c.last
	if s.Run != p.Run {
		if c.ended.has(s.Run) {
			return fmt.Sprintf("a line of run %s, which ended before line %d: a run writes its lines one after the other (a line was moved or copied here)", shown(s.Run), c.n+1)
		}
		return ""
	}
	switch {
	case p.Final:
		return fmt.Sprintf("a line of run %s after its final line (line %d): a run ends with its final line", shown(s.Run), c.n)
	case !sameSpend(p, s):
		return fmt.Sprintf("run %s's spend changed from %s (line %d) to %s: a run hands out labels of one mechanism and guarantee, charged by one analyst", shown(s.Run), p.describe(), c.n, s.describe())
	case !s.Final && s.Queries <= p.Queries:
		return fmt.Sprintf("a reservation of %d labels after one of %d (line %d): a run's reservations only rise", s.Queries, p.Queries, c.n)
	case s.Final && s.Queries > p.Queries:
		return fmt.Sprintf("run %s settles %d labels, but reserved %d (line %d): labels were handed out without a reservation", shown(s.Run), s.Queries, p.Queries, c.n)
	}
	return ""
}

// describe says what labels s counts: their mechanism, guarantee and, for
// Gaussian noise, its deviations.
func (s Spend) describe() string {
	d := fmt.Sprintf("%s labels %v", shown(string(s.Mechanism)), accountant.Guarantee{Eps: s.Eps, Delta: s.Delta})
	if s.Analyst != "" {
		d += " charged by " + strconv.Quote(s.Analyst)
	}
	if s.Kind != accountant.GaussianSpend {
		return d
	}
	parts := make([]string, len(s.Gaussian))
	for i, g := range s.Gaussian {
		parts[i] = fmt.Sprintf("sigma %g on %d", g.Sigma, g.Coords)
	}
	noise := "Gaussian"
	if s.Discrete {
		noise = "discrete Gaussian"
	}
	return fmt.Sprintf("%s with %s noise (%s)", d, noise, strings.Join(parts, ", "))
}

// sameSpend reports whether a and b describe labels of one mechanism and
// guarantee, charged by one analyst, as every line of a run does.
func sameSpend(a, b Spend) bool {
	return a.Analyst == b.Analyst && a.Mechanism == b.Mechanism && a.Eps == b.Eps && a.Delta == b.Delta && a.Kind == b.Kind &&
		a.Discrete == b.Discrete && slices.Equal(a.Gaussian, b.Gaussian) && a.BitsSHA256 == b.BitsSHA256 &&
		reflect.DeepEqual(a.Laplace, b.Laplace) && reflect.DeepEqual(a.Charge, b.Charge)
}

// runSet is a set of run ids. darrm draws a run's id as 16 hex digits,
// kept here as their 8 bytes, so that a ledger of a million runs is
// checked in about 25 MB more (7.5 MB for 300,000, measured); any other
// id is kept whole.
type runSet struct {
	hex   map[[8]byte]struct{}
	other map[string]struct{}
}

// hexID returns the 8 bytes of id when it is 16 lower-case hex digits.
func hexID(id string) (k [8]byte, ok bool) {
	if len(id) != 2*len(k) {
		return k, false
	}
	for i := range len(id) {
		d := strings.IndexByte("0123456789abcdef", id[i])
		if d < 0 {
			return k, false
		}
		k[i/2] = k[i/2]<<4 | byte(d)
	}
	return k, true
}

// add adds id to s; a nil set keeps nothing.
func (s *runSet) add(id string) {
	if s == nil {
		return
	}
	if k, ok := hexID(id); ok {
		if s.hex == nil {
			s.hex = make(map[[8]byte]struct{})
		}
		s.hex[k] = struct{}{}
		return
	}
	if s.other == nil {
		s.other = make(map[string]struct{})
	}
	s.other[id] = struct{}{}
}

// has reports whether id is in s; false for a nil set (runs not known).
func (s *runSet) has(id string) bool {
	if s == nil {
		return false
	}
	if k, ok := hexID(id); ok {
		_, in := s.hex[k]
		return in
	}
	_, in := s.other[id]
	return in
}

// walk reads the ledger from its start up to to, checks every line and
// the chain, and calls each (if not nil) after every line with the chain
// up to it, the spend of the line before it (Run "" for the header) and
// the line itself, valid until each returns.
// It returns the chain, where it stopped and the bytes after that which
// end no line, and the size of the lines before Upgrade's mark on a
// version-3 ledger, -1 if it has none.
func (l *Ledger) walk(ctx context.Context, to pos, each func(c *chain, before Spend, line []byte) error) (chain, pos, []byte, int64, error) {
	c := start(l.header.rule(l.memo), l.headerHash, int64(len(l.headerLine))+1)
	if u := l.header.Upgraded; u != nil && u.Past > 0 {
		c.past = newPast(l.header)
	}
	mark := int64(-1)
	n, off := 0, int64(0)
	end, tail, err := l.store.lines(ctx, pos{}, to, func(b []byte) error {
		n++
		if n == 1 && !bytes.Equal(b, l.headerLine) {
			return &CorruptError{Path: l.path, Line: 1, Reason: "the header changed while the ledger was read"}
		}
		if mark >= 0 {
			return &CorruptError{Path: l.path, Line: n, Reason: "a line after the mark of an upgrade"}
		}
		if n > 1 && l.format == chained3 && isMarker(b) {
			mark = off
			return nil
		}
		before := c.last
		if n > 1 {
			if err := c.next(l.path, b); err != nil {
				return err
			}
		}
		off += int64(len(b)) + 1
		if each != nil {
			return each(&c, before, b)
		}
		return nil
	})
	return c, end, tail, mark, l.readErr(n+1, err)
}

// readErr is the error of reading line n of the ledger: a line too long
// is damage.
func (l *Ledger) readErr(n int, err error) error {
	var ce *CorruptError
	switch {
	case err == nil, errors.As(err, &ce):
		return err
	case err == errLongLine:
		return &CorruptError{Path: l.path, Line: n, Reason: err.Error()}
	}
	return fmt.Errorf("ledger %s: read: %w", l.path, err)
}

// scan reads every line from the start, checks each and the chain, and
// keeps the spends' totals; rec, if any, names a line whose hash to
// remember.
func (l *Ledger) scan(ctx context.Context, rec *Record) error {
	recHash := ""
	c, end, tail, mark, err := l.walk(ctx, everything, func(c *chain, _ Spend, _ []byte) error {
		if rec != nil && rec.Lines == c.n {
			recHash = c.head
		}
		return nil
	})
	if err != nil {
		return err
	}
	if reason := c.past.done(); reason != "" {
		return &CorruptError{Path: l.path, Line: c.n + 1, Reason: reason}
	}
	l.chain, l.size, l.tail, l.recHash = c, end.off, tail, recHash
	if mark >= 0 {
		l.marked, l.size = true, mark
	}
	if note := c.bits.note(); note != "" {
		l.notes = append(l.notes, note)
	}
	return l.checkHeld()
}

// resume reads the ledger from the line that rec vouches for, its line
// rec.Lines that ends at byte rec.Size and has the hash rec.Head: that
// line and every line after it are checked, the lines before it are not
// read. The record was advanced after each of those lines was checked and
// written, and each line carries the totals of the lines before it, so
// the totals are those of the whole ledger. The header, which a release
// trusts for the budget and the binding, is vouched for too: it must have
// the hash rec.Header (when the record knows it) and be the line that the
// first spend line follows. It reports false, having kept nothing, when
// the ledger does not hold those lines there (cut, edited, re-signed,
// another copy): a full scan then says why.
func (l *Ledger) resume(ctx context.Context, rec *Record) (bool, error) {
	if rec.Header != "" && rec.Header != l.headerHash {
		return false, nil
	}
	var c chain
	if rec.Lines > 1 {
		if ok, err := l.firstSpendFollows(ctx); !ok || err != nil {
			return false, err
		}
	}
	vouched := pos{n: rec.Lines, off: rec.Size}
	if rec.Lines == 1 {
		if rec.Head != l.headerHash || rec.Size != int64(len(l.headerLine))+1 {
			return false, nil
		}
		c = start(l.header.rule(l.memo), l.headerHash, rec.Size)
	} else {
		b, ok, err := l.store.lineAt(ctx, vouched, vouched)
		if !ok || err != nil {
			return false, err
		}
		_, s, hash, err := parseSpendLine(l.version, b)
		if err != nil || hash != rec.Head {
			return false, nil
		}
		// This line or a later one may name a pair list that a line
		// before it holds: that line alone is read.
		bits := &pairBook{from: rec.Lines, fetch: func(ctx context.Context, at bitsAt) ([]byte, bool, error) {
			// The line a checked line names.
			return l.store.lineAt(ctx, pos{n: at.Line, off: at.End}, pos{n: at.Line, off: at.End})
		}}
		pairs, err := bits.pairsOf(rec.Lines, s)
		if err == errUnread {
			var ok bool
			if ok, err = bits.readWanted(ctx, l.version); !ok || err != nil {
				return false, err
			}
			pairs, err = bits.pairsOf(rec.Lines, s)
		}
		if err != nil {
			return false, nil
		}
		if c, err = at(l.header.rule(l.memo), rec.Lines, hash, s, pairs); err != nil {
			return false, nil
		}
		c.bits, c.end = bits, rec.Size
		bits.keep(bitsAt{Line: rec.Lines, End: rec.Size}, s)
	}
	// Read again, from the vouched line, after each line read alone.
	for from := c; ; c = from {
		unread := false
		end, tail, err := l.store.lines(ctx, vouched, everything, func(b []byte) error {
			if unread {
				return nil
			}
			err := c.next(l.path, b)
			unread = err == errUnread
			if unread {
				return nil
			}
			return err
		})
		if err = l.readErr(c.n+1, err); err != nil {
			return false, err
		}
		if !unread {
			l.chain, l.size, l.tail, l.recHash, l.vouched = c, end.off, tail, rec.Head, vouched
			return true, l.checkHeld()
		}
		if ok, err := c.bits.readWanted(ctx, l.version); !ok || err != nil {
			return false, err
		}
	}
}

// firstSpendFollows reports whether the ledger's second line, its first
// spend, follows its header in the chain: a header edited and re-signed
// on its own breaks that link. A record of an earlier darrm does not know
// the header's hash, so this link is what vouches for the header then.
func (l *Ledger) firstSpendFollows(ctx context.Context) (bool, error) {
	var follows bool
	from := pos{n: 1, off: int64(len(l.headerLine)) + 1}
	_, _, err := l.store.lines(ctx, from, pos{n: 2, off: from.off + maxLineBytes + 1}, func(b []byte) error {
		prev, _, _, err := parseSpendLine(l.version, b)
		follows = err == nil && prev == l.headerHash
		return nil
	})
	if err == errLongLine {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ledger %s: read: %w", l.path, err)
	}
	return follows, nil
}

// Runs calls each with the spend of every run, in the order of the
// ledger (the last line of each run, read again and checked as it is
// read), and stops at the first error.
func (l *Ledger) Runs(ctx context.Context, each func(Spend) error) error {
	c, err := l.again(ctx, func(c *chain, before Spend, _ []byte) error {
		if before.Run != "" && c.last.Run != before.Run {
			return each(before)
		}
		return nil
	})
	if err == nil && c.last.Run != "" {
		err = each(c.last)
	}
	return err
}

// again reads the ledger again from its start up to the line read first
// (walk), which it must still end with.
func (l *Ledger) again(ctx context.Context, each func(c *chain, before Spend, line []byte) error) (chain, error) {
	c, _, _, _, err := l.walk(ctx, pos{n: l.chain.n, off: l.size}, each)
	if err == nil && (c.n != l.chain.n || c.head != l.chain.head) {
		err = fmt.Errorf("ledger %s changed while it was read: its line %d is not the one read first", l.path, l.chain.n)
	}
	return c, err
}
