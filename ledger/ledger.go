// Package ledger keeps a persistent, crash-safe record of the privacy spent
// on one teacher ensemble across runs, and enforces a total budget on it.
//
// A ledger is a file of JSON lines: a header naming the ensemble, its
// neighbouring relation, the total budget and the slack δ' of composition,
// then one record per write to disk of a release's spend. Spends are
// written ahead: a release reserves the labels it is about to hand out,
// and the reservation is on disk (fsync) before they leave the process,
// so that a crash can over-count the spend, never under-count it. The file
// is locked (flock) for the whole of a run, so concurrent runs are
// serialised. Totals come from the accountant: optimal composition
// (Kairouz, Oh and Viswanath 2015, Thm 3.3) when every query had the same
// guarantee, heterogeneous general composition (their Thm 3.5) otherwise,
// or simple composition when that is smaller.
package ledger

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/darrm/darrm/accountant"
)

// Version is the version of the file format.
const Version = 1

// Header is the first line of a ledger.
type Header struct {
	Version    int                  `json:"version"`
	Ensemble   string               `json:"ensemble"`
	Relation   string               `json:"relation"`
	Budget     accountant.Guarantee `json:"budget"`
	DeltaPrime float64              `json:"delta_prime"`
	Created    time.Time            `json:"created"`
}

// Spend is one record: run Run had handed out, or was about to hand out,
// Queries labels, each with guarantee (Eps, Delta), by Mechanism. The last
// record of a run counts; Final marks the exact count written at its end.
type Spend struct {
	Run       string    `json:"run"`
	Time      time.Time `json:"time"`
	Mechanism string    `json:"mechanism"`
	Eps       float64   `json:"eps"`
	Delta     float64   `json:"delta"`
	Queries   int       `json:"queries"`
	Final     bool      `json:"final"`
}

// line is how a header or a spend is stored: its JSON and a SHA-256 of it,
// so that an edited or damaged line is detected.
type line struct {
	Header *json.RawMessage `json:"header,omitempty"`
	Spend  *json.RawMessage `json:"spend,omitempty"`
	SHA256 string           `json:"sha256"`
}

// CorruptError reports a ledger that cannot be trusted; nothing may be
// released against it.
type CorruptError struct {
	Path   string
	Line   int
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("ledger %s, line %d: %s; no release is possible until it is repaired or replaced", e.Path, e.Line, e.Reason)
}

// ErrBudget is wrapped by Reserve when the budget allows no more labels.
var ErrBudget = errors.New("the ledger's budget is spent")

// Init creates a ledger at path, which must not exist.
func Init(path string, h Header) error {
	if h.Ensemble == "" {
		return fmt.Errorf("ledger: ensemble name is empty: name the teacher ensemble the budget is for")
	}
	if !(h.Budget.Eps > 0) || !(h.Budget.Delta >= 0 && h.Budget.Delta < 1) {
		return fmt.Errorf("ledger: budget %v: eps must be > 0 and delta in [0, 1)", h.Budget)
	}
	if !(h.DeltaPrime > 0 && h.DeltaPrime < 1) {
		return fmt.Errorf("ledger: delta' = %v: must be in (0, 1)", h.DeltaPrime)
	}
	h.Version = Version
	if h.Created.IsZero() {
		h.Created = time.Now().UTC().Truncate(time.Second)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	b, err := encode(h, true)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("ledger: write %s: %w", path, err)
	}
	return nil
}

func encode(v any, header bool) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	msg := json.RawMessage(raw)
	l := line{SHA256: checksum(raw)}
	if header {
		l.Header = &msg
	} else {
		l.Spend = &msg
	}
	b, err := json.Marshal(l)
	return append(b, '\n'), err
}

func checksum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Ledger is an open, locked ledger.
type Ledger struct {
	path   string
	f      *os.File
	header Header
	spends []Spend // the last record of each run, in order of first appearance
	run    string  // this process's run id, once it has reserved
	mech   string
	step   accountant.Guarantee
	held   int // labels reserved by this run
}

// Open opens and locks the ledger at path; it blocks while another run
// holds it. A ledger that fails any check is a *CorruptError. Close
// releases the lock.
func Open(path string) (*Ledger, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w (create it with darrm ledger init)", err)
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("ledger %s: lock: %w", path, err)
	}
	l := &Ledger{path: path, f: f}
	if err := l.read(); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// OpenRun opens and locks the ledger at path for a release of labels of
// guarantee step under relation by mechanism: it begins the run's spend
// (Begin) and returns how many labels the budget allows, at most limit
// when limit >= 0 (Allowance). Close the ledger when the run is settled.
func OpenRun(path, mechanism, relation string, step accountant.Guarantee, limit int) (*Ledger, int, error) {
	l, err := Open(path)
	if err != nil {
		return nil, 0, err
	}
	allowed := 0
	if err = l.Begin(mechanism, relation, step); err == nil {
		allowed, err = l.Allowance(step, limit)
	}
	if err != nil {
		l.Close()
		return nil, 0, err
	}
	return l, allowed, nil
}

