package readfile_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vrambot/vrambot/internal/readfile"
)

func TestFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "config.json")
	big := filepath.Join(dir, "big.json")
	link := filepath.Join(dir, "link.json")
	if err := os.WriteFile(small, []byte(`{"a": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want string // the content (with an error, what comes with it)
		err  func(error) bool
	}{
		{"regular file", small, `{"a": 1}`, nil},
		{"a link to a regular file", link, `{"a": 1}`, nil},
		{"too large: the first bytes, and ErrTooLarge", big, strings.Repeat("x", 50), func(err error) bool { return errors.Is(err, readfile.ErrTooLarge) }},
		{"directory", dir, "", notRegular("a directory")},
		{"missing", filepath.Join(dir, "nope"), "", func(err error) bool { return errors.Is(err, os.ErrNotExist) }},
		{"character device", os.DevNull, "", notRegular("a character device")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := readfile.File(t.Context(), tt.path, 50)
			if tt.err == nil {
				if err != nil || string(data) != tt.want {
					t.Fatalf("File = %q, %v; want %q", data, err, tt.want)
				}
				return
			}
			if !tt.err(err) || string(data) != tt.want {
				t.Fatalf("File = %q, %v", data, err)
			}
		})
	}
}

func notRegular(what string) func(error) bool {
	return func(err error) bool {
		nr, ok := errors.AsType[*readfile.NotRegularError](err)
		return ok && nr.What == what
	}
}

// TestReadEndsWithContext: a read of stdin that nobody writes to ends
// when ctx does.
func TestReadEndsWithContext(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := readfile.Read(ctx, r, 1<<20); done <- err }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Read = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read did not end with its context")
	}
}

func TestReadLimits(t *testing.T) {
	data, err := readfile.Read(t.Context(), strings.NewReader("0123456789"), 4)
	if !errors.Is(err, readfile.ErrTooLarge) || string(data) != "0123" {
		t.Errorf("Read = %q, %v; want the first 4 bytes and ErrTooLarge", data, err)
	}
	data, err = readfile.Read(t.Context(), strings.NewReader("0123"), 4)
	if err != nil || string(data) != "0123" {
		t.Errorf("Read = %q, %v", data, err)
	}
}
