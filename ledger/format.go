package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/votefile"
)

// Header is the first line of a ledger.
type Header struct {
	Version int `json:"version"`
	// ID is the ledger's identity: random, drawn by Init, so that two
	// ledgers are never taken for one.
	ID         string               `json:"id,omitempty"`
	Ensemble   string               `json:"ensemble"`
	Relation   string               `json:"relation"`
	Budget     accountant.Guarantee `json:"budget"`
	DeltaPrime float64              `json:"delta_prime"`
	Created    time.Time            `json:"created"`
	// Teachers are the parameters of the ensemble the ledger is bound to
	// (nil in version 1).
	Teachers *Teachers `json:"teachers,omitempty"`
	// Upgraded, for a ledger made by Upgrade, identifies the ledger it
	// was made from.
	Upgraded *Upgraded `json:"upgraded_from,omitempty"`
}

// Teachers are the parameters of an ensemble that a ledger binds, besides
// its id and relation: K, each teacher's (ε, Δ) (the common bound of
// teachers with different guarantees), and their kind and partition.
type Teachers struct {
	K         int                `json:"K"`
	Eps       float64            `json:"eps"`
	Delta     float64            `json:"Delta"`
	Kind      votefile.Kind      `json:"kind"`
	Partition votefile.Partition `json:"partition"`
}

// NewHeader returns the header of a ledger bound to b, with a budget and
// slack δ'.
func NewHeader(b votefile.Binding, budget accountant.Guarantee, deltaPrime float64) Header {
	h := Header{Ensemble: b.Ensemble, Relation: b.Relation.String(), Budget: budget, DeltaPrime: deltaPrime}
	h.Bind(b)
	return h
}

// Bind sets the parameters h binds to b's (its ensemble, relation and
// teachers).
func (h *Header) Bind(b votefile.Binding) {
	h.Ensemble, h.Relation = b.Ensemble, b.Relation.String()
	h.Teachers = &Teachers{K: b.K, Eps: b.Teachers.Eps, Delta: b.Teachers.Delta, Kind: b.Kind, Partition: b.Partition}
}

// Binding returns the parameters the ledger is bound to (version 2).
func (h Header) Binding() (votefile.Binding, error) {
	var r accountant.Relation
	if err := r.UnmarshalText([]byte(h.Relation)); err != nil {
		return votefile.Binding{}, err
	}
	b := votefile.Binding{Ensemble: h.Ensemble, Relation: r}
	if t := h.Teachers; t != nil {
		b.K, b.Teachers, b.Kind, b.Partition = t.K, accountant.Guarantee{Eps: t.Eps, Delta: t.Delta}, t.Kind, t.Partition
	}
	return b, b.Validate()
}

// Upgraded identifies the ledger that Upgrade turned into one of the
// current version.
type Upgraded struct {
	// Version is the old ledger's (1, 2, or 2 without the chain).
	Version int `json:"version"`
	// Lines is its number of whole lines, SHA256 the hash of those bytes.
	Lines  int    `json:"lines"`
	SHA256 string `json:"sha256"`
	// ID and Head, for an old ledger with a hash chain (version 2), are
	// its id and the hash of its last line: a user's record of the old
	// ledger vouches for this one up to there (checkRecord).
	ID   string `json:"id,omitempty"`
	Head string `json:"head,omitempty"`
}

// Spend is one record: run Run had handed out, or was about to hand out,
// Queries labels, each with guarantee (Eps, Delta), by Mechanism. A run
// writes its lines one after the other (it holds the ledger's lock), and
// the last line of a run counts; Final marks the exact count written at
// its end.
type Spend struct {
	Run       string             `json:"run"`
	Time      time.Time          `json:"time"`
	Mechanism votefile.Mechanism `json:"mechanism"`
	Eps       float64            `json:"eps"`
	Delta     float64            `json:"delta"`
	Queries   int                `json:"queries"`
	Final     bool               `json:"final"`
	// Prior (version 3) is the sequence of the spends of every run before
	// this line's run: with the line's own spend it gives the ledger's
	// totals, so that a release reads the last line instead of them all.
	Prior *accountant.Sequence `json:"prior,omitempty"`
}

// ParamError is a header parameter outside its domain: Name is
// "ensemble", "relation", "budget-eps", "budget-delta" or "delta-prime".
type ParamError struct {
	Name, Value, Rule string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("ledger: %s = %s: %s", e.Name, e.Value, e.Rule)
}

// Param names the header parameter, its value and the rule it breaks.
func (e *ParamError) Param() (name string, value any, rule string) { return e.Name, e.Value, e.Rule }

// BindError is a header whose ensemble parameters are missing or invalid.
type BindError struct{ Err error }

func (e *BindError) Error() string { return "ledger: " + e.Err.Error() }

// BadInput reports that the error is the caller's input, not a failure.
func (e *BindError) BadInput() bool { return true }

func (e *BindError) Unwrap() error { return e.Err }

