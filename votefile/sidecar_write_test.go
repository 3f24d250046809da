package votefile

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestWriteSidecar: the header written beside NumPy votes is read back
// as it was (ReadSidecar), and the votes read with it; a header the votes
// contradict, a file already there (but on purpose), the vote file itself
// or a context ended write nothing.
func TestWriteSidecar(t *testing.T) {
	dir := t.TempDir()
	votes := filepath.Join(dir, "labels.npy")
	raw, err := os.ReadFile("../testdata/pate-teachers-labels-K25.npy")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(votes, raw, 0o644)
	m, err := readSidecar(strings.NewReader(pateSidecar), "x")
	if err != nil {
		t.Fatal(err)
	}
	path := SidecarPath(votes)
	write := func(ctx context.Context, path string, m *Meta, replace bool) (int, error) {
		f, err := os.Open(votes)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return m.WriteSidecar(ctx, path, f, votes, Options{Size: int64(len(raw))}, replace)
	}
	if n, err := write(context.Background(), path, m, false); err != nil || n != 60 {
		t.Fatalf("%d queries, %v", n, err)
	}
	b, _ := os.ReadFile(path)
	if back, err := readSidecar(bytes.NewReader(b), path); err != nil || !reflect.DeepEqual(back, m) {
		t.Errorf("read back %+v, %v; want %+v", back, err, m)
	}
	other := *m
	other.Ensemble = "other"
	if _, err := write(context.Background(), path, &other, false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a sidecar written over: %v", err)
	}
	if _, err := write(context.Background(), path, &other, true); err != nil {
		t.Errorf("replaced on purpose: %v", err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"ensemble":"other"`) {
		t.Errorf("not replaced: %s", b)
	}
	wrongK := other
	wrongK.K, wrongK.Teachers = 24, []TeacherGroup{{Count: 24, Source: TeacherSource{Method: "none"}}}
	before, _ := os.ReadFile(path)
	for _, tc := range []struct {
		name string
		ctx  context.Context
		path string
		m    *Meta
		want string
	}{
		{"K of the other axis", context.Background(), path, &wrongK, "has 25 teachers, but K = 24 is stated"},
		{"rows in teachers' order", context.Background(), path, &Meta{Ensemble: "e", K: 25, Classes: 10, Layout: LayoutVotes, Relation: "one-vote", Kind: "fixed", Partition: "keyed-hash",
			Teachers: other.Teachers, Orientation: QueriesInRows}, "has 60 teachers, but K = 25 is stated"},
		{"invalid", context.Background(), path, &Meta{Ensemble: "e", K: 25, Classes: 1}, "header field classes = 1"},
		{"the votes themselves", context.Background(), votes, m, "the vote file itself"},
		{"context ended", canceled(), path, m, "context canceled"},
	} {
		if _, err := write(tc.ctx, tc.path, tc.m, true); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, before) {
			t.Errorf("%s: the sidecar changed: %s", tc.name, b)
		}
	}
	if b, _ := os.ReadFile(votes); !bytes.Equal(b, raw) {
		t.Error("the votes changed")
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
