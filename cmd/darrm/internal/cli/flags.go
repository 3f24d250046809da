// Package cli is command-line plumbing for cobra programs that knows
// nothing of what the program computes.
//
// It provides flags declared once as tagged struct fields (Registry.Bind),
// with a registry of the flags that mean one thing in every command; flags
// of types that read and print themselves as text; bad input as a typed
// usage error; positional arguments, required flags and commands that only
// group others; help texts kept in files; the build's version; inputs and
// outputs named on the command line (- for the standard streams, files
// written atomically); and running a command tree with every write to
// standard output checked.
//
// darrm's commands (cmd/darrm) are built on it; its exit statuses and the
// mapping of its errors onto them stay with the program.
package cli

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
)

// Flag is a flag's name, typed default and help. Default is an int,
// float64, string, bool, uint64, []float64, []string or []int, or a value
// of a type that reads and prints itself as text (TextValue).
// DefaultText, if set, is what help states as the default in place of
// Default: a default that the command derives from other flags or from its
// input ("1-(1-Delta)^m"), Default being only what the variable holds
// while the flag is not given (SetDefaultText).
type Flag struct {
	Name        string
	Default     any
	Usage       string
	DefaultText string
	// Repeat makes a list of strings a flag given once per item, its
	// value never split at commas: for items that hold commas.
	Repeat bool
}

// TextValue is a type that a flag reads from its text and prints as text:
// a library's enumeration or a parsed value.
type TextValue interface {
	encoding.TextMarshaler
	encoding.TextUnmarshaler
}

// textFlag is a flag of a TextValue; help shows it as a string, and
// FlagErrorFunc reports a bad value in the TextValue's words.
type textFlag struct{ v TextValue }

func (f textFlag) String() string {
	b, _ := f.v.MarshalText()
	return string(b)
}

func (f textFlag) Set(s string) error { return f.v.UnmarshalText([]byte(s)) }

func (f textFlag) Type() string { return "string" }

// ruleError is the rule that a flag's value as given breaks, worded to
// follow it ("is not a number"): FlagErrorFunc says it after the flag's
// name and the value, so that every flag of a number says what it takes
// in the same words, and none in strconv's.
type ruleError string

func (e ruleError) Error() string { return string(e) }

// The rules of the values of the flags of numbers, durations and
// switches.
const (
	notNumber   ruleError = "is not a number (such as 2, 0.5 or 1e-5)"
	notWhole    ruleError = "is not a whole number in base 10 (such as 11)"
	notCount    ruleError = "is not a whole number >= 0 in base 10 (such as 11)"
	notDuration ruleError = "is not a duration (such as 30s, 2m or 1h30m)"
	notBool     ruleError = "is not true or false"
	// The ranges of the numbers a flag holds.
	floatRange ruleError = "is out of range: a number is at most about 1.8e308 in size"
	intRange   ruleError = "is out of range: a whole number is at most 9223372036854775807 in size"
	countRange ruleError = "is out of range: at most 18446744073709551615"
)

// numError is err, strconv's, as the rule broken: its range, or else
// syntax (not what the flag reads).
func numError(err error, syntax, bounds ruleError) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
		return bounds
	}
	return syntax
}

// decimalInt is an int flag read in base 10 only: pflag's own reads a
// leading 0 as octal and 0x as hexadecimal, so that --K 013 would be 11.
type decimalInt int

func (d *decimalInt) Set(s string) error {
	v, err := strconv.ParseInt(s, 10, strconv.IntSize)
	if err != nil {
		return numError(err, notWhole, intRange)
	}
	*d = decimalInt(v)
	return nil
}

func (d *decimalInt) String() string { return strconv.Itoa(int(*d)) }

func (d *decimalInt) Type() string { return "int" }

// decimalUint64 is a uint64 flag read in base 10 only (decimalInt).
type decimalUint64 uint64

func (d *decimalUint64) Set(s string) error {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return numError(err, notCount, countRange)
	}
	*d = decimalUint64(v)
	return nil
}

func (d *decimalUint64) String() string { return strconv.FormatUint(uint64(*d), 10) }

func (d *decimalUint64) Type() string { return "uint" }

// ruled is a flag of pflag's own whose values, or each item of a list of
// them, are checked first by check, so that a bad one is refused by its
// rule (ruleError) rather than in the words of pflag's parser.
type ruled struct {
	pflag.Value
	check func(string) error
	list  bool
}

