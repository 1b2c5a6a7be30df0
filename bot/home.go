package bot

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// The App Home (https://docs.slack.dev/surfaces/app-home): its Messages
// tab takes direct messages, answered as a channel's are (dm.go); its Home
// tab is published on app_home_opened with how to ask, the last digest's
// headline and the OOMs seen this week by cause.

// DigestHeadline is the last digest posted: its headline, when and where.
type DigestHeadline struct {
	Headline string
	At       time.Time
	Channel  string
}

// LastDigest reads the last digest posted (serve records it as the digest
// posts); ok is false when none was.
type LastDigest interface {
	LastDigest(ctx context.Context) (d DigestHeadline, ok bool, err error)
}

// OOMCounter counts the OOMs the bot answered since a time by the id of
// their first cause (the digest's OOM event log).
type OOMCounter interface {
	OOMsByCause(ctx context.Context, since time.Time) (map[string]int, error)
}

// homeWeek is the home tab's window for OOMs.
const homeWeek = 7 * 24 * time.Hour

// maxHomeCauses bounds the causes listed.
const maxHomeCauses = 8

// homeFacts is what the home tab shows beside how to ask.
type homeFacts struct {
	digest    *DigestHeadline
	digestErr bool
	causes    map[string]int
	oomsKnown bool // the event log was read
	now       time.Time
}

// publishHome publishes the Home tab for user (the queue's publisher
// calls it, paced).
func (s *Server) publishHome(ctx context.Context, user string) {
	ctx, cancel := context.WithTimeout(ctx, viewPublishBudget)
	defer cancel()
	req := slack.PublishViewContextRequest{UserID: user, View: homeView(s.homeFactsFor(ctx))}
	if _, err := s.api.PublishViewContext(ctx, req); err != nil {
		s.metrics.apiError("views.publish")
		s.metrics.homeView(homeFailed)
		s.log.Error("views.publish failed", "err", redactErr(err))
		s.homeNotPublished(user)
		return
	}
	s.metrics.homeView(homePublished)
}

// readHomeFacts reads what the home tab shows beside how to ask.
func (s *Server) readHomeFacts(ctx context.Context) homeFacts {
	f := homeFacts{now: time.Now()}
	if s.deps.LastDigest != nil {
		d, ok, err := s.deps.LastDigest.LastDigest(ctx)
		switch {
		case err != nil:
			f.digestErr = true
			s.log.Warn("home: last digest not read", "err", err)
		case ok:
			f.digest = &d
		}
	}
	if s.deps.OOMs != nil {
		causes, err := s.deps.OOMs.OOMsByCause(ctx, f.now.Add(-homeWeek))
		if err != nil {
			s.log.Warn("home: OOM log not read", "err", err)
		} else {
			f.causes, f.oomsKnown = causes, true
		}
	}
	return f
}

// channelIDRE matches a channel id; only such ids are put into a link.
var channelIDRE = regexp.MustCompile(`^[CGD][A-Z0-9]{1,20}$`)

// homeView is the Home tab.
func homeView(f homeFacts) slack.HomeTabViewRequest {
	md := func(text string) slack.Block { return mrkdwnSection(truncateEscaped(text, maxSectionText), nil) }
	blocks := []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, "vrambot: GPU memory answers", true, false)),
		md("*How to ask*\n" +
			"• `/vram llama-3.1-8b qlora 4090` — or in plain words: `/vram can I finetune llama 3 8b on a 4090?`\n" +
			"• `/vram` alone opens a form; `/vram help` shows the grammar.\n" +
			"• Paste a CUDA out-of-memory error in a channel I am in: I answer in its thread. On any message, *⋯ → Diagnose OOM* does the same.\n" +
			"• `/oom` opens a box to paste an error into.\n" +
			"• Mention me with your job — a config or a launch command in a code block, or its file attached — and I size it; *⋯ → Size this job* does it for any message.\n" +
			"• Or write to me here, in the *Messages* tab."),
		slack.NewDividerBlock(),
	}
	switch {
	case f.digest != nil:
		where := ""
		if channelIDRE.MatchString(f.digest.Channel) {
			where = " in <#" + f.digest.Channel + ">" // our own markup, a validated id
		}
		blocks = append(blocks, md(fmt.Sprintf("*Last digest* (%s%s)\n%s", f.digest.At.UTC().Format("Mon 2 Jan 15:04 MST"), where, mrkdwn(oneLine(f.digest.Headline)))))
	case f.digestErr:
		blocks = append(blocks, md("*Last digest*\nNot readable right now (the store did not answer)."))
	default:
		blocks = append(blocks, md("*Last digest*\nNone posted yet (set VRAMBOT_DIGEST_CHANNEL for a daily one)."))
	}
	blocks = append(blocks, md(oomWeekText(f)))
	blocks = append(blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, "Updated "+f.now.UTC().Format("Mon 2 Jan 15:04 MST")+" · OOMs are the ones I answered; pasted text is never kept.", false, false)))
	return slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: blocks[:min(len(blocks), maxViewBlocks)]}}
}

// oomWeekText lists the week's OOMs by cause, most frequent first.
func oomWeekText(f homeFacts) string {
	const head = "*OOMs seen in the last 7 days*\n"
	if !f.oomsKnown {
		return head + "Not available (no OOM log, or the store did not answer)."
	}
	type count struct {
		cause string
		n     int
	}
	var counts []count
	total := 0
	for c, n := range f.causes {
		counts = append(counts, count{c, n})
		total += n
	}
	if total == 0 {
		return head + "None in the channels I am in."
	}
	slices.SortFunc(counts, func(a, b count) int { return cmp.Or(b.n-a.n, strings.Compare(a.cause, b.cause)) })
	var lines []string
	for i, c := range counts {
		if i == maxHomeCauses {
			lines = append(lines, fmt.Sprintf("• %d more causes", len(counts)-maxHomeCauses))
			break
		}
		lines = append(lines, fmt.Sprintf("• %s: %d", mrkdwn(causeWords(c.cause)), c.n))
	}
	return fmt.Sprintf("%s%d in all\n%s", head, total, strings.Join(lines, "\n"))
}

// causeWords writes a cause id as words ("activations-in-backward" →
// "activations in backward"); no cause is "cause not found".
func causeWords(id string) string {
	if id == "" {
		return "cause not found"
	}
	return strings.ReplaceAll(oneLine(id), "-", " ")
}
