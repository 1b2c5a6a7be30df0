package job

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/internal/golden"
)

// render writes a reading as a golden file shows it: the query it makes,
// then every key with what it became.
func render(j Job, err error) string {
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "format: %s\nquery: %s\n", j.Format, j.Words().String())
	b.WriteString("read:\n")
	for _, it := range j.Read {
		fmt.Fprintf(&b, "  %s: %s", it.Key, it.Value)
		if it.As != "" {
			fmt.Fprintf(&b, " → %s", it.As)
		}
		if it.Note != "" {
			fmt.Fprintf(&b, " (%s)", it.Note)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "ignored: %s\nunknown: %s\n", strings.Join(j.Ignored, ", "), strings.Join(j.Unknown, ", "))
	for _, n := range j.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}

// TestGolden reads every job under testdata/jobs (public files with their
// sources in SOURCES.md, and our own) and compares the reading with
// testdata/golden; go test -update rewrites them. A file under a format's
// folder must read as that format, one under none/ must be refused.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/jobs/*/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("only %d job files under testdata/jobs", len(files))
	}
	formats := map[Format]bool{}
	for _, f := range files {
		rel, _ := filepath.Rel("testdata/jobs", f)
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			j, err := Read(string(data))
			dir := filepath.Dir(rel)
			switch {
			case dir == "none" && err == nil:
				t.Errorf("read as %s, want no job", j.Format)
			case dir != "none" && dir != "own" && err != nil:
				t.Errorf("not read: %v", err)
			case dir != "none" && dir != "own" && string(j.Format) != dir:
				t.Errorf("read as %s, want %s", j.Format, dir)
			}
			if err == nil {
				formats[j.Format] = true
			}
			golden.Check(t, filepath.Join("golden", rel+".txt"), []byte(render(j, err)))
		})
	}
	for _, f := range Formats {
		if !formats[f] {
			t.Errorf("no golden job of format %s", f)
		}
	}
}
