package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/provenance"
)

// Header is the first line of a ledger.
type Header struct {
	Version int `json:"version"`
	// ID is the ledger's identity: random, drawn by Init, so that two
	// ledgers are never taken for one.
	ID         string            `json:"id,omitempty"`
	Ensemble   string            `json:"ensemble"`
	Relation   string            `json:"relation"`
	Budget     accountant.Budget `json:"budget"`
	DeltaPrime float64           `json:"delta_prime"`
	// Filter is the composition that holds the runs, whose parameters
	// may be chosen adaptively, to the budget, fixed when the ledger is
	// made: in version 4 accountant.ZCDPFilter or accountant.Simple
	// (accountant.Sequence.FilterTotal checks and sums it; a version-3 ledger
	// composed by its spends' (ε, δ)); in version 5 the method of the
	// first of Parts. A ledger
	// whose use is declared at init (Use) composes its steps exactly, as
	// one run: its Filter is then accountant.Exact.
	Filter accountant.Method `json:"filter"`
	// Parts (version 5) are the parts of the filter of a ledger open to
	// any use (accountant.Filter), each with its share of the budget's δ;
	// nil for a declared use.
	Parts []accountant.FilterPart `json:"filter_parts,omitempty"`
	// Use is the declared use, its runs in order (NewUseHeader); nil
	// for a ledger open to any use, which its Filter holds.
	Use []UseRun `json:"use,omitempty"`
	// FirstRunFilter (version 5) says that the filter of this ledger
	// open to any use is the one its first run chooses for its labels,
	// as ledger init chooses one for labels declared (ChooseFilter), and
	// that every spend line states it (Spend.Filter); Parts are then nil
	// and Filter is its zero value, which no line is composed by.
	FirstRunFilter bool      `json:"filter_chosen_by_first_run,omitempty"`
	Created        time.Time `json:"created"`
	// Teachers are the parameters of the ensemble the ledger is bound to
	// (nil in version 1).
	Teachers *teachers `json:"teachers,omitempty"`
	// Upgraded, for a ledger made by Upgrade, identifies the ledger it
	// was made from.
	Upgraded *upgraded `json:"upgraded_from,omitempty"`
	// Shares, when set, gives each analyst who may charge the ledger a
	// share of it, a fraction f in (0, 1]: of a ledger open to any use,
	// f of its budget's eps and delta, within which the analyst's own
	// runs, composed by the ledger's filter, must stay; of a declared
	// use, f of its labels (ShareAllows: floor(f·N) of its N). An analyst
	// without a share may not charge the ledger. A share is an allocation
	// inside the budget, not a guarantee: the total to publish is the
	// ledger's one budget, whoever spent it.
	Shares map[string]float64 `json:"shares,omitempty"`
}

// teachers are the parameters of an ensemble that a ledger binds, besides
// its id and relation: K, each teacher's (ε, Δ) (the common bound of
// teachers with different guarantees), and their kind and partition.
type teachers struct {
	K         int                  `json:"K"`
	Eps       float64              `json:"eps"`
	Delta     float64              `json:"Delta"`
	Kind      provenance.Kind      `json:"kind"`
	Partition provenance.Partition `json:"partition"`
}

// NewHeader returns the header of a ledger open to any use bound to b,
// with a budget, slack δ' and filter (accountant.Filter.Check); with an
// empty filter, one whose first run chooses its filter
// (Header.FirstRunFilter), or, once NewUseHeader declares its use, one
// composed exactly.
func NewHeader(b provenance.Binding, budget accountant.Budget, deltaPrime float64, filter accountant.Filter) Header {
	h := Header{Ensemble: b.Ensemble, Relation: b.Relation.String(), Budget: budget, DeltaPrime: deltaPrime, FirstRunFilter: true}
	if len(filter.Parts) > 0 {
		h.Filter, h.Parts, h.FirstRunFilter = filter.Parts[0].Method, filter.Parts, false
	}
	h.bind(b)
	return h
}