// read parses the file. A last line without its line end is a write that
// a crash interrupted before its fsync returned: the labels it would have
// paid for were never handed out, so it is cut off.
func (l *Ledger) read() error {
	b, err := io.ReadAll(l.f)
	if err != nil {
		return fmt.Errorf("ledger %s: read: %w", l.path, err)
	}
	if i := bytes.LastIndexByte(b, '\n'); i+1 < len(b) {
		if err := l.f.Truncate(int64(i + 1)); err != nil {
			return fmt.Errorf("ledger %s: cut off a torn last line: %w", l.path, err)
		}
		b = b[:i+1]
	}
	index := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		corrupt := func(format string, args ...any) error {
			return &CorruptError{Path: l.path, Line: n, Reason: fmt.Sprintf(format, args...)}
		}
		var ln line
		if err := json.Unmarshal(sc.Bytes(), &ln); err != nil {
			return corrupt("not a ledger line: %v", err)
		}
		raw := ln.Spend
		if n == 1 {
			raw = ln.Header
		}
		if raw == nil || (n == 1) != (ln.Header != nil) {
			return corrupt("want a header on the first line and spends after it")
		}
		if checksum(*raw) != ln.SHA256 {
			return corrupt("sha256 does not match the content: the line was changed")
		}
		if n == 1 {
			if err := json.Unmarshal(*raw, &l.header); err != nil {
				return corrupt("header: %v", err)
			}
			if l.header.Version != Version {
				return corrupt("version %d, this darrm reads version %d", l.header.Version, Version)
			}
			continue
		}
		var s Spend
		if err := json.Unmarshal(*raw, &s); err != nil {
			return corrupt("spend: %v", err)
		}
		if s.Run == "" || s.Queries < 0 || !(s.Eps >= 0) || !(s.Delta >= 0 && s.Delta < 1) {
			return corrupt("spend %+v: needs a run id, queries >= 0, eps >= 0 and delta in [0, 1)", s)
		}
		if i, ok := index[s.Run]; ok {
			l.spends[i] = s
		} else {
			index[s.Run] = len(l.spends)
			l.spends = append(l.spends, s)
		}
	}
	if err := sc.Err(); err != nil {
		return &CorruptError{Path: l.path, Line: n + 1, Reason: err.Error()}
	}
	if n == 0 {
		return &CorruptError{Path: l.path, Line: 1, Reason: "empty: no header"}
	}
	return nil
}

// Header returns the ledger's header.
func (l *Ledger) Header() Header { return l.header }

// Spends returns the spend of every run so far (the last record of each).
func (l *Ledger) Spends() []Spend { return append([]Spend(nil), l.spends...) }

// Total returns the total privacy of the spends, with the composition
// that gave it, and of extra more labels of guarantee step.
func (l *Ledger) total(step accountant.Guarantee, extra int) (accountant.Guarantee, string, error) {
	var runs []accountant.Run
	add := func(g accountant.Guarantee, k int) {
		if k == 0 {
			return
		}
		for i := range runs {
			if runs[i].Step == g {
				runs[i].K += k
				return
			}
		}
		runs = append(runs, accountant.Run{Step: g, K: k})
	}
	for _, s := range l.spends {
		add(accountant.Guarantee{Eps: s.Eps, Delta: s.Delta}, s.Queries)
	}
	add(step, extra)
	return Compose(runs, l.header.DeltaPrime)
}

// Total returns the total privacy spent so far and the composition used.
func (l *Ledger) Total() (accountant.Guarantee, string, error) {
	return l.total(accountant.Guarantee{}, 0)
}

// Compose returns the total of a sequence of steps, given as runs of equal
// steps: optimal composition with slack deltaPrime when all steps are equal
// (and there are at most accountant.MaxOptimalSteps), heterogeneous general
// composition otherwise, or simple composition when it is no larger in
// either ε or δ; and the name of the composition used.
func Compose(runs []accountant.Run, deltaPrime float64) (accountant.Guarantee, string, error) {
	if len(runs) == 0 {
		return accountant.Guarantee{}, "none", nil
	}
	simple, err := accountant.ComposeSimpleSeq(runs)
	if err != nil {
		return accountant.Guarantee{}, "", err
	}
	var adv accountant.Guarantee
	name := "general (heterogeneous)"
	if len(runs) == 1 && runs[0].K <= accountant.MaxOptimalSteps {
		adv, err = accountant.ComposeOptimal(runs[0].Step, runs[0].K, deltaPrime)
		name = "optimal"
	} else {
		adv, err = accountant.ComposeGeneralSeq(runs, deltaPrime)
	}
	if err != nil {
		return accountant.Guarantee{}, "", err
	}
	if simple.Eps <= adv.Eps && simple.Delta <= adv.Delta {
		return simple, "simple", nil
	}
	return adv, name, nil
}