// checkName refuses an ensemble name that is empty or holds control
// characters (which a terminal would act on when it is printed).
func checkName(name string) error {
	if name == "" {
		return &ParamError{"ensemble", `""`, "name the teacher ensemble the budget is for"}
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return &ParamError{"ensemble", strconv.Quote(name), "control characters are not allowed"}
	}
	return nil
}

// checkHeader validates the parameters of a header.
func checkHeader(h Header) error {
	if err := checkName(h.Ensemble); err != nil {
		return err
	}
	if h.Relation == "" || strings.IndexFunc(h.Relation, unicode.IsControl) >= 0 {
		return &ParamError{"relation", strconv.Quote(h.Relation), "must name a neighbouring relation"}
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	b := h.Budget
	if !(b.Eps > 0) || math.IsInf(b.Eps, 0) {
		return &ParamError{"budget-eps", g(b.Eps), "must be a finite number > 0"}
	}
	if !(b.Delta >= 0 && b.Delta < 1) {
		return &ParamError{"budget-delta", g(b.Delta), "must be in [0, 1)"}
	}
	if !(h.DeltaPrime > 0 && h.DeltaPrime < 1) {
		return &ParamError{"delta-prime", g(h.DeltaPrime), "must be in (0, 1)"}
	}
	if h.Version >= 2 {
		if h.Teachers == nil {
			return &BindError{errors.New("no ensemble parameters: a ledger binds K, the teachers' eps and Delta, kind and partition (NewHeader)")}
		}
		if _, err := h.Binding(); err != nil {
			return &BindError{err}
		}
	}
	return nil
}

// SlackFits reports whether δ' is below the budget's δ: the totals that
// compose with the slack δ' (general and optimal composition, Kairouz, Oh
// and Viswanath 2015, Thm 3.5 and 3.3) have a δ of at least δ', so
// without room they can never meet the budget, and only simple
// composition (and a teachers' cap) can.
func (h Header) SlackFits() bool { return h.DeltaPrime < h.Budget.Delta }

// format is how a ledger's lines are written.
type format int

const (
	// unchained: version 1, and the version 2 of development builds;
	// each line carries the SHA-256 of its JSON.
	unchained format = iota
	// chained2: version 2, a hash chain.
	chained2
	// current: Version, a hash chain whose spends carry their totals.
	current
)

// parseHeader reads the header line b, of any version, and returns its
// hash.
func (l *Ledger) parseHeader(b []byte) (string, error) {
	corrupt := func(format string, args ...any) error {
		return &CorruptError{Path: l.path, Line: 1, Reason: fmt.Sprintf(format, args...)}
	}
	var ln line
	if err := json.Unmarshal(b, &ln); err != nil || ln.Header == nil {
		return "", &NotLedgerError{Path: l.path, Reason: "is not a ledger: its first line is not a ledger's header (name the file that darrm ledger init made)"}
	}
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(*ln.Header, &v); err != nil {
		return "", corrupt("header: %v", err)
	}
	chained := ln.Prev != nil
	switch {
	case (v.Version == 1 || v.Version == 2) && !chained:
		l.format = unchained
		if v1Hash(*ln.Header) != ln.SHA256 {
			return "", corrupt("sha256 does not match the content: the line was changed")
		}
	case (v.Version == 2 || v.Version == Version) && chained:
		l.format = chained2
		if v.Version == Version {
			l.format = current
		}
		if *ln.Prev != "" {
			return "", corrupt("the header must begin the chain (prev \"\")")
		}
		if chainHash(v.Version, "", "header", *ln.Header) != ln.SHA256 {
			return "", corrupt("sha256 does not match the content: the line was changed")
		}
	case v.Version == 2 || v.Version == Version:
		return "", corrupt("the header of a version-%d ledger must begin the chain (prev \"\")", v.Version)
	default:
		return "", &VersionError{Path: l.path, Version: v.Version}
	}
	dec := json.NewDecoder(bytes.NewReader(*ln.Header))
	if chained {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&l.header); err != nil {
		return "", corrupt("header: %v", err)
	}
	if err := checkHeader(l.header); err != nil {
		return "", corrupt("header: %v", err)
	}
	if chained && len(l.header.ID) != 32 {
		return "", corrupt("header: id %q: want 32 hexadecimal digits", l.header.ID)
	}
	if v.Version >= 2 {
		b, err := l.header.Binding()
		if err == nil {
			l.cap, _, err = b.Cap(l.header.DeltaPrime)
		}
		if err != nil {
			return "", corrupt("header: teachers' cap: %v", err)
		}
	}
	l.version = v.Version
	return ln.SHA256, nil
}

// checkSpend validates a spend.
func checkSpend(s Spend) error {
	switch {
	case s.Run == "":
		return errors.New("no run id")
	case s.Queries < 0:
		return fmt.Errorf("queries = %d: must be >= 0", s.Queries)
	case !(s.Eps > 0) || math.IsInf(s.Eps, 0):
		return fmt.Errorf("eps = %v: must be a finite number > 0", s.Eps)
	case !(s.Delta >= 0 && s.Delta < 1):
		return fmt.Errorf("delta = %v: must be in [0, 1)", s.Delta)
	}
	return nil
}
