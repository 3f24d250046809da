package setup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/votefile"
)

// Exit codes. Scripts depend on them, so they are part of the CLI contract
// (README, "Exit status"); Explain maps errors onto them.
const (
	ExitOK           = 0
	ExitFailure      = 1   // an operation failed (I/O, solver, internal error)
	ExitUsage        = 2   // bad flags or bad input, or parameters to change: nothing was written
	ExitNotCertified = 3   // a noise function is not certified (m·eps, delta)-DP
	ExitBudget       = 4   // a privacy budget stopped the release
	ExitInterrupted  = 130 // SIGINT or SIGTERM
)

// ErrBudget is a command that a privacy budget stopped (exit 4): a
// release that its budget, its ledger or an analyst's share stopped
// before the last query (an outcome the library counts,
// ensemble.ReleaseResult.StoppedByBudget, not an error), a PTR test that
// failed (PTRFailed), or a draw its ledger has no room for.
var ErrBudget = errors.New("privacy budget reached")

// The kinds of error the libraries tell by behaviour (docs/design.md,
// "Errors"): a parameter out of its domain names itself, its value and its
// rule; a setting that does not go with the others names itself, its
// value and what it goes with; any other error of the caller's input (a
// malformed file, a ledger of other teachers) says it is bad input.
type (
	paramError interface {
		Param() (name string, value any, rule string)
	}
	settingError interface {
		Setting() (name, value, rule string)
	}
	badInput interface{ BadInput() bool }
	// spent is an error after which labels may have left the process
	// (ensemble's spentError): never exit 2, which says nothing was written.
	spent interface{ LabelsSpent() int }
	// lost is a run whose ledger's connection to its server was lost: it
	// ended the run's context, but it is a failure, not an interrupt.
	lost interface{ ConnectionLost() bool }
)

// Explain is the one place where an error becomes an exit status and the
// message printed for it: bad input exits 2, with a library's parameter or
// setting named as the command's flag where the command said which flag
// sets it (Flagged), unless labels may have left before it (1: exit 2 says
// nothing was written); a certificate that fails exits 3, a budget that
// stops a release 4, an interrupt 130 (but a run stopped by its ledger's
// connection lost, 1), and anything else 1.
func Explain(err error) (status int, msg string) {
	if err == nil {
		return ExitOK, ""
	}
	msg = optionWords(err, err.Error())
	var (
		pe paramError
		se settingError
		bi badInput
		sp spent
		lo lost
	)
	switch {
	case errors.As(err, &lo) && lo.ConnectionLost():
		return ExitFailure, msg
	case errors.Is(err, context.Canceled):
		return ExitInterrupted, msg
	case errors.Is(err, ErrBudget):
		return ExitBudget, msg
	case errors.As(err, &sp) && sp.LabelsSpent() > 0:
		return ExitFailure, msg
	case errors.Is(err, gamma.ErrNotCertified):
		return ExitNotCertified, msg
	case errors.As(err, &pe), errors.As(err, &se):
		// The flag's words replace the library's, with any context the
		// library wrapped them in; the command's own context stays. The
		// names are those of the call nearest the library's error, which
		// knows its parameters best (a problem's m·eps, a release's
		// delta), the prefix the command's, outermost.
		if ff := (*flagged)(nil); errors.As(err, &ff) {
			if said, ok := ff.innermost().said(); ok {
				msg = strings.Replace(msg, ff.Error(), ff.prefix+said, 1)
			}
		}
		return ExitUsage, msg
	case errors.As(err, &bi) && bi.BadInput(), errors.Is(err, optimal.ErrTooLarge):
		return ExitUsage, msg
	}
	return ExitFailure, msg
}

// flagged is an error of a library call whose parameters a command's
// flags set, with the flags that set them.
type flagged struct {
	err    error
	names  map[string]string // a library's parameter name -> the flag, where they differ
	prefix string            // what the command says before the parameter
}

func (e *flagged) Error() string { return e.err.Error() }
func (e *flagged) Unwrap() error { return e.err }

