package bot

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/safetext"
	"github.com/vrambot/vrambot/job"
	"github.com/vrambot/vrambot/query"
	"github.com/vrambot/vrambot/reply"
)

// Jobs pasted or attached in Slack (docs/jobs.md §4, docs/slack.md §C.1):
// a mention or a direct message with a code block, or with an attached
// .yaml/.yml/.json/.py/.sh/.toml file, is read as a job, and the words
// beside it as query words; the "Size this job" shortcut does the same for
// any message.

// Jobs reads a job as written (docs/jobs.md): a training config or a
// launch command. cmd/vrambot implements it with vram.JobQuery and
// vram.EstimateJob.
type Jobs interface {
	// JobQuery is the /vram query of the job in text with the query words
	// beside it, which add to it and win over it. ok is false when text
	// holds no job, the job names no model, or the words do not read. It
	// is pure and fast (no I/O): the bot looks the job's model up on the
	// Hub with it before the answer takes a compute slot.
	JobQuery(text, words string) (query string, ok bool)
	// Job answers the job. Its error carries a kind (internal/errs): a
	// job that does not read is bad input, with a message for the user.
	Job(ctx context.Context, text, words string) (reply.Reply, error)
}

// fence opens and closes a code block in Slack and Markdown.
const fence = "```"

// Bounds on reading one message as a job: every source costs up to three
// readings of it (jobWords), each well under a millisecond
// (docs/jobs.md §5).
const (
	// maxJobBlocks is how many of a message's code blocks are tried.
	maxJobBlocks = 4
	// maxWordTokens bounds the words beside a job tried one by one.
	maxWordTokens = 24
	// maxUnusedShown bounds the unused words an answer quotes.
	maxUnusedShown = 100
)

// jobSource is one place a job may be in: a code block, a file, or the
// message's whole text (whose words are then the job's, not beside it).
type jobSource struct {
	text  string
	file  *attachment // nil for a code block or the message's text
	whole bool
}

// jobPlan is how a message is read as a job, before anything is computed.
type jobPlan struct {
	// given: the user clearly gave a job (a code block or a job file), so
	// one that does not read is answered with why.
	given bool
	src   jobSource // the job read, or the first one given
	// words are the query words beside the job that were used, unused
	// those that were not; query is the /vram query it runs ("" when no
	// job was read).
	words, unused, query string
}

func (p jobPlan) ok() bool { return p.query != "" }

// planJob reads a message as a job: its code blocks in order, then its job
// files, then (whole, for the shortcut) its whole text. The first that
// reads is the job; the message's words outside code blocks are its query
// words. Without Deps.Jobs no message is a job.
func (s *Server) planJob(text string, files []attachment, whole bool) jobPlan {
	if s.deps.Jobs == nil {
		return jobPlan{}
	}
	blocks, outside := splitFences(text)
	words := jobWordsOf(outside)
	var srcs []jobSource
	for _, b := range blocks[:min(len(blocks), maxJobBlocks)] {
		srcs = append(srcs, jobSource{text: b})
	}
	for i := range files {
		if files[i].jobFile() {
			srcs = append(srcs, jobSource{text: files[i].data, file: &files[i]})
		}
	}
	p := jobPlan{given: len(srcs) > 0}
	if whole && len(blocks) == 0 {
		srcs = append(srcs, jobSource{text: text, whole: true})
	}
	for _, src := range srcs {
		if src.file != nil && src.file.err != nil {
			continue
		}
		beside := words
		if src.whole {
			beside = ""
		}
		if q, used, unused, ok := s.jobWords(src.text, beside); ok {
			return jobPlan{given: true, src: src, words: used, unused: unused, query: q}
		}
	}
	if len(srcs) > 0 {
		p.src = srcs[0]
	}
	p.words = words
	return p
}

// jobWords reads the words beside a job (docs/slack.md §C.2): all of
// them when they read with it; else those that read on their own or in a
// pair ("4090", "bs=4", "2x a100"), the others said to be unused; else
// none, the job alone. ok is false when the job does not read at all.
func (s *Server) jobWords(src, words string) (q, used, unused string, ok bool) {
	if q, ok := s.deps.Jobs.JobQuery(src, words); ok {
		return q, words, "", true
	}
	if words == "" {
		return "", "", "", false
	}
	if kept, dropped := readableWords(words); kept != "" && dropped != "" {
		if q, ok := s.deps.Jobs.JobQuery(src, kept); ok {
			return q, kept, dropped, true
		}
	}
	if q, ok := s.deps.Jobs.JobQuery(src, ""); ok {
		return q, "", words, true
	}
	return "", "", "", false
}

// readableWords splits words into those the grammar reads (each alone, or
// with the next: "2x a100", "--max-model-len 8192") and the others. Past
// maxWordTokens every word is another.
func readableWords(words string) (kept, dropped string) {
	tokens := strings.Fields(words)
	if len(tokens) > maxWordTokens {
		return "", words
	}
	reads := func(s string) bool { _, err := query.ReadWords(s); return err == nil }
	var k, d []string
	for i := 0; i < len(tokens); i++ {
		switch {
		case reads(tokens[i]):
			k = append(k, tokens[i])
		case i+1 < len(tokens) && reads(tokens[i]+" "+tokens[i+1]):
			k = append(k, tokens[i], tokens[i+1])
			i++
		default:
			d = append(d, tokens[i])
		}
	}
	return strings.Join(k, " "), strings.Join(d, " ")
}