func (r ruled) Set(s string) error {
	items := []string{s}
	if r.list {
		items = strings.Split(s, ",")
	}
	for i, x := range items {
		if err := r.check(x); err != nil {
			if r.list {
				return ruleError(fmt.Sprintf("has %q, which %v (a list is separated by commas)", x, err))
			}
			return err
		}
		// A zero is read as 0: given as -0 (--step-delta -0), it was
		// kept negative and printed as -0 in JSON and CSV.
		if v, err := strconv.ParseFloat(x, 64); err == nil && v == 0 {
			items[i] = "0"
		}
	}
	return r.Value.Set(strings.Join(items, ","))
}

// checkFloat, checkInt, checkDuration and checkBool are the rules of
// pflag's flags of those types (ruled).
func checkFloat(s string) error {
	_, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return numError(err, notNumber, floatRange)
	}
	return nil
}

func checkInt(s string) error {
	// As pflag's lists of ints read them (strconv.Atoi).
	_, err := strconv.ParseInt(s, 10, strconv.IntSize)
	if err != nil {
		return numError(err, notWhole, intRange)
	}
	return nil
}

func checkDuration(s string) error {
	if _, err := time.ParseDuration(s); err != nil {
		return notDuration
	}
	return nil
}

func checkBool(s string) error {
	if _, err := strconv.ParseBool(s); err != nil {
		return notBool
	}
	return nil
}

// ruledList is a ruled list, whose items it gives as pflag's list does
// (the rules of the flags read them: cmd/darrm/internal/setup.s CheckFlagRules).
type ruledList struct{ ruled }

func (r ruledList) GetSlice() []string { return r.Value.(pflag.SliceValue).GetSlice() }

// rule makes the flag name of fs refuse a value by check (ruled), each
// item of a list by itself.
func rule(fs *pflag.FlagSet, name string, check func(string) error, list bool) {
	fl := fs.Lookup(name)
	r := ruled{fl.Value, check, list}
	fl.Value = r
	if list {
		fl.Value = ruledList{r}
	}
}

// floatsValue is a list of numbers, shown as "floats" in help.
type floatsValue struct {
	pflag.Value
	p *[]float64
}

func (floatsValue) Type() string { return "floats" }

// GetSlice returns the numbers as text, each exactly (pflag's own rounds
// to six decimals: 1e-10 would be 0.000000).
func (f floatsValue) GetSlice() []string {
	out := make([]string, len(*f.p))
	for i, x := range *f.p {
		out[i] = cliout.Float(x)
	}
	return out
}

// stringsValue is a list of strings given once per item (Flag.Repeat),
// shown as "strings" in help, as a list split at commas is.
type stringsValue struct{ pflag.Value }

func (stringsValue) Type() string { return "strings" }

// Add defines f in fs, storing into p, which must point to a value of the
// type of f.Default (or be a *string for a Default that is a TextValue,
// kept as its text). It panics on a mismatch, a programming error.
func (f Flag) Add(fs *pflag.FlagSet, p any) {
	switch p := p.(type) {
	case *int:
		*p = f.Default.(int)
		fs.Var((*decimalInt)(p), f.Name, f.Usage)
	case *float64:
		fs.Float64Var(p, f.Name, f.Default.(float64), f.Usage)
		rule(fs, f.Name, checkFloat, false)
	case *string:
		def, ok := f.Default.(string)
		if m, text := f.Default.(encoding.TextMarshaler); text {
			b, _ := m.MarshalText()
			def, ok = string(b), true
		}
		if !ok {
			panic(fmt.Sprintf("flag --%s: default %T, not a string", f.Name, f.Default))
		}
		fs.StringVar(p, f.Name, def, f.Usage)
	case *bool:
		fs.BoolVar(p, f.Name, f.Default.(bool), f.Usage)
		rule(fs, f.Name, checkBool, false)
	case *time.Duration:
		fs.DurationVar(p, f.Name, f.Default.(time.Duration), f.Usage)
		rule(fs, f.Name, checkDuration, false)
	case *uint64:
		*p = f.Default.(uint64)
		fs.Var((*decimalUint64)(p), f.Name, f.Usage)
	case *[]float64:
		fs.Float64SliceVar(p, f.Name, f.Default.([]float64), f.Usage)
		// Help shows the type as "floats" (as "strings" and "ints") and no
		// "(default [])" for an empty list.
		fl := fs.Lookup(f.Name)
		fl.Value = floatsValue{ruled{fl.Value, checkFloat, true}, p}
		if len(f.Default.([]float64)) == 0 {
			fl.DefValue = ""
		}
	case *[]string:
		if f.Repeat {
			fs.StringArrayVar(p, f.Name, f.Default.([]string), f.Usage)
			fl := fs.Lookup(f.Name)
			fl.Value = stringsValue{fl.Value}
			break
		}
		fs.StringSliceVar(p, f.Name, f.Default.([]string), f.Usage)
	case *[]int:
		fs.IntSliceVar(p, f.Name, f.Default.([]int), f.Usage)
		rule(fs, f.Name, checkInt, true)
		// Help states no "(default [])" for an empty list, which it
		// knows for pflag's own value only.
		if len(f.Default.([]int)) == 0 {
			fs.Lookup(f.Name).DefValue = ""
		}
	case TextValue:
		reflect.ValueOf(p).Elem().Set(reflect.ValueOf(f.Default))
		fs.Var(textFlag{p}, f.Name, f.Usage)
	default:
		panic(fmt.Sprintf("flag --%s: unsupported type %T", f.Name, p))
	}
	if f.DefaultText != "" {
		SetDefaultText(fs, f.DefaultText, f.Name)
	}
}