// innermost returns the flagged error nearest the library's in e's
// chain: e itself when it wraps none.
func (e *flagged) innermost() *flagged {
	for {
		var next *flagged
		if !errors.As(e.err, &next) {
			return e
		}
		e = next
	}
}

// said says the bad parameter or setting of e's library call in terms of
// the command's flags, if e holds one.
func (e *flagged) said() (string, bool) {
	var (
		pe paramError
		se settingError
	)
	switch {
	case errors.As(e.err, &pe):
		name, value, rule := pe.Param()
		return fmt.Sprintf("%s = %v: %s", e.flag(name), value, rule), true
	case errors.As(e.err, &se):
		name, value, rule := se.Setting()
		return fmt.Sprintf("%s %s: %s", e.flag(name), value, rule), true
	}
	return "", false
}

// FlagSaid says the bad parameter or setting in err in terms of the flags
// that names maps them to, as Explain would, if err holds one: for a
// check whose message does not depend on the command that runs it.
func FlagSaid(err error, names map[string]string) (string, bool) {
	return (&flagged{err: err, names: names}).said()
}

// flag is the flag that sets the library's parameter name.
func (e *flagged) flag(name string) string {
	if f, ok := e.names[name]; ok {
		return f
	}
	return "--" + name
}

// Flagged marks err, if not nil, as the error of a library call whose
// parameters the command's flags set, so that Explain names a bad
// parameter or setting as its flag: names maps the library's parameter
// names to flags where they differ ("--" + name otherwise).
func Flagged(err error, names map[string]string) error {
	return FlaggedIn("", err, names)
}

// FlaggedIn is Flagged for a command that says prefix before the
// parameter (e.g. "account gnmax: ").
func FlaggedIn(prefix string, err error, names map[string]string) error {
	if err == nil {
		return nil
	}
	return &flagged{err: err, names: names, prefix: prefix}
}

// readOptionFlags are the flags that set each option of a vote file's
// reading (votefile.Hint.Field): the one table from its names to the
// command's.
var readOptionFlags = map[string]string{
	"Options.Format": "--input-format", "Options.Layout": "--input-format", "Options.Classes": "--classes",
	"Options.K": "--K", "Options.ID": "--id", "Options.Orientation": "--", "Options.Array": "--array",
	"Stated.Partition": "--partition",
}

// optionWords says, in msg, the advice of the errors in err's chain on
// how to read a vote file (its Hints, votefile.Hint) as the flags that
// give it.
func optionWords(err error, msg string) string {
	var hints []votefile.Hint
	var walk func(error)
	walk = func(e error) {
		if a, ok := e.(interface{ Hints() []votefile.Hint }); ok {
			hints = append(hints, a.Hints()...)
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			if next := u.Unwrap(); next != nil {
				walk(next)
			}
		case interface{ Unwrap() []error }:
			for _, next := range u.Unwrap() {
				walk(next)
			}
		}
	}
	walk(err)
	// The longest first: an option with a value before the bare option.
	slices.SortStableFunc(hints, func(a, b votefile.Hint) int { return len(b.String()) - len(a.String()) })
	for _, h := range hints {
		words := readOptionFlags[h.Field]
		switch {
		case h.Field == "Options.Orientation":
			words += h.Value // a flag per orientation: --teachers-in-rows
		case h.Value != "":
			words += " " + h.Value
		}
		msg = strings.ReplaceAll(msg, h.String(), words)
	}
	return msg
}

// WithFlags returns the names of a library's parameters that both tables
// map to flags, more's where they overlap.
func WithFlags(names, more map[string]string) map[string]string {
	out := maps.Clone(names)
	maps.Copy(out, more)
	return out
}

// BudgetFlags maps the accountant's names of a budget's values
// (accountant.Budget.Validate) to the flags that give them.
var BudgetFlags = map[string]string{"budget eps": "--budget-eps", "budget delta": "--budget-delta", "delta'": "--delta-prime",
	"shares": "--share", "analyst": "--analyst", "WitnessDir": "--witness-dir", "LockTimeout": "--lock-timeout"}
