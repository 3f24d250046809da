package ensemble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/votefile"
)

func TestLabelWriter(t *testing.T) {
	for _, tc := range []struct {
		format   votefile.Format
		answered bool
		qs       []votefile.Query
		want     string
	}{
		{votefile.FormatCSV, false, []votefile.Query{{Index: 1}, {Index: 2}}, "id,label\n1,1\n2,1\n"},
		{votefile.FormatCSV, false, []votefile.Query{{ID: []byte("a,b")}, {ID: []byte(`say "hi"`)}, {ID: []byte(" x")}, {ID: []byte("#x")}, {ID: []byte("plain")}},
			`id,label` + "\n" + `"a,b",1` + "\n" + `"say ""hi""",1` + "\n" + `" x",1` + "\n" + `"#x",1` + "\n" + "plain,1\n"},
		{votefile.FormatJSONL, false, []votefile.Query{{Index: 3}, {ID: []byte("7"), IDNumber: true}, {ID: []byte(`q"1`)}},
			"{\"id\":3,\"label\":1}\n{\"id\":7,\"label\":1}\n{\"id\":\"q\\\"1\",\"label\":1}\n"},
		{votefile.FormatCSV, true, []votefile.Query{{Index: 1}, {ID: []byte("b")}}, "id,label,answered\n1,1,1\nb,,0\n"},
		{votefile.FormatJSONL, true, []votefile.Query{{Index: 1}, {ID: []byte("b")}}, "{\"id\":1,\"label\":1,\"answered\":true}\n{\"id\":\"b\",\"label\":null,\"answered\":false}\n"},
	} {
		var b bytes.Buffer
		lw, err := votefile.NewLabelWriter(&b, tc.format, tc.answered)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tc.qs {
			answered := !tc.answered || i == 0
			if err := lw.WriteLabel(&tc.qs[i], 1, answered); err != nil {
				t.Fatal(err)
			}
		}
		if lw.Written() != 0 {
			t.Errorf("%v: %d labels written before flush", tc.format, lw.Written())
		}
		if err := lw.Flush(); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want || lw.Written() != len(tc.qs) {
			t.Errorf("%v: wrote %q (%d labels), want %q", tc.format, b.String(), lw.Written(), tc.want)
		}
	}
	if _, err := votefile.NewLabelWriter(&bytes.Buffer{}, votefile.FormatAuto, false); err == nil {
		t.Error("NewLabelWriter accepted FormatAuto")
	}
}

// TestLabelWriterAfterError: once a write has failed, every later row is
// refused, and the labels counted are those of which a byte left: none
// when the output stops inside the header row of either layout.
func TestLabelWriterAfterError(t *testing.T) {
	for _, answered := range []bool{false, true} {
		for _, n := range []int{0, 5, 9, 12} {
			w := &limited{n: n}
			lw, _ := votefile.NewLabelWriter(w, votefile.FormatCSV, answered)
			q := votefile.Query{Index: 1}
			lw.WriteLabel(&q, 1, true)
			if err := lw.Flush(); !errors.Is(err, errFull) {
				t.Fatalf("answered column %t, %d bytes: %v", answered, n, err)
			}
			if want := delivered(w.b.String(), votefile.FormatCSV); lw.Written() != want {
				t.Errorf("answered column %t, %d bytes (%q): %d labels counted, %d left", answered, n, w.b.String(), lw.Written(), want)
			}
			if err := lw.WriteLabel(&q, 1, true); !errors.Is(err, errFull) {
				t.Errorf("answered column %t: a row after the failure: %v", answered, err)
			}
		}
	}
}

// releaseOut releases the votes of in with agg into a buffer in format f,
// and returns what was written.
func releaseOut(t *testing.T, in votefile.Reader, agg Labeler, src *noise.Source, limit int, opts ReleaseOptions, f votefile.Format) (string, ReleaseResult, error) {
	t.Helper()
	var b bytes.Buffer
	res, err := ReleaseTo(context.Background(), in, agg, src, LabelSink{Stdout: &b, Format: f}, limit, opts)
	return b.String(), res, err
}

