package bot

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/slacktest"
	"github.com/vrambot/vrambot/internal/testutil"
	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
	"github.com/vrambot/vrambot/store/storetest"
)

// pasteTS is the ts of the i-th paste in a test channel.
func pasteTS(i int) string { return fmt.Sprintf("1700001000.%06d", i) }

func TestLanesOrderPaceAndCancel(t *testing.T) {
	l := newLanes(30*time.Millisecond, 2)
	ctx := context.Background()
	doneA, err := l.acquire(ctx, "C1", false)
	if err != nil {
		t.Fatal(err)
	}
	// B waits behind A; C is refused (the queue holds 2) and is due to post
	// the notice; D is refused quietly.
	bctx, cancelB := context.WithCancel(ctx)
	bErr := make(chan error, 1)
	go func() {
		done, err := l.acquire(bctx, "C1", false)
		if err == nil {
			done()
		}
		bErr <- err
	}()
	testutil.Eventually(t, time.Second, "B queued", func() bool { return l.depth("C1") == 2 })
	if _, err := l.acquire(ctx, "C1", false); !errors.Is(err, errNoticeDue) {
		t.Fatalf("third post: %v, want errNoticeDue", err)
	}
	if _, err := l.acquire(ctx, "C1", false); !errors.Is(err, errQueueFull) {
		t.Fatalf("fourth post: %v, want errQueueFull", err)
	}
	// A cancelled wait gives its slot back.
	cancelB()
	if err := <-bErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("B = %v", err)
	}
	if l.depth("C1") != 1 {
		t.Fatalf("depth after B left = %d, want 1", l.depth("C1"))
	}
	if n := l.takeOverflow("C1"); n != 2 {
		t.Errorf("overflow = %d, want 2", n)
	}
	// E queues behind A and starts a pacing gap after A ends.
	eDone := make(chan time.Time, 1)
	go func() {
		done, err := l.acquire(ctx, "C1", false)
		if err != nil {
			t.Error(err)
			return
		}
		eDone <- time.Now()
		done()
	}()
	testutil.Eventually(t, time.Second, "E queued", func() bool { return l.depth("C1") == 2 })
	aEnded := time.Now()
	doneA()
	if got := (<-eDone).Sub(aEnded); got < 25*time.Millisecond {
		t.Errorf("E posted %v after A; the gap is 30ms", got)
	}
	// Another channel does not wait.
	start := time.Now()
	done, err := l.acquire(ctx, "C2", false)
	if err != nil || time.Since(start) > 20*time.Millisecond {
		t.Errorf("another channel waited %v (%v)", time.Since(start), err)
	}
	done()
}

// TestBurstInOneChannel: 40 pastes at once in one channel are all answered,
// in order of arrival, none timing out in the queue, and the channel
// answers afterwards.
func TestBurstInOneChannel(t *testing.T) {
	ts := newTestServer(t, nil, nil, func(c *Config, _ *Deps) {
		c.PostInterval = 20 * time.Millisecond // 40 posts ≥ 0.8 s: longer than the work timeout
		c.WorkTimeout = 200 * time.Millisecond
	})
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp := ts.event(t, fmt.Sprintf("EvBurst%d", i), message(oomPaste, "ts", pasteTS(i)))
			if readAll(t, resp); resp.StatusCode != http.StatusOK {
				t.Errorf("paste %d: status %d", i, resp.StatusCode)
			}
		})
	}
	wg.Wait()
	ts.idle(t)
	posts := ts.slack.Answered("chat.postMessage")
	if len(posts) != n {
		t.Fatalf("%d of %d pastes answered", len(posts), n)
	}
	threads := map[string]bool{}
	for i, p := range posts {
		threads[p.Args.Get("thread_ts")] = true
		if i > 0 && p.At.Sub(posts[i-1].At) < 15*time.Millisecond {
			t.Errorf("posts %d and %d %v apart; the pace is 20ms", i-1, i, p.At.Sub(posts[i-1].At))
		}
	}
	if len(threads) != n {
		t.Errorf("%d threads answered for %d pastes", len(threads), n)
	}
	readAll(t, ts.event(t, "EvAfterBurst", message(oomPaste, "ts", pasteTS(99))))
	ts.idle(t)
	if got := len(ts.slack.Answered("chat.postMessage")); got != n+1 {
		t.Errorf("the channel did not answer after the burst: %d posts", got)
	}
}

