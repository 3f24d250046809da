package docstest

import (
	"errors"
	"strings"
	"testing"
)

// TestRecipe: a block that would go on past a failure when pasted into an
// interactive shell is refused, naming the line, what it reads and the line
// that writes it; one whose dependent commands are joined by && passes.
func TestRecipe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  []string // substrings of the error, one per error; none: no error
	}{{
		name: "issue 55's recipe",
		lines: []string{
			"darrm plan --queries 300 --format csv > plan.csv",
			"set -- $(awk -F, 'NR == 2 { print $4, $5 }' plan.csv)   # threshold, sigma1",
			`darrm aggregate votes.csv --threshold "$1" --sigma1 "$2"`,
		},
		want: []string{
			`f.md:3: "set -- $(awk -F, 'NR == 2 { print $4, $5 }' plan.csv)": the exit status of the command substitution is lost`,
			"f.md:3: \"set -- $(awk -F, 'NR == 2 { print $4, $5 }' plan.csv)\" reads the file plan.csv, which line 2 writes: join them with &&",
			"f.md:4: \"darrm aggregate votes.csv --threshold \\\"$1\\\" --sigma1 \\\"$2\\\"\" reads the positional parameters $1..., which line 3 writes",
		},
	}, {
		name: "the recipe joined by &&",
		lines: []string{
			"darrm plan --queries 300 --format csv > plan.csv &&   # a comment after &&",
			"  params=$(awk -F, 'NR == 2 { print $4 }' plan.csv) &&",
			`  darrm aggregate votes.csv --threshold "$params" --out labels.csv`,
			"darrm simulate --K 11        # needs nothing of the above",
			"darrm aggregate votes.csv --out labels.csv   # writes the file again: no read",
			"rm -f plan.csv               # rm reads nothing",
			`d=$(mktemp -d) && darrm separate g.json --out "$d/part{i}.json"   # names with expansions are not followed`,
			"cat > meta.json <<'EOF'",
			`{"x": "$1 plan.csv $params"}`,
			"EOF",
			"if grep -q x README.md; then",
			"  echo found",
			"fi",
		},
	}, {
		name: "an exported variable is read by every later command",
		lines: []string{
			"export DARRM_STATE_DIR=$(mktemp -d)",
			"D=$(mktemp -d) && export D",
			"darrm ledger show x.ledger",
		},
		want: []string{
			`f.md:2: "export DARRM_STATE_DIR=$(mktemp -d)": the exit status of the command substitution is lost`,
			`f.md:3: "D=$(mktemp -d)" reads the exported variable DARRM_STATE_DIR, which line 2 writes`,
			`f.md:4: "darrm ledger show x.ledger" reads the exported variable D, which line 3 writes`,
			`f.md:4: "darrm ledger show x.ledger" reads the exported variable DARRM_STATE_DIR, which line 2 writes`,
		},
	}, {
		name: "files written by --out, --plot, tee and ledger init; read through a substitution",
		lines: []string{
			"darrm aggregate votes.csv --out=labels.csv",
			"darrm solve --plot g.png",
			"darrm solve | tee g.txt",
			"darrm ledger init k.ledger --votes votes.csv",
			"n=$(grep -c . labels.csv)",
			"darrm aggregate votes.csv --ledger k.ledger > /dev/null",
			"file g.png g.txt",
		},
		want: []string{
			"f.md:6: \"n=$(grep -c . labels.csv)\" reads the file labels.csv, which line 2 writes",
			"f.md:7: \"darrm aggregate votes.csv --ledger k.ledger\" reads the file k.ledger, which line 5 writes",
			"f.md:8: \"file g.png g.txt\" reads the file g.png, which line 3 writes",
			"f.md:8: \"file g.png g.txt\" reads the file g.txt, which line 4 writes",
		},
	}, {
		name: "substitutions whose status is lost",
		lines: []string{
			"read -r a b < <(awk 'NR == 2' plan.csv)",
			`darrm solve --K "$(cat k.txt)"`,
			"for f in $(ls); do echo \"$f\"; done",
			"x=$(date) y=$(date)",
		},
		want: []string{
			"f.md:2: \"read -r a b\": a process substitution <(...) loses its command's exit status",
			"f.md:3: \"darrm solve --K \\\"$(cat k.txt)\\\"\": the exit status of the command substitution is lost",
			"f.md:4: \"for f in $(ls)\": the exit status",
			"f.md:5: \"x=$(date) y=$(date)\": the exit status",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			err := errors.Join(recipeErrors(Block{File: "f.md", Line: 1, Lines: tc.lines})...)
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d errors, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("error %d: %q does not contain %q", i, got[i], w)
				}
			}
		})
	}
}
