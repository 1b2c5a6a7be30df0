package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/vrambot/vrambot/bot"
	"github.com/vrambot/vrambot/internal/cli"
	"github.com/vrambot/vrambot/internal/slacktest"
	"github.com/vrambot/vrambot/internal/testutil"
	"github.com/vrambot/vrambot/store"
	"github.com/vrambot/vrambot/store/storetest"
)

// oomPaste is a PyTorch OOM message the real parser detects.
const oomPaste = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has 77.90 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated."

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// served is a running `vrambot serve`.
type served struct {
	base   string
	slack  *slacktest.Server
	stderr *testutil.Buffer
	stop   func() int // cancels serve and returns its exit status
}

// startServe runs `vrambot serve` as the harness would: environment
// variables only (SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, VRAMBOT_ADDR and
// VRAMBOT_SLACK_API_URL set for the stand-in Slack, plus extra), signed
// requests to the real routes.
func startServe(t testing.TB, extra map[string]string) *served {
	t.Helper()
	fs := slacktest.New(t)
	addr := freeAddr(t)
	vars := map[string]string{
		"SLACK_BOT_TOKEN":       slacktest.BotToken,
		"SLACK_SIGNING_SECRET":  slacktest.SigningSecret,
		"VRAMBOT_ADDR":          addr,
		"VRAMBOT_SLACK_API_URL": fs.APIURL(),
	}
	for k, v := range extra {
		vars[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	stderr := &testutil.Buffer{}
	go func() {
		done <- run(ctx, []string{"serve"}, strings.NewReader(""), io.Discard, stderr, func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	}()
	s := &served{base: "http://" + addr, slack: fs, stderr: stderr}
	var once sync.Once
	code := 0
	s.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(40 * time.Second):
				t.Fatal("serve did not stop after cancel")
			}
		})
		return code
	}
	t.Cleanup(func() { s.stop() })
	testutil.Eventually(t, 10*time.Second, "serve answers /healthz", func() bool {
		resp, err := http.Get(s.base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return s
}

func (s *served) do(t testing.TB, path, contentType string, body []byte, headers ...string) (int, string) {
	t.Helper()
	req := slacktest.SignedRequest(t, s.base+path, contentType, body)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (s *served) event(t testing.TB, id string, inner map[string]any, headers ...string) int {
	t.Helper()
	code, _ := s.do(t, "/slack/events", slacktest.JSONContent, slacktest.EventBody(id, inner), headers...)
	return code
}

// threads returns the thread_ts of every answered chat.postMessage.
func (s *served) threads() []string {
	var out []string
	for _, c := range s.slack.Answered("chat.postMessage") {
		out = append(out, c.Args.Get("thread_ts"))
	}
	return out
}

// checkNoSecrets fails if a credential reached serve's log.
func (s *served) checkNoSecrets(t testing.TB, more ...string) {
	t.Helper()
	out := s.stderr.String()
	for _, secret := range append([]string{slacktest.BotToken, slacktest.SigningSecret, "/response/"}, more...) {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
}

// TestServeEndToEnd: health and metrics, a slash command answered within
// Slack's 3 seconds, unsigned requests refused, an OOM paste answered once
// in its thread (a 500 from chat.postMessage retried), a click delivered
// twice shared once, a file redirect that would carry the token elsewhere
// refused, and no secret in the log.
func TestServeEndToEnd(t *testing.T) {
	elsewhere := slacktest.NewTrap(t, oomPaste)
	s := startServe(t, nil)
	for _, path := range []string{"/readyz", "/metrics"} {
		resp, err := http.Get(s.base + path)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %v %v", path, err, resp)
		}
		resp.Body.Close()
	}

	form := slacktest.SlashCommand("/vram", "llama-2-7b lora a100", s.slack.ResponseURL("1"))
	start := time.Now()
	code, body := s.do(t, "/slack/commands", slacktest.FormContent, []byte(form.Encode()))
	if code != http.StatusOK || time.Since(start) > 3*time.Second || !strings.Contains(body, `"blocks"`) {
		t.Fatalf("slash: %d after %s: %.300s", code, time.Since(start), body)
	}
	resp, err := http.Post(s.base+"/slack/commands", slacktest.FormContent, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned: %d, want 401", resp.StatusCode)
	}

	// A pasted OOM gets one threaded reply, through a 500 from Slack.
	s.slack.SetFaults("chat.postMessage", slacktest.FailFirst(1, slacktest.Fault{Status: http.StatusInternalServerError}))
	if code := s.event(t, "EvServe1", slacktest.Message("C1", "1700000000.000100", oomPaste)); code != http.StatusOK {
		t.Fatalf("event: %d", code)
	}
	testutil.Eventually(t, 10*time.Second, "the paste is answered", func() bool { return len(s.slack.Answered("chat.postMessage")) == 1 })
	if got := s.threads(); len(got) != 1 || got[0] != "1700000000.000100" || len(s.slack.Calls("chat.postMessage")) != 2 {
		t.Fatalf("threaded replies %v after %d calls", got, len(s.slack.Calls("chat.postMessage")))
	}

	// A click delivered twice is shared once.
	click := slacktest.BlockAction("U1", "C1", "share", "7b lora a100", "1700000001.000001", s.slack.ResponseURL("share"))
	for range 2 {
		if code, _ := s.do(t, "/slack/interactivity", slacktest.FormContent, []byte(click.Encode())); code != http.StatusOK {
			t.Fatalf("click: %d", code)
		}
	}
	testutil.Eventually(t, 10*time.Second, "the click is shared", func() bool { return len(s.slack.Answered(slacktest.MethodResponseURL)) >= 1 })
	time.Sleep(200 * time.Millisecond) // room for a second share to show up, if there were one
	if n := len(s.slack.Answered(slacktest.MethodResponseURL)); n != 1 {
		t.Errorf("shared %d times, want 1", n)
	}

	// A snippet whose URL redirects to another port is not fetched there.
	link := s.slack.RedirectFile("/files/T1-F1/train.log", elsewhere.URL+"/steal")
	files := []map[string]any{{"id": "F1", "name": "train.log", "mimetype": "text/plain", "filetype": "text", "mode": "snippet", "size": len(oomPaste), "url_private_download": link}}
	msg := slacktest.Message("C1", "1700000000.000300", "see log")
	msg["subtype"], msg["files"] = "file_share", files
	s.event(t, "EvServe2", msg)
	testutil.Eventually(t, 10*time.Second, "the redirect was tried", func() bool { return len(s.slack.Calls(slacktest.MethodDownload)) == 1 })

	if code := s.stop(); code != 0 {
		t.Errorf("serve exited %d: %s", code, s.stderr.String())
	}
	if n := elsewhere.Leaks(); n != 0 {
		t.Errorf("the token followed a redirect %d times", n)
	}
	if got := s.threads(); len(got) != 1 {
		t.Errorf("replies %v", got)
	}
	s.checkNoSecrets(t)
}

// TestServeJobs: serve's one cron holds every periodic job with the
// configured schedules, in VRAMBOT_TZ: the price refresh, the price
// reload, and the daily and weekly digests.
func TestServeJobs(t *testing.T) {
	vars := map[string]string{
		"VRAMBOT_DIGEST_CHANNEL":     "C0DIGEST",
		"VRAMBOT_DIGEST_CRON":        "30 8 * * 1-5",
		"VRAMBOT_DIGEST_WEEKLY_CRON": "0 7 * * 1",
		"VRAMBOT_PRICES_CRON":        "@every 2h",
		"VRAMBOT_TZ":                 "Europe/Berlin",
	}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	a, err := newApp(cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Lookup: lookup}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	jobs, err := a.serveJobs(bot.NewTokenPoster(slacktest.BotToken, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range jobs {
		names = append(names, j.name)
	}
	if !slices.Equal(names, []string{"prices-refresh", "prices-reload", "digest"}) {
		t.Fatalf("jobs %v", names)
	}
	c, err := newServeCron(t.Context(), a.cfg.Location, slog.New(slog.DiscardHandler), jobs)
	if err != nil {
		t.Fatal(err)
	}
	monday := time.Date(2026, 11, 30, 6, 0, 0, 0, a.cfg.Location)
	var next []time.Duration
	for _, e := range c.Entries() {
		next = append(next, e.Schedule.Next(monday).Sub(monday))
	}
	want := []time.Duration{2 * time.Hour, time.Minute, 2*time.Hour + 30*time.Minute, time.Hour}
	if !slices.Equal(next, want) {
		t.Errorf("entries fire after %v, want %v (refresh, reload, daily, weekly)", next, want)
	}
	delete(vars, "VRAMBOT_DIGEST_CHANNEL")
	b, err := newApp(cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Lookup: lookup}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if jobs, _ := b.serveJobs(nil); len(jobs) != 2 {
		t.Errorf("without a digest channel: %d jobs", len(jobs))
	}
}

// TestRunCronStopsWithItsJobs: the cron runs a job on schedule and, once
// the context ends, returns only after the running job has.
func TestRunCronStopsWithItsJobs(t *testing.T) {
	var runs atomic.Int32
	var finished atomic.Bool
	jobs := []periodicJob{{name: "tick", schedule: cron.Every(time.Second), run: func(ctx context.Context) {
		runs.Add(1)
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond)
		finished.Store(true)
	}}}
	ctx, cancel := context.WithCancel(context.Background())
	c, err := newServeCron(ctx, time.UTC, slog.New(slog.DiscardHandler), jobs)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- runCron(ctx, c) }()
	testutil.Eventually(t, 5*time.Second, "the job ran", func() bool { return runs.Load() == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !finished.Load() {
		t.Error("runCron returned before its running job finished")
	}
}

// TestServeStopsEverythingOnAListenError: a port in use fails serve with
// nothing left running (the error names the address).
func TestServeStopsEverythingOnAListenError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	vars := map[string]string{"SLACK_BOT_TOKEN": slacktest.BotToken, "SLACK_SIGNING_SECRET": slacktest.SigningSecret, "VRAMBOT_ADDR": l.Addr().String()}
	code, _, stderr := runCLI(t, vars, "", "serve")
	if code != 1 || !strings.Contains(stderr, l.Addr().String()) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestDigestPostsToSlack runs `vrambot digest` with Slack configured: the
// digest is posted to the channel through the Web API at VRAMBOT_SLACK_API_URL.
func TestDigestPostsToSlack(t *testing.T) {
	fs := slacktest.New(t)
	envVars := map[string]string{
		"SLACK_BOT_TOKEN":        slacktest.BotToken,
		"VRAMBOT_SLACK_API_URL":  fs.APIURL(),
		"VRAMBOT_DIGEST_CHANNEL": "C0DIGEST",
	}
	code, out, stderr := runCLI(t, envVars, "", "digest", "--json", "--at", "2026-11-27T09:00:00Z")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	posts := fs.Answered("chat.postMessage")
	if len(posts) == 0 || posts[0].Args.Get("channel") != "C0DIGEST" || posts[0].Args.Get("blocks") == "" {
		t.Fatalf("digest posts: %v", posts)
	}
	if !strings.Contains(out, `"data_quality"`) {
		t.Errorf("no digest JSON printed: %.200s", out)
	}
}

// purgeEvents removes the dedupe keys serve wrote for event ids starting
// with prefix (serve uses the default key prefix, so they cannot be
// isolated the way storetest's own stores are).
func purgeEvents(t testing.TB, prefix string) {
	r, err := store.NewRedis(storetest.RedisURL(), store.WithPrefix(store.DefaultPrefix+"dedupe:event:"+prefix))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := r.Purge(ctx); err != nil {
		t.Errorf("purge: %v", err)
	}
}

// redisForServe is REDIS_URL for a serve under test: the test Redis
// through a proxy the test can pause.
func redisForServe(t testing.TB) *storetest.Proxy {
	t.Helper()
	_, p := storetest.NewPausableRedis(t) // skips, or fails in CI, without Redis
	return p
}

// TestServeTwoReplicasOneRedis: the same events delivered to two serve
// processes on one Redis are answered once each.
func TestServeTwoReplicasOneRedis(t *testing.T) {
	p := redisForServe(t)
	ids := storetest.UniqueID()
	t.Cleanup(func() { purgeEvents(t, ids) })
	vars := map[string]string{"REDIS_URL": p.ProxiedRedisURL()}
	a, b := startServe(t, vars), startServe(t, vars)
	for i := range 10 {
		var wg sync.WaitGroup
		for _, s := range []*served{a, b} {
			wg.Go(func() {
				s.event(t, fmt.Sprintf("%s-%d", ids, i), slacktest.Message(fmt.Sprintf("C%d", i), fmt.Sprintf("1700000300.%06d", i), oomPaste))
			})
		}
		wg.Wait()
	}
	testutil.Eventually(t, 20*time.Second, "10 answers", func() bool { return len(a.threads())+len(b.threads()) >= 10 })
	time.Sleep(300 * time.Millisecond) // room for a second answer to show up, if there were one
	if n := len(a.threads()) + len(b.threads()); n != 10 {
		t.Errorf("%d answers for 10 events on two replicas", n)
	}
}

// soakOn skips a long-running test unless VRAMBOT_SOAK is set (CI sets it;
// see .ci/run and bot's TestSoak).
func soakOn(t *testing.T) {
	t.Helper()
	if os.Getenv("VRAMBOT_SOAK") == "" {
		t.Skip("long acceptance run off: set VRAMBOT_SOAK (e.g. VRAMBOT_SOAK=30s) to run it")
	}
}

// TestSoakServeAcceptance is the acceptance of issue 15 from outside,
// against `vrambot serve` with production settings (Slack's real pace of
// one post per second per channel, the real claim lease): it takes about a
// minute, so it runs with the soak tests.
func TestSoakServeAcceptance(t *testing.T) {
	soakOn(t)
	t.Run("40 pastes in one channel", func(t *testing.T) {
		t.Parallel()
		s := startServe(t, nil)
		const n = 40
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if code := s.event(t, fmt.Sprintf("EvBurst%d", i), slacktest.Message("C1", fmt.Sprintf("1700000400.%06d", i), oomPaste)); code != http.StatusOK {
					t.Errorf("paste %d: %d", i, code)
				}
			})
		}
		wg.Wait()
		testutil.Eventually(t, 90*time.Second, "40 answers", func() bool { return len(s.threads()) >= n })
		s.event(t, "EvAfter", slacktest.Message("C1", "1700000499.000001", oomPaste))
		testutil.Eventually(t, 10*time.Second, "the channel answers afterwards", func() bool { return len(s.threads()) == n+1 })
		if got := s.threads(); len(got) != n+1 || len(slices.Compact(slices.Sorted(slices.Values(got)))) != n+1 {
			t.Errorf("answers %v", got)
		}
		s.checkNoSecrets(t)
	})
	t.Run("Redis paused during the claim", func(t *testing.T) {
		t.Parallel()
		p := redisForServe(t)
		id := storetest.UniqueID()
		t.Cleanup(func() { purgeEvents(t, id) })
		s := startServe(t, map[string]string{"REDIS_URL": p.ProxiedRedisURL()})
		paste := slacktest.Message("C1", "1700000500.000001", oomPaste)
		retry := func(n int) int {
			return s.event(t, id, paste, "X-Slack-Retry-Num", fmt.Sprint(n), "X-Slack-Retry-Reason", "http_error")
		}
		// Redis stalls at the claim's SET NX (the GET before it went
		// through), and applies it after the bot gave up: a claim of
		// unknown outcome.
		p.PauseBefore(id+":claim", "\r\nnx\r\n")
		if code := s.event(t, id, paste); code != http.StatusServiceUnavailable {
			t.Fatalf("during the pause: %d, want 503", code)
		}
		p.Resume()
		// Slack: a retry nearly at once, one after about a minute, one
		// after about five.
		first := retry(1)
		if first != http.StatusServiceUnavailable {
			t.Errorf("the retry at once: %d, want 503 (the late claim holds it)", first)
		}
		var second int
		testutil.Eventually(t, 70*time.Second, "a retry is taken", func() bool {
			time.Sleep(5 * time.Second)
			second = retry(2)
			return second == http.StatusOK
		})
		testutil.Eventually(t, 10*time.Second, "the answer", func() bool { return len(s.threads()) == 1 })
		// The answered marker follows the post (and the permalink and
		// digest record after it); Slack's last retry comes minutes later.
		testutil.Eventually(t, 10*time.Second, "the last retry is acked as answered", func() bool {
			time.Sleep(200 * time.Millisecond)
			return retry(3) == http.StatusOK
		})
		time.Sleep(time.Second)
		if got := s.threads(); len(got) != 1 {
			t.Errorf("%d replies (retries answered %d, then %d), want exactly 1", len(got), first, second)
		}
		s.checkNoSecrets(t, "xxxxx")
	})
	t.Run("a body that never finishes", func(t *testing.T) {
		t.Parallel()
		s := startServe(t, nil)
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, _ = io.WriteString(conn, slacktest.PartialRequest("/slack/events", slacktest.EventBody("EvSlowBody", slacktest.Message("C1", "1700000600.000001", oomPaste)), 20))
		start := time.Now()
		_ = conn.SetReadDeadline(time.Now().Add(45 * time.Second))
		_, _ = io.Copy(io.Discard, conn)
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("a stuck body held its connection %v", d)
		} else {
			t.Logf("a stuck body was cut off after %v", d.Round(100*time.Millisecond))
		}
	})
}

// percentile returns the p-th percentile (0–100) of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}

// loadClient is a keep-alive client for n concurrent senders.
func loadClient(n int) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n}}
}

