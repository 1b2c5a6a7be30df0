package accuracy

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/memory"
)

func TestTmpDebug(t *testing.T) {
	ids := strings.Split(os.Getenv("IDS"), ",")
	for _, f := range []string{"blind-2026-cases.jsonl", "holdout-2026-cases.jsonl"} {
		for _, c := range loadFile(t, "testdata/"+f) {
			for _, id := range ids {
				if c.ID == id {
					w, m, _ := c.Workload()
					b := memory.Estimate(w)
					fmt.Printf("== %s %v reported %.2f\n%+v\n%+v\n\n", id, m, c.ReportedGB, w, b)
				}
			}
		}
	}
}
