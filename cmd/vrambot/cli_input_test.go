//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestConfigMustBeAFile: --config names a regular file; a FIFO with no
// writer (whose open would wait forever), a directory or a device is
// refused at once, in one line, with exit status 2.
func TestConfigMustBeAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "config.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	tests := []struct{ name, path, want string }{
		{"FIFO", fifo, "is a named pipe (FIFO), not a regular file"},
		{"directory", dir, "is a directory, not a regular file"},
		{"device", os.DevNull, "is a character device, not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			code, _, stderr := runCLI(t, nil, "", "vram", "--config", tt.path, "inference", "h100")
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("took %s", took)
			}
			if code != 2 || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
	code, _, stderr := runCLI(t, nil, "", "oom", fifo)
	if code != 2 || !strings.Contains(stderr, "named pipe") {
		t.Errorf("oom FIFO: exit %d, %q", code, stderr)
	}
}

// TestSignalEndsAWaitingRead runs the binary (this test binary re-run as
// main) on stdin that nobody writes to, and sends it SIGTERM or SIGINT:
// it ends within 3 s, saying it was interrupted.
func TestSignalEndsAWaitingRead(t *testing.T) {
	if os.Getenv("VRAMBOT_TEST_RUN_MAIN") == "1" {
		os.Args = append([]string{"vrambot"}, strings.Fields(os.Getenv("VRAMBOT_TEST_ARGS"))...)
		main()
		return
	}
	tests := []struct {
		args string
		sig  syscall.Signal
	}{
		{"oom -", syscall.SIGTERM},
		{"oom", syscall.SIGINT},
		{"vram --config - inference h100", syscall.SIGTERM},
	}
	for _, tt := range tests {
		t.Run(tt.args+" "+tt.sig.String(), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close() // a writer that never writes: the read waits
			cmd := exec.Command(os.Args[0], "-test.run=^TestSignalEndsAWaitingRead$")
			cmd.Env = append(os.Environ(), "VRAMBOT_TEST_RUN_MAIN=1", "VRAMBOT_TEST_ARGS="+tt.args)
			cmd.Stdin = r
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			r.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			time.Sleep(time.Second) // it is reading stdin by now
			sent := time.Now()
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if took := time.Since(sent); took > 3*time.Second {
					t.Errorf("ended %s after the signal", took)
				}
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "interrupted before the input was read") {
					t.Errorf("exit %v, stderr %q; want status 1, interrupted", err, stderr.String())
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running 10 s after %s", tt.sig)
			}
		})
	}
}
