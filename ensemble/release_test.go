package ensemble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/darrm/darrm/gamma"
)

func TestLabelWriter(t *testing.T) {
	for _, tc := range []struct {
		format Format
		qs     []Query
		want   string
	}{
		{FormatCSV, []Query{{Index: 1}, {Index: 2}}, "id,label\n1,1\n2,1\n"},
		{FormatCSV, []Query{{ID: []byte("a,b")}, {ID: []byte(`say "hi"`)}, {ID: []byte(" x")}, {ID: []byte("plain")}},
			"id,label\n\"a,b\",1\n\"say \"\"hi\"\"\",1\n\" x\",1\nplain,1\n"},
		{FormatJSONL, []Query{{Index: 3}, {ID: []byte("7"), IDNumber: true}, {ID: []byte(`q"1`)}},
			"{\"id\":3,\"label\":1}\n{\"id\":7,\"label\":1}\n{\"id\":\"q\\\"1\",\"label\":1}\n"},
	} {
		var b bytes.Buffer
		lw, err := NewLabelWriter(&b, tc.format)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tc.qs {
			if err := lw.Write(&tc.qs[i], 1); err != nil {
				t.Fatal(err)
			}
		}
		if lw.Written() != 0 {
			t.Errorf("%v: %d labels written before Flush", tc.format, lw.Written())
		}
		if err := lw.Flush(); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want || lw.Written() != len(tc.qs) {
			t.Errorf("%v: wrote %q (%d labels), want %q", tc.format, b.String(), lw.Written(), tc.want)
		}
	}
	if _, err := NewLabelWriter(&bytes.Buffer{}, FormatAuto); err == nil {
		t.Error("NewLabelWriter accepted FormatAuto")
	}
}

// zeroDaRRM is DaRRM with gamma = 0: every label is a fair coin, which is
// (0, 0)-DP and certifies for any budget.
func zeroDaRRM(t *testing.T, k int) *DaRRM {
	t.Helper()
	d, err := NewDaRRM(context.Background(), problem(k, 1, 1e-5), make(gamma.Gamma, k+1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func release(t *testing.T, data string, agg Aggregator, limit int, seed uint64) (string, ReleaseResult, error) {
	t.Helper()
	vr, err := NewVoteReader(strings.NewReader(data), "votes", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	lw, err := NewLabelWriter(&b, FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Release(context.Background(), vr, agg, NewSeededSource(seed), lw, limit, ReleaseOptions{Experiment: true})
	out, marked := strings.CutPrefix(b.String(), NotForRelease+"\n")
	if err == nil && !marked {
		t.Errorf("seeded labels without the %q line", NotForRelease)
	}
	return out, res, err
}

func TestReleaseLimit(t *testing.T) {
	data := strings.Repeat("1,1,1\n", 10)
	agg := zeroDaRRM(t, 3)
	for _, tc := range []struct {
		limit, answered, unanswered int
	}{{-1, 10, 0}, {4, 4, 6}, {0, 0, 10}, {10, 10, 0}, {11, 10, 0}} {
		out, res, err := release(t, data, agg, tc.limit, 1)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if res.Answered != tc.answered || res.Unanswered != tc.unanswered || len(lines) != tc.answered+1 {
			t.Errorf("limit %d: answered %d, unanswered %d, %d lines; want %d, %d", tc.limit, res.Answered, res.Unanswered, len(lines), tc.answered, tc.unanswered)
		}
		for i, l := range lines[1:] {
			if !strings.HasPrefix(l, fmt.Sprintf("%d,", i+1)) {
				t.Errorf("limit %d: line %d = %q, want query %d", tc.limit, i+2, l, i+1)
			}
		}
	}
	// A malformed row after the limit still rejects the file.
	if _, _, err := release(t, data+"1,2,1\n", agg, 3, 1); err == nil {
		t.Error("a malformed row after the limit was accepted")
	}
	if _, _, err := release(t, "1,1,1,1,1\n", agg, -1, 1); err == nil || !strings.Contains(err.Error(), "K = 5") {
		t.Errorf("K mismatch: %v", err)
	}
}

// TestOutputIndependentOfVotes checks that with gamma = 0 the labels are
// a function of the noise alone: files with opposite majorities give the
// same output byte for byte, so nothing derived from the votes (the
// majority, L) reaches it.
func TestOutputIndependentOfVotes(t *testing.T) {
	agg := zeroDaRRM(t, 5)
	a, _, errA := release(t, strings.Repeat("1,1,1,1,1\n", 500), agg, -1, 9)
	b, _, errB := release(t, strings.Repeat("0,0,0,0,1\n", 500), agg, -1, 9)
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
	vr, _ := NewVoteReader(strings.NewReader(strings.Repeat("1\n", progressEvery+1)), "votes", ReadOptions{})
	lw, _ := NewLabelWriter(&bytes.Buffer{}, FormatCSV)
	if _, err := Release(ctx, vr, zeroDaRRM(t, 1), NewSeededSource(1), lw, -1, ReleaseOptions{Experiment: true}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestSeededReleaseNeedsOptIn checks that a seeded source cannot reach a
// release silently: without Experiment nothing is drawn or written; with
// it the labels start with the NOT FOR RELEASE line, and a crypto/rand
// release carries no such line.
func TestSeededReleaseNeedsOptIn(t *testing.T) {
	const votes = "1,1,1\n0,0,0\n"
	run := func(src *Source, opts ReleaseOptions) (string, error) {
		vr, err := NewVoteReader(strings.NewReader(votes), "votes", ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		lw, _ := NewLabelWriter(&b, FormatCSV)
		_, err = Release(context.Background(), vr, zeroDaRRM(t, 3), src, lw, -1, opts)
		return b.String(), err
	}
	if out, err := run(NewSeededSource(1), ReleaseOptions{}); !errors.Is(err, ErrSeededRelease) || out != "" {
		t.Errorf("seeded without opt-in: err %v, output %q", err, out)
	}
	out, err := run(NewSeededSource(1), ReleaseOptions{Experiment: true})
	if err != nil || !strings.HasPrefix(out, NotForRelease+"\nid,label\n") {
		t.Errorf("seeded experiment: err %v, output %q", err, out)
	}
	out, err = run(NewSource(), ReleaseOptions{})
	if err != nil || strings.Contains(out, "NOT FOR RELEASE") || !strings.HasPrefix(out, "id,label\n") {
		t.Errorf("crypto/rand release: err %v, output %q", err, out)
	}
}
