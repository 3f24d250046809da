package votefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/darrm/darrm/internal/param"
)

// labelsKey is the key that makes a JSON object a label file's metadata
// header; its value is the header's version.
const labelsKey = "darrm-labels"

// labelsVersion is the version of the label files' header this darrm
// writes, and the only one it reads.
const labelsVersion = 1

// LabelMeta is the metadata header of a label file: how its labels were
// made, as plain data, each field as the file writes it. The release
// writes it first (ensemble.ReleaseTo), as a comment line "# " followed
// by its JSON object (in CSV and in JSON lines), so that readers that skip
// comment lines read the labels alone; NewLabelReader reads it. Every
// field is public: the mechanism and its parameters, none of the votes.
// Package ensemble reads back the mechanism it states
// (ensemble.Registry.FromHeader).
type LabelMeta struct {
	// Mechanism names the mechanism; K and Classes are its teachers and
	// classes.
	Mechanism string `json:"mechanism"`
	K         int    `json:"K"`
	Classes   int    `json:"classes"`
	// Relation names the neighbouring relation of each row's guarantee.
	Relation string `json:"relation"`
	// Partition is how the teachers' data were split, by the votes'
	// header or as the release asserted it; "" when neither said.
	Partition string `json:"partition,omitempty"`
	// Settings are the mechanism's settings as the mechanism writes them
	// (ensemble; SetSettings), a JSON object whose keys the header holds
	// beside its own, after Partition: every key that is not the header's
	// own is a setting, whichever mechanism made the labels, for the
	// mechanism to read back (ensemble.Registry.FromHeader); nil when it
	// states none.
	Settings json.RawMessage `json:"-"`
	// Eps and Delta are the guarantee of each row.
	Eps   float64 `json:"eps"`
	Delta float64 `json:"delta"`
	// Ensemble is the teacher ensemble's id, "" when the votes did not
	// state it; Teachers is each teacher's (ε, Δ) the release assumed,
	// nil for none.
	Ensemble string         `json:"ensemble,omitempty"`
	Teachers *LabelTeachers `json:"teachers,omitempty"`
	// Abstain is true when the votes were read with abstaining teachers
	// allowed (Reader.MayAbstain): class labels, of which -1 is a teacher that
	// did not vote, or counts under a stated K that may sum to fewer.
	// The header is written before the votes are read, so it records
	// that abstentions were allowed; the release's summary counts those
	// that occurred.
	Abstain bool `json:"abstain,omitempty"`
	// ForRelease is false for labels drawn from a seeded source.
	ForRelease bool `json:"for_release"`
	// Ledger is the id of the ledger the labels were charged to (its
	// header's, 32 hexadecimal digits), "" when none was: the total to
	// publish of such labels is the ledger's, not theirs alone.
	Ledger string `json:"ledger,omitempty"`
	// LedgerLines, LedgerSize and LedgerHead are where that ledger was
	// when the labels left: its number of lines, their bytes and the
	// hash of the last, the line that reserved the file's first labels
	// (for a file of no labels, the last line when the release began); 0
	// and "" when Ledger is "" or the file was written by an earlier
	// darrm. A state the ledger had, the header is a witness of it: a
	// ledger that is behind it or forked from it has lost spends
	// (ledger.ReadWitness).
	LedgerLines int    `json:"ledger_lines,omitempty"`
	LedgerSize  int64  `json:"ledger_size,omitempty"`
	LedgerHead  string `json:"ledger_head,omitempty"`
	// LedgerUnits is true when the rows have the units column: each
	// states the units of the ledger's charge that the run's draws had
	// taken when it was written, a release charged per draw
	// (ensemble.ProgressiveGNMax) to a ledger, whose run that ledger
	// counts in those units, not in labels. The ledger reserved them
	// before the draws were drawn, so a settlement of the run below the
	// last row's was lowered after that label left (ledger.ReadWitness).
	// false without a ledger, and for files of an earlier darrm.
	LedgerUnits bool `json:"ledger_units,omitempty"`
	// Accounting names how the release was accounted when not per query
	// ("ptr": as a whole, by generalized PTR), "" when it was; Total is
	// then the total it published, by the argument it names.
	Accounting string      `json:"accounting,omitempty"`
	Total      *LabelTotal `json:"total,omitempty"`
}

