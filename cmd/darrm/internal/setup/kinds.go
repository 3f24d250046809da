package setup

import (
	"bufio"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/internal/peek"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/votefile"
)

// FileKind is a kind of file that darrm writes and its commands read,
// recognised by its start (sniff), so that a file given where another
// kind is read is refused as what it is, with what reads it, rather than
// with the first thing its parser trips on.
type FileKind struct {
	Name string // e.g. "a gamma (darrm solve's output)"
	Use  string // what reads it, as advice; "" for none
}

// The kinds of file that darrm writes, as sniff recognises them.
var (
	KindVotes  = &FileKind{"a vote file (its first line is the votes' metadata header)", "give it as VOTES to darrm aggregate or darrm account pate, or as --votes to darrm ledger init"}
	KindLabels = &FileKind{"a label file (darrm aggregate's output)", "give it as --labels to darrm account pate"}
	KindLedger = &FileKind{"a privacy ledger (darrm ledger init's)", "give it as --ledger to darrm aggregate, or read it with darrm ledger show"}
	KindGamma  = &FileKind{"a gamma (darrm solve's or verify's output)", "give it as --gamma to darrm aggregate, or certify it with darrm verify (or with darrm separate, in parts)"}
	KindShard  = &FileKind{"a part of a certificate (darrm separate's output)", "combine the parts with darrm separate merge"}
	// kindSolveTable is solve's table, for people: its gamma is rounded.
	kindSolveTable = &FileKind{"darrm solve's table, which rounds gamma to six digits for reading", "certify solve's --format json or --format csv, which hold gamma exactly"}
	// KindJSONDoc is a JSON document that is none of the above, spread
	// over several lines: no line-oriented file (JSON lines) is one.
	KindJSONDoc = &FileKind{"a JSON document spread over several lines", "vote, label and ledger files hold one JSON value per line (JSON lines)"}
)

// Want is what a command reads from a file.
type Want struct {
	what    string
	accepts []*FileKind
	// lines is true for a line-oriented format, which a JSON document
	// spread over several lines is not.
	lines bool
}

// What darrm's commands read.
var (
	wantVotes  = Want{"a vote file", []*FileKind{KindVotes}, true}
	WantLabels = Want{"a label file", []*FileKind{KindLabels}, true}
	wantLedger = Want{"a ledger", []*FileKind{KindLedger}, true}
	// A sidecar holds a vote file's header alone, which may span lines.
	wantSidecar = Want{"a vote file's metadata header", []*FileKind{KindVotes}, false}
	// A part of separate holds the gamma it certifies: verify reads it.
	wantGamma    = Want{"a gamma", []*FileKind{KindGamma, KindShard}, false}
	WantShard    = Want{"a part of darrm separate's certificate", []*FileKind{KindShard}, false}
	WantSolve    = Want{"darrm solve's JSON output", []*FileKind{KindGamma}, false}
	WantShuffleg = Want{"darrm shuffleg's JSON output", nil, false}
)

// sniffBytes bounds what sniff looks at: the first line, and for a JSON
// document spread over lines the start of the document.
const sniffBytes = 64 << 10

