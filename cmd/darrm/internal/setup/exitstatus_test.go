package setup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/experiments/teachers"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestExplain maps every kind of error onto its exit status and message:
// Explain is the one place where that happens.
func TestExplain(t *testing.T) {
	accParam := &param.Error{Name: "laplace scale", Value: -1, Rule: "must be a finite number > 0"}
	setting := &param.SettingError{Name: "search", Value: "grid", Rule: "the paper's search uses the paper's conversion only"}
	conParam := &param.Error{Name: "m·eps", Value: 0.5, Rule: "must be > 0"}
	ledParam := fmt.Errorf("ledger: %w", &param.Error{Name: "budget-eps", Value: "-1", Rule: "must be > 0"})
	// a malformed vote file, as votefile reports it: a sidecar that is not
	// a header
	_, err := votefile.Open("v.csv", votefile.Options{In: strings.NewReader("1\n"), MetaIn: strings.NewReader("[1]"), MetaFile: "v.csv.meta.json"})
	var sidecar *votefile.SidecarError
	if !errors.As(err, &sidecar) {
		t.Fatalf("votefile.Open with a sidecar that is not a header: %v, want a *votefile.SidecarError", err)
	}
	format := sidecar.Err
	for _, tc := range []struct {
		name string
		err  error
		code int
		msg  string
	}{
		{"none", nil, ExitOK, ""},
		{"failure", errors.New("disk on fire"), ExitFailure, "disk on fire"},
		{"usage", cli.Usagef("--m = 0"), ExitUsage, "--m = 0"},
		{"too large", fmt.Errorf("solve K=1001 m=10: %w", optimal.ErrTooLarge), ExitUsage, "solve K=1001 m=10: " + optimal.ErrTooLarge.Error()},
		{"library not certified", fmt.Errorf("x is %w (m·eps, delta)-DP", gamma.ErrNotCertified), ExitNotCertified, "x is not certified (m·eps, delta)-DP"},
		{"not certified", fmt.Errorf("gamma is %w", gamma.ErrNotCertified), ExitNotCertified, "gamma is not certified"},
		{"budget", fmt.Errorf("%w: 3 left", ErrBudget), ExitBudget, "privacy budget reached: 3 left"},
		{"interrupted", fmt.Errorf("certifying gamma (K = 11): %w", context.Canceled), ExitInterrupted, "certifying gamma (K = 11): context canceled"},

		// A parameter is named as the flag that sets it, dropping what the
		// library wrapped it in, keeping what the command did.
		{"param", Flagged(fmt.Errorf("pate: %w", accParam), map[string]string{"laplace scale": "--laplace-scale"}), ExitUsage, "--laplace-scale = -1: must be a finite number > 0"},
		{"param, command context", fmt.Errorf("run: %w", Flagged(accParam, nil)), ExitUsage, "run: --laplace scale = -1: must be a finite number > 0"},
		{"param, account", &flagged{err: accParam, names: map[string]string{"laplace scale": "--scale"}, prefix: "account x: "}, ExitUsage, "account x: --scale = -1: must be a finite number > 0"},
		{"param, no flag", accParam, ExitUsage, accParam.Error()},
		{"constraints param", Flagged(conParam, map[string]string{"m·eps": "m·eps (--m × --eps)"}), ExitUsage, "m·eps (--m × --eps) = 0.5: must be > 0"},
		{"ledger param", Flagged(ledParam, nil), ExitUsage, "--budget-eps = -1: must be > 0"},
		{"setting", Flagged(fmt.Errorf("teacher cap: %w", setting), map[string]string{"search": "--gnmax-search"}), ExitUsage, "--gnmax-search grid: the paper's search uses the paper's conversion only"},
		{"setting, no flag", setting, ExitUsage, setting.Error()},
		{"flags, no param", Flagged(errors.New("disk on fire"), nil), ExitFailure, "disk on fire"},

		{"format", format, ExitUsage, format.Error()},
		// Bad input after labels left: exit 2 would say nothing was written.
		{"format, labels spent", &labelsSpent{labels: 7, err: format}, ExitFailure, format.Error()},
		{"interrupted, labels spent", &labelsSpent{labels: 7, err: context.Canceled}, ExitInterrupted, context.Canceled.Error()},
		{"teachers", &provenance.TeachersError{Field: "K"}, ExitUsage, (&provenance.TeachersError{Field: "K"}).Error()},
		{"ledger corrupt", &ledger.CorruptError{Path: "l", Line: 2}, ExitUsage, (&ledger.CorruptError{Path: "l", Line: 2}).Error()},
		{"not a ledger", &ledger.NotLedgerError{Path: "l", Reason: "a directory"}, ExitUsage, "ledger l: a directory"},
		{"record", &ledger.RecordError{Path: "l"}, ExitUsage, (&ledger.RecordError{Path: "l"}).Error()},

		// darrm's own state that is damaged is a failure, not the user's input.
		{"cache entry corrupt", &cache.CorruptError{Path: "c", Reason: "bad"}, ExitFailure, (&cache.CorruptError{Path: "c", Reason: "bad"}).Error()},
		{"saved teachers corrupt", &teachers.CorruptError{Path: "t", Reason: "bad"}, ExitFailure, (&teachers.CorruptError{Path: "t", Reason: "bad"}).Error()},
	} {
		code, msg := Explain(tc.err)
		if code != tc.code || msg != tc.msg {
			t.Errorf("%s: Explain(%v) = %d, %q; want %d, %q", tc.name, tc.err, code, msg, tc.code, tc.msg)
		}
	}
}

// labelsSpent is an error after which labels may have left, as ensemble's
// release into a stream that failed part-way returns it: Explain knows
// it by its LabelsSpent method.
type labelsSpent struct {
	labels int
	err    error
}

func (e *labelsSpent) Error() string    { return e.err.Error() }
func (e *labelsSpent) Unwrap() error    { return e.err }
func (e *labelsSpent) LabelsSpent() int { return e.labels }
