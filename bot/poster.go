package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/internal/redact"
	"github.com/vrambot/vrambot/reply"
)

// Poster posts replies and files to channels, paced per channel. The digest
// uses it too.
type Poster struct {
	api     *slack.Client
	pace    *pacer
	log     *slog.Logger
	metrics *metrics
}

// NewPoster returns a Poster on client that waits interval between posts to
// one channel (0: DefaultPostInterval).
func NewPoster(client *slack.Client, interval time.Duration, log *slog.Logger) *Poster {
	if interval <= 0 {
		interval = DefaultPostInterval
	}
	if log == nil {
		log = slog.Default()
	}
	return newPoster(client, interval, log, newMetrics())
}

func newPoster(api *slack.Client, interval time.Duration, log *slog.Logger, m *metrics) *Poster {
	return &Poster{api: api, pace: newPacer(interval), log: log, metrics: m}
}

// PostReply posts r to channel (in the thread threadTS when set) and returns
// the message's ts. A reply too long for one message is posted shortened,
// with the full text attached in the thread as a file.
func (p *Poster) PostReply(ctx context.Context, channel, threadTS string, r reply.Reply) (string, error) {
	out := render(r)
	if err := p.pace.wait(ctx, channel); err != nil {
		return "", fmt.Errorf("post to %s: %w", channel, err)
	}
	opts := []slack.MsgOption{slack.MsgOptionText(out.fallback, false), slack.MsgOptionBlocks(out.blocks...)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	_, ts, err := p.api.PostMessageContext(ctx, channel, opts...)
	if err != nil {
		p.metrics.apiError("chat.postMessage")
		return "", fmt.Errorf("post to %s: %w", channel, redact.Error(err, redact.Origin))
	}
	if out.shortened {
		thread := threadTS
		if thread == "" {
			thread = ts
		}
		if err := p.UploadFile(ctx, channel, thread, fileName(r), fallbackTitle(r), []byte(reply.Text(r))); err != nil {
			return ts, err
		}
	}
	return ts, nil
}

// postText posts a plain-text message.
func (p *Poster) postText(ctx context.Context, channel, threadTS, text string) error {
	if err := p.pace.wait(ctx, channel); err != nil {
		return fmt.Errorf("post to %s: %w", channel, err)
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	if _, _, err := p.api.PostMessageContext(ctx, channel, opts...); err != nil {
		p.metrics.apiError("chat.postMessage")
		return fmt.Errorf("post to %s: %w", channel, redact.Error(err, redact.Origin))
	}
	return nil
}

// UploadFile shares data as a file in channel (in the thread threadTS when
// set) with Slack's three-step external upload.
func (p *Poster) UploadFile(ctx context.Context, channel, threadTS, filename, title string, data []byte) error {
	if len(data) == 0 {
		return errors.New("upload file: empty file")
	}
	if err := p.pace.wait(ctx, channel); err != nil {
		return fmt.Errorf("upload %s to %s: %w", filename, channel, err)
	}
	_, err := p.api.UploadFileContext(ctx, slack.UploadFileParameters{
		Filename:        filename,
		Title:           title,
		FileSize:        len(data),
		Reader:          bytes.NewReader(data),
		Channel:         channel,
		ThreadTimestamp: threadTS,
	})
	if err != nil {
		p.metrics.apiError("files.upload")
		return fmt.Errorf("upload %s to %s: %w", filename, channel, redact.Error(err, redact.Origin))
	}
	return nil
}

// Slack shares a file uploaded with files.completeUploadExternal
// asynchronously; files.info lists the share (and so the message's ts) once
// it exists, usually within a second or two (docs/slack.md §A.7).
const (
	shareWaitTimeout = 15 * time.Second
	sharePollFirst   = 250 * time.Millisecond
	sharePollMax     = 2 * time.Second
)

// PostReplyWithFile posts r as a new message in channel with data attached,
// through Slack's external upload flow: the file is shared with r's blocks as
// its message (files.completeUploadExternal's blocks argument), and the
// message's ts is read back from files.info. An error means nothing was
// shared; an empty ts with no error means the message was shared but Slack
// did not list it within shareWaitTimeout. channel must be a channel id.
func (p *Poster) PostReplyWithFile(ctx context.Context, channel string, r reply.Reply, filename, title string, data []byte) (string, error) {
	if len(data) == 0 {
		return "", errors.New("post with file: empty file")
	}
	out := render(r)
	if err := p.pace.wait(ctx, channel); err != nil {
		return "", fmt.Errorf("post %s to %s: %w", filename, channel, err)
	}
	f, err := p.api.UploadFileContext(ctx, slack.UploadFileParameters{
		Filename: filename,
		Title:    title,
		FileSize: len(data),
		Reader:   bytes.NewReader(data),
		Channel:  channel,
		Blocks:   slack.Blocks{BlockSet: out.blocks},
	})
	if err != nil {
		p.metrics.apiError("files.upload")
		return "", fmt.Errorf("post %s to %s: %w", filename, channel, redact.Error(err, redact.Origin))
	}
	return p.shareTS(ctx, f.ID, channel), nil
}

// shareTS polls files.info until the file's share in channel is listed, and
// returns that message's ts ("" when it is not listed in time).
func (p *Poster) shareTS(ctx context.Context, fileID, channel string) string {
	ctx, cancel := context.WithTimeout(ctx, shareWaitTimeout)
	defer cancel()
	wait := sharePollFirst
	for {
		f, _, _, err := p.api.GetFileInfoContext(ctx, fileID, 0, 0)
		if err == nil {
			if ts := shareIn(f.Shares, channel); ts != "" {
				return ts
			}
		} else if ctx.Err() == nil {
			p.metrics.apiError("files.info")
			p.log.Info("files.info failed while waiting for a share", "file", fileID, "err", redact.Error(err, redact.Origin))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			p.log.Warn("file shared, but its message was not listed in time", "file", fileID, "channel", channel, "waited", shareWaitTimeout)
			return ""
		case <-t.C:
		}
		wait = min(2*wait, sharePollMax)
	}
}

// shareIn is the ts of the file's first share in channel.
func shareIn(s slack.Share, channel string) string {
	for _, m := range []map[string][]slack.ShareFileInfo{s.Public, s.Private} {
		if infos := m[channel]; len(infos) > 0 {
			return infos[0].Ts
		}
	}
	return ""
}

func fileName(r reply.Reply) string {
	if r.Kind == "" {
		return "vrambot.txt"
	}
	return "vrambot-" + r.Kind + ".txt"
}

func fallbackTitle(r reply.Reply) string {
	if t := oneLine(r.Title); t != "" {
		return truncateRunes(t, 200)
	}
	return "vrambot"
}

// pacer spaces posts to one channel by interval; Slack's chat.postMessage
// allows about one message per second per channel.
type pacer struct {
	interval time.Duration
	mu       sync.Mutex
	next     map[string]time.Time
}

// maxPacedChannels bounds the pacer's map; old entries are pruned past it.
const maxPacedChannels = 4096

func newPacer(interval time.Duration) *pacer {
	return &pacer{interval: interval, next: make(map[string]time.Time)}
}

// wait blocks until channel's next slot, which it reserves.
func (p *pacer) wait(ctx context.Context, channel string) error {
	p.mu.Lock()
	now := time.Now()
	slot := now
	if next := p.next[channel]; next.After(now) {
		slot = next
	}
	p.next[channel] = slot.Add(p.interval)
	if len(p.next) > maxPacedChannels {
		for ch, t := range p.next {
			if t.Before(now) {
				delete(p.next, ch)
			}
		}
	}
	p.mu.Unlock()
	d := time.Until(slot)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