// OpenInput opens the file name (- for standard input) that role names on
// the command line (a flag, "--labels", or an argument, "VOTES"), to be
// read as want: a file that cannot be opened is a usage error naming role
// (a missing one with the close names, cli.OpenInputContext), and a file
// that sniff recognises as another kind than want's is refused as what it
// is. The reader returned reads the file from its start.
func OpenInput(cmd *cobra.Command, role, name string, want Want) (io.ReadCloser, error) {
	file, err := cli.OpenInputContext(cmd.Context(), cmd.InOrStdin(), cmd.ErrOrStderr(), name)
	if err != nil {
		if cli.IsUsage(err) {
			return nil, cli.Usagef("%s %w", role, err)
		}
		return nil, err
	}
	br := bufio.NewReaderSize(file, sniffBytes)
	if err := want.Check(role, name, sniff(br)); err != nil {
		file.Close()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{br, file}, nil
}

// ReadJSON decodes each of the files names, which role names on the
// command line, into a T (cli.DecodeJSON): each must be a JSON result of
// darrm, and of a kind that want accepts (OpenInput). Together they hold
// at most cli.MaxJSONBytes: each is held decoded, at many times its size
// (an array of zeros, 17 times), so that a bound on each alone let three
// large files exhaust memory.
func ReadJSON[T any](cmd *cobra.Command, role string, names []string, want Want) ([]T, error) {
	return readJSON[T](cmd, role, names, want, cli.MaxJSONBytes)
}

// readJSON is ReadJSON with names holding at most limit bytes together.
func readJSON[T any](cmd *cobra.Command, role string, names []string, want Want, limit int64) ([]T, error) {
	out := make([]T, len(names))
	left := limit
	for i, name := range names {
		r, err := OpenInput(cmd, role, name, want)
		if err != nil {
			return nil, err
		}
		in := &io.LimitedReader{R: r, N: left + 1}
		out[i], err = cli.DecodeJSON[T](cmd.Context(), in, name, darrmJSON)
		if cerr := cmd.Context().Err(); cerr != nil {
			// The decoding may still read r: left open, as it is when
			// darrm exits.
			return nil, cerr
		}
		r.Close()
		if in.N == 0 {
			return nil, cli.Usagef("%s: the JSON results read (%s) hold more than %d MiB together, the most darrm reads of them at once", cli.InputName(name), role, limit>>20)
		}
		if err != nil {
			return nil, err
		}
		left = in.N - 1
	}
	return out, nil
}

// label names the input name, which role names on the command line,
// in the errors of its content: after the flag for a flag's ("--gamma
// g.json"), alone for an argument's.
func label(role, name string) string {
	if strings.HasPrefix(role, "-") {
		return role + " " + cli.InputName(name)
	}
	return cli.InputName(name)
}

// Check refuses a file of kind k (nil: not recognised) that want does not
// accept, naming it by role and name.
func (want Want) Check(role, name string, k *FileKind) error {
	if k == nil || slices.Contains(want.accepts, k) || k == KindJSONDoc && !want.lines {
		return nil
	}
	what := role + " " + name
	if name == cli.Std {
		what = "standard input"
	}
	msg := what + " is " + k.Name + ", not " + want.what
	if k.Use != "" {
		msg += ": " + k.Use
	}
	return cli.Usagef("%s", msg)
}

// SniffPath is sniff of the regular file path (nil for anything else:
// a FIFO is not waited on, a device not read).
func SniffPath(path string) *FileKind {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	return sniff(bufio.NewReaderSize(f, sniffBytes))
}

// sniff recognises the kind of file br starts with, without consuming it,
// by the predicates of the packages whose files they are: darrm's headers
// (a vote or label file's metadata header, a ledger's first line), a JSON
// document with a gamma (solve's, verify's) or a part of separate's, a CSV
// table of gamma (solve --format csv) or solve's table for people, which
// rounds its gamma. Comment lines before a header (a seeded release's NOT
// FOR RELEASE) are passed over. It waits for the first lines only, and,
// when a line opens a JSON document that does not end on it (which no
// line-oriented file does), for the document's start. nil: none of these.
func sniff(br *bufio.Reader) *FileKind {
	return peek.Head(br, maxComments, kindOf, lineKind, KindJSONDoc)
}

// maxComments bounds the comment lines sniff passes over before a header.
const maxComments = 3

// lineKind recognises darrm's files that are not JSON by their first
// line: solve's table for people, or its CSV.
func lineKind(line []byte) *FileKind {
	switch {
	case report.IsSolveTable(line):
		return kindSolveTable
	case report.IsGammaFile(line):
		return KindGamma // solve's CSV
	}
	return nil
}

// kindOf recognises darrm's files by their first JSON object, obj.
func kindOf(obj []byte) *FileKind {
	if labels, ok := votefile.IsHeader(obj); ok {
		if labels {
			return KindLabels
		}
		return KindVotes
	}
	switch {
	case ledger.IsLedger(obj):
		return KindLedger
	case report.IsShard(obj):
		return KindShard
	case report.IsGammaFile(obj):
		return KindGamma
	}
	return nil
}

// darrmJSON is what the documents ReadJSON reads are.
const darrmJSON = "a JSON result of darrm"