// TestBurstOverflowGetsOneNotice: past the channel's queue, pastes are
// counted in one notice instead of being dropped silently, and the channel
// answers afterwards.
func TestBurstOverflowGetsOneNotice(t *testing.T) {
	ts := newTestServer(t, nil, nil, func(c *Config, _ *Deps) {
		c.PostInterval = 30 * time.Millisecond
		c.ChannelQueue = 5
	})
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { readAll(t, ts.event(t, fmt.Sprintf("EvFlood%d", i), message(oomPaste, "ts", pasteTS(i)))) })
	}
	wg.Wait()
	ts.idle(t)
	answers, notices, unanswered := 0, 0, 0
	for _, p := range ts.slack.Answered("chat.postMessage") {
		if p.Args.Get("thread_ts") != "" {
			answers++
			continue
		}
		notices++
		if _, err := fmt.Sscanf(p.Args.Get("text")[strings.Index(p.Args.Get("text"), "did not answer")+len("did not answer "):], "%d", &unanswered); err != nil {
			t.Fatalf("notice %q: %v", p.Args.Get("text"), err)
		}
	}
	if notices != 1 || answers+unanswered != n || answers < 5 {
		t.Errorf("%d answers, %d notices saying %d unanswered; want one notice and every paste accounted for", answers, notices, unanswered)
	}
	if !strings.Contains(scrape(t, ts), "vrambot_slack_channel_queue_full_total "+fmt.Sprint(unanswered)) {
		t.Errorf("queue-full metric does not say %d", unanswered)
	}
	readAll(t, ts.event(t, "EvAfterFlood", message(oomPaste, "ts", pasteTS(99))))
	ts.idle(t)
	last := ts.slack.Answered("chat.postMessage")
	if got := last[len(last)-1].Args.Get("thread_ts"); got != pasteTS(99) {
		t.Errorf("the channel did not answer after the flood (last post in thread %q)", got)
	}
}

func TestServerErrorsAreRetried(t *testing.T) {
	tests := []struct {
		name   string
		method string
		fault  slacktest.Fault
	}{
		{"500 from chat.postMessage", "chat.postMessage", slacktest.Fault{Status: http.StatusInternalServerError}},
		{"503 from chat.postMessage", "chat.postMessage", slacktest.Fault{Status: http.StatusServiceUnavailable}},
		{"hung chat.postMessage", "chat.postMessage", slacktest.Fault{Delay: 2 * time.Second}},
		{"502 from reactions.add", "reactions.add", slacktest.Fault{Status: http.StatusBadGateway}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := slacktest.New(t)
			fs.SetFaults(tt.method, slacktest.FailFirst(2, tt.fault))
			ts := newTestServer(t, fs, nil, func(c *Config, _ *Deps) { c.Retry.AttemptTimeout = 300 * time.Millisecond })
			readAll(t, ts.event(t, fmt.Sprintf("EvRetry%d", i), message(oomPaste)))
			ts.idle(t)
			if got := len(fs.Answered(tt.method)); got != 1 {
				t.Errorf("%d successful %s calls, want 1", got, tt.method)
			}
			if got := len(fs.Calls(tt.method)); got != 3 {
				t.Errorf("%d %s calls, want 3 (two faults, then success)", got, tt.method)
			}
			if got := len(fs.Answered("chat.postMessage")); got != 1 {
				t.Errorf("%d replies, want exactly 1", got)
			}
			if m := scrape(t, ts); !strings.Contains(m, `vrambot_slack_api_retries_total{method="`+tt.method+`"`) {
				t.Errorf("retries not counted:\n%s", grepLines(m, "retries"))
			}
		})
	}
}