// defaultTextKey is the annotation of a flag whose help states a default
// in words (SetDefaultText); its value is the words.
const defaultTextKey = "cli_default_text"

// SetDefaultText makes the help of each named flag of fs state text as its
// default, "(default TEXT)" at the end of its line, in place of the value
// the flag's variable holds: for a default that the command takes from its
// input or derives from other flags, where the value itself would be a
// wrong answer to "what does the command use?". In text, %v stands for the
// default the help stated before (a shared default that applies when the
// input states none: "the gamma file's, else %v"). It panics on a name fs
// does not have, a programming error.
func SetDefaultText(fs *pflag.FlagSet, text string, names ...string) {
	for _, name := range names {
		f := fs.Lookup(name)
		if f == nil {
			panic(fmt.Sprintf("SetDefaultText: no flag --%s", name))
		}
		prev, usage := DefaultText(f)
		f.Usage = usage + " (default " + strings.ReplaceAll(text, "%v", prev) + ")"
		f.DefValue = zeroDefValue(f)
		_ = fs.SetAnnotation(name, defaultTextKey, []string{strings.ReplaceAll(text, "%v", prev)})
	}
}

// DefaultText returns the default that f's help states, in words or as
// pflag prints its value ("" for none: a zero value), and f's usage
// without the words SetDefaultText added.
func DefaultText(f *pflag.Flag) (text, usage string) {
	if t, ok := f.Annotations[defaultTextKey]; ok {
		return t[0], strings.TrimSuffix(f.Usage, " (default "+t[0]+")")
	}
	if f.DefValue == zeroDefValue(f) || f.DefValue == "" {
		return "", f.Usage
	}
	return f.DefValue, f.Usage
}

// zeroDefValue is the DefValue for which pflag's help of f states no
// default.
func zeroDefValue(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "float64", "float32", "int", "int64", "uint", "uint64", "count":
		return "0"
	case "stringSlice", "intSlice":
		return "[]"
	case "bool":
		return "false"
	case "duration":
		return "0s"
	}
	return ""
}

// Registry holds the shared flags of a program: flags that name one
// concept in every command that has them, with one default and one help,
// defined in one place.
type Registry struct {
	flags  []Flag
	byName map[string]Flag
}

// NewRegistry returns the registry of flags, which it lists in that order.
// It panics if two flags have the same name.
func NewRegistry(flags []Flag) *Registry {
	r := &Registry{flags: flags, byName: map[string]Flag{}}
	for _, f := range flags {
		if _, dup := r.byName[f.Name]; dup {
			panic(fmt.Sprintf("shared flag --%s is defined twice", f.Name))
		}
		r.byName[f.Name] = f
	}
	return r
}

// Flags lists the shared flags.
func (r *Registry) Flags() []Flag { return r.flags }

// Bind defines a flag in fs for each field of the struct that p points to
// whose tag names one (`flag:"name"`), storing into the field; it descends
// into the fields without a tag that are structs (embedded or exported).
// A shared flag takes its default and help from r, and must have no help
// tag; any other takes its default from the field's value and its help
// from the tag `help:"..."`, which it must have, and the default its help
// states in words from the tag `default:"..."`, if any (Flag.DefaultText). A field tagged
// `required:""` is a flag the command cannot run without (CheckRequired);
// a list of strings tagged `repeat:""` is given once per item
// (Flag.Repeat).
func (r *Registry) Bind(fs *pflag.FlagSet, p any) { r.bind(fs, reflect.ValueOf(p).Elem()) }

