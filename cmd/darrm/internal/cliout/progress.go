package cliout

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress reports the state of long-running work on stderr. On a terminal
// it is a bar (or a spinner) that appears once the work has run for longer
// than a moment and is cleared when it ends. Elsewhere (a log, a pipe, a
// batch job) it writes one line every LogInterval, and a last line when
// the work ends if it wrote any, so that short commands leave logs clean
// and long ones never go quiet for longer than LogInterval. A nil
// *Progress is inert. Its methods are safe for concurrent use.
type Progress struct {
	mu          sync.Mutex
	w           io.Writer
	done, total int64
	description string
	start       time.Time
	bar         *progressbar.ProgressBar // terminal only, once shown

	// Off a terminal: the clock, whether a line was written, and the
	// logging goroutine's stop signal and exit.
	clock    clock
	logged   bool
	stop     chan struct{}
	stopOnce sync.Once
	exited   chan struct{}
}

// showAfter is how long work runs before a progress bar appears on a
// terminal.
const showAfter = 700 * time.Millisecond

// LogInterval is the longest that work reports nothing off a terminal.
const LogInterval = 10 * time.Second

// clock is the time source of Progress: the system clock in programs, a
// controlled one in tests.
type clock interface {
	Now() time.Time
	// NewTicker returns a channel that delivers the time every d, and a
	// function that stops it.
	NewTicker(d time.Duration) (<-chan time.Time, func())
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// NewProgress returns a progress indicator on w for total units of work,
// or for work of unknown size when total is -1: a bar on a terminal, a
// line every LogInterval elsewhere. Call Done when the work ends.
func NewProgress(w io.Writer, total int64, description string) *Progress {
	return newProgress(w, total, description, IsTerminal(w), systemClock{})
}

func newProgress(w io.Writer, total int64, description string, terminal bool, clock clock) *Progress {
	p := &Progress{w: w, total: total, description: description, clock: clock, start: clock.Now()}
	if !terminal {
		p.stop, p.exited = make(chan struct{}), make(chan struct{})
		tick, stop := clock.NewTicker(LogInterval)
		go p.log(tick, stop)
	}
	return p
}

// log writes a line on each tick until Done.
func (p *Progress) log(tick <-chan time.Time, stop func()) {
	defer close(p.exited)
	defer stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick:
			p.mu.Lock()
			p.line(false)
			p.mu.Unlock()
		}
	}
}

// line writes the state as one line, or that the work ended; p.mu is held.
func (p *Progress) line(end bool) {
	elapsed := p.clock.Now().Sub(p.start).Round(time.Second)
	state := ""
	if p.total > 0 {
		// Never past 100%: work that outgrows its estimate is at its end.
		state = fmt.Sprintf(": %d of %d (%.0f%%)", min(p.done, p.total), p.total, 100*float64(min(p.done, p.total))/float64(p.total))
	}
	if end {
		fmt.Fprintf(p.w, "darrm: %s%s; ended after %v\n", p.description, state, elapsed)
	} else {
		fmt.Fprintf(p.w, "darrm: %s%s; %v so far\n", p.description, state, elapsed)
	}
	p.logged = true
}

// terminal reports whether p draws a bar, creating it once the work has
// run long enough; p.mu is held.
func (p *Progress) terminal() bool {
	if p.stop != nil {
		return false
	}
	if p.bar != nil {
		return true
	}
	if p.clock.Now().Sub(p.start) < showAfter {
		return false
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(p.description),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionSetPredictTime(p.total > 0),
		progressbar.OptionClearOnFinish(),
	}
	if p.total > 0 {
		opts = append(opts, progressbar.OptionShowCount())
	}
	p.bar = progressbar.NewOptions64(p.total, opts...)
	return true
}

// Set moves the indicator to n units done.
func (p *Progress) Set(n int64) {
	p.locked(func() { p.done = n }, func(b *progressbar.ProgressBar) { _ = b.Set64(n) })
}

// Update moves the indicator to done of total units, for work whose total
// is known only once it runs.
func (p *Progress) Update(done, total int64) {
	p.locked(func() {
		p.done, p.total = done, total
		if p.bar != nil {
			p.bar.ChangeMax64(total)
		}
	}, func(b *progressbar.ProgressBar) { _ = b.Set64(done) })
}

// Describe replaces the text that says what the work is doing.
func (p *Progress) Describe(s string) {
	p.locked(func() { p.description = s }, func(b *progressbar.ProgressBar) { b.Describe(s) })
}

// locked runs set with p.mu held, then draw on the terminal's bar once
// there is one (terminal); a nil p does nothing.
func (p *Progress) locked(set func(), draw func(*progressbar.ProgressBar)) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	set()
	if p.terminal() {
		draw(p.bar)
	}
}

// Done ends the indicator: it clears the bar from a terminal, or, off a
// terminal, stops the lines, with a last one if any was written. Calling
// it again does nothing.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	if p.stop != nil {
		p.stopOnce.Do(func() {
			close(p.stop)
			<-p.exited
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.logged {
				p.line(true)
			}
		})
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
	}
}

// Stages shows the progress of one step of a run at a time: a step's line
// starts with its first report and ends at the next step's.
type Stages struct {
	w    io.Writer
	mu   sync.Mutex
	desc string
	prog *Progress
}

// NewStages returns the progress of steps on w.
func NewStages(w io.Writer) *Stages { return &Stages{w: w} }

// At returns the progress line of the step described as desc, for total
// units of work (-1: unknown), ending the line of the step before it.
func (s *Stages) At(desc string, total int64) *Progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prog == nil || s.desc != desc {
		s.end()
		s.desc, s.prog = desc, NewProgress(s.w, total, desc)
	}
	return s.prog
}

// Done ends the line of the last step.
func (s *Stages) Done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.end()
}

func (s *Stages) end() {
	if s.prog != nil {
		s.prog.Done()
		s.prog = nil
	}
}

// TrainingProgress is the progress of work that may train teachers: one
// indicator for each stage, the training's counting the teachers done.
type TrainingProgress struct {
	w     io.Writer
	p     *Progress
	after string
}

// NewTrainingProgress starts the progress of the work first on w;
// after is what follows a training.
func NewTrainingProgress(w io.Writer, first, after string) *TrainingProgress {
	return &TrainingProgress{w: w, p: NewProgress(w, -1, first), after: after}
}

// Teachers hears of the teachers trained (teachers.Config.Progress).
func (t *TrainingProgress) Teachers(done, total int) {
	if done == 0 {
		t.p.Done()
		t.p = NewProgress(t.w, int64(total), "training the teachers")
	}
	t.p.Set(int64(done))
	if done == total {
		t.p.Done()
		t.p = NewProgress(t.w, -1, t.after)
	}
}

// Done ends the progress.
func (t *TrainingProgress) Done() { t.p.Done() }
