package main

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/figure"
)

// sharedFlag is a flag that names one concept in every command that has it:
// its name, default and help are defined here once (and listed in the
// README's table of defaults); TestSharedFlags checks that no command
// redefines them.
type sharedFlag struct {
	name  string
	def   any // the typed default: a number, string, bool, slice, or a library type that reads text
	usage string
}

// The shared flags. Defaults that are numbers come from the library, where
// the concept is defined.
var (
	flagK      = sharedFlag{"K", 0, "number of teachers K (odd)"}
	flagM      = sharedFlag{"m", 3.0, "privacy allowance: each release is (m·eps, delta)-DP, 1 <= m <= K (default: the thesis' main setting)"}
	flagEps    = sharedFlag{"eps", 0.1, "eps of each teacher's (eps, Delta)-DP guarantee"}
	flagDelta  = sharedFlag{"Delta", 1e-5, "Delta of each teacher's (eps, Delta)-DP guarantee"}
	flagTarget = sharedFlag{"delta", 0.0, "delta of each release's (m·eps, delta)-DP guarantee (default 1-(1-Delta)^m)"}

	flagFormat   = sharedFlag{"format", cliout.Table, "output format: table, json or csv"}
	flagWorkers  = sharedFlag{"workers", 0, "goroutines for parallel work (0: all cores)"}
	flagSeed     = sharedFlag{"seed", uint64(0), "seed of a reproducible experiment: its outputs are marked NOT FOR RELEASE (default: randomness from crypto/rand)"}
	flagCacheDir = sharedFlag{"cache-dir", "", "gamma cache directory (default $" + cache.EnvDir + ", else $XDG_CACHE_HOME/darrm or ~/.cache/darrm)"}
	flagNoCache  = sharedFlag{"no-cache", false, "neither read nor write the gamma cache"}
	flagPrior    = sharedFlag{"prior", gamma.UniformPrior(), "prior on the teachers' accuracy for gamma_opt: uniform (mean 0.75), tp (mean 0.85), a mean in (0.5, 1], or K comma-separated means"}
	flagPlot     = sharedFlag{"plot", "", "also draw the figure to this .png or .svg file"}

	flagComposition   = sharedFlag{"composition", accountant.General, "composition theorem: simple, general or optimal"}
	flagDeltaPrime    = sharedFlag{"delta-prime", accountant.DefaultDeltaPrime, "slack delta' in (0, 1) of general and optimal composition"}
	flagRRComposition = sharedFlag{"rr-composition", rrMethod{auto: true}, "RR: composition by which the K teachers' majority is (tau·eps, lambda)-DP in Lemma B.1.1: simple, general, optimal, or auto (general when Delta > 0, else simple)"}
	flagRRDeltaPrime  = sharedFlag{"rr-delta-prime", accountant.DefaultDeltaPrime, "RR: slack delta' of the composition giving tau and lambda"}
	flagGNMaxSearch   = sharedFlag{"gnmax-search", accountant.GNMaxGrid, "GNMax: choice of the Renyi order for sigma: grid (the paper's search, App. B.4.1) or exact"}
	flagConversion    = sharedFlag{"conversion", accountant.PaperConversion, "RDP to (eps, delta) conversion: paper or improved"}

	flagSteps       = sharedFlag{"steps", 0, "number of composed steps (>= 1)"}
	flagStepEps     = sharedFlag{"step-eps", 0.0, "eps of one composed step (> 0)"}
	flagStepDelta   = sharedFlag{"step-delta", 0.0, "delta of one composed step, in [0, 1)"}
	flagBudgetEps   = sharedFlag{"budget-eps", 0.0, "total eps budget (> 0)"}
	flagLedger      = sharedFlag{"ledger", "", "privacy ledger file (darrm ledger init): the release is charged to its budget, and recorded before the labels leave"}
	flagBudgetDelta = sharedFlag{"budget-delta", 0.0, "total delta budget, in [0, 1)"}
	flagTargetEps   = sharedFlag{"target-eps", []float64(nil), "eps of the (eps, delta)-DP guarantee to meet (> 0); commands that tabulate accept several, comma-separated"}
	flagTargetDelta = sharedFlag{"target-delta", 0.0, "delta of the (eps, delta)-DP guarantee to meet or report, in (0, 1)"}
	flagSigma       = sharedFlag{"sigma", 0.0, "Gaussian noise: standard deviation in units of the sensitivity (clipping norm), > 0"}
)

