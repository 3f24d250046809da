// Package ledger keeps a persistent, crash-safe record of the privacy spent
// on one teacher ensemble across runs, and enforces a total budget on it.
//
// A ledger is a file of JSON lines: a header naming the ensemble, its
// neighbouring relation, the parameters it is bound to (K, the teachers'
// (ε, Δ), kind and partition: a release that states others is refused),
// the total budget and the slack δ' of composition, then one record per
// write to disk of a release's spend. Spends are
// written ahead: a release reserves the labels it is about to hand out,
// and the reservation is on disk (fsync) before they leave the process,
// so that a crash can over-count the spend, never under-count it. The file
// is locked (flock) for the whole of a run, so concurrent runs are
// serialised. Totals come from the accountant: optimal composition
// (Kairouz, Oh and Viswanath 2015, Thm 3.3) when every query had the same
// guarantee, heterogeneous general composition (their Thm 3.5) otherwise,
// or simple composition when that is smaller; for fixed private teachers
// the total is the smaller of that and the teachers' post-processing cap
// (ensemble.Binding.Cap), which can make every further release free.
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
	"strings"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
)

// Version is the version of the file format. Version 2 binds the
// ensemble's parameters (Header.Teachers); a version-1 ledger can be
// read, but no release can be charged to it until it is upgraded.
const Version = 2

// Header is the first line of a ledger.
type Header struct {
	Version    int                  `json:"version"`
	Ensemble   string               `json:"ensemble"`
	Relation   string               `json:"relation"`
	Budget     accountant.Guarantee `json:"budget"`
	DeltaPrime float64              `json:"delta_prime"`
	Created    time.Time            `json:"created"`
	// Teachers are the parameters of the ensemble the ledger is bound to
	// (version 2; nil in version 1).
	Teachers *Teachers `json:"teachers,omitempty"`
}

// Teachers are the parameters of an ensemble that a ledger binds, besides
// its id and relation: K, each teacher's (ε, Δ) (the common bound of
// teachers with different guarantees), and their kind and partition.
type Teachers struct {
	K         int                `json:"K"`
	Eps       float64            `json:"eps"`
	Delta     float64            `json:"Delta"`
	Kind      ensemble.Kind      `json:"kind"`
	Partition ensemble.Partition `json:"partition"`
}

// NewHeader returns the header of a ledger bound to b, with a budget and
// slack δ'.
func NewHeader(b ensemble.Binding, budget accountant.Guarantee, deltaPrime float64) Header {
	return Header{Ensemble: b.Ensemble, Relation: b.Relation.String(), Budget: budget, DeltaPrime: deltaPrime,
		Teachers: &Teachers{K: b.K, Eps: b.Teachers.Eps, Delta: b.Teachers.Delta, Kind: b.Kind, Partition: b.Partition}}
}