func grepLines(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestAnswerThatFinallyFails: Slack down for good. The reply and the notice
// are both tried with retries, the failure is counted, and the OOM is still
// recorded for the digest.
func TestAnswerThatFinallyFails(t *testing.T) {
	fs := slacktest.New(t)
	fs.SetFaults("chat.postMessage", func(int, *slacktest.Call) slacktest.Fault {
		return slacktest.Fault{Status: http.StatusInternalServerError}
	})
	ts := newTestServer(t, fs, nil, func(c *Config, _ *Deps) { c.Retry.MaxAttempts = 3 })
	readAll(t, ts.event(t, "EvDownForGood", message(oomPaste)))
	ts.idle(t)
	if got := len(fs.Calls("chat.postMessage")); got != 6 {
		t.Errorf("%d chat.postMessage calls, want 3 for the reply and 3 for the notice", got)
	}
	m := scrape(t, ts)
	if !strings.Contains(m, `vrambot_slack_answers_failed_total{kind="event",reason="unreachable"} 1`) {
		t.Errorf("failure not counted:\n%s", grepLines(m, "failed"))
	}
	if len(ts.ooms.all()) != 1 {
		t.Error("OOM not recorded")
	}
}

func TestResponseURLRetried(t *testing.T) {
	fs := slacktest.New(t)
	fs.SetFaults(slacktest.MethodResponseURL, slacktest.FailFirst(1, slacktest.Fault{Status: http.StatusServiceUnavailable}))
	ts := newTestServer(t, fs, nil, func(c *Config, _ *Deps) { c.InlineBudget = 10 * time.Millisecond })
	ts.cmds.setDelay(100 * time.Millisecond)
	readAll(t, ts.slashCommand(t, "7b lora a100"))
	ts.idle(t)
	if got := len(responses(fs, "cmd")); got != 1 {
		t.Errorf("%d follow-ups delivered, want 1 after a retry", got)
	}
}

// TestClickDeliveredTwicePostsOnce: the same "Share in channel" click sent
// twice to one replica, and to two replicas on one Redis, shares once; a
// new click (a new action_ts) shares again.
func TestClickDeliveredTwicePostsOnce(t *testing.T) {
	t.Run("one replica", func(t *testing.T) {
		ts := newTestServer(t, nil, nil)
		click := slacktest.BlockAction("U1", "C1", shareActionID, "7b lora a100", "1700000001.000001", ts.slack.ResponseURL("share"))
		for range 3 {
			if resp := ts.click(t, click); resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
		}
		ts.idle(t)
		if n := len(responses(ts.slack, "share")); n != 1 {
			t.Fatalf("shared %d times, want 1", n)
		}
		readAll(t, ts.click(t, slacktest.BlockAction("U1", "C1", shareActionID, "7b lora a100", "1700000002.000001", ts.slack.ResponseURL("share"))))
		ts.idle(t)
		if n := len(responses(ts.slack, "share")); n != 2 {
			t.Errorf("a second click shared %d times in all, want 2", n)
		}
	})
	t.Run("two replicas", func(t *testing.T) {
		rs := storetest.NewRedis(t)
		fs := slacktest.New(t)
		a, b := newTestServer(t, fs, rs), newTestServer(t, fs, rs)
		click := slacktest.BlockAction("U1", "C1", shareActionID, "7b", "1700000003.000001", fs.ResponseURL("share2"))
		var wg sync.WaitGroup
		for _, ts := range []*testServer{a, b} {
			wg.Go(func() { readAll(t, ts.click(t, click)) })
		}
		wg.Wait()
		a.idle(t)
		b.idle(t)
		if n := len(responses(fs, "share2")); n != 1 {
			t.Errorf("two replicas shared %d times, want 1", n)
		}
	})
}

// TestShareWithStoreDownDoesNotPost: when the click cannot be claimed the
// answer is not shared (it might go out twice); the user is told why.
func TestShareWithStoreDownDoesNotPost(t *testing.T) {
	ts := newTestServer(t, nil, failingStore{store.NewMemory()})
	readAll(t, ts.click(t, slacktest.BlockAction("U1", "C1", shareActionID, "7b", "1700000004.000001", ts.slack.ResponseURL("share"))))
	ts.idle(t)
	got := responses(ts.slack, "share")
	if len(got) != 1 || !strings.Contains(string(got[0].Body), "did not share it") || strings.Contains(string(got[0].Body), "in_channel") {
		t.Errorf("follow-ups %+v", got)
	}
}

// TestSlashCommandReplayAnsweredOnce: a signed slash command delivered
// twice is computed and answered once.
func TestSlashCommandReplayAnsweredOnce(t *testing.T) {
	ts := newTestServer(t, nil, nil, func(c *Config, _ *Deps) { c.InlineBudget = 10 * time.Millisecond })
	ts.cmds.setDelay(50 * time.Millisecond)
	body := []byte(slacktest.SlashCommand("/vram", "7b lora a100", ts.slack.ResponseURL("cmd")).Encode())
	req := slacktest.SignedRequest(t, ts.http.URL+"/slack/commands", slacktest.FormContent, body)
	var acks []string
	for range 2 {
		again := req.Clone(context.Background())
		again.Body = io.NopCloser(strings.NewReader(string(body)))
		resp, err := ts.http.Client().Do(again)
		if err != nil {
			t.Fatal(err)
		}
		acks = append(acks, readAll(t, resp))
	}
	ts.idle(t)
	if !strings.Contains(acks[0], "Working on it") || acks[1] != "" {
		t.Errorf("acks %q", acks)
	}
	if n := len(responses(ts.slack, "cmd")); n != 1 {
		t.Errorf("answered %d times, want 1", n)
	}
}

// TestRedisPausedDuringClaim: Redis stalls while an event is claimed; the
// claim times out (and Redis applies it later). Slack's retries then get
// exactly one reply: the immediate retry finds the late claim and is
// refused, the next one, after the claim's lease lapsed, is answered, and
// a last one is a duplicate.
func TestRedisPausedDuringClaim(t *testing.T) {
	rs, proxy := storetest.NewPausableRedis(t)
	ts := newTestServer(t, nil, rs, func(c *Config, _ *Deps) { c.ClaimTTL = 600 * time.Millisecond })
	send := func(retry int) int {
		t.Helper()
		resp := ts.event(t, "EvPaused", message(oomPaste), "X-Slack-Retry-Num", fmt.Sprint(retry), "X-Slack-Retry-Reason", "http_error")
		readAll(t, resp)
		return resp.StatusCode
	}
	// The GET of the answered marker goes through; Redis stalls at the
	// lease's SET NX, which lands only after the bot gave up on it.
	proxy.PauseBefore("EvPaused:claim", "\r\nnx\r\n")
	if code := send(0); code != http.StatusServiceUnavailable {
		t.Fatalf("event during the pause: %d, want 503", code)
	}
	proxy.Resume()
	testutil.Eventually(t, 2*time.Second, "the late claim landed", func() bool {
		_, err := rs.Get(t.Context(), "event:EvPaused:claim")
		return err == nil
	})
	codes := []int{}
	testutil.Eventually(t, 10*time.Second, "a retry is taken", func() bool {
		code := send(len(codes) + 1)
		codes = append(codes, code)
		if code == http.StatusOK {
			return true
		}
		time.Sleep(100 * time.Millisecond) // Slack's next retry comes later
		return false
	})
	ts.idle(t)
	if code := send(9); code != http.StatusOK {
		t.Errorf("a retry after the answer: %d, want 200 (duplicate)", code)
	}
	ts.idle(t)
	if n := len(ts.slack.Answered("chat.postMessage")); n != 1 {
		t.Fatalf("%d replies after the retries %v, want exactly 1", n, codes)
	}
	if codes[0] != http.StatusServiceUnavailable {
		t.Errorf("the retry right after the pause got %d; the late claim should have refused it (codes %v)", codes[0], codes)
	}
}

// TestEventWithoutEventIDIsDeduped: a payload with no event_id is deduped
// by the message it is about.
func TestEventWithoutEventIDIsDeduped(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	for range 3 {
		readAll(t, ts.event(t, "", message(oomPaste)))
	}
	ts.idle(t)
	if n := len(ts.slack.Answered("chat.postMessage")); n != 1 {
		t.Errorf("%d replies, want 1", n)
	}
}

// TestDownloadRedirects: the token follows a redirect only within the
// origin it was sent to; a redirect to another port on the same host (or
// anywhere else) is refused, so the token never reaches it.
func TestDownloadRedirects(t *testing.T) {
	elsewhere := slacktest.NewTrap(t, oomPaste)
	tests := []struct {
		name    string
		url     func(fs *slacktest.Server) string
		replies int
	}{
		{"same origin redirect is followed", func(fs *slacktest.Server) string {
			fs.AddFile("/files/T1-F2/real.log", oomPaste)
			return fs.RedirectFile("/files/T1-F1/train.log", fs.URL+"/files/T1-F2/real.log")
		}, 1},
		{"redirect to another port is refused", func(fs *slacktest.Server) string {
			return fs.RedirectFile("/files/T1-F3/train.log", elsewhere.URL+"/steal")
		}, 0},
		{"redirect to another scheme is refused", func(fs *slacktest.Server) string {
			return fs.RedirectFile("/files/T1-F4/train.log", "https"+strings.TrimPrefix(fs.URL, "http")+"/files/x")
		}, 0},
		{"a file URL on another host is not fetched", func(*slacktest.Server) string { return elsewhere.URL + "/files/T1-F5/train.log" }, 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, nil, nil)
			files := []map[string]any{{"id": fmt.Sprintf("F%d", i), "name": "train.log", "mimetype": "text/plain", "filetype": "text", "mode": "snippet", "size": len(oomPaste), "url_private_download": tt.url(ts.slack)}}
			readAll(t, ts.event(t, fmt.Sprintf("EvRedir%d", i), message("see log", "subtype", "file_share", "files", files)))
			ts.idle(t)
			if got := len(ts.slack.Answered("chat.postMessage")); got != tt.replies {
				t.Errorf("%d replies, want %d", got, tt.replies)
			}
		})
	}
	if n := elsewhere.Leaks(); n != 0 {
		t.Errorf("the token reached another origin %d times", n)
	}
}

