package ensemble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// fakeLedger records what a release charges it; it refuses reservations
// beyond limit (when limit > 0).
type fakeLedger struct {
	limit             int
	reserves, settles []int
}

var errFakeBudget = errors.New("fake budget reached")

func (l *fakeLedger) Reserve(_ context.Context, n int) error {
	if l.limit > 0 && n > l.limit {
		return errFakeBudget
	}
	l.reserves = append(l.reserves, n)
	return nil
}

func (l *fakeLedger) Settle(_ context.Context, n int) error {
	l.settles = append(l.settles, n)
	return nil
}

func (l *fakeLedger) Begin(context.Context, provenance.MechanismName, provenance.Binding, accountant.Spend, int) (int, error) {
	return -1, nil
}

func (l *fakeLedger) Publish() (accountant.Total, error) { return accountant.Total{}, nil }

func (l *fakeLedger) ID() string   { return strings.Repeat("ab", 16) }
func (l *fakeLedger) Lines() int   { return 1 + len(l.reserves) }
func (l *fakeLedger) Size() int64  { return int64(100 * (1 + len(l.reserves))) }
func (l *fakeLedger) Head() string { return strings.Repeat(fmt.Sprint(len(l.reserves)%10), 64) }

// failAfter accepts n writes, then fails every one, like a pipe whose
// reader has gone.
type failAfter struct {
	n int
	b bytes.Buffer
}

var errPipe = errors.New("broken pipe")

func (w *failAfter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errPipe
	}
	w.n--
	return w.b.Write(p)
}

func TestReleaseTo(t *testing.T) {
	const queries = 100_000 // more than one buffer of labels
	votes := strings.Repeat("1\n", queries)
	agg := zeroDaRRM(t, 1)
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		path     string // "" for standard output
		stdout   *failAfter
		ledger   *fakeLedger
		err      error  // wrapped by the error, nil for success
		errText  string // in the error
		file     bool   // the label file exists after
		settles  []int  // what the ledger was settled with; nil: check no ledger
		labelsTo int    // labels that reached standard output
	}{
		{name: "file", path: "a.csv", file: true},
		{name: "file with a ledger", path: "b.csv", ledger: &fakeLedger{}, file: true, settles: []int{queries}},
		{name: "stdout", stdout: &failAfter{n: -1}, labelsTo: queries},
		{name: "stdout with a ledger", stdout: &failAfter{n: -1}, ledger: &fakeLedger{}, settles: []int{queries}, labelsTo: queries},
		{name: "stdout that fails after a buffer", stdout: &failAfter{n: 1}, ledger: &fakeLedger{}, err: errPipe,
			errText: "labels may have reached standard output, counting any label cut part-way: their privacy cost is that of", settles: []int{-1}},
		{name: "stdout that fails at once", stdout: &failAfter{n: 0}, ledger: &fakeLedger{}, err: errPipe, settles: []int{0}},
		{name: "file refused by the ledger", path: "c.csv", ledger: &fakeLedger{limit: 10}, err: errFakeBudget, settles: []int{0}},
		{name: "file in no folder", path: "missing/d.csv", ledger: &fakeLedger{}, errText: "missing", settles: []int{0}},
	} {
		vr, err := votefile.Open("votes", votefile.Options{In: strings.NewReader(votes)})
		if err != nil {
			t.Fatal(err)
		}
		sink := LabelSink{Format: votefile.FormatCSV}
		if tc.path != "" {
			sink.Path = filepath.Join(dir, tc.path)
		} else {
			sink.Stdout = tc.stdout
		}
		if tc.ledger != nil {
			sink.Ledger = tc.ledger
		}
		res, err := ReleaseTo(context.Background(), vr, agg, noise.NewSource(), sink, -1, ReleaseOptions{})
		switch {
		case tc.err == nil && tc.errText == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != nil && !errors.Is(err, tc.err), tc.errText != "" && (err == nil || !strings.Contains(err.Error(), tc.errText)):
			t.Errorf("%s: error %v, want %v mentioning %q", tc.name, err, tc.err, tc.errText)
		}
		if tc.err == nil && tc.errText == "" && res.Released != queries {
			t.Errorf("%s: answered %d", tc.name, res.Released)
		}
		if tc.path != "" {
			b, statErr := os.ReadFile(sink.Path)
			if tc.file != (statErr == nil) {
				t.Errorf("%s: label file exists: %t", tc.name, statErr == nil)
			}
			if tc.file && delivered(string(b), votefile.FormatCSV) != queries {
				t.Errorf("%s: %d lines in the label file", tc.name, strings.Count(string(b), "\n"))
			}
			if entries, _ := os.ReadDir(dir); slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.Contains(e.Name(), ".tmp-") }) {
				t.Errorf("%s: a temporary file was left: %v", tc.name, entries)
			}
		}
		written := -1
		if tc.stdout != nil {
			written = delivered(tc.stdout.b.String(), votefile.FormatCSV)
			if tc.labelsTo > 0 && written != tc.labelsTo {
				t.Errorf("%s: %d labels on standard output, want %d", tc.name, written, tc.labelsTo)
			}
		}
		if tc.ledger != nil {
			want := slices.Clone(tc.settles)
			if len(want) == 1 && want[0] == -1 {
				want[0] = written // the labels that left before the failure
			}
			if !slices.Equal(tc.ledger.settles, want) {
				t.Errorf("%s: ledger settled %v, want %v", tc.name, tc.ledger.settles, want)
			}
			if len(tc.ledger.reserves) > 0 && tc.ledger.reserves[len(tc.ledger.reserves)-1] < written {
				t.Errorf("%s: %d labels left, %v reserved", tc.name, written, tc.ledger.reserves)
			}
		}
	}
}