// DefaultFilter is the filter of a new ledger open to any use whose
// labels are not declared (ChooseFilter) and that names none: with
// δ_B > 0, none yet (an empty Filter: NewHeader's ledger whose first run
// chooses it, from that run's labels, which allow one filter more than
// another by far: the Rényi filter allows RR labels twice the steps of
// simple composition); with δ_B = 0, simple composition of pure points,
// the one filter accountant.Budget.OpenFilters offers.
func DefaultFilter(b provenance.Binding, budget accountant.Budget) (accountant.Filter, error) {
	all, _, err := budget.OpenFilters(nil, b.Relation, nil)
	if err != nil {
		return accountant.Filter{}, fmt.Errorf("ledger: %w", err)
	}
	if len(all) > 1 {
		return accountant.Filter{}, nil
	}
	return all[0].Filter, nil
}

// firstRunFilter returns the filter the first run of a ledger with header
// h chooses for labels that step describes: the one ChooseFilter keeps,
// accountant.Budget.OpenFilters' for step as the hint, or when none allows one
// of them, the one it keeps without a hint. Chosen before the run,
// from its parameters, when no run has released anything, it depends on
// no output: it is a filter fixed before the first step, as one named at
// init is (docs/accountant.md).
func (h Header) firstRunFilter(m *accountant.Memo, step accountant.Spend) (accountant.Filter, error) {
	var r accountant.Relation
	if err := r.UnmarshalText([]byte(h.Relation)); err != nil {
		return accountant.Filter{}, err
	}
	all, keep, err := h.Budget.OpenFilters(m, r, &step)
	if err != nil {
		// No filter allows one such label within the budget: the one
		// kept without a hint may still charge them, and a teachers' cap
		// within the budget makes them free.
		all, keep, err = h.Budget.OpenFilters(m, r, nil)
	}
	if err != nil {
		return accountant.Filter{}, err
	}
	return all[keep].Filter, nil
}

// openFilter returns the filter of a version-5 ledger open to any use,
// nil for any other.
func (h Header) openFilter() *accountant.Filter {
	if h.Version < Version || len(h.Parts) == 0 {
		return nil
	}
	return &accountant.Filter{Parts: h.Parts}
}

// rule returns how the spend lines of a ledger with header h add to its
// sums, its charges keeping what they compute in m.
func (h Header) rule(m *accountant.Memo) rule {
	return rule{version: h.Version, filter: h.openFilter(), budget: h.Budget.Guarantee, firstRun: h.FirstRunFilter, use: h.Use, memo: m}
}

// bind sets the parameters h binds to b's (its ensemble, relation and
// teachers).
func (h *Header) bind(b provenance.Binding) {
	h.Ensemble, h.Relation = b.Ensemble, b.Relation.String()
	h.Teachers = &teachers{K: b.K, Eps: b.Each.Eps, Delta: b.Each.Delta, Kind: b.Kind, Partition: b.Partition}
}

// binding returns the parameters the ledger is bound to (version 2).
func (h Header) binding() (provenance.Binding, error) {
	var r accountant.Relation
	if err := r.UnmarshalText([]byte(h.Relation)); err != nil {
		return provenance.Binding{}, err
	}
	b := provenance.Binding{Ensemble: h.Ensemble, Teachers: provenance.Teachers{Relation: r}}
	if t := h.Teachers; t != nil {
		b.K, b.Each, b.Kind, b.Partition = t.K, accountant.Guarantee{Eps: t.Eps, Delta: t.Delta}, t.Kind, t.Partition
	}
	return b, b.Validate()
}

// upgraded identifies the ledger that Upgrade turned into one of the
// current version.
type upgraded struct {
	// Version is the old ledger's (3; 1 and 2 in ledgers that an earlier
	// darrm upgraded).
	Version int `json:"version"`
	// Lines is its number of whole lines, SHA256 the hash of those bytes.
	Lines  int    `json:"lines"`
	SHA256 string `json:"sha256"`
	// ID and Head, for an old ledger with a hash chain, are
	// its id and the hash of its last line.
	ID   string `json:"id,omitempty"`
	Head string `json:"head,omitempty"`
	// Past is the number of the old ledger's lines that this one
	// carries, each in a past line after its header (continues): all of
	// them, Lines, so that a record or witness of the old ledger is
	// checked against its very line. 0 in a ledger that an earlier darrm
	// upgraded, which carries none and satisfies no record or witness of
	// the old ledger.
	Past int `json:"past,omitempty"`
}

