package oom

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/internal/oomcorpus"
)

// maxReportJSON bounds the JSON of any report: the fields are numbers and
// short strings, extra holds a handful of values.
const maxReportJSON = 64 << 10

func FuzzParse(f *testing.F) {
	for _, set := range oomcorpus.Sets {
		for _, c := range oomcorpus.MustLoad(set) {
			f.Add(c.Text)
			f.Add(slackEscape(c.Text))
		}
	}
	f.Add("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.00 GiB is free.")
	f.Add("<span>OutOfMemoryError</span>: CUDA out of memory. Tried to allocate 1 GiB (GPU 0; 2 GiB total capacity; 1 GiB already allocated; 0 bytes free; 1 GiB cached)")
	f.Add("\x1b[31m[rank1]: Tried to allocate 99999999999999999999 GiB (GPU 0;\r\n")
	f.Add(`{"error": "x\\ny\\nallocating 1.00 MiB on device 0: cudaMalloc failed: out of memory\\u00e9\\"\\\\"}`)
	f.Add("invoked oom-killer\nOut of memory: Killed process 1 (python) total-vm:1kB, anon-rss:99999999999999999999kB\nKilled\n")
	f.Fuzz(func(t *testing.T, text string) {
		r := Parse(text)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if len(b) > maxReportJSON {
			t.Fatalf("report JSON is %d bytes", len(b))
		}
		if !r.Detected && (r.TriedToAllocateBytes != nil || r.Occurrences != 0) {
			t.Fatalf("fields set without a detection: %s", b)
		}
		if r.Detected && (r.Occurrences < 1 || r.Occurrences > len(text)) {
			t.Fatalf("occurrences %d for %d bytes", r.Occurrences, len(text))
		}
		for _, p := range []*int64{r.TriedToAllocateBytes, r.TotalCapacityBytes, r.FreeBytes, r.AllocatedByFrameworkBytes,
			r.ReservedByFrameworkBytes, r.ReservedUnallocatedBytes, r.ProcessInUseBytes} {
			if p != nil && *p < 0 {
				t.Fatalf("negative size: %s", b)
			}
		}
		_ = Diagnose(r)
	})
}

// FuzzUnescapeJSON checks the JSON string unescaper on any bytes: it never
// grows its input and leaves text without backslashes as it is.
func FuzzUnescapeJSON(f *testing.F) {
	f.Add(`{"detail": "CUDA out of memory.\\nTried\\t\\"x\\" \\u00e9 \\\\n"}`)
	f.Add(`\u12`)
	f.Add(`\`)
	f.Fuzz(func(t *testing.T, s string) {
		out := unescapeJSON(s)
		if len(out) > len(s) {
			t.Fatalf("unescape grew %d bytes to %d", len(s), len(out))
		}
		if !strings.Contains(s, `\`) && out != s {
			t.Fatalf("changed text without escapes: %q -> %q", s, out)
		}
	})
}

// FuzzNeedleSet checks the one-pass needle scan against strings.Index:
// a line holds a hit exactly when one of the needles occurs in it.
func FuzzNeedleSet(f *testing.F) {
	f.Add("x\nCUDA out of memory. Tried to allocate\nKilled\nnothing\n")
	f.Add("f memoryf memory\n\n\nOOMKilled")
	f.Fuzz(func(t *testing.T, text string) {
		ns := windowNeedles
		hits := ns.lineHits(text, len(text)+1)
		lineHas := map[int]bool{}
		for _, h := range hits {
			lineHas[strings.Count(text[:h], "\n")] = true
		}
		for i, line := range strings.Split(text, "\n") {
			want := false
			for _, g := range ns.groups[1:] {
				for _, n := range g {
					want = want || strings.Contains(line, n)
				}
			}
			if lineHas[i] != want {
				t.Fatalf("line %d %q: hit %v, a needle occurs: %v", i, line, lineHas[i], want)
			}
		}
	})
}
