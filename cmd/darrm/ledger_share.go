package main

import (
	"slices"
	"strconv"
	"strings"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
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