// serveReal runs the Server on a real listener (timeouts and connection
// limit on) and returns its base URL.
func serveReal(t *testing.T, ts *testServer) string {
	t.Helper()
	ln, err := ts.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ts.ServeListener(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeListener = %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// TestUnfinishedBodyIsCutOff: a signed request that never finishes its
// body is cut off at the read timeout, not held forever.
func TestUnfinishedBodyIsCutOff(t *testing.T) {
	ts := newTestServer(t, nil, nil, func(c *Config, _ *Deps) { c.ReadTimeout = 500 * time.Millisecond })
	base := serveReal(t, ts)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, slacktest.PartialRequest("/slack/events", slacktest.EventBody("EvSlow", message(oomPaste)), 10))
	start := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.Copy(io.Discard, conn) // returns when the server closes the connection
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("connection held %v with the read timeout at 500ms", d)
	}
}

// TestUnsignedBodyIsNotRead: a request with no signature is refused on its
// headers, before any of its (endless) body is read.
func TestUnsignedBodyIsNotRead(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	base := serveReal(t, ts)
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		chunk := make([]byte, 32<<10)
		for {
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
	}()
	req, _ := http.NewRequest(http.MethodPost, base+"/slack/events", pr)
	req.ContentLength = 1<<20 - 1
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if resp.StatusCode != http.StatusUnauthorized || time.Since(start) > time.Second {
		t.Errorf("status %d after %v", resp.StatusCode, time.Since(start))
	}
}