// limited takes the first n bytes written to it, then fails, taking part
// of the write that crosses the limit: a full disk, or a file size limit.
type limited struct {
	n int
	b bytes.Buffer
}

var errFull = errors.New("no space left on device")

func (w *limited) Write(p []byte) (int, error) {
	k := min(len(p), w.n-w.b.Len())
	w.b.Write(p[:k])
	if k < len(p) {
		return k, errFull
	}
	return k, nil
}

// delivered counts, independently of the label writer, the labels of
// which at least one byte is in out: the lines after the comment lines
// (the metadata header, the mark of a seeded run) and the CSV header row,
// the last one possibly cut.
func delivered(out string, format votefile.Format) int {
	n := 0
	for _, line := range strings.SplitAfter(out, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			n++
		}
	}
	if format == votefile.FormatCSV && n > 0 {
		n-- // the header row
	}
	return n
}

// TestShortWrites stops the output after every kind of byte count (in the
// header, at its end, inside a label, at a label's end, in a later block)
// and checks that the ledger is settled with every label of which a byte
// reached the output, a label cut part-way included, and that the error
// gives that count.
func TestShortWrites(t *testing.T) {
	const labelBuffer = 256 << 10 // the label writer's block: cuts at its edges and past it
	const queries = 70_000        // labels of 9 to 14 bytes: more than one block
	var votes strings.Builder
	for i := range queries {
		fmt.Fprintf(&votes, "q%d,1\n", i)
	}
	agg := zeroDaRRM(t, 1)
	for fi, format := range []votefile.Format{votefile.FormatCSV, votefile.FormatJSONL} {
		for si, seeded := range []bool{false, true} {
			for j, n := range []int{0, 3, 9, len(notForRelease) + 1, 20, 21, 22, 300, 301, 302, 303, 310, 400, 1000, labelBuffer - 1, labelBuffer + 7, 2*labelBuffer + 11} {
				if testing.Short() && j%4 != 2*fi+si {
					// Under -short the same check at a smaller size: each
					// cut with one of the four formats and sources in turn.
					continue
				}
				vr, err := votefile.Open("votes", votefile.Options{In: strings.NewReader(votes.String())})
				if err != nil {
					t.Fatal(err)
				}
				w := &limited{n: n}
				led := &fakeLedger{}
				src := noise.NewSource()
				if seeded {
					src = noise.NewSeededSource(1)
				}
				_, err = ReleaseTo(context.Background(), vr, agg, src, LabelSink{Stdout: w, Format: format, Ledger: led}, -1, ReleaseOptions{Experiment: seeded})
				name := fmt.Sprintf("%v, seeded %t, %d bytes", format, seeded, n)
				want := delivered(w.b.String(), format)
				if !errors.Is(err, errFull) {
					t.Fatalf("%s: %v", name, err)
				}
				if len(led.settles) != 1 || led.settles[0] != want {
					t.Errorf("%s: settled %v, want %d labels", name, led.settles, want)
				}
				if want > 0 && !strings.Contains(err.Error(), plural.Of(want, "label", "labels")+" may have reached standard output") {
					t.Errorf("%s: error %v, want the count %d", name, err, want)
				}
				var spent *spentError
				if got := errors.As(err, &spent); got != (want > 0) || got && spent.LabelsSpent() != want {
					t.Errorf("%s: error %v: a spentError %t, want one of %d labels: %t", name, err, got, want, want > 0)
				}
				if len(led.reserves) > 0 && led.reserves[len(led.reserves)-1] < want {
					t.Errorf("%s: reserved %v before %d labels left", name, led.reserves, want)
				}
			}
		}
	}
}

