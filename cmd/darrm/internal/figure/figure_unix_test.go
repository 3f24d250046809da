//go:build unix

package figure

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSaveFIFOInterrupted: a figure named for a FIFO that no process reads
// (darrm solve --plot fifo.svg) waits in its open for a reader, and an
// interruption ends that wait with its error, as it ends --out's: written
// in context.Background, SIGTERM there was ended by main's last resort
// only. The minute is a hang's limit, not a timing.
func TestSaveFIFOInterrupted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo.svg")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error, 1)
	go func() { done <- onePanel().Save(ctx, path) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("figure to a FIFO, interrupted: %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		// Open the reader's end, so that the blocked open returns.
		if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			go io.Copy(io.Discard, r)
			<-done
			r.Close()
		}
		t.Error("figure to a FIFO, interrupted: still waiting for a reader a minute later")
	}
}
