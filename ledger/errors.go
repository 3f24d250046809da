package ledger

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
)

// CorruptError reports a ledger that cannot be trusted; nothing may be
// released against it.
type CorruptError struct {
	Path   string
	Line   int
	Reason string
	// rounding says that the line's charge is below its step's cost only
	// in rounding (roundingError): most likely a line of a darrm built
	// otherwise before charges carried a margin, on a ledger that is
	// sound.
	rounding bool
}

// Error names the ledger and the line at fault, and says why.
func (e *CorruptError) Error() string {
	if e.rounding {
		return fmt.Sprintf("ledger %s, line %d: %s; the two differ only in their last digits, as a darrm built otherwise (for another processor architecture, or another GOAMD64 level) computed them before charges carried a margin above them: if such a darrm wrote the line, the ledger is sound, and darrm built as that one verifies it and releases on it; this one releases nothing on it (docs/aggregate.md, \"A team: one ledger in PostgreSQL\")", e.Path, e.Line, e.Reason)
	}
	return fmt.Sprintf("ledger %s, line %d: %s; no release is possible until it is restored from a good copy (docs/aggregate.md, \"After an error\")", e.Path, e.Line, e.Reason)
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *CorruptError) BadInput() bool { return true }

// NotLedgerError reports a path that is no ledger file at all: missing, a
// directory, a device, a FIFO.
type NotLedgerError struct {
	Path   string
	Reason string
	Err    error // fs.ErrNotExist for a missing file
}

// Error names the location and says why it is not a ledger.
func (e *NotLedgerError) Error() string { return fmt.Sprintf("ledger %s: %s", e.Path, e.Reason) }

// BadInput reports that the error is the caller's input, not a failure.
func (e *NotLedgerError) BadInput() bool { return true }

// Unwrap returns Err.
func (e *NotLedgerError) Unwrap() error { return e.Err }

// takenError refuses to make a ledger (Create) at a path that exists,
// or a PostgreSQL ledger whose name is taken: a ledger is only ever
// appended to, so Init never writes over one, whether it is a ledger
// (Ledger, with its Ensemble and ID) or not (What says what is there).
type takenError struct {
	Path     string
	What     string
	Ledger   bool
	Ensemble string
	ID       string
	// Other, for a PostgreSQL ledger, is the name of the database's
	// ledger, of another name, that is of the same identity (SameID) or
	// the live ledger of the same ensemble; Live says it is not retired.
	Other  string
	SameID bool
	Live   bool
}

func (e *takenError) Error() string {
	switch {
	case e.Other != "" && e.SameID:
		state := "live"
		if !e.Live {
			state = "retired"
		}
		return fmt.Sprintf("ledger %s: %s holds ledger %s of ensemble %s already, as ledger %s (%s): a copy of a ledger made live a second time would count its spends twice: release on %s as it is, or import the copy into a database that does not hold it", e.Path, e.What, e.ID, e.Ensemble, e.Other, state, e.Other)
	case e.Other != "":
		return fmt.Sprintf("ledger %s: %s has a live ledger of ensemble %s already, ledger %s (id %.8s): one ledger of an ensemble is live in a database, so that its budget is counted once: release on %s, or make this ledger with --replace, which retires %s with a line that every analyst sees", e.Path, e.What, e.Ensemble, e.Other, e.ID, e.Other, e.Other)
	case IsURL(e.Path):
		return fmt.Sprintf("ledger %s exists already: a ledger of ensemble %s (id %.8s); ledger init makes a new ledger and never writes over one: release on this ledger as it is (darrm ledger show %s), or name a new ledger (?ledger=NAME)", e.Path, e.Ensemble, e.ID, shellQuote(e.Path))
	case e.Ledger:
		return fmt.Sprintf("ledger %s exists already: a ledger of ensemble %s (id %.8s); ledger init makes a new file and never writes over one: release on this ledger as it is (darrm ledger show %s), or name a new file for a new ledger", e.Path, e.Ensemble, e.ID, shellQuote(e.Path))
	}
	return fmt.Sprintf("%s exists already and is %s: ledger init makes a new file and never writes over one: name a new file for the ledger (or move this one away)", e.Path, e.What)
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *takenError) BadInput() bool { return true }