// TestReleaseToNilArguments checks that ReleaseTo refuses a missing
// argument with an error that names it, settling the sink's ledger with
// no labels, where it dereferenced it and panicked.
func TestReleaseToNilArguments(t *testing.T) {
	votes := func() votefile.Reader {
		vr, err := votefile.Open("votes", votefile.Options{In: strings.NewReader("1\n0\n")})
		if err != nil {
			t.Fatal(err)
		}
		return vr
	}
	agg := zeroDaRRM(t, 1)
	for _, tc := range []struct {
		name string
		in   votefile.Reader
		agg  Labeler
		src  *noise.Source
	}{
		{name: "in", agg: agg, src: noise.NewSource()},
		{name: "agg", in: votes(), src: noise.NewSource()},
		{name: "src", in: votes(), agg: agg},
	} {
		l := &fakeLedger{}
		sink := LabelSink{Stdout: &bytes.Buffer{}, Ledger: l}
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("nil %s: panic %v", tc.name, r)
				}
			}()
			_, err = ReleaseTo(context.Background(), tc.in, tc.agg, tc.src, sink, -1, ReleaseOptions{})
		}()
		if err == nil || !strings.Contains(err.Error(), "ReleaseTo: "+tc.name+" is nil") {
			t.Errorf("nil %s: error %v, want one naming %s", tc.name, err, tc.name)
		}
		if !slices.Equal(l.settles, []int{0}) {
			t.Errorf("nil %s: the ledger was settled with %v, want [0]", tc.name, l.settles)
		}
	}
}

// TestShortWriteSeeded: the error of a release whose stream failed after
// labels left says, for labels drawn from a seeded source, that they are
// not for release, as their file does, and offers no total to publish
// for them; for labels drawn from crypto/rand it gives their total and no
// such mark.
func TestShortWriteSeeded(t *testing.T) {
	meta := provenance.Binding{Ensemble: "short", Teachers: provenance.Teachers{K: 60, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}.Header(3, votefile.LayoutCounts)
	rows := slices.Repeat([][]int{{40, 20, 0}}, 200)
	for _, seeded := range []bool{false, true} {
		in, err := votefile.ReadRows(rows, meta)
		if err != nil {
			t.Fatal(err)
		}
		src := noise.NewSource()
		if seeded {
			src = noise.NewSeededSource(1)
		}
		_, err = Release(context.Background(), ReleaseSpec{Votes: in, Mechanism: GNMax{Target: Target{Delta: 1e-5}, Sigma2: 12}, Random: src,
			Sink: LabelSink{Stdout: &limited{n: 1000}}, Options: ReleaseOptions{Experiment: seeded}})
		var spent *spentError
		if !errors.Is(err, errFull) || !errors.As(err, &spent) {
			t.Fatalf("seeded %t: %v, want labels spent on a full stream", seeded, err)
		}
		if msg := err.Error(); strings.Contains(msg, seededLabels) != seeded || strings.Contains(msg, "total to publish") == seeded {
			t.Errorf("seeded %t: %s", seeded, msg)
		}
	}
}
