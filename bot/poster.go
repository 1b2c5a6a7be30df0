package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/internal/safetext"
	"github.com/vrambot/vrambot/reply"
)

// Poster posts replies and files to channels, paced per channel (lanes),
// every call retried on 5xx, 429 and connection errors (retryTransport). The
// digest uses it too.
type Poster struct {
	api     *slack.Client
	http    *http.Client // the upload step of the files flow
	lanes   *lanes
	log     *slog.Logger
	metrics *metrics
}

// NewTokenPoster is a Poster for one-off posts outside `serve` (the
// `vrambot digest` command): a bot token and the Web API base URL
// (VRAMBOT_SLACK_API_URL, "" for Slack's) are all it needs. Its calls have
// the retries of DefaultRetryPolicy.
func NewTokenPoster(botToken, apiURL string, log *slog.Logger) *Poster {
	if log == nil {
		log = slog.Default()
	}
	m := newMetrics()
	base := apiBaseURL(apiURL)
	u, err := url.Parse(base)
	if err != nil {
		u = &url.URL{} // config validated the URL: only method labels would suffer
	}
	client := &http.Client{Transport: newRetryTransport(nil, DefaultRetryPolicy, u, m)}
	api := slack.New(botToken, slack.OptionHTTPClient(client), slack.OptionAPIURL(base))
	return newPoster(api, client, newLanes(DefaultPostInterval, DefaultChannelQueue), log, m)
}

func newPoster(api *slack.Client, client *http.Client, l *lanes, log *slog.Logger, m *metrics) *Poster {
	return &Poster{api: api, http: client, lanes: l, log: log, metrics: m}
}

// overflowText is the one notice a channel gets when more answers are
// waiting than its queue holds.
const overflowText = "More out-of-memory pastes arrived here than I can answer at Slack's pace of about one message a second, so I did not answer %d of them. If you still need an answer, mention me in the paste's thread."

// PostReply posts r to channel (in the thread threadTS when set) and returns
// the message's ts. It waits for the channel's turn under ctx. The reply's
// details follow in the thread (the message's own when it starts one). A
// message too long is posted shortened, with the full text attached in the
// thread as a file. When the channel's queue is full it returns an error
// wrapping errQueueFull, after posting (once per burst) a notice that
// counts the unanswered pastes.
func (p *Poster) PostReply(ctx context.Context, channel, threadTS string, r reply.Reply) (string, error) {
	return p.postReply(ctx, channel, threadTS, r, "")
}

// postReply is PostReply; with a detailsKey the reply's details are not
// posted but kept behind a Details button of that value (a reply posted
// in a thread, whose details would lengthen the thread unasked).
func (p *Poster) postReply(ctx context.Context, channel, threadTS string, r reply.Reply, detailsKey string) (string, error) {
	surface := surfaceChannel
	if detailsKey != "" {
		surface = surfaceResponse
	}
	out := render(r, renderOptions{surface: surface, detailsKey: detailsKey})
	if detailsKey != "" {
		r.Details = nil
	}
	opts := []slack.MsgOption{slack.MsgOptionText(out.fallback, false), slack.MsgOptionBlocks(out.blocks...)}
	ts, err := p.post(ctx, channel, threadTS, opts)
	if err != nil {
		return "", err
	}
	thread := threadTS
	if thread == "" {
		thread = ts
	}
	return ts, p.postRest(ctx, channel, thread, r, out.shortened)
}

// postRest posts what follows a reply's message in thread: its details,
// and the full text as a file when a message had to be shortened.
func (p *Poster) postRest(ctx context.Context, channel, thread string, r reply.Reply, shortened bool) error {
	if r.Details != nil {
		d := render(*r.Details, renderOptions{surface: surfaceDetails})
		if _, err := p.post(ctx, channel, thread, []slack.MsgOption{slack.MsgOptionText(d.fallback, false), slack.MsgOptionBlocks(d.blocks...)}); err != nil {
			return err
		}
		shortened = d.shortened
	}
	if shortened {
		return p.UploadFile(ctx, channel, thread, fileName(r), fallbackTitle(r), []byte(reply.Text(r)))
	}
	return nil
}

// UpdateReply replaces the message ts in channel with r (chat.update), as
// a button that applies a fix does; r's details follow in thread.
func (p *Poster) UpdateReply(ctx context.Context, channel, ts, thread string, r reply.Reply) error {
	out := render(r, renderOptions{surface: surfaceChannel})
	done, err := p.turn(ctx, channel)
	if err != nil {
		return fmt.Errorf("update in %s: %w", channel, err)
	}
	_, _, _, err = p.api.UpdateMessageContext(ctx, channel, ts, slack.MsgOptionText(out.fallback, false), slack.MsgOptionBlocks(out.blocks...))
	done()
	if err != nil {
		p.metrics.apiError("chat.update")
		return fmt.Errorf("update in %s: %w", channel, redactErr(err))
	}
	if thread == "" {
		thread = ts
	}
	return p.postRest(ctx, channel, thread, r, out.shortened)
}

// postText posts a plain-text message.
func (p *Poster) postText(ctx context.Context, channel, threadTS, text string) error {
	_, err := p.post(ctx, channel, threadTS, []slack.MsgOption{slack.MsgOptionText(text, false)})
	return err
}

