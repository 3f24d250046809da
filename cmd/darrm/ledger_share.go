package main

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/ledger"
)

// parseShares reads --share's NAME=FRACTION values into a ledger's shares
// (ledger.Header.Shares, which checks the names and fractions); nil for
// none.
func parseShares(values []string) (map[string]float64, error) {
	if len(values) == 0 {
		return nil, nil
	}
	shares := make(map[string]float64, len(values))
	for _, v := range values {
		i := strings.LastIndexByte(v, '=')
		if i < 0 {
			return nil, cli.Usagef("--share %q: want NAME=FRACTION, an analyst and their fraction of the budget", v)
		}
		name := v[:i]
		f, err := strconv.ParseFloat(v[i+1:], 64)
		if err != nil {
			return nil, cli.Usagef("--share %q: the fraction %q is not a number: want NAME=FRACTION, in (0, 1]", v, v[i+1:])
		}
		if _, dup := shares[name]; dup {
			return nil, cli.Usagef("--share %q: analyst %q is given a share twice: give each one share", v, name)
		}
		shares[name] = f
	}
	return shares, nil
}

// shareNames returns the analysts given shares, sorted and quoted.
func shareNames(shares map[string]float64) []string {
	names := make([]string, 0, len(shares))
	for name := range shares {
		names = append(names, strconv.Quote(name))
	}
	slices.Sort(names)
	return names
}

// sharesAllow refuses a share of the new ledger with header h that allows
// no step of its declared use, or of the labels declared with --mechanism
// (step; nil when nothing is declared, and a share is then a fraction of
// the budget that any release may fit), naming the share and why: its
// analyst could release nothing, and would learn it only when refused.
func sharesAllow(memo *accountant.Memo, h ledger.Header, step *accountant.Spend) error {
	if h.Use == nil && step == nil {
		return nil
	}
	var s accountant.Spend
	if step != nil {
		s = *step
	}
	all, counts := 0, "labels"
	for _, r := range h.Use {
		all += r.Labels
		if r.Accounting != "" {
			counts = "releases"
		}
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for name := range h.Shares {
			if !yield(name) {
				return
			}
		}
	}) {
		f := h.Shares[name]
		n, err := h.ShareAllows(memo, s, f)
		if err != nil {
			return cli.AsUsage(setup.Flagged(err, setup.BudgetFlags))
		}
		if n > 0 {
			continue
		}
		if h.Use != nil {
			one := strings.TrimSuffix(counts, "s")
			least := math.Ceil(1e4/float64(all)) / 1e4 // of one step, rounded up to 4 decimals
			return cli.Usagef("--share %s=%v allows no %s: a share of a declared use is a whole number of its %s, and %v of its %s is none; "+
				"give %q a share of at least %s, or a budget that holds more %s",
				name, f, one, counts, f, plural.Of(all, one, counts), name, cliout.Float(least), counts)
		}
		return cli.Usagef("--share %s=%v allows no label declared (%v each): %q's part of the budget holds none; give a larger share", name, f, s.Guarantee, name)
	}
	return nil
}