// TestConnectionLimit: past MaxConnections a new connection waits until one
// closes.
func TestConnectionLimit(t *testing.T) {
	ts := newTestServer(t, nil, nil, func(c *Config, _ *Deps) { c.MaxConnections = 2 })
	base := serveReal(t, ts)
	addr := strings.TrimPrefix(base, "http://")
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	get := func(timeout time.Duration) error {
		client := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			readAll(t, resp)
		}
		return err
	}
	if err := get(300 * time.Millisecond); err == nil {
		t.Fatal("a third connection was served while two were held")
	}
	held[0].Close()
	if err := get(5 * time.Second); err != nil {
		t.Errorf("after one closed: %v", err)
	}
}

// TestDrainFinishesAckedWorkAndLogsDrops: shutdown finishes work that fits
// the drain deadline, cancels and logs what does not, and admits nothing
// after it began.
func TestDrainFinishesAckedWorkAndLogsDrops(t *testing.T) {
	var logs testutil.Buffer
	ts := newTestServer(t, nil, nil, func(c *Config, d *Deps) {
		c.DrainTimeout = 300 * time.Millisecond
		d.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	// One answer takes 100ms, within the 300ms deadline; the other 800ms.
	var calls atomic.Int32
	ts.cmds.oomReply = func() reply.Reply {
		if calls.Add(1) == 1 {
			time.Sleep(100 * time.Millisecond)
		} else {
			time.Sleep(800 * time.Millisecond)
		}
		return oomFixture()
	}
	readAll(t, ts.event(t, "EvFast", message(oomPaste, "ts", pasteTS(1))))
	testutil.Eventually(t, time.Second, "the first answer started", func() bool { return calls.Load() == 1 })
	readAll(t, ts.event(t, "EvStuck", message(oomPaste, "ts", pasteTS(2), "channel", "C2")))
	err := ts.Drain()
	if err == nil || !strings.Contains(err.Error(), "1 replies dropped") {
		t.Fatalf("Drain = %v", err)
	}
	if n := len(ts.slack.Answered("chat.postMessage")); n != 1 {
		t.Errorf("%d replies posted, want the one that finished", n)
	}
	out := logs.String()
	if !strings.Contains(out, "dropped acked work") || !strings.Contains(out, "ref=EvStuck") {
		t.Errorf("drop not logged:\n%s", out)
	}
	if resp := ts.event(t, "EvLate", message(oomPaste, "ts", pasteTS(3))); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("event after the drain: %d", resp.StatusCode)
	}
	if ts.goWork(workItem{kind: kindEvent}, func(context.Context) { t.Error("work ran after the drain") }) {
		t.Error("work admitted after the drain")
	}
	if err2 := ts.Drain(); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("a second Drain = %v, want the first one's result", err2)
	}
}