func (r *Registry) bind(fs *pflag.FlagSet, v reflect.Value) {
	for i := range v.NumField() {
		field, val := v.Type().Field(i), v.Field(i)
		name, ok := field.Tag.Lookup("flag")
		if !ok {
			if val.Kind() == reflect.Struct && (field.Anonymous || field.IsExported()) {
				r.bind(fs, val)
			}
			continue
		}
		f, shared := r.byName[name]
		if help, ok := field.Tag.Lookup("help"); shared && ok || !shared && !ok {
			panic(fmt.Sprintf("flag --%s: a shared flag has no help tag, any other needs one (help %q)", name, help))
		} else if !shared {
			_, repeat := field.Tag.Lookup("repeat")
			f = Flag{Name: name, Default: val.Interface(), Usage: help, DefaultText: field.Tag.Get("default"), Repeat: repeat}
		}
		f.Add(fs, val.Addr().Interface())
		if _, ok := field.Tag.Lookup("required"); ok {
			rank := 0
			fs.VisitAll(func(f *pflag.Flag) {
				if _, ok := f.Annotations[requiredKey]; ok {
					rank++
				}
			})
			fs.SetAnnotation(name, requiredKey, []string{strconv.Itoa(rank)})
		}
	}
}

// requiredKey is the annotation of a flag that Bind declared required; its
// value is the flag's rank among them, in the order declared.
const requiredKey = "cli_required"

// CheckRequired reports, as RequireFlags does, the first of the flags of
// cmd declared required (Bind) that was not given, in the order they were
// declared. Make it the root command's PersistentPreRunE, so that every
// command checks its required flags before it runs.
func CheckRequired(cmd *cobra.Command, _ []string) error {
	byRank := map[int]string{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if r, ok := f.Annotations[requiredKey]; ok {
			i, _ := strconv.Atoi(r[0])
			byRank[i] = f.Name
		}
	})
	names := make([]string, len(byRank))
	for i, name := range byRank {
		names[i] = name
	}
	return RequireFlags(cmd, names...)
}

// Given returns a pointer to v, the value of the flag name of fs, if the
// flag was given on the command line, and nil if it took its default:
// how a library tells a value stated from one left to its default.
func Given[T any](fs *pflag.FlagSet, name string, v T) *T {
	if fs.Changed(name) {
		return &v
	}
	return nil
}

// FlagErrorFunc makes a flag that cannot be parsed a usage error; a value
// that a TextValue refused is reported as "--flag: " and its reason, and
// an unknown flag with the flags the user may have meant. A command that
// holds others and was given a word before the bad flag that it does not
// take as an argument reports the word, as its Args does, or as an
// unknown command (darrm solvee --K 11): that is what went wrong.
// Set it on the root command (cobra.Command.SetFlagErrorFunc).
func FlagErrorFunc(cmd *cobra.Command, err error) error {
	if args := cmd.Flags().Args(); cmd.HasSubCommands() && len(args) > 0 {
		if cmd.Args == nil {
			return UnknownCommand(cmd, args[0])
		}
		if err := cmd.Args(cmd, args); err != nil {
			return AsUsage(err)
		}
	}
	var ne *pflag.NotExistError
	if errors.As(err, &ne) {
		if s := ne.GetSpecifiedShortnames(); s != "" {
			return unknownFlag(cmd, ne.GetSpecifiedName(), true)
		}
		return unknownFlag(cmd, ne.GetSpecifiedName(), false)
	}
	return FlagValueError(err)
}

// FlagValueError returns err, a flag set's error on parsing, as a usage
// error; a value that a flag refused it says as "--flag: " and why: a
// number's (or a duration's or a switch's) as the value given and the rule
// it breaks (--budget-eps: "abc" is not a number ...), a TextValue's in
// its own words.
func FlagValueError(err error) error {
	var ive *pflag.InvalidValueError
	if errors.As(err, &ive) {
		var rule ruleError
		if errors.As(ive, &rule) {
			return Usagef("--%s: %q %v", ive.GetFlag().Name, ive.GetValue(), rule)
		}
		if _, ok := ive.GetFlag().Value.(textFlag); ok {
			return Usagef("--%s: %v", ive.GetFlag().Name, ive.Unwrap())
		}
	}
	return &UsageError{err}
}