// versionError reports a ledger that a run cannot use: of version 3,
// which must be upgraded first (Upgrade); of the development formats
// before it (versions 1 and 2), which no release shipped and this darrm
// no longer reads; or of a version this darrm does not know.
type versionError struct {
	Path    string
	Version int
	// Kept says that the file is the version-3 copy that Upgrade kept,
	// marked, after the upgrade ended: no release or upgrade takes it.
	Kept bool
}

func (e *versionError) Error() string {
	q := shellQuote(e.Path)
	switch {
	case e.Kept:
		return fmt.Sprintf("ledger %s is the version-3 copy that darrm ledger upgrade kept, marked as upgraded (its last line), after it upgraded the ledger in the file's former place: it is for reading (darrm ledger show, verify); release on the upgraded ledger, and never upgrade this copy, which would make a second live ledger of the same spends", e.Path)
	case e.Version == version3:
		return fmt.Sprintf("ledger %s is of version 3, whose lines do not describe the mechanisms that the budget's filter of version %d composes: upgrade it once with: darrm ledger upgrade %s (its binding and spends are kept)", e.Path, version4, q)
	case e.Version < version3:
		// The darrm that wrote versions 1 and 2 has no upgrade of them,
		// and a new ledger does not count what they spent: said, so that
		// the ensemble's spends are not forgotten.
		return fmt.Sprintf("ledger %s is of version %d, a development format that this darrm no longer reads (it reads versions 3 to %d), and whose spends a new ledger does not count: "+
			"upgrade it to version 3 with a darrm that writes version 3 (its darrm ledger upgrade reads versions 1 and 2; the darrm that wrote it has none), then run darrm ledger upgrade %s with this one; "+
			"or start a new ledger with darrm ledger init whose budget leaves out what this one spent (darrm ledger show, with the darrm that wrote it)", e.Path, e.Version, Version, q)
	}
	return fmt.Sprintf("ledger %s is of version %d; this darrm reads versions 3 to %d: use a newer darrm", e.Path, e.Version, Version)
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *versionError) BadInput() bool { return true }

// FilterError refuses a release whose labels the ledger's filter cannot
// compose (a version-4 ledger's zCDP filter a label without a zCDP
// slope, filterAccepts; a version-5 ledger's filter one that no part can
// charge, accountant.Filter.Charge): the filter is fixed when the ledger
// is made, so that its halting rule holds for adaptively chosen runs.
type FilterError struct {
	Path      string
	Mechanism provenance.MechanismName
	Err       error
}

// Error names the ledger and the mechanism whose labels its filter
// cannot compose, says why, and names the ledgers that hold them.
func (e *FilterError) Error() string {
	return e.Say(fmt.Sprintf("a ledger whose Header.Filter is %v", accountant.Simple))
}

// Say returns e's message with other naming the ledgers that hold such
// labels: Error names the header's field, a command says how it makes
// one.
func (e *FilterError) Say(other string) string {
	return fmt.Sprintf("ledger %s: %s: %v; %s holds them (a ledger's filter is fixed when it is made)", e.Path, e.Mechanism, e.Err, other)
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *FilterError) BadInput() bool { return true }

// Unwrap returns Err.
func (e *FilterError) Unwrap() error { return e.Err }

// bindingError refuses a release that states other parameters of the
// ensemble than the ledger is bound to: each differing parameter, the
// ledger's value and the release's. With Unstated, it refuses a release
// that does not state its ensemble (a vote file without a metadata
// header): nothing ties its labels to the ledger's teachers, so they can
// neither fall under their cap nor be taken to keep their relation (a
// header-less file asserts nothing of how their data were split).
type bindingError struct {
	Path     string
	Ledger   provenance.Binding
	Diffs    []bindingDiff // A: the ledger's, B: the release's
	Unstated bool
}

