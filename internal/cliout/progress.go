package cliout

import (
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress reports the state of long-running work on a terminal. It appears
// only once the work has run for longer than a moment, and never when the
// writer is not a terminal, so that logs and pipes stay clean. A nil
// *Progress is inert. Its methods are safe for concurrent use.
type Progress struct {
	mu          sync.Mutex
	w           io.Writer
	total       int64
	description string
	start       time.Time
	bar         *progressbar.ProgressBar
}

// showAfter is how long work runs before a progress indicator appears.
const showAfter = 700 * time.Millisecond

// NewProgress returns a progress indicator on w for total units of work, or
// a spinner when total is -1 (the amount of work is unknown). It returns nil
// when w is not a terminal.
func NewProgress(w io.Writer, total int64, description string) *Progress {
	if !IsTerminal(w) {
		return nil
	}
	return &Progress{w: w, total: total, description: description, start: time.Now()}
}

// ensure creates the bar once the work has run long enough; p.mu is held.
func (p *Progress) ensure() bool {
	if p.bar != nil {
		return true
	}
	if time.Since(p.start) < showAfter {
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
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ensure() {
		_ = p.bar.Set64(n)
	}
}

// Update moves the indicator to done of total units, for work whose total
// is known only once it runs.
func (p *Progress) Update(done, total int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = total
	if p.bar != nil {
		p.bar.ChangeMax64(total)
	}
	if p.ensure() {
		_ = p.bar.Set64(done)
	}
}

// Describe replaces the text shown beside the indicator.
func (p *Progress) Describe(s string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.description = s
	if p.ensure() {
		p.bar.Describe(s)
	}
}

// Done removes the indicator from the terminal.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
	}
}