// post waits for channel's turn and calls chat.postMessage.
func (p *Poster) post(ctx context.Context, channel, threadTS string, opts []slack.MsgOption) (string, error) {
	done, err := p.turn(ctx, channel)
	if err != nil {
		return "", fmt.Errorf("post to %s: %w", channel, err)
	}
	defer done()
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	_, ts, err := p.api.PostMessageContext(ctx, channel, opts...)
	if err != nil {
		p.metrics.apiError("chat.postMessage")
		return "", fmt.Errorf("post to %s: %w", channel, redactErr(err))
	}
	return ts, nil
}

// turn waits for channel's turn; when the queue is full it posts the
// overflow notice if this caller is the one due to, and fails.
func (p *Poster) turn(ctx context.Context, channel string) (func(), error) {
	done, err := p.lanes.acquire(ctx, channel, false)
	if err == nil {
		return done, nil
	}
	if errors.Is(err, errQueueFull) || errors.Is(err, errNoticeDue) {
		p.metrics.queueFull()
	}
	if errors.Is(err, errNoticeDue) {
		p.postOverflowNotice(ctx, channel)
		return nil, errQueueFull
	}
	return nil, err
}

func (p *Poster) postOverflowNotice(ctx context.Context, channel string) {
	done, err := p.lanes.acquire(ctx, channel, true)
	if err != nil {
		p.lanes.takeOverflow(channel)
		p.log.Warn("overflow notice not posted", "channel", channel, "err", err)
		return
	}
	defer done()
	n := p.lanes.takeOverflow(channel)
	if _, _, err := p.api.PostMessageContext(ctx, channel, slack.MsgOptionText(fmt.Sprintf(overflowText, n), false)); err != nil {
		p.metrics.apiError("chat.postMessage")
		p.log.Error("overflow notice failed", "channel", channel, "unanswered", n, "err", redactErr(err))
		return
	}
	p.log.Warn("channel queue overflowed; posted a notice", "channel", channel, "unanswered", n)
}

// UploadFile shares data as a file in channel (in the thread threadTS when
// set) with Slack's three-step external upload (docs/slack.md §A.7).
func (p *Poster) UploadFile(ctx context.Context, channel, threadTS, filename, title string, data []byte) error {
	_, err := p.upload(ctx, uploadParams{channel: channel, threadTS: threadTS, filename: filename, title: title, data: data})
	return err
}

// uploadParams is one file to share; further options of
// files.completeUploadExternal (an initial comment, say) belong here.
type uploadParams struct {
	channel, threadTS string
	filename, title   string
	data              []byte
	// blocks, when set, are the message the file is shared with.
	blocks []slack.Block
}

// upload shares a file and returns its id. Each of the three steps is
// retried by the transport (the upload's body is replayable).
func (p *Poster) upload(ctx context.Context, u uploadParams) (string, error) {
	if len(u.data) == 0 {
		return "", fmt.Errorf("upload %s: empty file", u.filename)
	}
	fail := func(step string, err error) (string, error) {
		p.metrics.apiError(step)
		return "", fmt.Errorf("upload %s to %s: %s: %w", u.filename, u.channel, step, redactErr(err))
	}
	done, err := p.turn(ctx, u.channel)
	if err != nil {
		return "", fmt.Errorf("upload %s to %s: %w", u.filename, u.channel, err)
	}
	defer done()
	dest, err := p.api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: u.filename, FileSize: len(u.data)})
	if err != nil {
		return fail("files.getUploadURLExternal", err)
	}
	if err := p.sendFile(ctx, dest.UploadURL, u.data); err != nil {
		return fail("files.upload", err)
	}
	params := slack.CompleteUploadExternalParameters{
		Files:           []slack.FileSummary{{ID: dest.FileID, Title: u.title}},
		Channel:         u.channel,
		ThreadTimestamp: u.threadTS,
	}
	if len(u.blocks) > 0 {
		params.Blocks = slack.Blocks{BlockSet: u.blocks}
	}
	if _, err := p.api.CompleteUploadExternalContext(ctx, params); err != nil {
		return fail("files.completeUploadExternal", err)
	}
	return dest.FileID, nil
}

// sendFile is step 2 of the upload: the raw bytes POSTed to the upload URL
// Slack handed out ("files can be sent as raw bytes", files.getUploadURLExternal).
// The URL itself is the credential, so no token goes with it; the body can
// be replayed, so the transport retries it.
func (p *Poster) sendFile(ctx context.Context, uploadURL string, data []byte) error {
	req, err := http.NewRequestWithContext(withCallLabel(ctx, "files.upload"), http.MethodPost, uploadURL, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := p.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return slack.StatusCodeError{Code: resp.StatusCode, Status: resp.Status}
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
	id, err := p.upload(ctx, uploadParams{channel: channel, filename: filename, title: title, data: data, blocks: render(r, renderOptions{surface: surfaceChannel}).blocks})
	if err != nil {
		return "", err
	}
	return p.shareTS(ctx, id, channel), nil
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
			p.log.Info("files.info failed while waiting for a share", "file", fileID, "err", redactErr(err))
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

// fallbackTitle is the title of the file a long reply is attached as:
// shown by Slack as is, so sanitised like any echoed text.
func fallbackTitle(r reply.Reply) string {
	if t := safetext.OneLine(r.Title, maxFileTitle); t != "" {
		return t
	}
	return "vrambot"
}

// maxFileTitle keeps a file title to one readable line.
const maxFileTitle = 200

// noticeTimeout bounds the short notice posted after an answer failed.
const noticeTimeout = 10 * time.Second
