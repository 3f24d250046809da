// Package ctxio makes blocking reads, writes and opens return when a
// context is done: standard input with no data, a stalled pipe on standard
// output, a FIFO with no writer. The blocked system call itself cannot be
// interrupted, so it is left running in a goroutine of its own; this is
// meant for a program that exits soon after its context is cancelled (an
// interrupt), not for one that goes on.
package ctxio

import (
	"context"
	"io"
	"os"
)

// result is the outcome of one read or write done by a helper goroutine.
type result struct {
	n   int
	err error
}

// Reader is an io.Reader whose Read returns ctx's error as soon as ctx is
// done, even while the underlying Read blocks.
type Reader struct {
	ctx context.Context
	r   io.Reader
	req chan int // sizes to read, to the helper goroutine
	res chan result
	buf []byte // the helper's buffer: it owns it while a read runs
	err error  // a cancellation, after which every Read fails
}

// maxChunk bounds the helper's buffer.
const maxChunk = 64 << 10

// NewReader returns a Reader of r that stops at ctx's end.
func NewReader(ctx context.Context, r io.Reader) *Reader {
	return &Reader{ctx: ctx, r: r}
}

// Unwrap returns the underlying reader.
func (r *Reader) Unwrap() io.Reader { return r.r }

// Read reads from the underlying reader into p; if ctx is done first, it
// returns ctx.Err() and the underlying read is abandoned.
func (r *Reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if r.req == nil {
		r.req, r.res = make(chan int), make(chan result, 1)
		r.buf = make([]byte, maxChunk)
		go r.loop()
	}
	r.req <- min(len(p), len(r.buf))
	select {
	case res := <-r.res:
		n := copy(p, r.buf[:res.n])
		return n, res.err
	case <-r.ctx.Done():
		r.err = r.ctx.Err()
		return 0, r.err
	}
}

// Close stops the helper goroutine once it is idle; it does not close the
// underlying reader.
func (r *Reader) Close() error {
	if r.req != nil {
		close(r.req)
		r.req = nil
	}
	r.err = io.ErrClosedPipe
	return nil
}

// loop serves reads until a cancelled Read stops asking (the goroutine is
// then parked, or blocked in the underlying Read, until the program exits).
func (r *Reader) loop() {
	for n := range r.req {
		k, err := r.r.Read(r.buf[:n])
		r.res <- result{k, err}
	}
}

// Writer is an io.Writer whose Write returns when ctx is done, even while
// the underlying Write blocks (a pipe whose reader has stalled).
type Writer struct {
	ctx context.Context
	w   io.Writer
	req chan []byte
	res chan result
	buf []byte // the helper's copy of the data being written
	err error
}

// NewWriter returns a Writer to w that stops at ctx's end.
func NewWriter(ctx context.Context, w io.Writer) *Writer {
	return &Writer{ctx: ctx, w: w}
}

// Write writes p to the underlying writer. If ctx is done before that
// write returns, Write returns len(p) and ctx.Err(): the abandoned write
// may still deliver any part of p, so every byte of it counts as possibly
// written. Later writes fail with the same error.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if err := w.ctx.Err(); err != nil {
		w.err = err
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if w.req == nil {
		w.req, w.res = make(chan []byte), make(chan result, 1)
		go w.loop()
	}
	// The helper writes a copy: an abandoned write may go on after Write
	// returns, and p is the caller's again by then.
	w.buf = append(w.buf[:0], p...)
	w.req <- w.buf
	select {
	case res := <-w.res:
		return res.n, res.err
	case <-w.ctx.Done():
		w.err = w.ctx.Err()
		return len(p), w.err
	}
}

func (w *Writer) loop() {
	for p := range w.req {
		n, err := w.w.Write(p)
		w.res <- result{n, err}
	}
}

// Close stops the helper goroutine once it is idle; it does not close the
// underlying writer.
func (w *Writer) Close() error {
	if w.req != nil {
		close(w.req)
		w.req = nil
	}
	w.err = io.ErrClosedPipe
	return nil
}

// Unwrap returns the underlying writer.
func (w *Writer) Unwrap() io.Writer { return w.w }

// OpenFile is os.OpenFile that returns ctx.Err() if ctx is done while the
// open blocks (a FIFO waiting for its other end); a file opened after that
// is closed.
func OpenFile(ctx context.Context, name string, flag int, perm os.FileMode) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(name, flag, perm)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
