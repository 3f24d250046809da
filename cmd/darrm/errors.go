package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/inputs"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/optimal"
)

// Exit codes. Scripts depend on them, so they are part of the CLI contract
// (README, "Exit status"); explain maps errors onto them.
const (
	exitOK           = 0
	exitFailure      = 1   // an operation failed (I/O, solver, internal error)
	exitUsage        = 2   // bad flags or bad input, or parameters to change: nothing was written
	exitNotCertified = 3   // a noise function is not certified (m·eps, delta)-DP
	exitBudget       = 4   // a privacy budget stopped the release
	exitInterrupted  = 130 // SIGINT or SIGTERM
)

var (
	// errNotCertified marks a noise function that failed its certificate.
	errNotCertified = errors.New("not certified")
	// errBudget marks a release stopped by a privacy budget: the
	// library's mark (ensemble.Release), so that its errors exit 4 too.
	errBudget = ensemble.ErrBudget
)

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
)

// explain is the one place where an error becomes an exit status and the
// message printed for it: bad input exits 2, with a library's parameter or
// setting named as the command's flag where the command said which flag
// sets it (flagError); a certificate that fails exits 3, a budget that
// stops a release 4, an interrupt 130, and anything else 1.
func explain(err error) (status int, msg string) {
	if err == nil {
		return exitOK, ""
	}
	msg = err.Error()
	var (
		pe paramError
		se settingError
		bi badInput
	)
	switch {
	case errors.Is(err, context.Canceled):
		return exitInterrupted, msg
	case errors.Is(err, errBudget):
		return exitBudget, msg
	case errors.Is(err, errNotCertified), errors.Is(err, ensemble.ErrNotCertified):
		return exitNotCertified, msg
	case errors.As(err, &pe), errors.As(err, &se):
		// The flag's words replace the library's, with any context the
		// library wrapped them in; the command's own context stays.
		if ff := (*flagged)(nil); errors.As(err, &ff) {
			if said, ok := ff.said(); ok {
				msg = strings.Replace(msg, ff.Error(), ff.prefix+said, 1)
			}
		}
		return exitUsage, msg
	case errors.As(err, &bi) && bi.BadInput(), errors.Is(err, optimal.ErrTooLarge):
		return exitUsage, msg
	}
	return exitFailure, msg
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

// flag is the flag that sets the library's parameter name.
func (e *flagged) flag(name string) string {
	if f, ok := e.names[name]; ok {
		return f
	}
	return "--" + name
}

// flagError marks err, if not nil, as the error of a library call whose
// parameters the command's flags set, so that explain names a bad
// parameter or setting as its flag: names maps the library's parameter
// names to flags where they differ ("--" + name otherwise).
func flagError(err error, names map[string]string) error {
	if err == nil {
		return nil
	}
	return &flagged{err: err, names: names}
}

// ledgerError says a ledger's error in the command's terms: a file that is
// another of darrm's (a vote file, a gamma) is named as what it is, a
// missing one with the close names, and a bad header parameter as its
// flag.
func ledgerError(err error) error {
	if msg := inputs.NotLedger(err); msg != "" {
		return cli.Usagef("%s", msg)
	}
	return flagError(err, nil)
}
