//go:build unix

package readfile_test

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/vrambot/vrambot/internal/readfile"
)

// TestFIFORefused: a named pipe with no writer (whose open would wait for
// one forever) is refused before it is opened.
func TestFIFORefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "config.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := readfile.File(ctx, fifo, 1<<20)
	if nr, ok := errors.AsType[*readfile.NotRegularError](err); !ok || nr.What != "a named pipe (FIFO)" {
		t.Fatalf("File(fifo) = %v, want a NotRegularError naming a FIFO", err)
	}
}