// LabelTotal is the total a release accounted as a whole published, as a
// label file's header states it.
type LabelTotal struct {
	Eps      float64 `json:"eps"`
	Delta    float64 `json:"delta"`
	Argument string  `json:"argument"`
	// BudgetEps and BudgetDelta are the budget the total was planned
	// within, a setting of the release (PTR's: its total is a function of
	// the budget, the mechanism and the queries labelled), from which an
	// account recomputes the total; 0 when not stated.
	BudgetEps   float64 `json:"budget_eps,omitempty"`
	BudgetDelta float64 `json:"budget_delta,omitempty"`
	// FallbackOf is, when the release's test failed and the labels are
	// its data-independent fallback, the number of queries it proposed;
	// 0 otherwise.
	FallbackOf int `json:"fallback_of,omitempty"`
}

// LabelTeachers is the guarantee of each teacher that a release assumed,
// as a label file's header states it.
type LabelTeachers struct {
	Eps   float64 `json:"eps"`
	Delta float64 `json:"Delta"`
}

// SetSettings sets Settings to raw, the JSON object of the settings of
// the mechanism that made the labels, none when it is {}. A key of the
// header's own (eps, ledger, ...) is refused, as is a key stated twice:
// the header would state it twice, and no reader could tell which is the
// setting.
func (m *LabelMeta) SetSettings(raw json.RawMessage) error {
	obj, err := object(raw, "settings", nil)
	if err != nil {
		return err
	}
	for k := range obj {
		if contains(labelKeys, k) {
			return headerErr("settings", param.Quote(k), "a key of the label file's header itself: a mechanism's setting needs another")
		}
	}
	m.Settings = nil
	if len(obj) > 0 {
		m.Settings = raw
	}
	return nil
}

// HeaderLine returns the header's line in a label file, "# " and the JSON
// object, without its line end: a LabelWriter's comment line.
func (m *LabelMeta) HeaderLine() string {
	type fields LabelMeta
	raw, err := json.Marshal(struct {
		Version int `json:"darrm-labels"`
		*fields
	}{labelsVersion, (*fields)(m)})
	if err != nil {
		panic(err) // numbers of a built aggregator are finite
	}
	// The settings' keys go before eps, the first key after Partition
	// that every header has: a JSON string escapes its quotes, so the
	// first `,"eps":` is the key.
	if s := bytes.TrimSpace(m.Settings); len(s) > 2 {
		i := bytes.Index(raw, []byte(`,"eps":`))
		raw = slices.Concat(raw[:i+1], s[1:len(s)-1], raw[i:])
	}
	return "# " + string(raw)
}

// labelKeys are the keys of a label file's header that are its own
// (every other key is a setting of its mechanism, LabelMeta.Settings),
// and teacherKeys and totalKeys those of its teachers and total objects.
var (
	labelKeys   = []string{labelsKey, "mechanism", "K", "classes", "relation", "partition", "eps", "delta", "ensemble", "teachers", "abstain", "for_release", "ledger", "ledger_lines", "ledger_size", "ledger_head", "ledger_units", "accounting", "total"}
	teacherKeys = []string{"eps", "Delta"}
	totalKeys   = []string{"eps", "delta", "argument", "budget_eps", "budget_delta", "fallback_of"}
)

// cut is the total with its argument quoted and cut (param.Quote), for
// an error: the argument is any string the file gives.
func (t LabelTotal) cut() LabelTotal {
	t.Argument = param.Quote(t.Argument)
	return t
}

