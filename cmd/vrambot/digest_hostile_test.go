package main

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vrambot/vrambot/digest/digesttest"
	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/internal/slacktest"
)

// TestDigestOfAHostilePrometheus posts the digest of a Prometheus whose
// labels carry Slack markup and control characters and whose samples
// include NaN, infinities and negative memory (issue 26): it is posted,
// with the markup escaped and no non-finite figure in it.
func TestDigestOfAHostilePrometheus(t *testing.T) {
	start := digesttest.ClusterStart
	markup := digesttest.GPULabels("Hostname", "<!channel> *bold* <@U999|boss>\nnext", "0", "GPU-aaaa", "NVIDIA A100-SXM4-80GB", "10.0.0.1:9400",
		digesttest.Workload("<!here>", "<https://evil.example|click me>", "trainer")...)
	odd := digesttest.GPULabels("Hostname", strings.Repeat("h", 5000), "1", "GPU-bbbb", "NVIDIA A100-SXM4-80GB", "10.0.0.2:9400")
	at := func(v float64) func(time.Time) (float64, bool) {
		return func(time.Time) (float64, bool) { return v, true }
	}
	series := digesttest.Memory(markup, 81920, 500, digesttest.Constant(80000), false)
	series = append(series,
		digesttest.Series{Metric: fleet.MetricFBUsed, Labels: odd, Value: at(math.NaN())},
		digesttest.Series{Metric: fleet.MetricFBFree, Labels: odd, Value: at(math.Inf(1))},
		digesttest.Series{Metric: fleet.MetricFBReserved, Labels: odd, Value: at(-500)},
		digesttest.Series{Metric: fleet.MetricGPUUtil, Labels: markup, Value: at(-1e9)},
	)
	prom := digesttest.FakePrometheus(t, digesttest.Day{Start: start, End: start.Add(24 * time.Hour), Every: 5 * time.Minute, Series: series})
	fs := slacktest.New(t)
	vars := map[string]string{"VRAMBOT_PROMETHEUS_URL": prom.URL, "SLACK_BOT_TOKEN": slacktest.BotToken, "VRAMBOT_SLACK_API_URL": fs.APIURL(), "VRAMBOT_DIGEST_CHANNEL": "C0DIGEST"}
	code, _, stderr := runCLI(t, vars, "", "digest", "--at", start.Add(24*time.Hour).Format(time.RFC3339))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	posts := fs.Replies()
	if len(posts) == 0 {
		t.Fatal("nothing posted")
	}
	for _, c := range posts {
		all := c.Args.Get("blocks") + c.Args.Get("text") + c.Args.Get("initial_comment") + string(c.Body)
		for _, raw := range []string{"<!channel>", "<!here>", "<@U999", "<https://evil", "NaN", "+Inf", "Infinity", strings.Repeat("h", 254)} {
			if strings.Contains(all, raw) {
				t.Errorf("%s carries %.20q raw", c.Method, raw)
			}
		}
	}
}