// Binding returns the parameters the ledger is bound to (version 2).
func (h Header) Binding() (ensemble.Binding, error) {
	var r ensemble.Relation
	if err := r.UnmarshalText([]byte(h.Relation)); err != nil {
		return ensemble.Binding{}, err
	}
	b := ensemble.Binding{Ensemble: h.Ensemble, Relation: r}
	if t := h.Teachers; t != nil {
		b.K, b.Teachers, b.Kind, b.Partition = t.K, accountant.Guarantee{Eps: t.Eps, Delta: t.Delta}, t.Kind, t.Partition
	}
	return b, b.Validate()
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

// VersionError refuses a release against a ledger of an earlier version,
// which does not bind the ensemble's parameters.
type VersionError struct {
	Path    string
	Version int
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("ledger %s is version %d, which does not bind the ensemble's parameters (K, the teachers' eps and Delta, kind, partition): it must be upgraded to version %d before a release can be charged to it", e.Path, e.Version, Version)
}

// BindingError refuses a release that states other parameters of the
// ensemble than the ledger is bound to: each differing parameter, the
// ledger's value and the release's.
type BindingError struct {
	Path   string
	Ledger ensemble.Binding
	Diffs  []ensemble.BindingDiff // A: the ledger's, B: the release's
}

func (e *BindingError) Error() string {
	var parts []string
	for _, d := range e.Diffs {
		parts = append(parts, fmt.Sprintf("%s %s (the ledger's: %s)", d.Field, d.B, d.A))
	}
	return fmt.Sprintf("ledger %s is bound to %v; this release states %s: a ledger keeps the budget of one ensemble, and releases of other teachers or in another relation cannot share a budget", e.Path, e.Ledger, strings.Join(parts, ", "))
}

// Init creates a ledger at path, which must not exist, bound to the
// ensemble parameters of h (NewHeader).
func Init(path string, h Header) error {
	if h.Teachers == nil {
		return fmt.Errorf("ledger: no ensemble parameters: a ledger binds K, the teachers' eps and Delta, kind and partition (NewHeader)")
	}
	if _, err := h.Binding(); err != nil {
		return fmt.Errorf("ledger: %w", err)
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
	cap    *accountant.Cap // the teachers' cap on every total, if any
	spends []Spend         // the last record of each run, in order of first appearance
	run    string          // this process's run id, once it has reserved
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
// guarantee step by mechanism, from the ensemble that b states: it begins
// the run's spend (Begin) and returns how many labels the budget allows,
// at most limit when limit >= 0, accountant.Unlimited when the teachers'
// cap is within the budget and limit < 0 (Allowance). Close the ledger
// when the run is settled.
func OpenRun(path, mechanism string, b ensemble.Binding, step accountant.Guarantee, limit int) (*Ledger, int, error) {
	l, err := Open(path)
	if err != nil {
		return nil, 0, err
	}
	allowed := 0
	if err = l.Begin(mechanism, b, step); err == nil {
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
			switch l.header.Version {
			case 1:
			case Version:
				b, err := l.header.Binding()
				if err != nil {
					return corrupt("header: %v", err)
				}
				if l.cap, _, err = b.Cap(l.header.DeltaPrime); err != nil {
					return corrupt("header: teachers' cap: %v", err)
				}
			default:
				return corrupt("version %d, this darrm reads versions 1 and %d", l.header.Version, Version)
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

// Balance is what a ledger has spent.
type Balance struct {
	// Total is the privacy spent: the smaller of Queries and the
	// teachers' Cap, one that meets the budget if either does
	// (accountant.CapTotal); Bound says which.
	Total accountant.Guarantee
	Bound accountant.Bound
	// Queries is the composition of every spend, by Composition.
	Queries     accountant.Guarantee
	Composition string
	// Cap is the teachers' cap on every total, nil when there is none.
	Cap *accountant.Cap
	// Free says that the cap is within the budget: every further release
	// from these teachers is free, however many labels it has.
	Free bool
}

// Balance returns the privacy spent so far.
func (l *Ledger) Balance() (Balance, error) {
	q, method, err := l.total(accountant.Guarantee{}, 0)
	if err != nil {
		return Balance{}, err
	}
	b := Balance{Queries: q, Composition: method, Cap: l.cap, Free: l.cap != nil && l.cap.Within(l.header.Budget)}
	b.Total, b.Bound = accountant.CapTotal(q, l.cap, &l.header.Budget)
	return b, nil
}

// Total returns the total privacy spent so far (Balance: the smaller of
// the composition and the teachers' cap) and how it was obtained: the
// composition's name, or "teachers' cap".
func (l *Ledger) Total() (accountant.Guarantee, string, error) {
	b, err := l.Balance()
	if b.Bound == accountant.TeachersBound {
		return b.Total, "teachers' cap (" + b.Cap.Rule() + ")", err
	}
	return b.Total, b.Composition, err
}

// within reports whether spends of composition q meet the budget: q does,
// or the teachers' cap, which bounds them too, does.
func (l *Ledger) within(q accountant.Guarantee) bool {
	b := l.header.Budget
	return q.Within(b) || l.cap != nil && l.cap.Within(b)
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
// allows (at most limit when limit >= 0): limit, or accountant.Unlimited
// when limit < 0, if the teachers' cap is within the budget.
func (l *Ledger) Allowance(step accountant.Guarantee, limit int) (int, error) {
	if l.cap != nil && l.cap.Within(l.header.Budget) {
		return limit, nil
	}
	fits := func(k int) (bool, error) {
		g, _, err := l.total(step, k)
		return err == nil && l.within(g), err
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
	// Total is the privacy spent so far, the smaller of the composition
	// of the spends (Queries, by Composition) and the teachers' Cap;
	// TotalBound says which.
	Total       accountant.Guarantee `json:"total"`
	Composition string               `json:"composition"`
	TotalBound  accountant.Bound     `json:"total_bound"`
	Queries     accountant.Guarantee `json:"queries"`
	Cap         *accountant.Cap      `json:"cap,omitempty"`
	// QueriesLeft is how many more labels of the guarantee given to
	// Status the budget allows: -1 when every further release is free
	// (Free: the teachers' cap is within the budget).
	QueriesLeft int  `json:"queries_left"`
	Free        bool `json:"free"`
}

// Status returns the ledger's budget, its total so far, and how many more
// labels of guarantee step its budget allows.
func (l *Ledger) Status(step accountant.Guarantee) (Status, error) {
	b, err := l.Balance()
	if err != nil {
		return Status{}, err
	}
	left, err := l.Allowance(step, -1)
	if err != nil {
		return Status{}, err
	}
	h := l.header
	return Status{Ensemble: h.Ensemble, Relation: h.Relation, Budget: h.Budget, Total: b.Total, Composition: b.Composition,
		TotalBound: b.Bound, Queries: b.Queries, Cap: b.Cap, QueriesLeft: left, Free: b.Free}, nil
}

// Begin starts this run's spend: mechanism, the per-label guarantee, and
// the ensemble the release states (b), which must be the one the ledger
// is bound to: every parameter both state must agree (a *BindingError
// otherwise), and a ledger of version 1 refuses every release (a
// *VersionError).
func (l *Ledger) Begin(mechanism string, b ensemble.Binding, step accountant.Guarantee) error {
	if l.header.Version < Version {
		return &VersionError{Path: l.path, Version: l.header.Version}
	}
	bound, err := l.header.Binding()
	if err != nil {
		return err
	}
	if d := bound.Diff(b); len(d) > 0 {
		return &BindingError{Path: l.path, Ledger: bound, Diffs: d}
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	l.run, l.mech, l.step = hex.EncodeToString(id[:]), mechanism, step
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
	if !l.within(total) {
		return fmt.Errorf("ledger %s: %d labels of %v would bring the total to %v by %s composition, over the budget %v: %w", l.path, labels, l.step, total, method, l.header.Budget, ErrBudget)
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
