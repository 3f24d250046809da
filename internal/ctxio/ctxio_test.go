//go:build unix

package ctxio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReader passes data through, and returns at a cancellation while the
// underlying read blocks (a pipe with no data and no EOF).
func TestReader(t *testing.T) {
	b, err := io.ReadAll(NewReader(context.Background(), strings.NewReader(strings.Repeat("x", 200_000))))
	if err != nil || len(b) != 200_000 {
		t.Fatalf("read %d bytes, %v", len(b), err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r := NewReader(ctx, pr)
	pw.WriteString("abc")
	p := make([]byte, 10)
	if n, err := r.Read(p); err != nil || string(p[:n]) != "abc" {
		t.Fatalf("read %q, %v", p[:n], err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := r.Read(p); !errors.Is(err, context.Canceled) {
		t.Errorf("blocked read after cancel: %v", err)
	}
	if _, err := r.Read(p); !errors.Is(err, context.Canceled) {
		t.Errorf("read after cancel: %v", err)
	}
}

// TestWriter passes data through, and at a cancellation while the
// underlying write blocks (a pipe nobody reads) counts the whole of it as
// possibly written.
func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(context.Background(), &buf)
	if n, err := w.Write([]byte("hello")); n != 5 || err != nil || buf.String() != "hello" {
		t.Fatalf("write: %d, %v, %q", n, err, buf.String())
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	ctx, cancel := context.WithCancel(context.Background())
	// Cancel once the pipe's write has begun (it blocks: nobody reads), so
	// that a slow machine cannot cancel before Write starts.
	started := make(chan struct{})
	w = NewWriter(ctx, writerFunc(func(p []byte) (int, error) {
		close(started)
		return pw.Write(p)
	}))
	go func() {
		<-started
		time.Sleep(10 * time.Millisecond)
		cancel()
	}()
	p := make([]byte, 4<<20) // more than a pipe holds
	if n, err := w.Write(p); n != len(p) || !errors.Is(err, context.Canceled) {
		t.Errorf("blocked write after cancel: %d, %v", n, err)
	}
	if n, err := w.Write(p); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("write after cancel: %d, %v", n, err)
	}
}

// TestOpenFile returns at a cancellation while opening a FIFO that has no
// writer blocks.
func TestOpenFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := OpenFile(ctx, fifo, os.O_RDONLY, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("open of a FIFO without writer after cancel: %v", err)
	}
	// Let the abandoned open finish, so the test leaves nothing blocked.
	if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
		f.Close()
	}
	f, err := OpenFile(context.Background(), filepath.Join(t.TempDir(), "new"), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// writerFunc is an io.Writer from a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
