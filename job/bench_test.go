package job

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkRead reads one job of each format (go test -bench Read ./job):
// reading a job must add well under a millisecond to an answer
// (docs/jobs.md §5).
func BenchmarkRead(b *testing.B) {
	files, _ := filepath.Glob("testdata/jobs/*/*")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		rel, _ := filepath.Rel("testdata/jobs", f)
		b.Run(rel, func(b *testing.B) {
			text := string(data)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				_, _ = Read(text)
			}
		})
	}
}
