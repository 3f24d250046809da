package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/ctxio"
)

// UsageError is bad input from the user: a flag, an argument or a file
// they named. Programs give it an exit status of its own.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// BadInput reports that the error is the caller's input, not a failure.
func (e *UsageError) BadInput() bool { return true }

// Usagef reports bad input from the user.
func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// AsUsage makes err, if not nil, bad input.
func AsUsage(err error) error {
	if err == nil || IsUsage(err) {
		return err
	}
	return &UsageError{err}
}

// IsUsage reports whether err is, or wraps, a UsageError.
func IsUsage(err error) bool {
	var ue *UsageError
	return errors.As(err, &ue)
}

// NoArgs refuses positional arguments as bad input, naming an unknown
// subcommand as such.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.HasSubCommands() {
			return UnknownCommand(cmd, args[0])
		}
		return Usagef("%s takes no arguments, got %q (usage: %s)", cmd.CommandPath(), args, cmd.UseLine())
	}
	return nil
}

// MaxArgs allows at most n positional arguments; more is a usage error
// that shows the command's usage line, which names them (a file meant for
// an output flag is a common cause).
func MaxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return Usagef("%s takes at most %d argument(s), got %d: %q (usage: %s)", cmd.CommandPath(), n, len(args), args, cmd.UseLine())
		}
		return nil
	}
}

// Group makes cmd a command that only holds children: without one it
// prints its help, and an unknown one is a usage error. It returns cmd.
func Group(cmd *cobra.Command, children ...*cobra.Command) *cobra.Command {
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return UnknownCommand(cmd, args[0])
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	cmd.AddCommand(children...)
	return cmd
}

// ReadHelp reads the help file name of fsys, which holds a command's help
// as it is printed: the long description, then a line "Examples:" and the
// examples.
func ReadHelp(fsys fs.FS, name string) (long, example string, err error) {
	b, err := fs.ReadFile(fsys, name)
	text := "\n\n" + strings.TrimSuffix(string(b), "\n")
	long, example, _ = strings.Cut(text, "\n\nExamples:\n")
	return strings.TrimPrefix(long, "\n\n"), example, err
}

// WithHelp sets cmd's long description and examples from the help file
// name of fsys (ReadHelp) and returns cmd. A missing file is a programming
// error, and panics: help files are embedded, so building the command
// tree in a test finds it.
func WithHelp(fsys fs.FS, name string, cmd *cobra.Command) *cobra.Command {
	var err error
	if cmd.Long, cmd.Example, err = ReadHelp(fsys, name); err != nil {
		panic(err)
	}
	return cmd
}

// Version describes the running build: the main module's version, the
// commit of a build from a checkout (marked when the checkout had
// changes), and the Go version.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown version)"
	}
	v := info.Main.Version
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " (commit " + rev
		if modified == "true" {
			v += ", modified"
		}
		v += ")"
	}
	return v + " " + info.GoVersion
}

// checkedWriter remembers the first write error, so that output that could
// not be written (a full disk, a closed pipe) fails the command even where
// a formatter does not check every write.
type checkedWriter struct {
	w   io.Writer
	err error
}

// Unwrap returns the underlying writer.
func (c *checkedWriter) Unwrap() io.Writer { return c.w }

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// Execute runs the command tree of root with args and the given streams,
// and returns the exit status that explain gives its error (explain(nil)
// when there is none). A write to stdout that failed fails the run, even
// if the command did not check it. An error is printed on stderr after
// the root's name, as explain says it, unless it is a *SilentError; once
// ctx is done (an interrupt), it is reported as an interruption, with the
// status explain gives ctx's error. The message is wrapped to
// cliout.Width columns at spaces, its continuation lines indented
// (printError): every command's errors fit a terminal, whatever their
// length. Reads of stdin and writes to stdout return when ctx is done,
// or when the command ends its own context (Stop), even while they block
// (no data on a pipe, a reader that has stalled): ctxio.
func Execute(ctx context.Context, root *cobra.Command, args []string, stdin io.Reader, stdout, stderr io.Writer, explain func(error) (int, string)) int {
	own, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	in, w := ctxio.NewReader(own, stdin), ctxio.NewWriter(own, stdout)
	defer in.Close()
	defer w.Close()
	out := &checkedWriter{w: w}
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(stderr)
	err := root.ExecuteContext(context.WithValue(own, stopKey{}, stop))
	if err == nil && out.err != nil {
		err = fmt.Errorf("write standard output: %w", out.err)
	}
	if ctx.Err() == nil && errors.Is(err, context.Canceled) {
		err = &stoppedError{err: err, cause: context.Cause(own)}
	}
	code, msg := explain(err)
	var silent *SilentError
	switch {
	case err == nil, errors.As(err, &silent):
	case ctx.Err() != nil:
		printError(stderr, root.Name()+": interrupted: "+msg)
		code, _ = explain(ctx.Err())
	default:
		printError(stderr, root.Name()+": "+msg)
	}
	return code
}