// RequireFlags reports, as a usage error, the first of names that was not
// given on cmd's command line, with its help.
func RequireFlags(cmd *cobra.Command, names ...string) error {
	for _, name := range names {
		if !cmd.Flags().Changed(name) {
			f := cmd.Flags().Lookup(name)
			return Usagef("--%s is required: %s", name, f.Usage)
		}
	}
	return nil
}

// FieldFlags returns the flags that the fields of the struct v names by
// their tags, in order: `flag:"name"`, or `flag:"name,more"` for a field
// that several flags give together; it descends into embedded structs,
// and leaves out the fields keep refuses (nil: none).
func FieldFlags(v any, keep func(reflect.StructTag) bool) []string {
	var out []string
	EachFlagField(reflect.ValueOf(v), keep, func(names []string, _ reflect.StructTag, _ reflect.Value) { out = append(out, names...) })
	return out
}

// FieldValues returns the values of the fields that FieldFlags names, by
// their first flag.
func FieldValues(v any, keep func(reflect.StructTag) bool) map[string]any {
	out := map[string]any{}
	EachFlagField(reflect.ValueOf(v), keep, func(names []string, _ reflect.StructTag, f reflect.Value) { out[names[0]] = f.Interface() })
	return out
}

// SetFields sets the fields of the struct p points to that FieldFlags
// names: to values[name] when one of its flags is there, else, when its
// first flag was given in fs, to the flag's value read back from its text
// (a TextValue, a list of numbers, or any other type Flag.Add binds: a
// number, an int, a string, a switch). A field of another type takes its
// value from values alone.
func SetFields(fs *pflag.FlagSet, p any, keep func(reflect.StructTag) bool, values map[string]any) {
	EachFlagField(reflect.ValueOf(p).Elem(), keep, func(names []string, _ reflect.StructTag, f reflect.Value) {
		for _, n := range names {
			if v, ok := values[n]; ok {
				f.Set(reflect.ValueOf(v))
				return
			}
		}
		fl := fs.Lookup(names[0])
		if fl == nil || !fl.Changed {
			return
		}
		switch p := f.Addr().Interface().(type) {
		case encoding.TextUnmarshaler:
			_ = p.UnmarshalText([]byte(fl.Value.String())) // the flag read it
		case *[]float64:
			*p = nil
			for _, t := range fl.Value.(interface{ GetSlice() []string }).GetSlice() {
				x, _ := strconv.ParseFloat(t, 64) // the flag read it, and prints it exactly
				*p = append(*p, x)
			}
		case *int, *float64, *string, *bool, *time.Duration, *uint64, *[]string, *[]int:
			// Any other type the binder takes (Flag.Add): the flag's text
			// read again into the field by a flag of the field's own, which
			// reads it as the flag did; a flag of another type (a list for
			// one number) sets nothing.
			own := pflag.NewFlagSet(names[0], pflag.ContinueOnError)
			Flag{Name: names[0], Default: f.Interface()}.Add(own, f.Addr().Interface())
			if own.Lookup(names[0]).Value.Type() != fl.Value.Type() {
				return
			}
			texts := []string{fl.Value.String()}
			if list, ok := fl.Value.(interface{ GetSlice() []string }); ok {
				texts = list.GetSlice()
			}
			for _, t := range texts {
				_ = own.Set(names[0], t) // the flag read it
			}
		}
	})
}

// EachFlagField calls fn with the flags of each field of the struct v
// that names some (FieldFlags) and keep keeps, its tag and the field, in
// order, descending into an embedded struct without flags, whose fields
// keep judges: the one walk of the settings a struct's tags name.
func EachFlagField(v reflect.Value, keep func(reflect.StructTag) bool, fn func(names []string, tag reflect.StructTag, f reflect.Value)) {
	for i := range v.NumField() {
		field := v.Type().Field(i)
		switch tag, ok := field.Tag.Lookup("flag"); {
		case !ok && field.Anonymous && field.Type.Kind() == reflect.Struct:
			EachFlagField(v.Field(i), keep, fn)
		case !ok || keep != nil && !keep(field.Tag):
		default:
			fn(strings.Split(tag, ","), field.Tag, v.Field(i))
		}
	}
}