// sendLoad sends total signed requests (built by request) from clients
// concurrent senders and returns each one's latency. Every answer must be
// a 200.
func sendLoad(b *testing.B, client *http.Client, total, clients int, request func(i int) *http.Request) []time.Duration {
	latencies := make([]time.Duration, total)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for i := range jobs {
				req := request(i)
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				latencies[i] = time.Since(start)
				if resp.StatusCode != http.StatusOK {
					b.Errorf("request %d: %d", i, resp.StatusCode)
				}
			}
		})
	}
	for i := range total {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return latencies
}

// BenchmarkServeSlashCommands is the red-team's load run: 500 signed
// /vram commands from 16 clients against `vrambot serve` (real commands,
// embedded prices), per iteration. It reports the latency of the answer
// (the HTTP response, which carries it inline).
func BenchmarkServeSlashCommands(b *testing.B) {
	const total, clients = 500, 16
	s := startServe(b, nil)
	client := loadClient(clients)
	queries := []string{"7b lora a100", "llama-3-8b qlora bs=4 seq=4096 4090", "mistral-7b inference 24gb", "13b full h100 gpus=8 zero=3", "70b qlora a100"}
	var all []time.Duration
	for b.Loop() {
		all = append(all, sendLoad(b, client, total, clients, func(i int) *http.Request {
			form := slacktest.SlashCommand("/vram", queries[i%len(queries)]+fmt.Sprintf(" bs=%d", i%8+1), s.slack.ResponseURL("load"))
			return slacktest.SignedRequest(b, s.base+"/slack/commands", slacktest.FormContent, []byte(form.Encode()))
		})...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(percentile(all, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(all, 95).Microseconds())/1000, "p95-ms")
	b.ReportMetric(float64(all[len(all)-1].Microseconds())/1000, "max-ms")
}

// BenchmarkServeEvents200Channels is the red-team's second run: 200 OOM
// pastes, one in each of 200 channels, sent by 16 clients. It reports the
// ack latency and how long until every paste was answered in its thread.
func BenchmarkServeEvents200Channels(b *testing.B) {
	const total, clients = 200, 16
	s := startServe(b, nil)
	client := loadClient(clients)
	var acks, answered []time.Duration
	round := 0
	for b.Loop() {
		round++
		before := len(s.slack.Answered("chat.postMessage"))
		start := time.Now()
		acks = append(acks, sendLoad(b, client, total, clients, func(i int) *http.Request {
			body := slacktest.EventBody(fmt.Sprintf("EvLoad%d-%d", round, i), slacktest.Message(fmt.Sprintf("CLOAD%03d", i), fmt.Sprintf("1700000700.%06d", round*1000+i), oomPaste))
			return slacktest.SignedRequest(b, s.base+"/slack/events", slacktest.JSONContent, body)
		})...)
		testutil.Eventually(b, 60*time.Second, "200 answers", func() bool { return len(s.slack.Answered("chat.postMessage"))-before >= total })
		answered = append(answered, time.Since(start))
	}
	slices.Sort(acks)
	slices.Sort(answered)
	b.ReportMetric(float64(percentile(acks, 50).Microseconds())/1000, "ack-p50-ms")
	b.ReportMetric(float64(percentile(acks, 95).Microseconds())/1000, "ack-p95-ms")
	b.ReportMetric(float64(percentile(answered, 50).Milliseconds()), "all-answered-ms")
}