// parseLabelMeta reads a label file's header from its JSON object: each
// key once (encoding/json would keep the last of a repeated key, so a
// header could state one value to a reader and another to darrm), this
// version, every field in its domain. The keys that are not the header's
// own are the mechanism's settings, which the mechanism reads strictly
// (ensemble.Registry.FromHeader): the header's own are decoded without
// them, each by its exact name.
func parseLabelMeta(b []byte) (*LabelMeta, error) {
	obj, err := object(b, "label file header", nil)
	if err == nil && obj["teachers"] != nil && string(obj["teachers"]) != "null" {
		_, err = object(obj["teachers"], "label file header teachers", teacherKeys)
	}
	if err == nil && obj["total"] != nil && string(obj["total"]) != "null" {
		_, err = object(obj["total"], "label file header total", totalKeys)
	}
	if err != nil {
		return nil, err
	}
	var settings []string
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !contains(labelKeys, k) {
			key, _ := json.Marshal(k) // a string marshals
			settings = append(settings, string(key)+":"+string(obj[k]))
			delete(obj, k)
		}
	}
	if b, err = json.Marshal(obj); err != nil {
		return nil, fmt.Errorf("label file header: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	m := &LabelMeta{Eps: math.NaN(), Delta: math.NaN()}
	if settings != nil {
		m.Settings = json.RawMessage("{" + strings.Join(settings, ",") + "}")
	}
	type fields LabelMeta
	j := struct {
		Version int `json:"darrm-labels"`
		*fields
	}{-1, (*fields)(m)}
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("label file header: %v", param.CutJSON(err))
	}
	bad := func(field string, v any, rule string) error {
		return fmt.Errorf("label file header: %s = %v: %s", field, v, rule)
	}
	switch {
	case j.Version != labelsVersion:
		return nil, bad(labelsKey, j.Version, fmt.Sprintf("this darrm reads version %d", labelsVersion))
	case m.Mechanism == "":
		return nil, bad("mechanism", `""`, "must name the mechanism")
	case m.K < 1:
		return nil, bad("K", m.K, "must be >= 1")
	case m.Classes < 2:
		return nil, bad("classes", m.Classes, "must be >= 2")
	case !(m.Eps >= 0) || math.IsInf(m.Eps, 0):
		return nil, bad("eps", m.Eps, "must be a finite number >= 0")
	case !(m.Delta >= 0 && m.Delta < 1):
		return nil, bad("delta", m.Delta, "must be in [0, 1)")
	case (m.Accounting == "") != (m.Total == nil):
		return nil, bad("accounting", param.Quote(m.Accounting), "goes with the total it published (total), and only with one")
	case m.Total != nil && !(m.Total.Eps >= 0 && !math.IsInf(m.Total.Eps, 0) && m.Total.Delta >= 0 && m.Total.Delta < 1 && m.Total.Argument != ""):
		return nil, bad("total", m.Total.cut(), "must be a finite eps >= 0, a delta in [0, 1) and the argument's name")
	case m.Total != nil && !(m.Total.BudgetEps >= 0 && !math.IsInf(m.Total.BudgetEps, 0) && m.Total.BudgetDelta >= 0 && m.Total.BudgetDelta < 1):
		return nil, bad("total", m.Total.cut(), "its budget must be a finite budget_eps >= 0 and a budget_delta in [0, 1)")
	case m.Ledger != "" && !isLedgerID(m.Ledger):
		return nil, bad("ledger", param.Quote(m.Ledger), "must be a ledger's id, 32 hexadecimal digits")
	case m.LedgerUnits && m.Ledger == "":
		return nil, bad("ledger_units", m.LedgerUnits, "the units of a ledger's charge go with the ledger's id (ledger)")
	case m.LedgerLines == 0 && m.LedgerSize == 0 && m.LedgerHead == "":
	case m.Ledger == "":
		return nil, bad("ledger_lines", m.LedgerLines, "where a ledger was goes with the ledger's id (ledger)")
	case m.LedgerLines < 1:
		return nil, bad("ledger_lines", m.LedgerLines, "must be >= 1")
	case m.LedgerSize < 1:
		return nil, bad("ledger_size", m.LedgerSize, "must be >= 1")
	case !isHex(m.LedgerHead, 64):
		return nil, bad("ledger_head", param.Quote(m.LedgerHead), "must be a ledger line's SHA-256, 64 hexadecimal digits")
	}
	return m, nil
}

// isLedgerID reports whether s is a ledger's id: 32 lower-case
// hexadecimal digits.
func isLedgerID(s string) bool { return isHex(s, 32) }

// isHex reports whether s is n lower-case hexadecimal digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}
