package ctxio

import "context"

// Every checks a context between items of a loop whose items differ in
// work: every Items items, or sooner once Units units of work (class
// counts, say) were done since the last check (Units 0: by the items
// alone). A query of 500,000 classes takes a tenth of a second or more,
// so a check every few hundred queries alone let a signal wait for
// minutes.
type Every struct {
	Ctx          context.Context
	Items, Units int
	items, units int // since the last check
}

// Step records one item of units of work and returns the context's error
// if a check falls due and the context is done.
func (e *Every) Step(units int) error {
	e.items++
	e.units += units
	if e.items < e.Items && (e.Units == 0 || e.units < e.Units) {
		return nil
	}
	e.items, e.units = 0, 0
	return e.Ctx.Err()
}