// sharedFlags lists every shared flag, for TestSharedFlags and the README.
var sharedFlags = []sharedFlag{
	flagK, flagM, flagEps, flagDelta, flagTarget, flagFormat, flagWorkers, flagSeed, flagCacheDir, flagNoCache,
	flagPrior, flagPlot, flagComposition, flagDeltaPrime, flagRRComposition, flagRRDeltaPrime, flagGNMaxSearch,
	flagConversion, flagSteps, flagStepEps, flagStepDelta, flagBudgetEps, flagBudgetDelta, flagTargetEps,
	flagTargetDelta, flagSigma, flagLedger,
}

// sharedByName finds a shared flag by its name.
var sharedByName = func() map[string]sharedFlag {
	m := map[string]sharedFlag{}
	for _, s := range sharedFlags {
		m[s.name] = s
	}
	return m
}()

// bind defines a flag of cmd for each field of the struct that p points to
// whose tag names one (`flag:"name"`), storing into the field; it descends
// into the fields without a tag that are structs. A shared flag takes its
// default and help from the registry above; any other takes its default
// from the field's value and its help from the tag `help:"..."`.
func bind(cmd *cobra.Command, p any) { bindStruct(cmd.Flags(), reflect.ValueOf(p).Elem()) }

func bindStruct(fs *pflag.FlagSet, v reflect.Value) {
	for i := range v.NumField() {
		field, val := v.Type().Field(i), v.Field(i)
		name, ok := field.Tag.Lookup("flag")
		if !ok {
			if val.Kind() == reflect.Struct && (field.Anonymous || field.IsExported()) {
				bindStruct(fs, val)
			}
			continue
		}
		s, shared := sharedByName[name]
		if help, ok := field.Tag.Lookup("help"); shared && ok || !shared && !ok {
			panic(fmt.Sprintf("flag --%s: a shared flag has no help tag, any other needs one (help %q)", name, help))
		} else if !shared {
			s = sharedFlag{name, val.Interface(), help}
		}
		s.add(fs, val.Addr().Interface())
	}
}

// textValue is what a flag of a library type reads: its text
// (encoding.TextMarshaler and TextUnmarshaler).
type textValue interface {
	encoding.TextMarshaler
	encoding.TextUnmarshaler
}

// textFlag is a flag whose value a library type parses; help shows it as a
// string, and a bad value is reported by newRootCmd's flag error function.
type textFlag struct{ v textValue }

func (f textFlag) String() string {
	b, _ := f.v.MarshalText()
	return string(b)
}

func (f textFlag) Set(s string) error { return f.v.UnmarshalText([]byte(s)) }

func (f textFlag) Type() string { return "string" }

// add defines s in fs, storing into p, which must match the type of s.def
// (or be a *string for a flag of a type that reads text).
func (s sharedFlag) add(fs *pflag.FlagSet, p any) {
	switch p := p.(type) {
	case *int:
		fs.IntVar(p, s.name, s.def.(int), s.usage)
	case *float64:
		fs.Float64Var(p, s.name, s.def.(float64), s.usage)
	case *string:
		def, ok := s.def.(string)
		if m, text := s.def.(encoding.TextMarshaler); text {
			b, _ := m.MarshalText()
			def, ok = string(b), true
		}
		if !ok {
			panic(fmt.Sprintf("flag --%s: default %T, not a string", s.name, s.def))
		}
		fs.StringVar(p, s.name, def, s.usage)
	case *bool:
		fs.BoolVar(p, s.name, s.def.(bool), s.usage)
	case *uint64:
		fs.Uint64Var(p, s.name, s.def.(uint64), s.usage)
	case *[]float64:
		fs.Float64SliceVar(p, s.name, s.def.([]float64), s.usage)
	case *[]string:
		fs.StringSliceVar(p, s.name, s.def.([]string), s.usage)
	case *[]int:
		fs.IntSliceVar(p, s.name, s.def.([]int), s.usage)
	case textValue:
		reflect.ValueOf(p).Elem().Set(reflect.ValueOf(s.def))
		fs.Var(textFlag{p}, s.name, s.usage)
	default:
		panic(fmt.Sprintf("shared flag --%s: unsupported type %T", s.name, p))
	}
}

// aliases keeps earlier flag spellings working in cmd: each key is read as
// its value. Commands list them in their help.
func aliases(cmd *cobra.Command, old map[string]string) {
	cmd.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if n, ok := old[name]; ok {
			return pflag.NormalizedName(n)
		}
		return pflag.NormalizedName(name)
	})
}

