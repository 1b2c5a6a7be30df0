// Package golden compares test output with files under testdata/ and
// rewrites them when the test binary runs with -update. It is for tests only.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// Check compares got with testdata/name, or rewrites that file with -update.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// Section compares got with the text of file between the lines
// "<!-- name -->" and "<!-- /name -->" (a generated part of a document,
// such as the README's grammar table), or rewrites it with -update.
func Section(t testing.TB, file, name string, got string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- "+name+" -->\n", "<!-- /"+name+" -->"
	text := string(raw)
	i := strings.Index(text, begin)
	j := strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no section %q (lines %q and %q)", file, name, strings.TrimSpace(begin), end)
	}
	want := text[i+len(begin) : j]
	if *update {
		if err := os.WriteFile(file, []byte(text[:i+len(begin)]+got+text[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("the %q section of %s differs from what the code generates (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", name, file, got, want)
	}
}
