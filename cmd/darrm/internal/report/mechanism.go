package report

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/votefile"
)

// settings are the settings of a mechanism of the GNMax family or of
// LNMax that the documents echo, nil for those it does not have: its
// JSON's, as a label file's header states them.
type settings struct {
	Threshold *float64  `json:"threshold"`
	Sigma1    *float64  `json:"sigma1"`
	Sigma2    *float64  `json:"sigma2"`
	Scale     *float64  `json:"laplace_scale"`
	Levels    []float64 `json:"levels"`
	Kappa     *float64  `json:"kappa"`
	GiveUp    *float64  `json:"give_up"`
}

// settingsOf returns m's settings: the threshold step's and sigma2 of
// Confident-GNMax, sigma2 of GNMax (of two classes too, its calibrated
// sigma), LNMax's scale, progressive GNMax's levels, kappa, give-up and
// threshold step; none of the others. The numbers of a built
// mechanism are finite, so its JSON is never an error.
func settingsOf(m ensemble.Mechanism) settings {
	var s settings
	if raw, err := json.Marshal(m); err == nil {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// valueOf returns *p, or the zero value when p is nil.
func valueOf[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// number is a setting of a mechanism that is a number, by its flag, with
// the way a table rounds it.
type number struct {
	flag  string
	v     float64
	round rounding
}

// rounding is the way a table rounds a setting shorter, as the tag
// `round` of its field says (ensemble.Mechanism): toward more noise, so
// that the value printed, given again, is at least as private; exact
// without the tag.
type rounding int8

const (
	exact rounding = iota
	roundUp
	roundDown
)

// roundingOf returns the rounding of a field of tag.
func roundingOf(tag reflect.StructTag) rounding {
	switch tag.Get("round") {
	case "up":
		return roundUp
	case "down":
		return roundDown
	}
	return exact
}

// flagRounding returns the rounding of m's setting taken by flag.
func flagRounding(m ensemble.Mechanism, flag string) rounding {
	r := exact
	cli.EachFlagField(reflect.ValueOf(m), nil, func(names []string, tag reflect.StructTag, _ reflect.Value) {
		if names[0] == flag {
			r = roundingOf(tag)
		}
	})
	return r
}

// numbers returns the settings of m on votes of kind in that are numbers
// (float64 or int), in the order of its fields, each by its first flag (its
// fields' tags, ensemble.Mechanism): what a plan says of a mechanism,
// whatever it is.
func numbers(m ensemble.Mechanism, in votefile.Input) []number {
	var out []number
	onVotes := func(tag reflect.StructTag) bool {
		kind, only := tag.Lookup("votes")
		return !only || strings.HasPrefix(in.String(), kind+" ")
	}
	cli.EachFlagField(reflect.ValueOf(m), onVotes, func(names []string, tag reflect.StructTag, v reflect.Value) {
		switch {
		case v.Kind() == reflect.Float64:
			out = append(out, number{names[0], v.Float(), roundingOf(tag)})
		case v.Type() == reflect.TypeFor[int](): // a named int (a noise) is no number
			out = append(out, number{names[0], float64(v.Int()), roundingOf(tag)})
		}
	})
	return out
}

// hasDelta reports whether the settings ns hold a per-query delta.
func hasDelta(ns []number) bool {
	return slices.ContainsFunc(ns, func(n number) bool { return n.flag == "delta" })
}
