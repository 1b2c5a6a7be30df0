// Package readfile reads what a command line names: a file, or stdin for
// "-". It reads only regular files (a FIFO with no writer, a device or a
// directory is refused before it is opened, and the opened file is checked
// again, so one swapped in between is refused too), at most a given size,
// and it gives up as soon as ctx ends, whatever the read is waiting on (a
// terminal, a pipe nobody writes to, a slow disk), so SIGTERM and SIGINT
// end the command. `vrambot vram --config FILE|-` and `vrambot oom
// [FILE|-]` use it; a future `--job FILE|-` should too.
package readfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrTooLarge: the input holds more than the maximum. Read and File
// return the first max bytes with it.
var ErrTooLarge = errors.New("larger than the limit")

// NotRegularError is a path that names something other than a regular
// file.
type NotRegularError struct {
	Path string
	What string // "a named pipe (FIFO)", "a directory", "a device", ...
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, e.What)
}

// describe names a file mode that is not a regular file.
func describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a file"
}

// File reads the regular file at path, at most max bytes (ErrTooLarge
// past them). It refuses anything else with a *NotRegularError, and
// returns ctx's error when ctx ends first.
func File(ctx context.Context, path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, What: describe(fi.Mode())}
	}
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		// Opened and read in a goroutine of its own: even a file swapped
		// for a FIFO after the Stat above (whose open waits for a writer)
		// cannot hold the caller past ctx. The goroutine closes the file.
		data, err := readRegular(path, fi, max)
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readRegular opens path, checks that it is still the regular file fi,
// and reads at most max bytes of it.
func readRegular(path string, fi fs.FileInfo, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	after, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case !after.Mode().IsRegular():
		return nil, &NotRegularError{Path: path, What: describe(after.Mode())}
	case !os.SameFile(fi, after):
		return nil, fmt.Errorf("%s was replaced while it was opened", path)
	}
	return readAtMost(f, max)
}

// Read reads r (stdin) to its end, at most max bytes (ErrTooLarge past
// them), and returns ctx's error when ctx ends first. The read itself
// cannot be interrupted: it is left to finish, or to end with the
// process, in a goroutine of its own.
func Read(ctx context.Context, r io.Reader, max int64) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := readAtMost(r, max)
		done <- result{data, err}
	}()
	select {
	case res := <-done:
		return res.data, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readAtMost reads r to its end or to max bytes, whichever is first.
func readAtMost(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return data[:max], ErrTooLarge
	}
	return data, nil
}
