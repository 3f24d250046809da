package figure

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// Ticks marks a linear axis at multiples of 1, 2, 2.5 or 5 times a power
// of ten, labelling at most Most of them and at least Most/2.5 (gonum's
// default labels as few as two), all with the same number of decimals.
// As matplotlib's default, it draws no minor ticks.
type Ticks struct {
	// Integer keeps the ticks on whole numbers (epochs, teacher counts).
	Integer bool
	// Most is the most labelled ticks (0: 6).
	Most int
}

// Ticks returns the ticks between lo and hi.
func (t Ticks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []plot.Tick{{Value: lo, Label: formatTick(lo, 6)}}
	}
	most := t.Most
	if most == 0 {
		most = 6
	}
	mants := []float64{1, 2, 2.5, 5}
	if t.Integer {
		mants = []float64{1, 2, 5}
	}
	step, mant := niceStep(hi-lo, most, mants)
	if t.Integer && step < 1 {
		step, mant = 1, 1
	}
	dec := max(0, -int(math.Round(math.Log10(step/mant))))
	if mant == 2.5 {
		dec++
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+1e-9*step; v += step {
		if math.Abs(v) < 1e-9*step {
			v = 0 // not -0 or 1e-17
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', dec, 64)})
	}
	return ticks
}

// niceStep returns the smallest step m·10^k, m one of mants, that puts at
// most most ticks in a range of the given span, and m. Consecutive
// candidates differ by a factor of at most 2.5, so at least most/2.5 ticks
// remain.
func niceStep(span float64, most int, mants []float64) (step, mant float64) {
	base := math.Pow(10, math.Floor(math.Log10(span/float64(most))))
	for _, e := range []float64{1, 10, 100} {
		for _, m := range mants {
			if step = m * base * e; math.Floor(span/step+1e-9)+1 <= float64(most) {
				return step, m
			}
		}
	}
	return span, 1
}

// LogTicks marks a log axis so that at least three ticks are labelled:
// every decade (every second or third when there are many), else 1, 2 and
// 5 times each power of ten, else the integers 1 to 9 times it; the other
// integer multiples get unlabelled minor ticks. Every label of an axis has
// the same form: decimals when all lie in [0.001, 10^5), else m·10^{k}.
type LogTicks struct{}

// Ticks returns the ticks between lo and hi, both > 0.
func (LogTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return []plot.Tick{{Value: hi, Label: formatTick(hi, 3)}}
	}
	first, last := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	in := func(v float64) bool { return v >= lo*(1-1e-12) && v <= hi*(1+1e-12) }
	decades := 0
	for k := first; k <= last; k++ {
		if in(math.Pow(10, float64(k))) {
			decades++
		}
	}
	type mark struct{ m, k int }
	for _, labelled := range [][]int{{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		every := 1
		if len(labelled) == 1 {
			every = (decades + 5) / 6
		}
		var ticks []plot.Tick
		var marks []mark
		var idx []int
		for k := first; k <= last; k++ {
			p := math.Pow(10, float64(k))
			for m := 1; m <= 9; m++ {
				v := float64(m) * p
				if !in(v) {
					continue
				}
				ticks = append(ticks, plot.Tick{Value: v})
				for _, l := range labelled {
					if m == l && (m != 1 || len(labelled) > 1 || (k-first)%every == 0) {
						marks = append(marks, mark{m, k})
						idx = append(idx, len(ticks)-1)
					}
				}
			}
		}
		if len(marks) >= 3 {
			decimal := true
			for _, mk := range marks {
				decimal = decimal && mk.k >= -3 && mk.k <= 4
			}
			for i, mk := range marks {
				ticks[idx[i]].Label = logLabel(mk.m, mk.k, decimal)
			}
			return ticks
		}
	}
	return Ticks{}.Ticks(lo, hi)
}

// logLabel writes m·10^k as a decimal or with an exponent.
func logLabel(m, k int, decimal bool) string {
	if decimal {
		return strconv.FormatFloat(float64(m)*math.Pow(10, float64(k)), 'f', max(0, -k), 64)
	}
	e := "10^{" + strconv.Itoa(k) + "}"
	if m == 1 {
		return e
	}
	return strconv.Itoa(m) + "·" + e
}

// formatTick writes v with at most n significant digits.
func formatTick(v float64, n int) string { return strconv.FormatFloat(v, 'g', n, 64) }

// BrokenScale is a linear y scale broken between Lo and Hi: values up to
// Lo fill the lower part of the axis, values from Hi up its top Upper
// fraction, and the values between, which no curve dwells on, cross a gap
// of Cut of the height. A curve far above the others (a private phase that
// diverges before a public one recovers) is so drawn at its values without
// flattening the others. Both parts are linear: one axis, one kind of
// scale, however far the upper part's values lie. Figure marks the break
// on the frame.
type BrokenScale struct {
	Lo, Hi     float64
	Upper, Cut float64
}

// Normalize returns the fractional distance of x from min to max.
func (s BrokenScale) Normalize(min, max, x float64) float64 {
	lower := 1 - s.Upper - s.Cut
	switch {
	case x <= s.Lo:
		return lower * (x - min) / (s.Lo - min)
	case x >= s.Hi:
		return lower + s.Cut + s.Upper*(x-s.Hi)/(max-s.Hi)
	}
	return lower + s.Cut*(x-s.Lo)/(s.Hi-s.Lo)
}

// Gap returns the normalised ends of the gap.
func (s BrokenScale) Gap(min, max float64) (float64, float64) {
	lower := 1 - s.Upper - s.Cut
	return lower, lower + s.Cut
}

// Ticks marks the two parts of the axis of s, the upper one with fewer
// labels as it is shorter.
func (s BrokenScale) Ticks(lo, hi float64) []plot.Tick {
	below := Ticks{}.Ticks(lo, s.Lo)
	above := Ticks{Most: 3}.Ticks(s.Hi, hi)
	return append(below, above...)
}