// slackMarkupRE matches what Slack writes for special mentions, channels,
// user groups and links (<!here>, <#C1|ml>, <!subteam^S1>, <https://…>):
// none is a query word.
var slackMarkupRE = regexp.MustCompile(`<[!#][^>]*>|<(https?|mailto):[^>]*>`)

// jobWordsOf is the query words of a message's text outside its code
// blocks: without Slack's markup and a leading "vram".
func jobWordsOf(outside string) string {
	w := strings.Join(strings.Fields(slackMarkupRE.ReplaceAllString(outside, " ")), " ")
	if rest, ok := vramWords(w); ok {
		return rest
	}
	return w
}

// vramWords reports a text that starts with the word "vram" (or
// "/vram"), and the rest.
func vramWords(text string) (string, bool) {
	word, rest := text, ""
	if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
		word, rest = text[:i], text[i:]
	}
	if strings.EqualFold(word, "vram") || strings.EqualFold(word, "/vram") {
		return strings.TrimSpace(rest), true
	}
	return "", false
}

// langTagRE matches a Markdown fence's language tag (```yaml).
var langTagRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+#._-]{0,19}$`)

// splitFences returns the contents of a message's code blocks and its
// text outside them. Slack writes a block with its first and last lines
// on the fences' (```base_model: x\nadapter: lora```), Markdown on lines
// of their own after an optional language tag (```yaml); both are read. An
// unclosed fence runs to the end.
func splitFences(text string) (blocks []string, outside string) {
	var out strings.Builder
	rest := text
	for {
		i := strings.Index(rest, fence)
		if i < 0 {
			out.WriteString(rest)
			break
		}
		out.WriteString(rest[:i])
		out.WriteByte(' ')
		body := rest[i+len(fence):]
		j := strings.Index(body, fence)
		rest = ""
		if j >= 0 {
			body, rest = body[:j], body[j+len(fence):]
		}
		if first, after, multi := strings.Cut(body, "\n"); multi && (strings.TrimSpace(first) == "" || langTagRE.MatchString(strings.TrimSpace(first))) {
			body = after
		}
		if strings.TrimSpace(body) != "" {
			blocks = append(blocks, body)
		}
		if j < 0 {
			break
		}
	}
	return blocks, strings.TrimSpace(out.String())
}

// jobReply answers the job a plan read, in public (a channel answer has
// no share button), saying which of the words beside it were not used;
// ok is false when the answer is an error.
func (s *Server) jobReply(ctx context.Context, p jobPlan) (reply.Reply, bool) {
	r, err := s.deps.Jobs.Job(ctx, p.src.text, p.words)
	r = s.vramOutcome(p.query, false, r, err)
	if err != nil {
		return r, false
	}
	if p.unused != "" {
		r.Context = withUnusedWords(r.Context, p.unused)
	}
	return r, true
}

// withUnusedWords says, after the line saying how the job was read, which
// words beside it were not used.
func withUnusedWords(context []string, unused string) []string {
	line := "Not used from your message: `" + strings.ReplaceAll(safetext.OneLine(unused, maxUnusedShown), "`", "'") + "`"
	i := slices.IndexFunc(context, func(c string) bool { return strings.HasPrefix(c, "Read as `") })
	return slices.Insert(slices.Clone(context), i+1, line)
}

// jobHowText says how a job is given in Slack.
const jobHowText = "I read a job from a code block or an attached .yaml, .yml, .json, .py, .sh or .toml file; words beside it (a GPU, a model, key=value settings) add to it."

// jobRefusal answers a job that was given but does not read: the job
// reader's own message (the formats it reads, the line and column of a
// syntax error), never an internal error.
func (s *Server) jobRefusal(ctx context.Context, p jobPlan, title string) reply.Reply {
	return reply.Reply{Kind: "error", Title: title, Summary: s.jobProblem(ctx, p), Context: []string{jobHowText}, Ephemeral: true}
}

// jobProblem says why a plan's job does not read.
func (s *Server) jobProblem(ctx context.Context, p jobPlan) string {
	if f := p.src.file; f != nil && f.err != nil {
		name := safeFileName(f.file.Name)
		if !errors.Is(f.err, errFileTooLarge) {
			return "Could not download the attached " + name + "; please try again."
		}
		size := fmt.Sprintf("more than %d KiB", job.MaxBytes>>10)
		if f.file.Size > job.MaxBytes {
			size = fmt.Sprintf("%d KiB", (f.file.Size+1023)>>10)
		}
		return fmt.Sprintf("The attached %s is %s; a job file may have at most %d KiB. Attach the config or the launch command itself.", name, size, job.MaxBytes>>10)
	}
	// JobQuery found no job: Job says why, from the job reader.
	_, err := s.deps.Jobs.Job(ctx, p.src.text, "")
	switch k := errs.KindOf(err); {
	case err == nil:
	case k == errs.Internal || k == errs.Unavailable:
		s.log.Error("job not read", "kind", k.String(), "err", err)
	default:
		return errs.UserMessage(err)
	}
	return "I could not read that as a job."
}

// notJobTitle heads the answer to a message that holds no job.
const notJobTitle = "No job found"