// stopKey holds, in the context of a command that Execute runs, the
// function that ends it (Stop).
type stopKey struct{}

// Stop ends the context of cmd, run by Execute, for a reason of its own,
// cause (a privacy ledger whose server went away): its work stops as on
// an interrupt, waits on standard input and output included, but its
// error is its own, not an interrupt's.
func Stop(cmd *cobra.Command, cause error) {
	if stop, ok := cmd.Context().Value(stopKey{}).(context.CancelCauseFunc); ok {
		stop(cause)
	}
}

// stoppedError is a command that ended on its context canceled with no
// signal: by the command itself (Stop, whose cause is the error), or by a
// cancellation of its own work. It is never an interrupt, which only a
// signal makes.
type stoppedError struct {
	err   error // the command's, which wraps context.Canceled
	cause error // Stop's cause; nil or context.Canceled when there was none
}

// Error says the command's error with its cancellation said as Stop's
// cause.
func (e *stoppedError) Error() string {
	msg := e.err.Error()
	switch {
	case !e.stopped() || strings.Contains(msg, e.cause.Error()):
		return msg
	case strings.Contains(msg, context.Canceled.Error()):
		return strings.Replace(msg, context.Canceled.Error(), e.cause.Error(), 1)
	}
	return msg + ": " + e.cause.Error()
}

// Unwrap returns Stop's cause, and not the cancellation, which would say
// an interrupt.
func (e *stoppedError) Unwrap() error {
	if e.stopped() {
		return e.cause
	}
	return nil
}

func (e *stoppedError) stopped() bool {
	return e.cause != nil && !errors.Is(e.cause, context.Canceled)
}

// printError writes msg on w, each of its lines wrapped to cliout.Width
// columns (cliout.Wrap: at spaces, or after the slashes of a long path;
// continuation lines indented two spaces), so that an error of any length
// fits a terminal without cutting a word. The words stay as they are: a
// search for a phrase in the output finds it once the line breaks are
// joined. Control characters within a line are escaped (cliout.Escape):
// an error may quote a file of others (a ledger a team shares), whose
// escape sequences would otherwise rewrite the terminal. A write error is
// dropped: stderr is the last place to say it.
func printError(w io.Writer, msg string) {
	lines := strings.Split(strings.TrimSuffix(msg, "\n"), "\n")
	for i, l := range lines {
		lines[i] = cliout.Escape(l)
	}
	_ = cliout.WriteWrapped(w, strings.Join(lines, "\n"))
}

// FlagUsages is the help of fs's flags as pflag lays it out, one line per
// flag, indented two spaces rather than pflag's six (which leave room for
// a shorthand that only --help and --version have): four columns more for
// what each flag means, in a line of help that must fit a terminal. A
// flag with a shorthand (-h, --help) keeps it, its meaning in the same
// column as the others'; where that column cannot move (a shorthand flag
// is the longest), the layout is pflag's.
func FlagUsages(fs *pflag.FlagSet) string {
	lines := strings.Split(strings.TrimRight(fs.FlagUsages(), "\n"), "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "      --"):
			lines[i] = l[4:]
		case strings.HasPrefix(l, "  -"):
			pad := strings.Index(l[2:], "       ") // the name's padding: 3 spaces at least stay
			if pad < 0 {
				return fs.FlagUsages()
			}
			lines[i] = l[:2+pad] + l[2+pad+4:]
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// UsageTemplate is cobra's default usage template with each list of flags
// laid out by FlagUsages (template function flagUsages), so that a line
// of help has four columns more for what a flag means.
const UsageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Available Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{flagUsages .LocalFlags | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{flagUsages .InheritedFlags | trimTrailingWhitespaces}}{{end}}{{if .HasHelpSubCommands}}

Additional help topics:{{range .Commands}}{{if .IsAdditionalHelpTopicCommand}}
  {{rpad .CommandPath .CommandPathPadding}} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

func init() { cobra.AddTemplateFunc("flagUsages", FlagUsages) }