// maxAllowance bounds the search of Allowance.
const maxAllowance = 1 << 50

// Allowance returns how many more labels of guarantee step the budget
// allows (at most limit when limit >= 0).
func (l *Ledger) Allowance(step accountant.Guarantee, limit int) (int, error) {
	fits := func(k int) (bool, error) {
		g, _, err := l.total(step, k)
		return err == nil && g.Eps <= l.header.Budget.Eps && g.Delta <= l.header.Budget.Delta, err
	}
	if ok, err := fits(0); err != nil || !ok {
		return 0, err
	}
	lo, hi := 0, 1
	for {
		if limit >= 0 && hi > limit {
			hi = limit + 1
			break
		}
		if hi > maxAllowance {
			return 0, fmt.Errorf("ledger %s: more than %d labels of %v fit in the budget", l.path, maxAllowance, step)
		}
		ok, _ := fits(hi)
		if !ok {
			break
		}
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok, _ := fits(mid); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// Status is the state of a ledger as a release reports it.
type Status struct {
	Ensemble string               `json:"ensemble"`
	Relation string               `json:"relation"`
	Budget   accountant.Guarantee `json:"budget"`
	// Total is the privacy spent so far, by Composition.
	Total       accountant.Guarantee `json:"total"`
	Composition string               `json:"composition"`
	// QueriesLeft is how many more labels of the guarantee given to
	// Status the budget allows.
	QueriesLeft int `json:"queries_left"`
}

// Status returns the ledger's budget, its total so far, and how many more
// labels of guarantee step its budget allows.
func (l *Ledger) Status(step accountant.Guarantee) (Status, error) {
	total, method, err := l.Total()
	if err != nil {
		return Status{}, err
	}
	left, err := l.Allowance(step, -1)
	if err != nil {
		return Status{}, err
	}
	h := l.header
	return Status{Ensemble: h.Ensemble, Relation: h.Relation, Budget: h.Budget, Total: total, Composition: method, QueriesLeft: left}, nil
}

// Begin starts this run's spend: mechanism and the per-label guarantee.
// relation must be the ledger's.
func (l *Ledger) Begin(mechanism, relation string, step accountant.Guarantee) error {
	if relation != l.header.Relation {
		return fmt.Errorf("ledger %s is for the %s relation; %s's guarantee is for %s: they cannot share a budget", l.path, l.header.Relation, mechanism, relation)
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	l.run, l.mech, l.step = hex.EncodeToString(b[:]), mechanism, step
	return nil
}

// Reserve records, on disk, that this run will have handed out labels
// labels in all. It is called before they leave the process.
// A reservation beyond the budget is refused with ErrBudget.
func (l *Ledger) Reserve(labels int) error {
	if labels <= l.held {
		return nil
	}
	if l.run == "" {
		return fmt.Errorf("ledger: Begin was not called")
	}
	saved := l.spends
	l.spends = nil
	for _, s := range saved {
		if s.Run != l.run {
			l.spends = append(l.spends, s)
		}
	}
	total, method, err := l.total(l.step, labels)
	l.spends = saved
	if err != nil {
		return fmt.Errorf("ledger %s: %w", l.path, err)
	}
	if b := l.header.Budget; total.Eps > b.Eps || total.Delta > b.Delta {
		return fmt.Errorf("ledger %s: %d labels of %v would bring the total to %v by %s composition, over the budget %v: %w", l.path, labels, l.step, total, method, b, ErrBudget)
	}
	return l.write(labels, false)
}

// Settle records the exact number of labels this run handed out.
func (l *Ledger) Settle(labels int) error {
	if l.run == "" {
		return nil
	}
	if labels < 0 || labels > l.held {
		return fmt.Errorf("ledger %s: settle %d labels, %d were reserved: the count must be in [0, reserved]", l.path, labels, l.held)
	}
	return l.write(labels, true)
}

func (l *Ledger) write(labels int, final bool) error {
	if l.run == "" {
		return fmt.Errorf("ledger: Begin was not called")
	}
	s := Spend{Run: l.run, Time: time.Now().UTC(), Mechanism: l.mech, Eps: l.step.Eps, Delta: l.step.Delta, Queries: labels, Final: final}
	b, err := encode(s, false)
	if err != nil {
		return err
	}
	if _, err := l.f.Seek(0, io.SeekEnd); err != nil {
		return fmt.Errorf("ledger %s: %w", l.path, err)
	}
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("ledger %s: write: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("ledger %s: fsync: %w", l.path, err)
	}
	l.held = labels
	for i := range l.spends {
		if l.spends[i].Run == l.run {
			l.spends[i] = s
			return nil
		}
	}
	l.spends = append(l.spends, s)
	return nil
}

// Close releases the lock.
func (l *Ledger) Close() error { return l.f.Close() }