// labelsOf returns a label file without its comment lines (the NOT FOR
// RELEASE mark and the metadata header).
func labelsOf(out string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		if !strings.HasPrefix(l, "#") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// zeroDaRRM is DaRRM with gamma = 0: every label is a fair coin, which is
// (0, 0)-DP and certifies for any budget.
func zeroDaRRM(t *testing.T, k int) Aggregator {
	t.Helper()
	d, err := newPrivateDaRRM(context.Background(), constraints.New(k, 1, 0.1, 1e-5), make(gamma.Gamma, k+1), Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func releaseVotes(t *testing.T, data string, agg Aggregator, limit int, seed uint64) (string, ReleaseResult, error) {
	t.Helper()
	vr, err := votefile.Open("votes", votefile.Options{In: strings.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	b, res, err := releaseOut(t, vr, agg, noise.NewSeededSource(seed), limit, ReleaseOptions{Experiment: true}, votefile.FormatCSV)
	out, marked := strings.CutPrefix(b, notForRelease+"\n")
	if err == nil && !marked {
		t.Errorf("seeded labels without the %q line", notForRelease)
	}
	return labelsOf(out), res, err
}

func TestReleaseLimit(t *testing.T) {
	data := strings.Repeat("1,1,1\n", 10)
	agg := zeroDaRRM(t, 3)
	for _, tc := range []struct {
		limit, released, stopped int
	}{{-1, 10, 0}, {4, 4, 6}, {0, 0, 10}, {10, 10, 0}, {11, 10, 0}} {
		out, res, err := releaseVotes(t, data, agg, tc.limit, 1)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if res.Released != tc.released || res.StoppedByBudget != tc.stopped || len(lines) != tc.released+1 {
			t.Errorf("limit %d: released %d, stopped %d, %d lines; want %d, %d", tc.limit, res.Released, res.StoppedByBudget, len(lines), tc.released, tc.stopped)
		}
		for i, l := range lines[1:] {
			if !strings.HasPrefix(l, fmt.Sprintf("%d,", i+1)) {
				t.Errorf("limit %d: line %d = %q, want query %d", tc.limit, i+2, l, i+1)
			}
		}
	}
	// A malformed row after the limit still rejects the file.
	if _, _, err := releaseVotes(t, data+"1,2,1\n", agg, 3, 1); err == nil {
		t.Error("a malformed row after the limit was accepted")
	}
	if _, _, err := releaseVotes(t, "1,1,1,1,1\n", agg, -1, 1); err == nil || !strings.Contains(err.Error(), "K = 5") {
		t.Errorf("K mismatch: %v", err)
	}
}

// TestOutputIndependentOfVotes checks that with gamma = 0 the labels are
// a function of the noise alone: files with opposite majorities give the
// same output byte for byte, so nothing derived from the votes (the
// majority, L) reaches it.
func TestOutputIndependentOfVotes(t *testing.T) {
	agg := zeroDaRRM(t, 5)
	a, _, errA := releaseVotes(t, strings.Repeat("1,1,1,1,1\n", 500), agg, -1, 9)
	b, _, errB := releaseVotes(t, strings.Repeat("0,0,0,0,1\n", 500), agg, -1, 9)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if a != b {
		t.Error("labels depend on the votes although gamma = 0")
	}
	ones := strings.Count(a, ",1\n")
	if ones < 200 || ones > 300 {
		t.Errorf("%d of 500 coin labels are 1", ones)
	}
}

func TestReleaseCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	vr, _ := votefile.Open("votes", votefile.Options{In: strings.NewReader(strings.Repeat("1\n", progressEvery+1))})
	_, err := ReleaseTo(ctx, vr, zeroDaRRM(t, 1), noise.NewSeededSource(1), LabelSink{Stdout: &bytes.Buffer{}, Format: votefile.FormatCSV}, -1, ReleaseOptions{Experiment: true})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestSeededReleaseNeedsOptIn checks that a seeded source cannot reach a
// release silently: without Experiment nothing is drawn or written; with
// it the labels start with the NOT FOR RELEASE line, and a crypto/rand
// release carries no such line.
func TestSeededReleaseNeedsOptIn(t *testing.T) {
	const votes = "1,1,1\n0,0,0\n"
	run := func(src *noise.Source, opts ReleaseOptions) (string, error) {
		vr, err := votefile.Open("votes", votefile.Options{In: strings.NewReader(votes)})
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := releaseOut(t, vr, zeroDaRRM(t, 3), src, -1, opts, votefile.FormatCSV)
		return out, err
	}
	if out, err := run(noise.NewSeededSource(1), ReleaseOptions{}); !errors.Is(err, errSeededRelease) || out != "" {
		t.Errorf("seeded without opt-in: err %v, output %q", err, out)
	}
	out, err := run(noise.NewSeededSource(1), ReleaseOptions{Experiment: true})
	if err != nil || !strings.HasPrefix(out, notForRelease+"\n# {\"darrm-labels\":1,") || !strings.Contains(out, `"for_release":false}`+"\nid,label\n") {
		t.Errorf("seeded experiment: err %v, output %q", err, out)
	}
	out, err = run(noise.NewSource(), ReleaseOptions{})
	if err != nil || strings.Contains(out, "NOT FOR RELEASE") || !strings.HasPrefix(out, "# {\"darrm-labels\":1,") || !strings.Contains(out, `"for_release":true}`+"\nid,label\n") {
		t.Errorf("crypto/rand release: err %v, output %q", err, out)
	}
}
