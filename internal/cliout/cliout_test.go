package cliout

import (
	"bytes"
	"testing"
	"time"
)

func TestFormatText(t *testing.T) {
	for _, f := range []Format{Table, JSON, CSV} {
		b, _ := f.MarshalText()
		var got Format
		if err := got.UnmarshalText(b); err != nil || got != f {
			t.Errorf("%v: %q reads back as %v (%v)", f, b, got, err)
		}
	}
	var f Format
	if err := f.UnmarshalText([]byte("xml")); err == nil || f != "" {
		t.Errorf("xml: %v, format %q", err, f)
	}
}

// TestProgressUpdate: the total given with the progress is the bar's, set
// before the bar appears or changed after; a nil Progress (not a
// terminal) ignores it.
func TestProgressUpdate(t *testing.T) {
	var nilProgress *Progress
	nilProgress.Update(1, 2)
	var out bytes.Buffer
	p := &Progress{w: &out, total: -1, description: "runs", start: time.Now().Add(-time.Second)}
	for _, tc := range []struct{ done, total int64 }{{3, 10}, {4, 10}, {5, 20}} {
		p.Update(tc.done, tc.total)
		if p.bar == nil || p.total != tc.total || p.bar.GetMax64() != tc.total || p.bar.State().CurrentNum != tc.done {
			t.Errorf("Update(%d, %d): total %d", tc.done, tc.total, p.total)
		}
	}
	p.Done()
}