// Spend is one record: run Run had handed out, or was about to hand out,
// Queries labels, each with guarantee (Eps, Delta), by Mechanism. A run
// writes its lines one after the other (it holds the ledger's lock), and
// the last line of a run counts; Final marks the exact count written at
// its end.
type Spend struct {
	Run string `json:"run"`
	// Analyst is who charged the run (Options.Analyst, or the database user
	// of a ledger in PostgreSQL); omitted when the run named no one.
	Analyst   string                   `json:"analyst,omitempty"`
	Time      time.Time                `json:"time"`
	Mechanism provenance.MechanismName `json:"mechanism"`
	Eps       float64                  `json:"eps"`
	Delta     float64                  `json:"delta"`
	// Kind, Gaussian and Discrete describe the mechanism beyond its
	// (Eps, Delta) (version 4): accountant.GaussianSpend with its noise;
	// omitted for a mechanism known by its guarantee (Step).
	Kind     accountant.SpendKind      `json:"kind,omitempty"`
	Gaussian []accountant.GaussianPart `json:"gaussian,omitempty"`
	Discrete bool                      `json:"discrete,omitempty"`
	// BitsSHA256 and Laplace (version 5) complete the description: a
	// one-bit release's pairs of output probabilities by their SHA-256
	// (bitsDigest), discrete Laplace noise (accountant.Spend). The pairs
	// are those that dominate the others (accountant.Spend.Dominating), of
	// the same privacy as all: a DaRRM label's 19,505 distinct pairs at
	// K = 11, m = 3 come down to 42. Such a line states the guarantee and
	// noise of the release as version 4 does.
	BitsSHA256 string                  `json:"bits_sha256,omitempty"`
	Laplace    *accountant.LaplacePart `json:"laplace,omitempty"`
	// Bits and BitsAt keep each pair list in the ledger, so that a check
	// recomputes a one-bit release's Charge from it: a line holds its
	// list (Bits) unless its writer has read a line that holds it, which
	// it names (BitsAt); a release that reads only the lines after its
	// record holds a list again when none of those holds it, at most once
	// a run. Lines written before the lists were kept have neither: their
	// charges are not recomputed (a note says so), and no line may lack
	// both after one that has either.
	Bits   []accountant.BitPair `json:"bits,omitempty"`
	BitsAt *bitsAt              `json:"bits_at,omitempty"`
	// Charge (version 5, a ledger open to any use) is what the ledger's
	// filter charges each label (accountant.Filter.Charge), chosen from
	// the description before the run: a check recomputes it from the
	// description and adds it to the sums.
	Charge *accountant.Charge `json:"charge,omitempty"`
	// Filter (version 5, a ledger whose first run chose its filter,
	// Header.FirstRunFilter) is that filter's parts, the same on every
	// line: the line's Charge is its.
	Filter  []accountant.FilterPart `json:"filter_parts,omitempty"`
	Queries int                     `json:"queries"`
	Final   bool                    `json:"final"`
	// Prior (version 3) is the sequence of the spends of every run before
	// this line's run: with the line's own spend it gives the ledger's
	// totals, so that a release reads the last line instead of them all.
	Prior *accountant.Sequence `json:"prior,omitempty"`
}

// bitsAt names the line of a ledger that holds a pair list (Spend.Bits):
// its number and the end of its line end in the ledger's file form (as a
// record names the line it vouches for), so that a release reading from
// its record reads that line alone.
type bitsAt struct {
	Line int   `json:"line"`
	End  int64 `json:"end"`
}

// maxLinePairs bounds the pairs a line holds: at most 61 bytes each in
// JSON, within maxLineBytes.
const maxLinePairs = 10000

// step returns the description of one label of s: its kind and noise
// with its guarantee, or, when it states no kind, its guarantee alone
// (accountant.ApproxStep: pure when δ = 0).
func (s Spend) step() accountant.Spend {
	g := accountant.Guarantee{Eps: s.Eps, Delta: s.Delta}
	if s.Kind == accountant.ApproxSpend && len(s.Gaussian) == 0 && !s.Discrete {
		return accountant.ApproxStep(g)
	}
	return accountant.Spend{Kind: s.Kind, Guarantee: g, Gaussian: s.Gaussian, Discrete: s.Discrete, Laplace: s.Laplace}
}

