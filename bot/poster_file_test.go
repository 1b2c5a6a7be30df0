package bot

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

// TestPostReplyWithFile: the digest's top message carries its chart, shared
// with the reply's blocks as the message; its ts is read back from files.info.
func TestPostReplyWithFile(t *testing.T) {
	fs := newFakeSlack(t)
	p := NewPoster(slack.New(testBotToken, slack.OptionAPIURL(fs.apiURL())), time.Millisecond, nil)
	ctx := context.Background()
	ts, err := p.PostReplyWithFile(ctx, "CDIGEST", oomFixture(), "chart.png", "GPU memory", []byte("\x89PNG..."))
	if err != nil || ts == "" {
		t.Fatalf("PostReplyWithFile = %q, %v; want the message's ts", ts, err)
	}
	done := fs.seen("files.completeUploadExternal")
	if len(done) != 1 {
		t.Fatalf("%d completeUploadExternal calls, want 1", len(done))
	}
	if f := done[0].Form; f.Get("channel_id") != "CDIGEST" || f.Get("thread_ts") != "" || f.Get("blocks") == "" || f.Get("initial_comment") != "" {
		t.Errorf("complete did not share the reply's blocks as a top-level message: %v", f)
	}
	// The ts is the shared message's: a thread reply can hang off it.
	if _, err := p.PostReply(ctx, "CDIGEST", ts, oomFixture()); err != nil {
		t.Fatal(err)
	}
	if posts := fs.seen("chat.postMessage"); len(posts) != 1 || posts[0].Form.Get("thread_ts") != ts {
		t.Errorf("thread reply: %+v", posts)
	}
	if _, err := p.PostReplyWithFile(ctx, "CDIGEST", oomFixture(), "empty.png", "", nil); err == nil {
		t.Error("empty file accepted")
	}
	bad := NewPoster(slack.New(testBotToken, slack.OptionAPIURL(fs.srv.URL+"/nowhere/")), time.Millisecond, slog.New(slog.DiscardHandler))
	if ts, err := bad.PostReplyWithFile(ctx, "C1", oomFixture(), "chart.png", "", []byte("x")); err == nil {
		t.Errorf("upload to a broken API: ts %q, no error", ts)
	}
}

// TestShareTSNotListed: a share Slack never lists gives no ts once the
// caller's deadline passes, not a hang.
func TestShareTSNotListed(t *testing.T) {
	fs := newFakeSlack(t)
	p := NewPoster(slack.New(testBotToken, slack.OptionAPIURL(fs.apiURL())), time.Millisecond, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if ts := p.shareTS(ctx, "F404", "C1"); ts != "" {
		t.Errorf("shareTS = %q for a file never shared", ts)
	}
	if n := len(fs.seen("files.info")); n < 2 {
		t.Errorf("files.info asked %d times, want polling", n)
	}
	private := slack.Share{Private: map[string][]slack.ShareFileInfo{"G1": {{Ts: "1.2"}}}}
	if got := shareIn(private, "G1"); got != "1.2" {
		t.Errorf("share in a private channel: %q", got)
	}
}
