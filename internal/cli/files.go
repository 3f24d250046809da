package cli

import (
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/darrm/darrm/internal/atomicfile"
)

// Std is the name that stands for standard input or output.
const Std = "-"

// OpenInput opens the named file, or stdin for Std. A file that cannot be
// opened, or a directory, is a usage error.
func OpenInput(stdin io.Reader, name string) (io.ReadCloser, error) {
	if name == Std {
		return io.NopCloser(stdin), nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, &UsageError{err}
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, Usagef("%s is a directory, not a file", name)
	}
	return f, nil
}

// InputArg is the input that a command's optional argument names: the
// first argument, or Std when there is none (MaxArgs(1) checks there is
// no more).
func InputArg(args []string) string {
	if len(args) == 0 {
		return Std
	}
	return args[0]
}

// InputSize returns the size in bytes of the input name, or -1 for
// standard input and for anything but a regular file (a pipe, a device),
// whose size is not known in advance.
func InputSize(name string) int64 {
	if name == Std {
		return -1
	}
	st, err := os.Stat(name)
	if err != nil || !st.Mode().IsRegular() {
		return -1
	}
	return st.Size()
}

// InputName names an input for people: "standard input" for Std.
func InputName(name string) string {
	if name == Std {
		return "standard input"
	}
	return name
}

// IsStdout reports whether an output path stands for standard output: Std
// or empty.
func IsStdout(path string) bool { return path == "" || path == Std }

// OutputName names an output for people: "standard output" for IsStdout.
func OutputName(path string) string {
	if IsStdout(path) {
		return "standard output"
	}
	return path
}

// CheckOutPath refuses, as a usage error naming the flag, an output path
// that cannot be written as a file (a directory, a path that cannot be
// looked at), before any work is done. Standard output passes.
func CheckOutPath(flag, path string) error {
	if IsStdout(path) {
		return nil
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return Usagef("--%s %s: %v", flag, path, err)
	case st.IsDir():
		return Usagef("--%s %s is a directory: give a file name", flag, path)
	}
	return nil
}

// SameFile reports whether the files named a and b exist and are the same
// file; standard input and output are no file.
func SameFile(a, b string) bool {
	if a == Std || IsStdout(b) {
		return false
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// WriteOutput calls write on stdout when path stands for standard output
// (IsStdout), and otherwise on a file that replaces path atomically when
// write succeeds (internal/atomicfile): a failed write leaves no file.
func WriteOutput(path string, stdout io.Writer, write func(io.Writer) error) error {
	if IsStdout(path) {
		return write(stdout)
	}
	return atomicfile.Write(path, 0o644, func(f *os.File) error { return write(f) })
}

// ReadJSON decodes each named input (OpenInput) into a T; one that does not
// decode is a usage error saying it is not what (e.g. "a JSON result of
// darrm").
func ReadJSON[T any](stdin io.Reader, names []string, what string) ([]T, error) {
	out := make([]T, len(names))
	for i, name := range names {
		r, err := OpenInput(stdin, name)
		if err != nil {
			return nil, err
		}
		err = json.NewDecoder(r).Decode(&out[i])
		r.Close()
		if err != nil {
			return nil, Usagef("%s: not %s: %v", InputName(name), what, err)
		}
	}
	return out, nil
}
