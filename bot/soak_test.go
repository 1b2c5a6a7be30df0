package bot

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vrambot/vrambot/internal/slacktest"
	"github.com/vrambot/vrambot/internal/testutil"
	"github.com/vrambot/vrambot/store/storetest"
)

// soakDuration is how long TestSoak runs: VRAMBOT_SOAK (a duration, e.g.
// 30s), off when unset. CI runs it short (.ci/run).
func soakDuration(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv("VRAMBOT_SOAK")
	if v == "" {
		t.Skip("soak test off: set VRAMBOT_SOAK to a duration (e.g. VRAMBOT_SOAK=30s) to run it")
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("VRAMBOT_SOAK=%q: want a duration such as 30s", v)
	}
	return d
}

// Slack's redelivery schedule for an event that got no 2xx: nearly at
// once, after about a minute, after about five (docs/slack.md §A.3),
// compressed here 30-fold, as is the claim lease (45 s → 1.5 s): a lease
// applied late by a paused Redis lapses before the retry "a minute" later.
var soakRetryAfter = []time.Duration{100 * time.Millisecond, 2 * time.Second, 10 * time.Second}

// TestSoak runs two replicas on one real Redis against a stand-in Slack
// that fails: bursts of pastes in a few channels and a steady trickle in
// many; Redis paused for 1 s every 4.5 s (writes still land, late); Slack
// answering 1 in 10 posts with a 500, 1 in 20 slowly (far past the attempt
// timeout, so the request is abandoned before Slack would act on it), 1 in
// 50 with a 429. Events are redelivered on Slack's schedule
// until one delivery is acked. Every event must be answered exactly once.
func TestSoak(t *testing.T) {
	d := soakDuration(t)
	rs, proxy := storetest.NewPausableRedis(t)
	fs := slacktest.New(t)
	var chaos sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	fs.SetFaults("chat.postMessage", func(int, *slacktest.Call) slacktest.Fault {
		chaos.Lock()
		defer chaos.Unlock()
		switch p := rng.Float64(); {
		case p < 0.10:
			return slacktest.Fault{Status: http.StatusInternalServerError}
		case p < 0.15:
			return slacktest.Fault{Delay: 5 * time.Second}
		case p < 0.17:
			return slacktest.Fault{Status: http.StatusTooManyRequests, RetryAfter: 1}
		}
		return slacktest.Fault{}
	})
	var logs testutil.Buffer
	opts := func(c *Config, dp *Deps) {
		dp.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		c.PostInterval = 20 * time.Millisecond
		c.ClaimTTL = 1500 * time.Millisecond
		// An attempt timeout far above a loaded machine's answer time: a
		// retry after an answer that was merely slow would post twice, as
		// it would against Slack.
		c.Retry = RetryPolicy{Deadline: 30 * time.Second, AttemptTimeout: 2 * time.Second, BaseDelay: 20 * time.Millisecond, MaxDelay: 200 * time.Millisecond, MaxAttempts: 10}
	}
	replicas := []*testServer{newTestServer(t, fs, rs, opts), newTestServer(t, fs, rs, opts)}
	bases := []string{serveReal(t, replicas[0]), serveReal(t, replicas[1])}

	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Go(func() { // the Redis pauses
		for {
			select {
			case <-stop:
				proxy.Resume()
				return
			case <-time.After(3500 * time.Millisecond):
			}
			proxy.Pause()
			time.Sleep(time.Second)
			proxy.Resume()
		}
	})

	// deliver is Slack delivering one event: to a random replica, again on
	// the retry schedule until a 2xx.
	var acked, lost, sent, slow atomic.Int32
	deliver := func(id string, inner map[string]any) {
		body := slacktest.EventBody(id, inner)
		var codes []string
		for attempt := 0; ; attempt++ {
			req := slacktest.SignedRequest(t, bases[rand.IntN(len(bases))]+"/slack/events", slacktest.JSONContent, body)
			if attempt > 0 {
				req.Header.Set("X-Slack-Retry-Num", fmt.Sprint(attempt))
				req.Header.Set("X-Slack-Retry-Reason", "http_error")
			}
			client := &http.Client{Timeout: 3 * time.Second} // Slack's ack deadline
			resp, err := client.Do(req)
			if err != nil {
				slow.Add(1) // Slack's http_timeout: it sends the event again
				codes = append(codes, time.Now().Format("05.000")+" timeout")
			} else {
				resp.Body.Close()
				codes = append(codes, fmt.Sprintf("%s %d", time.Now().Format("05.000"), resp.StatusCode))
				if resp.StatusCode/100 == 2 {
					acked.Add(1)
					return
				}
			}
			if attempt == len(soakRetryAfter) {
				lost.Add(1)
				var lines []string
				for _, l := range strings.Split(logs.String(), "\n") {
					if strings.Contains(l, id) {
						lines = append(lines, l)
					}
				}
				t.Errorf("event %s never acked: %v\n%s", id, codes, strings.Join(lines, "\n"))
				return
			}
			time.Sleep(soakRetryAfter[attempt])
		}
	}
	var senders sync.WaitGroup
	threads := map[string]bool{} // every event's thread_ts
	n := 0
	next := func(channel string) (string, map[string]any) {
		n++
		ts := fmt.Sprintf("1700100000.%06d", n)
		threads[ts] = true
		sent.Add(1)
		return fmt.Sprintf("EvSoak%06d", n), slacktest.Message(channel, ts, oomPaste)
	}
	deadline := time.Now().Add(d)
	for tick := 0; time.Now().Before(deadline); tick++ {
		if tick%20 == 0 { // a burst of 25 pastes in one channel every 2 s
			ch := fmt.Sprintf("CBURST%d", tick/20%3)
			for range 25 {
				id, ev := next(ch)
				senders.Go(func() { deliver(id, ev) })
			}
		}
		for range 2 { // and a trickle over 40 channels
			id, ev := next(fmt.Sprintf("C%d", rand.IntN(40)))
			senders.Go(func() { deliver(id, ev) })
		}
		time.Sleep(100 * time.Millisecond)
	}
	senders.Wait()
	close(stop)
	bg.Wait()
	for _, r := range replicas {
		r.idle(t)
	}

	answers := map[string]int{}
	for _, c := range fs.Answered("chat.postMessage") {
		if th := c.Args.Get("thread_ts"); th != "" {
			answers[th]++
		}
	}
	missing, twice := 0, 0
	for ts := range threads {
		switch answers[ts] {
		case 1:
		case 0:
			missing++
		default:
			twice++
			var seen []string
			for _, c := range fs.Calls("chat.postMessage") {
				if c.Args.Get("thread_ts") == ts {
					seen = append(seen, fmt.Sprintf("%s status %d %s", c.At.Format("15:04:05.000"), c.Status, c.Error))
				}
			}
			t.Errorf("paste %s answered %d times: %v", ts, answers[ts], seen)
		}
	}
	calls := fs.Calls("chat.postMessage")
	t.Logf("soak %v: %d events, %d acked, %d never acked, %d acks later than 3 s; %d answered, %d missing, %d answered more than once; %d chat.postMessage calls, %d answered",
		d, sent.Load(), acked.Load(), lost.Load(), slow.Load(), len(answers), missing, twice, len(calls), len(fs.Answered("chat.postMessage")))
	if missing > 0 || twice > 0 {
		t.Errorf("%d of %d events unanswered, %d answered more than once", missing, len(threads), twice)
	}
	for i, r := range replicas {
		t.Logf("replica %d:\n%s", i, grepLines(scrape(t, r), "vrambot_slack_"))
	}
}
