package docstest

import (
	"fmt"
	"strings"
	"time"

	"github.com/darrm/darrm/internal/plural"
)

// Summary says how many blocks ran (and for how long in all), passed and
// failed, and which were skipped and why, grouped by reason; total is the
// time of the whole run.
func Summary(results []Result, files int, total time.Duration) string {
	var ran, passed, failed int
	var blocks time.Duration
	var reasons []string
	skipped := map[string][]string{}
	for _, r := range results {
		blocks += r.Elapsed
		switch r.Status {
		case Passed:
			ran++
			passed++
		case Failed:
			failed++
			if r.Elapsed > 0 {
				ran++
			}
		case Skipped:
			why := r.Why
			if r.Block.Marker&Skip != 0 {
				why = "skip"
			}
			if _, ok := skipped[why]; !ok {
				reasons = append(reasons, why)
			}
			pos := r.Block.Pos()
			if r.Block.Marker&Skip != 0 {
				pos += " (" + r.Block.Reason + ")"
			}
			skipped[why] = append(skipped[why], pos)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "docs test: %s in %s: %d ran in %.1f s (%.1f s in all), %d passed, %d failed, %d skipped",
		plural.Of(len(results), "sh block", "sh blocks"), plural.Of(files, "file", "files"),
		ran, blocks.Seconds(), total.Seconds(), passed, failed, len(results)-passed-failed)
	for _, why := range reasons {
		fmt.Fprintf(&b, "\n  skipped, %s: %s", why, strings.Join(skipped[why], ", "))
	}
	return b.String()
}