// charged returns the description of one label of s that its Charge is
// of: step's, or for a one-bit release (BitsSHA256) the release with the
// pairs of that digest.
func (s Spend) charged(pairs []accountant.BitPair) accountant.Spend {
	if s.BitsSHA256 == "" {
		return s.step()
	}
	return accountant.Spend{Kind: accountant.OneBitSpend, Guarantee: accountant.Guarantee{Eps: s.Eps, Delta: s.Delta}, Gaussian: s.Gaussian, Discrete: s.Discrete, Laplace: s.Laplace, Bits: pairs}
}

// spendOf returns the record, in a ledger of the given version, of labels
// of step by mechanism in run, each charged c (version 5, open to any
// use; nil otherwise): the guarantee, and the description of a kind that
// has more, a one-bit release with the pairs that dominate its others
// (Spend.Bits: a line after one that holds them names it instead).
func spendOf(m *accountant.Memo, version int, run string, mechanism provenance.MechanismName, step accountant.Spend, c *accountant.Charge) Spend {
	s := Spend{Run: run, Mechanism: mechanism, Eps: step.Eps, Delta: step.Delta}
	if version >= Version {
		s.Kind, s.Gaussian, s.Discrete, s.Laplace, s.Charge = step.Kind, step.Gaussian, step.Discrete, step.Laplace, c
		switch {
		case s.Kind == accountant.PureSpend:
			// step() reads a pure guarantee without a kind as PureSpend.
			s.Kind = accountant.ApproxSpend
		case s.Kind == accountant.OneBitSpend:
			s.Bits = step.Dominating(m).Bits
			s.Kind, s.BitsSHA256 = accountant.ApproxSpend, bitsDigest(s.Bits)
			if len(step.Gaussian) > 0 {
				s.Kind = accountant.GaussianSpend
			}
		}
		return s
	}
	// A bit computed from Gaussian noise (two-class GNMax, a OneBitSpend)
	// is recorded by its noise, whose zCDP slope the filter composes.
	if len(step.Gaussian) > 0 {
		s.Kind, s.Gaussian, s.Discrete = accountant.GaussianSpend, step.Gaussian, step.Discrete
	}
	return s
}

