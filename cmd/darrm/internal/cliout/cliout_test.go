package cliout

import (
	"bytes"
	"math"
	"sync"
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

// fakeClock is a clock the test moves, with a ticker it fires.
type fakeClock struct {
	mu       sync.Mutex
	now      time.Time
	interval time.Duration
	tick     chan time.Time
	stopped  bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), tick: make(chan time.Time)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.interval = d
	return c.tick, func() { c.mu.Lock(); c.stopped = true; c.mu.Unlock() }
}

// fire moves the clock by the ticker's interval and delivers the tick.
func (c *fakeClock) fire() {
	c.mu.Lock()
	c.now = c.now.Add(c.interval)
	now := c.now
	c.mu.Unlock()
	c.tick <- now
}

// lineWriter hands each write to the test.
type lineWriter chan string

func (w lineWriter) Write(b []byte) (int, error) {
	w <- string(b)
	return len(b), nil
}

// TestProgressLog: off a terminal, Progress writes the state every
// LogInterval (at most 10 s) of the clock's time, and a last line when the
// work ends; work that ends before the first tick writes nothing.
func TestProgressLog(t *testing.T) {
	clock := newFakeClock()
	lines := make(lineWriter)
	p := newProgress(lines, 200, "certifying K=11", false, clock)
	if clock.interval <= 0 || clock.interval > 10*time.Second {
		t.Fatalf("interval %v: want a line at least every 10 s", clock.interval)
	}
	for _, tc := range []struct {
		update func()
		want   string
	}{
		{func() {}, "darrm: certifying K=11: 0 of 200 (0%); 10s so far\n"},
		{func() { p.Set(50) }, "darrm: certifying K=11: 50 of 200 (25%); 20s so far\n"},
		{func() { p.Describe("certifying K=13"); p.Update(30, 40) }, "darrm: certifying K=13: 30 of 40 (75%); 30s so far\n"},
		// Work past its estimate is at 100%, never beyond.
		{func() { p.Update(50, 40) }, "darrm: certifying K=13: 40 of 40 (100%); 40s so far\n"},
		{func() { p.Update(30, 40) }, "darrm: certifying K=13: 30 of 40 (75%); 50s so far\n"},
	} {
		tc.update()
		go clock.fire()
		if got := <-lines; got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	ended := make(chan struct{})
	go func() { p.Done(); close(ended) }()
	if got, want := <-lines, "darrm: certifying K=13: 30 of 40 (75%); ended after 50s\n"; got != want {
		t.Errorf("last line %q, want %q", got, want)
	}
	<-ended
	p.Done() // a second Done writes nothing (lines is unbuffered: it would block)
	if !clock.stopped {
		t.Error("the ticker was not stopped")
	}

	// Unknown total, and work that ends before the first line.
	clock = newFakeClock()
	var quiet bytes.Buffer
	q := newProgress(&quiet, -1, "solving", false, clock)
	q.Set(3)
	q.Done()
	if quiet.Len() != 0 {
		t.Errorf("short work wrote %q", quiet.String())
	}
	clock = newFakeClock()
	s := newProgress(lines, -1, "solving", false, clock)
	go clock.fire()
	if got, want := <-lines, "darrm: solving; 10s so far\n"; got != want {
		t.Errorf("unknown total: %q, want %q", got, want)
	}
	go s.Done()
	<-lines
}

// TestProgressTerminal: on a terminal the bar appears only after a moment,
// and no line is logged.
func TestProgressTerminal(t *testing.T) {
	clock := newFakeClock()
	var out bytes.Buffer
	p := newProgress(&out, 10, "runs", true, clock)
	p.Set(1)
	if p.bar != nil || out.Len() != 0 {
		t.Fatalf("a bar at once: %q", out.String())
	}
	clock.now = clock.now.Add(time.Second)
	p.Set(2)
	if p.bar == nil {
		t.Fatal("no bar after a second")
	}
	if clock.interval != 0 {
		t.Error("a terminal's progress started a ticker")
	}
	p.Done()
}

// TestProgressUpdate: the total given with the progress is the bar's, set
// before the bar appears or changed after; a nil Progress ignores it.
func TestProgressUpdate(t *testing.T) {
	var nilProgress *Progress
	nilProgress.Update(1, 2)
	nilProgress.Done()
	var out bytes.Buffer
	clock := newFakeClock()
	p := newProgress(&out, -1, "runs", true, clock)
	clock.now = clock.now.Add(time.Second)
	for _, tc := range []struct{ done, total int64 }{{3, 10}, {4, 10}, {5, 20}} {
		p.Update(tc.done, tc.total)
		if p.bar == nil || p.total != tc.total || p.bar.GetMax64() != tc.total || p.bar.State().CurrentNum != tc.done {
			t.Errorf("Update(%d, %d): total %d", tc.done, tc.total, p.total)
		}
	}
	p.Done()
}

// TestStreamAsBatch: results printed one row at a time (Stream) read as
// those printed at once (WriteRecords): the JSON object of WriteJSON, and
// the table of WriteTable with the settings below it; WriteRecords' table
// makes each reference a numbered note under the settings.
func TestStreamAsBatch(t *testing.T) {
	common := Record{{"ledger", "a<b>.ledger"}, {"total_eps", 1.0879482133800917}, {"free", true}}
	rows := []Record{
		{{"run", "2447dee60f9fcfc1"}, {"queries", 20}, {"eps", 0.30000000000000004}},
		{{"run", "ε-run"}, {"queries", 2000000}, {"eps", 2.9999700001000004e-05}},
	}
	stream := func(f Format) string {
		var b bytes.Buffer
		var widths Widths
		for _, r := range rows {
			widths.Add(r)
		}
		s, err := NewStream(&b, f, common, widths)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if err := s.Row(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	var got, want bytes.Buffer
	if err := WriteRecords(&got, JSON, common, rows); err != nil {
		t.Fatal(err)
	}
	WriteJSON(&want, append(common, Field{"rows", rows}))
	if got.String() != want.String() || stream(JSON) != want.String() {
		t.Errorf("JSON:\n%s\nstreamed\n%s\nwant\n%s", got.String(), stream(JSON), want.String())
	}
	got.Reset()
	want.Reset()
	if err := WriteRecords(&got, Table, common, rows); err != nil {
		t.Fatal(err)
	}
	var cells [][]string
	for _, r := range rows {
		cells = append(cells, r.Values(false))
	}
	WriteTable(&want, []string{"run", "queries", "eps"}, cells)
	want.WriteString("ledger=a<b>.ledger  total_eps=1.08795  free=true\n")
	if got.String() != want.String() || stream(Table) != want.String() {
		t.Errorf("table:\n%s\nstreamed\n%s\nwant\n%s", got.String(), stream(Table), want.String())
	}
	for i, ref := range []string{"Thm 3.3", "Thm 3.4"} {
		rows[i] = append(rows[i], Field{"reference", ref})
	}
	got.Reset()
	want.Reset()
	if err := WriteRecords(&got, Table, common, rows); err != nil {
		t.Fatal(err)
	}
	cells[0], cells[1] = append(cells[0], "[1]"), append(cells[1], "[2]")
	WriteTable(&want, []string{"run", "queries", "eps", "reference"}, cells)
	want.WriteString("ledger=a<b>.ledger  total_eps=1.08795  free=true\n\n[1] Thm 3.3\n[2] Thm 3.4\n")
	if got.String() != want.String() {
		t.Errorf("table with references:\n%s\nwant\n%s", got.String(), want.String())
	}
}

// TestStages: a step keeps its line while it reports, the next step's
// report starts a new line, and Done ends the last (a second Done does
// nothing).
func TestStages(t *testing.T) {
	var out bytes.Buffer
	s := NewStages(&out)
	first := s.At("certifying", 100)
	if s.At("certifying", 100) != first {
		t.Error("a second report of the same step started a new line")
	}
	second := s.At("releasing labels", -1)
	if second == first || second == nil {
		t.Errorf("the next step's line %p, the first's %p: want a new one", second, first)
	}
	s.Done()
	s.Done()
	if s.At("releasing labels", -1) == second {
		t.Error("a report after Done continued the ended line")
	}
	s.Done()
}

// TestRecordValuesLists: a list of numbers is written as a list flag
// takes it (--levels 80,70.5), exactly for CSV and to six significant
// digits in a table, not as Go prints a slice ("[80 70.5]").
func TestRecordValuesLists(t *testing.T) {
	r := Record{{Key: "levels", Val: []float64{80, 70.5, 1.0 / 3}}}
	if got, want := r.Values(true)[0], "80,70.5,0.3333333333333333"; got != want {
		t.Errorf("exact: %q, want %q", got, want)
	}
	if got, want := r.Values(false)[0], "80,70.5,0.333333"; got != want {
		t.Errorf("table: %q, want %q", got, want)
	}
}

// TestWriteRecordsWhole checks that JSON rows that fail to marshal (a
// value of +Inf, which JSON has no number for) write nothing: a script
// reading standard output must never get half a document.
func TestWriteRecordsWhole(t *testing.T) {
	rows := []Record{{{Key: "eps", Val: 1.0}}, {{Key: "eps", Val: math.Inf(1)}}}
	var b bytes.Buffer
	if err := WriteRecords(&b, JSON, Record{{Key: "delta", Val: 1e-6}}, rows); err == nil || b.Len() > 0 {
		t.Errorf("WriteRecords of +Inf: %v, wrote %q; want an error and nothing written", err, b.String())
	}
}