// flagError makes a library's parameter error (accountant.ParamError,
// constraints.ParamError) a usage error that names the flag, the value and
// the rule; flags maps the library's parameter names to flags where they
// differ ("--" + name otherwise). Other errors are returned as they are.
func flagError(err error, flags map[string]string) error {
	if msg, ok := paramMessage(err, flags); ok {
		return usageErrorf("%s", msg)
	}
	return err
}

// paramMessage says a library's parameter error in terms of flags, for
// flagError.
func paramMessage(err error, flags map[string]string) (string, bool) {
	var name, rule string
	var value any
	var ae *accountant.ParamError
	var ce *constraints.ParamError
	switch {
	case errors.As(err, &ae):
		name, value, rule = ae.Name, ae.Value, ae.Rule
	case errors.As(err, &ce):
		name, value, rule = ce.Name, ce.Value, ce.Rule
	default:
		return "", false
	}
	flag, ok := flags[name]
	if !ok {
		flag = "--" + name
	}
	return fmt.Sprintf("%s = %v: %s", flag, value, rule), true
}

// checkPlot refuses a --plot file that cannot be drawn, before any work;
// "" is no plot.
func checkPlot(path string) error {
	if path == "" {
		return nil
	}
	return asUsage(figure.CheckPath(path))
}

// formatFlag is --format, parsed when the command runs (solve and separate
// use it; the other commands bind a cliout.Format).
type formatFlag struct{ s string }

func (f *formatFlag) add(cmd *cobra.Command) { flagFormat.add(cmd.Flags(), &f.s) }

func (f *formatFlag) parse() (cliout.Format, error) {
	v, err := cliout.ParseFormat(f.s)
	if err != nil {
		return "", usageErrorf("--format: %v", err)
	}
	return v, nil
}

// workersFlag is --workers, checked when the command runs (solve and
// separate use it).
type workersFlag struct{ n int }

func (f *workersFlag) add(cmd *cobra.Command) { flagWorkers.add(cmd.Flags(), &f.n) }

func (f *workersFlag) get() (int, error) { return f.n, checkWorkers(f.n) }

// checkWorkers checks --workers.
func checkWorkers(n int) error {
	if n < 0 {
		return usageErrorf("--workers = %d: must be >= 0 (0: all cores)", n)
	}
	return nil
}

// compositionFlags are --composition and --delta-prime.
type compositionFlags struct {
	Method     accountant.Method `flag:"composition"`
	DeltaPrime float64           `flag:"delta-prime"`
}

// checkDeltaPrime checks --delta-prime, which even simple composition
// refuses outside (0, 1) rather than ignore it.
func (c *compositionFlags) checkDeltaPrime() error {
	if !(c.DeltaPrime > 0 && c.DeltaPrime < 1) {
		return usageErrorf("--delta-prime = %v: must be in (0, 1)", c.DeltaPrime)
	}
	return nil
}

// composition checks that the flags required are given and --delta-prime,
// and returns the composition and its slack.
func (c *compositionFlags) composition(cmd *cobra.Command, required ...string) (accountant.Method, float64, error) {
	if err := requireFlags(cmd, required...); err != nil {
		return 0, 0, err
	}
	return c.Method, c.DeltaPrime, c.checkDeltaPrime()
}

// rrMethod is --rr-composition: a composition method, or auto, the
// accountant's choice for the teachers' Delta (accountant.RRComposition).
type rrMethod struct {
	method accountant.Method
	auto   bool
}

func (r *rrMethod) UnmarshalText(b []byte) error {
	if string(b) == "auto" {
		*r = rrMethod{auto: true}
		return nil
	}
	var m accountant.Method
	if err := m.UnmarshalText(b); err != nil {
		return fmt.Errorf("%w (or auto)", err)
	}
	*r = rrMethod{method: m}
	return nil
}

func (r rrMethod) MarshalText() ([]byte, error) {
	if r.auto {
		return []byte("auto"), nil
	}
	return r.method.MarshalText()
}

// of returns the method for teachers with the given Delta.
func (r rrMethod) of(teacherDelta float64) accountant.Method {
	if r.auto {
		return accountant.RRComposition(teacherDelta)
	}
	return r.method
}

// rrComposition resolves --rr-composition given as a string, for teachers
// with the given Delta.
func rrComposition(s string, teacherDelta float64) (accountant.Method, error) {
	var r rrMethod
	if err := r.UnmarshalText([]byte(s)); err != nil {
		return 0, usageErrorf("--rr-composition: %v", err)
	}
	return r.of(teacherDelta), nil
}

// listNames joins names for help texts and errors.
func listNames(names []string) string { return strings.Join(names, ", ") }