// bitsDigest returns the SHA-256, in hex, of a one-bit release's pairs:
// of the IEEE 754 bits of each pair's two probabilities, in order.
func bitsDigest(bits []accountant.BitPair) string {
	h := sha256.New()
	var buf [16]byte
	for _, b := range bits {
		binary.LittleEndian.PutUint64(buf[:8], math.Float64bits(b.P))
		binary.LittleEndian.PutUint64(buf[8:], math.Float64bits(b.Q))
		h.Write(buf[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// paramError is a header parameter outside its domain, named as the
// header names it ("ensemble", "relation", "delta-prime", "filter" or
// "queries"), with its value as text.
func paramError(name, value, rule string) error {
	return fmt.Errorf("ledger: %w", &param.Error{Name: name, Value: value, Rule: rule})
}

// bindError is a header whose ensemble parameters are missing or invalid.
type bindError struct{ Err error }

func (e *bindError) Error() string { return "ledger: " + e.Err.Error() }

// BadInput reports that the error is the caller's input, not a failure.
func (e *bindError) BadInput() bool { return true }

func (e *bindError) Unwrap() error { return e.Err }

// checkName refuses an ensemble name that is empty or holds control
// characters (which a terminal would act on when it is printed).
func checkName(name string) error {
	if name == "" {
		return paramError("ensemble", `""`, "name the teacher ensemble the budget is for")
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return paramError("ensemble", param.Quote(name), "control characters are not allowed")
	}
	return nil
}

// checkAnalyst refuses an analyst's name that is empty, too long or
// holds control characters (which a terminal would act on when it is
// printed).
func checkAnalyst(name string) error {
	switch {
	case name == "":
		return errors.New("an analyst's name is empty")
	case len(name) > maxNameBytes:
		return fmt.Errorf("an analyst's name has %d bytes: at most %d", len(name), maxNameBytes)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return errors.New("an analyst's name may not hold control characters")
	}
	return nil
}

// CheckShares validates analysts' shares of a ledger (Header.Shares): each
// analyst's name (not empty, no control characters, of bounded length)
// and fraction, in (0, 1].
func CheckShares(shares map[string]float64) error {
	// In the names' order, so that of several bad shares the same one is
	// named every time.
	for _, name := range slices.Sorted(maps.Keys(shares)) {
		f := shares[name]
		if err := checkAnalyst(name); err != nil {
			return paramError("shares", param.Quote(name), err.Error())
		}
		if !(f > 0 && f <= 1) {
			return paramError("shares", fmt.Sprintf("%s=%v", name, f), "a share is a fraction of the budget in (0, 1]")
		}
	}
	return nil
}

// formatG formats x as a header parameter's value in an error.
func formatG(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// checkBudget validates a ledger's budget as every budget is checked
// (accountant.Budget.Validate: "budget eps", "budget delta").
func checkBudget(b accountant.Budget) error {
	if err := b.Validate(); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return nil
}

// checkHeader validates the parameters of a header.
func checkHeader(h Header) error {
	if err := checkName(h.Ensemble); err != nil {
		return err
	}
	if h.Relation == "" || strings.IndexFunc(h.Relation, unicode.IsControl) >= 0 {
		return paramError("relation", param.Quote(h.Relation), "must name a neighbouring relation")
	}
	if err := checkBudget(h.Budget); err != nil {
		return err
	}
	if err := param.DeltaPrime(h.DeltaPrime); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	switch {
	case h.FirstRunFilter && (h.Version < Version || h.Use != nil || h.Parts != nil || h.Filter != accountant.Simple):
		return paramError("filter", h.Filter.String(), "a ledger whose first run chooses its filter is of version 5, open to any use, and states no filter")
	case h.FirstRunFilter:
	case h.Version >= Version && h.Use != nil:
		if h.Filter != accountant.Exact || h.Parts != nil {
			return paramError("filter", h.Filter.String(), fmt.Sprintf("a ledger whose use is declared composes it %v", accountant.Exact))
		}
		if err := checkUse(h.Use, true); err != nil {
			return err
		}
	case h.Version >= Version:
		f := accountant.Filter{Parts: h.Parts}
		if err := f.Check(h.Budget.Guarantee); err != nil {
			return paramError("filter", h.Filter.String(), err.Error())
		}
		if h.Filter != h.Parts[0].Method {
			return paramError("filter", h.Filter.String(), fmt.Sprintf("must name the first of the filter's parts, %v", h.Parts[0].Method))
		}
	case h.Version == version4:
		if h.Use != nil || h.Parts != nil {
			return paramError("filter", h.Filter.String(), "a version-4 ledger has neither a declared use nor a filter of parts")
		}
		// FilterTotal checks the filter before it sums: of no steps, it
		// fails exactly when Filter is not one for the budget.
		if _, _, err := (accountant.Sequence{}).FilterTotal(h.Filter, h.Budget.Guarantee); err != nil {
			return paramError("filter", h.Filter.String(), err.Error())
		}
	}
	if err := CheckShares(h.Shares); err != nil {
		return err
	}
	if h.Version >= 2 {
		if h.Teachers == nil {
			return &bindError{errors.New("no ensemble parameters: a ledger binds K, the teachers' eps and Delta, kind and partition (NewHeader)")}
		}
		if _, err := h.binding(); err != nil {
			return &bindError{err}
		}
	}
	return nil
}

// format is how a ledger's lines are written.
type format int

const (
	// chained3: version 3, a hash chain whose spends carry the (ε, δ)
	// sums before them.
	chained3 format = iota
	// filtered4: version 4, the same with the mechanisms' descriptions
	// and the budget's filter.
	filtered4
	// current: Version, the same with a declared use or a filter of
	// parts, and each step's whole description with its charge.
	current
)

// notHeader is the error of a ledger whose first line is no header.
func (l *Ledger) notHeader() error {
	return &NotLedgerError{Path: l.path, Reason: "is not a ledger: its first line is not a ledger's header (name the ledger that darrm ledger init made)"}
}

// parseHeader reads the header line b, of any version, and returns its
// hash.
func (l *Ledger) parseHeader(b []byte) (string, error) {
	corrupt := func(format string, args ...any) error {
		return &CorruptError{Path: l.path, Line: 1, Reason: fmt.Sprintf(format, args...)}
	}
	var ln line
	if err := json.Unmarshal(b, &ln); err != nil || ln.Header == nil {
		return "", l.notHeader()
	}
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(*ln.Header, &v); err != nil {
		return "", corrupt("header: %v", param.CutJSON(err))
	}
	switch {
	case v.Version == version3 || v.Version == version4 || v.Version == Version:
		l.format = map[int]format{version3: chained3, version4: filtered4, Version: current}[v.Version]
		if ln.Prev == nil || *ln.Prev != "" {
			return "", corrupt("the header must begin the chain (prev \"\")")
		}
		if chainHash(v.Version, "", "header", *ln.Header) != ln.SHA256 {
			return "", corrupt("sha256 does not match the content: the line was changed")
		}
	default:
		return "", &versionError{Path: l.path, Version: v.Version}
	}
	dec := json.NewDecoder(bytes.NewReader(*ln.Header))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l.header); err != nil {
		return "", corrupt("header: %v", param.CutJSON(err))
	}
	if err := exactKeys(b, lineKeys); err != nil {
		return "", corrupt("%v", err)
	}
	if err := exactKeys(*ln.Header, headerKeys); err != nil {
		return "", corrupt("header: %v", err)
	}
	if err := checkHeader(l.header); err != nil {
		return "", corrupt("header: %v", err)
	}
	if len(l.header.ID) != 32 {
		return "", corrupt("header: id %s: want 32 hexadecimal digits", param.Quote(l.header.ID))
	}
	bind, err := l.header.binding()
	if err == nil {
		l.cap, _, err = bind.Cap(l.header.DeltaPrime)
	}
	if err != nil {
		return "", corrupt("header: teachers' cap: %v", err)
	}
	l.version = v.Version
	return ln.SHA256, nil
}

// checkSpend validates a spend of a ledger of the given version.
func checkSpend(version int, s Spend) error {
	switch {
	case s.Run == "":
		return errors.New("no run id")
	case s.Analyst != "" && checkAnalyst(s.Analyst) != nil:
		return fmt.Errorf("analyst %s: %v", param.Quote(s.Analyst), checkAnalyst(s.Analyst))
	case s.Queries < 0:
		return fmt.Errorf("queries = %d: must be >= 0", s.Queries)
	case !(s.Eps > 0) || math.IsInf(s.Eps, 0):
		return fmt.Errorf("eps = %v: must be a finite number > 0", s.Eps)
	case !(s.Delta >= 0 && s.Delta < 1):
		return fmt.Errorf("delta = %v: must be in [0, 1)", s.Delta)
	case version < Version && (s.Kind != accountant.ApproxSpend && s.Kind != accountant.GaussianSpend || s.BitsSHA256 != "" || s.Bits != nil || s.BitsAt != nil || s.Laplace != nil || s.Charge != nil):
		return fmt.Errorf("kind = %v: a version-%d line states %v or no kind, and no pairs, Laplace noise or charge", s.Kind, version, accountant.GaussianSpend)
	case s.Kind == accountant.SampledGaussianSpend || s.Kind == accountant.PureSpend:
		return fmt.Errorf("kind = %v: a ledger line states no such kind (a label's step; pure: no kind)", s.Kind)
	}
	if err := checkBits(s); err != nil {
		return err
	}
	return s.step().Check()
}

// checkBits validates the pairs of a one-bit release that a line holds
// or names: only with their digest, one or the other, and a list held
// must have that digest.
func checkBits(s Spend) error {
	switch {
	case s.Bits == nil && s.BitsAt == nil:
		return nil
	case s.BitsSHA256 == "":
		return errors.New("pairs of output probabilities without their digest (bits_sha256)")
	case s.Bits != nil && s.BitsAt != nil:
		return errors.New("pairs of output probabilities held and named (bits and bits_at): a line does one or the other")
	case s.BitsAt != nil:
		return nil
	case len(s.Bits) > maxLinePairs:
		return fmt.Errorf("%d pairs of output probabilities: a line holds at most %d", len(s.Bits), maxLinePairs)
	case bitsDigest(s.Bits) != s.BitsSHA256:
		return fmt.Errorf("its pairs of output probabilities have the digest %s, not its bits_sha256 %s: the pairs or the digest were changed", bitsDigest(s.Bits), shown(s.BitsSHA256))
	}
	return s.charged(s.Bits).Check()
}