func (e *bindingError) Error() string {
	if e.Unstated {
		return fmt.Sprintf("ledger %s is bound to %v; this release's vote file has no metadata header, so nothing ties its labels to those teachers, to their cap or to their relation: put the ensemble's metadata header on the vote file's first line, or, for votes that cannot hold it (NumPy), in a sidecar beside them, VOTES.meta.json (e.g. the header of a vote file of theirs that has one; docs/aggregate.md, \"The metadata header\"), and run the release again", e.Path, e.Ledger)
	}
	var parts []string
	for _, d := range e.Diffs {
		parts = append(parts, fmt.Sprintf("%s %s (the ledger's: %s)", d.Field, d.B, d.A))
	}
	return fmt.Sprintf("ledger %s is bound to %v; this release states %s: a ledger keeps the budget of one ensemble, and releases of other teachers or in another relation cannot share a budget", e.Path, e.Ledger, strings.Join(parts, ", "))
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *bindingError) BadInput() bool { return true }

// errLockTimeout is a wait for a file's lock that reached its bound.
var errLockTimeout = errors.New("the wait for the lock reached its bound")

// errBudget is wrapped by Reserve when the budget allows no more labels.
var errBudget = errors.New("the ledger's budget is spent")

// shellQuote quotes s for a POSIX shell when it needs it, for the commands
// that messages give.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shareError is a run on a ledger that gives analysts shares of its
// budget (Header.Shares) by an analyst who has none.
type shareError struct {
	Path    string
	Analyst string // "" when the run names no one
	Shares  map[string]float64
}

func (e *shareError) Error() string {
	names := make([]string, 0, len(e.Shares))
	for name := range e.Shares {
		names = append(names, strconv.Quote(name))
	}
	slices.Sort(names)
	who := "this run names no analyst"
	if e.Analyst != "" {
		who = fmt.Sprintf("none to %q", e.Analyst)
	}
	return fmt.Sprintf("ledger %s gives analysts shares of its budget (%s), %s: charge it as one of them (the analyst: darrm's --analyst, else the database user)", e.Path, strings.Join(names, ", "), who)
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *shareError) BadInput() bool { return true }

// lockTimeoutError is a wait for a lock that reached the lock timeout
// (Options.LockTimeout): the run wrote nothing and released nothing. It is a
// failure, not the caller's input: the same run succeeds once the holder
// is done.
type lockTimeoutError struct {
	what    string // what the lock guards: "ledger LOCATION", "ledger record PATH"
	timeout time.Duration
	holder  string // who holds it: "another darrm run", or a session
	// held, for a wait in the middle of a run, is the labels it had
	// reserved before: they may have left, and stay charged.
	held int
	run  bool
}

func (e *lockTimeoutError) Error() string {
	if e.run {
		return fmt.Sprintf("%s: gave up after waiting %v for a lock held by %s, in the middle of a run that had reserved %d labels before: they stay charged, whether or not they left; run again once it is done, or wait longer (darrm's --lock-timeout, Options.LockTimeout)", e.what, e.timeout, e.holder, e.held)
	}
	return fmt.Sprintf("%s: gave up after waiting %v for a lock held by %s: nothing was written, no label released; run again once it is done, or wait longer (darrm's --lock-timeout, Options.LockTimeout)", e.what, e.timeout, e.holder)
}

// midRun marks a wait for a lock in err, if any, as one in the middle of
// a run that had reserved held labels before (none: nothing was written).
func midRun(err error, held int) error {
	var lt *lockTimeoutError
	if held > 0 && errors.As(err, &lt) {
		lt.run, lt.held = true, held
	}
	return err
}