// TestInternalErrorsNeverReachSlack: an internal failure of the command
// shows the fixed internal-error line everywhere an answer goes (inline,
// response_url, a mention's thread, a shared click), and its detail only
// in the log.
func TestInternalErrorsNeverReachSlack(t *testing.T) {
	var logs testutil.Buffer
	ts := newTestServer(t, nil, nil, func(c *Config, d *Deps) {
		d.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	inline := readAll(t, ts.slashCommand(t, "explode"))
	readAll(t, ts.event(t, "EvMention", map[string]any{"type": "app_mention", "user": "U1", "text": "<@UBOT> vram explode", "ts": "1700000200.000100", "channel": "C1"}))
	readAll(t, ts.click(t, slacktest.BlockAction("U1", "C1", shareActionID, "explode", "1700000005.000001", ts.slack.ResponseURL("share"))))
	ts.idle(t)
	// The same failure answered late, through response_url.
	slow := newTestServer(t, ts.slack, nil, func(c *Config, d *Deps) {
		c.InlineBudget = 10 * time.Millisecond
		d.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	slow.cmds.setDelay(100 * time.Millisecond)
	readAll(t, slow.slashCommand(t, "explode deferred"))
	slow.idle(t)
	shown := []string{inline}
	for _, c := range ts.slack.Replies() {
		shown = append(shown, string(c.Body), c.Args.Get("text"), c.Args.Get("blocks"))
	}
	all := strings.Join(shown, "\n")
	if strings.Count(all, errs.InternalMessage) < 4 {
		t.Errorf("the internal-error line is missing from some answers:\n%s", all)
	}
	for _, secret := range []string{"10.0.0.7", "hunter2", "i/o timeout"} {
		if strings.Contains(all, secret) {
			t.Errorf("%q reached Slack:\n%s", secret, all)
		}
	}
	if !strings.Contains(logs.String(), "10.0.0.7") {
		t.Error("the detail is not in the log")
	}
}

// TestBotUserIDOneCallNoLock: concurrent events share one auth.test, and a
// slow auth.test holds no lock that blocks the events behind it.
func TestBotUserIDOneCallNoLock(t *testing.T) {
	fs := slacktest.New(t)
	fs.SetFaults("auth.test", slacktest.FailFirst(1, slacktest.Fault{Delay: 300 * time.Millisecond}))
	ts := newTestServer(t, fs, nil)
	for i := range 10 {
		readAll(t, ts.event(t, fmt.Sprintf("EvSelf%d", i), message(oomPaste, "ts", pasteTS(i))))
	}
	ts.idle(t)
	if n := len(fs.Calls("auth.test")); n != 1 {
		t.Errorf("%d auth.test calls, want 1", n)
	}
	if n := len(fs.Answered("chat.postMessage")); n != 10 {
		t.Errorf("%d replies", n)
	}
}

// TestHTTPServerHasTimeouts pins the timeouts the red-team found missing.
func TestHTTPServerHasTimeouts(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	srv := ts.httpServer()
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= ts.cfg.InlineBudget || srv.IdleTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
		t.Errorf("server limits: %+v", srv)
	}
	if srv.ReadTimeout > 30*time.Second {
		t.Errorf("read timeout %v: a stuck body must be cut off within 30 s", srv.ReadTimeout)
	}
}

// rawRequest writes req's bytes to a new connection and reads the status line.
func rawStatus(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, raw)
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

// TestStaleSignatureRefusedOnHeaders: a replay older than 5 minutes is
// refused before its body is read.
func TestStaleSignatureRefusedOnHeaders(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	base := serveReal(t, ts)
	stale := fmt.Sprint(time.Now().Add(-10 * time.Minute).Unix())
	got := rawStatus(t, strings.TrimPrefix(base, "http://"), "POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\nX-Slack-Signature: v0="+strings.Repeat("0", 64)+"\r\nX-Slack-Request-Timestamp: "+stale+"\r\n\r\n")
	if !strings.Contains(got, "401") {
		t.Errorf("status line %q", got)
	}
}
