package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// UnknownCommand is the usage error for name, which is not a command of
// cmd: it suggests the commands the user may have meant and says where the
// list is.
func UnknownCommand(cmd *cobra.Command, name string) error {
	var names []string
	for _, c := range cmd.Commands() {
		if !c.Hidden && c.Deprecated == "" {
			names = append(names, c.Name())
		}
	}
	near := suggest(name, names)
	for i, n := range near {
		near[i] = `"` + n + `"`
	}
	if hint := didYouMean("", near); hint != "" {
		return Usagef("unknown command %q for %q%s", name, cmd.CommandPath(), hint)
	}
	return Usagef("unknown command %q for %q; run %q for the list", name, cmd.CommandPath(), cmd.CommandPath()+" --help")
}

// unknownFlag is the usage error for the flag name (without dashes, a
// shorthand when short), which cmd does not have: it suggests the flags
// the user may have meant.
func unknownFlag(cmd *cobra.Command, name string, short bool) error {
	dash := "--"
	if short {
		dash = "-"
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if hint := didYouMean("--", suggest(name, names)); hint != "" {
		return Usagef("unknown flag %s%s for %q%s", dash, name, cmd.CommandPath(), hint)
	}
	return Usagef("unknown flag %s%s for %q; run %q for its flags", dash, name, cmd.CommandPath(), cmd.CommandPath()+" --help")
}

// didYouMean phrases suggestions, each with prefix, or returns "" for
// none.
func didYouMean(prefix string, names []string) string {
	if len(names) == 0 {
		return ""
	}
	for i, n := range names {
		names[i] = prefix + n
	}
	if len(names) == 1 {
		return "; did you mean " + names[0] + "?"
	}
	return "; did you mean one of " + strings.Join(names, ", ") + "?"
}

// suggest returns the names close to typed: those equal to it but for
// case if there are any, else those it begins (three letters at least),
// or within an edit distance that grows with its length (one edit for up
// to five letters, two beyond), or that share a word with it, as another
// command spells the same thing (--delta for --target-delta, --eps for
// --step-eps, and the reverse), at most three, closest first.
func suggest(typed string, names []string) []string {
	var fold []string
	for _, n := range names {
		if strings.EqualFold(n, typed) && n != typed {
			fold = append(fold, n)
		}
	}
	if len(fold) > 0 {
		return fold
	}
	limit := 1
	if len(typed) > 5 {
		limit = 2
	}
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	lower := strings.ToLower(typed)
	for _, n := range names {
		d := editDistance(lower, strings.ToLower(n))
		if len(typed) >= 3 && strings.HasPrefix(strings.ToLower(n), lower) {
			d = min(d, limit)
		}
		if len(typed) > 1 && (d <= limit || shareWord(lower, strings.ToLower(n))) {
			cs = append(cs, cand{n, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.d - b.d })
	var out []string
	for _, c := range cs[:min(len(cs), 3)] {
		out = append(out, c.name)
	}
	return out
}

// shareWord reports whether one of a and b, of several words joined by
// hyphens, is a word of the other: delta of target-delta.
func shareWord(a, b string) bool {
	return a != b && (slices.Contains(strings.Split(b, "-"), a) || slices.Contains(strings.Split(a, "-"), b))
}

// editDistance is the number of insertions, deletions, substitutions and
// swaps of adjacent bytes that turn a into b (optimal string alignment):
// "trian" is one edit from "train".
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
