package bot

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/internal/slacktest"
	"github.com/vrambot/vrambot/internal/testutil"
	"github.com/vrambot/vrambot/job"
	"github.com/vrambot/vrambot/reply"
)

// Jobs pasted or attached in Slack (job.go, message.go), played against
// the stand-in Slack with the real job reader and estimator.

// jobFile reads a job file of the job reader's test set
// (job/testdata/jobs/SOURCES.md says where each comes from).
func jobFile(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "job", "testdata", "jobs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// llamaLoRA is an axolotl config that does not fit a 4090 as written, so
// its answer has fixes to apply.
const llamaLoRA = "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nlora_r: 16\nsequence_len: 4096\nmicro_batch_size: 4\ngradient_checkpointing: false\n"

// jobServer is a test server on the real command set that reads jobs.
func jobServer(t *testing.T, opts ...serverOption) *testServer {
	t.Helper()
	return realServer(t, append([]serverOption{func(_ *Config, d *Deps) { d.Jobs = realCommands{} }}, opts...)...)
}

// mention is an app_mention of the bot by U1 in C1 at ts, with files.
func mention(ts, text string, files ...map[string]any) map[string]any {
	m := map[string]any{"type": "app_mention", "user": "U1", "text": "<@" + testBotUser + "> " + text, "ts": ts, "channel": "C1"}
	if len(files) > 0 {
		m["files"] = files
	}
	return m
}

// dm is a direct message from U1 at ts with files.
func dm(ts, text string, files ...map[string]any) map[string]any {
	m := slacktest.DirectMessage(ts, text)
	if len(files) > 0 {
		m["files"], m["subtype"] = files, subtypeFile
	}
	return m
}

// attach serves content as an uploaded file and returns its file object.
func attach(ts *testServer, id, name, filetype, content string) map[string]any {
	link := ts.slack.AddFile("/files/T1-"+id+"/"+name, content)
	return map[string]any{"id": id, "name": name, "mimetype": "text/plain", "filetype": filetype, "size": len(content), "url_private_download": link}
}

// onlyPost returns the one message posted, failing otherwise.
func onlyPost(t *testing.T, ts *testServer) slacktest.Call {
	t.Helper()
	var top []slacktest.Call
	for _, p := range ts.slack.Answered("chat.postMessage") {
		if !strings.HasPrefix(p.Args.Get("text"), "Details") {
			top = append(top, p)
		}
	}
	if len(top) != 1 {
		t.Fatalf("%d answers posted (%v), want 1", len(top), channelsOf(top))
	}
	return top[0]
}

// contextOf is every context line of blocks.
func contextOf(blocks []slack.Block) string {
	var out []string
	for _, b := range blocks {
		if c, ok := b.(*slack.ContextBlock); ok {
			for _, e := range c.ContextElements.Elements {
				if tx, ok := e.(*slack.TextBlockObject); ok {
					out = append(out, tx.Text)
				}
			}
		}
	}
	return strings.Join(out, "\n")
}

// TestJobInAMessage: a mention or a direct message with a job (a code
// block, an attached job file) is answered with the job's estimate, in its
// thread, with the words beside it as query words; what holds no job is
// answered as before, and a job that does not read says why.
func TestJobInAMessage(t *testing.T) {
	gemma := jobFile(t, "axolotl/gemma-3-4b-qlora.yml")
	deepspeed := jobFile(t, "deepspeed/axolotl-zero3_bf16_cpuoffload_params.json")
	tests := []struct {
		name   string
		event  func(ts *testServer) map[string]any
		header string // in the answer's header
		want   []string
		not    []string
	}{
		{"mention with a code block", func(*testServer) map[string]any {
			return mention("1700005000.000100", "```"+gemma+"```")
		}, "google/gemma-3-4b-it · QLoRA", []string{"From your axolotl config", "Read as `google/gemma-3-4b-it qlora bs=2"}, nil},
		{"its words as query words", func(*testServer) map[string]any {
			return mention("1700005000.000100", "will this fit on a 4090?\n```\n"+gemma+"\n```")
		}, "GeForce RTX 4090", []string{"Read as `google/gemma-3-4b-it qlora 4090"}, []string{"Not used"}},
		{"a Markdown fence with a language", func(*testServer) map[string]any {
			return mention("1700005000.000100", "h100 gpus=2 ```yaml\n"+gemma+"```")
		}, "H100", []string{"gpus=2"}, nil},
		{"words that do not read", func(*testServer) map[string]any {
			return mention("1700005000.000100", "4090 thanks! ```"+gemma+"```")
		}, "GeForce RTX 4090", []string{"Not used from your message: `thanks!`"}, nil},
		{"vram and an attached job file", func(ts *testServer) map[string]any {
			return mention("1700005000.000100", "vram a100", attach(ts, "FJ1", "qlora.yml", "yaml", gemma))
		}, "A100", []string{"From your axolotl config"}, nil},
		{"a direct message with a .yaml", func(ts *testServer) map[string]any {
			return dm("1700005000.000100", "", attach(ts, "FJ2", "gemma.yaml", "yaml", gemma))
		}, "google/gemma-3-4b-it · QLoRA", []string{"From your axolotl config"}, nil},
		{"a direct message with a DeepSpeed .json", func(ts *testServer) map[string]any {
			return dm("1700005000.000100", "llama-3.1-8b a100", attach(ts, "FJ3", "ds_config.json", "json", deepspeed))
		}, "llama-3.1-8b · full fine-tuning · A100", []string{"From your deepspeed config", "zero=3 offload=param"}, nil},
		{"a DeepSpeed .json that names no model", func(ts *testServer) map[string]any {
			return dm("1700005000.000100", "", attach(ts, "FJ4", "zero3.json", "json", deepspeed))
		}, "Could not read that job", []string{"names no model", "code block or an attached"}, []string{"config.json"}},
		{"a code block that is no job", func(*testServer) map[string]any {
			return mention("1700005000.000100", "why? ```print('hello')```")
		}, "Could not read that job", []string{"formats I read are axolotl"}, nil},
		{"text that is no job", func(*testServer) map[string]any {
			return mention("1700005000.000100", "base model llama, lora")
		}, "How I can help", nil, []string{"formats I read"}},
		{"vram and a file that is no job", func(ts *testServer) map[string]any {
			return mention("1700005000.000100", "vram 7b lora a100", attach(ts, "FJ5", "plot.py", "python", "import matplotlib\nplt.show()\n"))
		}, "7b · LoRA · A100", nil, []string{"Could not read"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := jobServer(t, func(_ *Config, d *Deps) { d.Configs = &fakeConfigs{} })
			readAll(t, ts.event(t, fmt.Sprintf("EvJob%d", i), tt.event(ts)))
			ts.idle(t)
			p := onlyPost(t, ts)
			if th := p.Args.Get("thread_ts"); th != "1700005000.000100" && !(th == "" && p.Args.Get("channel") == "DU1") {
				t.Errorf("answered in %s/%s", p.Args.Get("channel"), th)
			}
			blocks := postedBlocks(t, p)
			if h := headerOf(blocks); !strings.Contains(h, tt.header) {
				t.Errorf("header %q, want %q", h, tt.header)
			}
			all := p.Args.Get("blocks")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("answer lacks %q: %.1500s", w, all)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(all, w) {
					t.Errorf("answer has %q: %.1500s", w, all)
				}
			}
		})
	}
}

// TestJobAndConfigFiles: which attached file is what. A Hugging Face
// config.json is answered as a config (by name, or by the model_type at
// its top level), as before; a JSON job is a job.
func TestJobAndConfigFiles(t *testing.T) {
	const hfConfig = `{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 4096}`
	deepspeed := jobFile(t, "deepspeed/axolotl-zero3_bf16_cpuoffload_params.json")
	tests := []struct {
		name, file, content, text string
		config                    bool // answered by Configs
		header                    string
	}{
		{"config.json", "config.json", hfConfig, "vram lora 4090", true, "Private-8B"},
		{"a config by its keys", "my-model.json", hfConfig, "lora 4090", true, "Private-8B"},
		{"a DeepSpeed JSON", "ds.json", deepspeed, "llama-3.1-8b 4x h100", false, "llama-3.1-8b · full fine-tuning"},
		{"a DeepSpeed JSON named config.json", "config.json", deepspeed, "llama-3.1-8b 4x h100", false, "llama-3.1-8b · full fine-tuning"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfgs := &fakeConfigs{}
			ts := jobServer(t, func(_ *Config, d *Deps) { d.Configs = cfgs })
			readAll(t, ts.event(t, fmt.Sprintf("EvFiles%d", i), mention("1700005100.000100", tt.text, attach(ts, "FC", tt.file, "json", tt.content))))
			ts.idle(t)
			if h := headerOf(postedBlocks(t, onlyPost(t, ts))); !strings.Contains(h, tt.header) {
				t.Errorf("header %q, want %q", h, tt.header)
			}
			cfgs.mu.Lock()
			defer cfgs.mu.Unlock()
			if asked := cfgs.name != ""; asked != tt.config {
				t.Errorf("Configs asked: %v (%q), want %v", asked, cfgs.name, tt.config)
			}
		})
	}
}

// TestJobInAChannelWithoutMention: a job pasted in a channel without a
// mention is not answered (only OOMs are).
func TestJobInAChannelWithoutMention(t *testing.T) {
	ts := jobServer(t)
	readAll(t, ts.event(t, "EvJobChannel", message("```"+llamaLoRA+"```")))
	readAll(t, ts.event(t, "EvJobChannelFile", message("my config", "ts", "1700005200.000100", "subtype", subtypeFile,
		"files", []map[string]any{attach(ts, "FJ", "lora.yml", "yaml", llamaLoRA)})))
	ts.idle(t)
	if r := ts.slack.Replies(); len(r) != 0 {
		t.Errorf("answered: %v", channelsOf(r))
	}
}

// TestJobWithOOM: a paste that holds a job and an OOM traceback is answered
// with the OOM's diagnosis, asked of the whole text (which sizes it from
// the job, command/oom).
func TestJobWithOOM(t *testing.T) {
	ts := newTestServer(t, nil, nil, func(_ *Config, d *Deps) { d.Jobs = realCommands{} })
	text := "it died ```" + llamaLoRA + "```\n" + oomPaste
	readAll(t, ts.event(t, "EvJobOOM", mention("1700005300.000100", text)))
	ts.idle(t)
	p := onlyPost(t, ts)
	if h := headerOf(postedBlocks(t, p)); !strings.Contains(h, "CUDA OOM") {
		t.Errorf("header %q: want the OOM's diagnosis", h)
	}
	asked := ts.cmds.oomAsked()
	if len(asked) != 1 || asked[0] != withoutMentions("<@"+testBotUser+"> "+text) {
		t.Errorf("OOM asked %q", asked)
	}
	if n := len(ts.ooms.all()); n != 1 {
		t.Errorf("%d OOMs recorded for the digest", n)
	}
}

// TestSizeJobShortcut: "Size this job" on someone else's message with a
// job posts one estimate in that message's thread, however many ask; on a
// message without a job it says so privately, with the formats read.
func TestSizeJobShortcut(t *testing.T) {
	ts := jobServer(t)
	msg := map[string]any{"type": "message", "user": "U9", "ts": "1700005400.000100", "text": slackEscape("does this fit a 4090? ```" + llamaLoRA + "```")}
	for range 2 { // one click delivered twice
		ts.interactForm(t, slacktest.MessageAction("U1", "C1", callbackSizeJob, "1700005401.1", ts.slack.ResponseURL("sj"), msg))
	}
	ts.idle(t)
	ts.interactForm(t, slacktest.MessageAction("U2", "C1", callbackSizeJob, "1700005402.1", ts.slack.ResponseURL("sj2"), msg))
	// The message alone, unfenced: the shortcut reads the whole text.
	bare := map[string]any{"type": "message", "user": "U9", "ts": "1700005500.000100", "text": slackEscape("vllm serve Qwen/Qwen3-8B --max-model-len 8192")}
	ts.interactForm(t, slacktest.MessageAction("U1", "C1", callbackSizeJob, "1700005501.1", ts.slack.ResponseURL("sj3"), bare))
	plain := map[string]any{"type": "message", "user": "U9", "ts": "1700005600.000100", "text": "lunch?"}
	ts.interactForm(t, slacktest.MessageAction("U1", "C1", callbackSizeJob, "1700005601.1", ts.slack.ResponseURL("sj4"), plain))
	ts.idle(t)

	var answers []slacktest.Call
	for _, p := range ts.slack.Answered("chat.postMessage") {
		if !strings.HasPrefix(p.Args.Get("text"), "Details") {
			answers = append(answers, p)
		}
	}
	if len(answers) != 2 || answers[0].Args.Get("thread_ts") != "1700005400.000100" || answers[1].Args.Get("thread_ts") != "1700005500.000100" {
		t.Fatalf("answers %v, want one in each job's thread", channelsOf(answers))
	}
	for i, want := range []string{"meta-llama/Llama-3.1-8B · LoRA · GeForce RTX 4090", "Qwen/Qwen3-8B · inference"} {
		postedBlocks(t, answers[i])
		if got := answers[i].Args.Get("text"); !strings.Contains(got, want) {
			t.Errorf("answer %d: %q, want %q", i, got, want)
		}
	}
	if got := responses(ts.slack, "sj2"); len(got) != 1 || !strings.Contains(string(got[0].Body), alreadySizedText) {
		t.Errorf("second asker got %.300s", bodiesOf(got))
	}
	got := responses(ts.slack, "sj4")
	if len(got) != 1 {
		t.Fatalf("no job: %d private answers", len(got))
	}
	f := decodeResponse(t, got[0].Body)
	if f.ResponseType != slack.ResponseTypeEphemeral || !strings.Contains(f.Text, notJobTitle) || !strings.Contains(f.Text, "formats I read are axolotl") {
		t.Errorf("no job: %+v", f)
	}
	if n := len(responses(ts.slack, "sj")); n != 0 {
		t.Errorf("the first asker also got %d private answers", n)
	}
}

// TestSizeJobShortcutMarked: the shortcut on a message whose job was
// answered as a mention points at that answer; without Deps.Jobs the
// shortcut is not handled.
func TestSizeJobShortcutMarked(t *testing.T) {
	ts := jobServer(t)
	readAll(t, ts.event(t, "EvJobMarked", mention("1700005700.000100", "```"+llamaLoRA+"```")))
	ts.idle(t)
	msg := map[string]any{"type": "message", "user": "U1", "ts": "1700005700.000100", "text": "<@" + testBotUser + "> ```" + llamaLoRA + "```"}
	ts.interactForm(t, slacktest.MessageAction("U2", "C1", callbackSizeJob, "1700005701.1", ts.slack.ResponseURL("m"), msg))
	ts.idle(t)
	if got := responses(ts.slack, "m"); len(got) != 1 || !strings.Contains(string(got[0].Body), alreadySizedText) {
		t.Errorf("shortcut after the mention's answer: %.300s", bodiesOf(got))
	}

	plain := realServer(t)
	plain.interactForm(t, slacktest.MessageAction("U2", "C1", callbackSizeJob, "1700005702.1", plain.slack.ResponseURL("n"), msg))
	plain.idle(t)
	if r := plain.slack.Replies(); len(r) != 0 {
		t.Errorf("without Jobs the shortcut answered: %v", channelsOf(r))
	}
}

// TestJobAnswerButtons: a job's answer carries the job as a query, so its
// buttons work: Apply re-runs it with the fix and replaces the answer in
// place, and the query shared from it is answered for everyone.
func TestJobAnswerButtons(t *testing.T) {
	ts := jobServer(t)
	readAll(t, ts.event(t, "EvJobApply", mention("1700005800.000100", "4090 ```"+llamaLoRA+"```")))
	ts.idle(t)
	posted := ts.slack.Messages()
	if len(posted) == 0 {
		t.Fatal("not answered")
	}
	answer := posted[0]
	var blocks slack.Blocks
	if err := json.Unmarshal([]byte(answer.Blocks), &blocks); err != nil {
		t.Fatal(err)
	}
	apply := buttonsOf(blocks.BlockSet)[reply.ActionApplyPrefix+"1"]
	if !strings.HasPrefix(apply, "meta-llama/Llama-3.1-8B lora 4090 ") || !strings.Contains(apply, "framework=axolotl") {
		t.Fatalf("apply button %q (buttons %v)", apply, buttonsOf(blocks.BlockSet))
	}
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "user": map[string]any{"id": "U1"}, "channel": map[string]any{"id": "C1"},
		"container": map[string]any{"type": "message", "message_ts": answer.TS, "channel_id": "C1", "is_ephemeral": false},
		"message":   map[string]any{"ts": answer.TS, "thread_ts": answer.ThreadTS},
		"actions":   []map[string]any{{"action_id": reply.ActionApplyPrefix + "1", "value": apply, "action_ts": "1700005850.1"}},
	})
	ts.click(t, url.Values{"payload": {string(payload)}})
	ts.idle(t)
	updates := ts.slack.Answered("chat.update")
	if len(updates) != 1 || updates[0].Args.Get("ts") != answer.TS {
		t.Fatalf("chat.update %v", channelsOf(updates))
	}
	if h := headerOf(postedBlocks(t, updates[0])); !strings.Contains(h, "meta-llama/Llama-3.1-8B") || strings.Contains(h, vramRefusedTitle) {
		t.Errorf("applied answer's header %q", h)
	}

	query := strings.TrimSuffix(strings.TrimPrefix(regexpFind(t, contextOf(blocks.BlockSet), "Read as `[^`]+`"), "Read as `"), "`")
	ts.click(t, slacktest.BlockAction("U1", "C1", shareActionID, query, "1700005860.1", ts.slack.ResponseURL("share")))
	ts.idle(t)
	shared := responses(ts.slack, "share")
	if len(shared) != 1 {
		t.Fatalf("%d shares", len(shared))
	}
	if got := decodeResponse(t, shared[0].Body); got.ResponseType != slack.ResponseTypeInChannel || !strings.Contains(got.Text, "meta-llama/Llama-3.1-8B · LoRA · GeForce RTX 4090") {
		t.Errorf("shared %+v", got)
	}
}

// TestJobFileBounds: a job file over job.MaxBytes is never downloaded and
// gets a clear message; a secret in a job is neither echoed nor logged,
// and neither is the job's text.
func TestJobFileBounds(t *testing.T) {
	var logs testutil.Buffer
	ts := jobServer(t, func(_ *Config, d *Deps) {
		d.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	big := attach(ts, "FBIG", "train.yaml", "yaml", llamaLoRA)
	big["size"] = job.MaxBytes + 1
	readAll(t, ts.event(t, "EvJobBig", mention("1700005900.000100", "", big)))
	ts.idle(t)
	p := onlyPost(t, ts)
	if got := p.Args.Get("text"); !strings.Contains(got, "train.yaml is 257 KiB; a job file may have at most 256 KiB") {
		t.Errorf("answer %q", got)
	}
	if n := len(ts.slack.Calls(slacktest.MethodDownload)); n != 0 {
		t.Errorf("%d downloads of a file over the cap", n)
	}

	const secret = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	launch := "HF_TOKEN=" + secret + " vllm serve Qwen/Qwen3-8B --max-model-len 8192 --api-key sk-live-0123456789abcdef"
	readAll(t, ts.event(t, "EvJobSecret", dm("1700006000.000100", "```"+launch+"```")))
	// A job that does not read: refused with the reader's message, which
	// quotes no value.
	broken := "base_model: meta-llama/Llama-3.1-8B\nhub_token: " + secret + "\nadapter: [lora\n"
	readAll(t, ts.event(t, "EvJobSecretBroken", dm("1700006001.000100", "h100 ```"+broken+"```")))
	ts.idle(t)
	if !slices.ContainsFunc(ts.slack.Answered("chat.postMessage"), func(c slacktest.Call) bool { return strings.Contains(c.Args.Get("text"), jobRefusedTitle) }) {
		t.Error("the broken job was not refused")
	}
	for _, c := range ts.slack.Replies() {
		for _, leak := range []string{secret, "sk-live-0123456789abcdef"} {
			if strings.Contains(string(c.Body)+c.Args.Encode(), leak) {
				t.Errorf("%s echoes a secret: %.300s", c.Method, c.Args.Get("blocks"))
			}
		}
	}
	if !slices.ContainsFunc(ts.slack.Answered("chat.postMessage"), func(c slacktest.Call) bool { return strings.Contains(c.Args.Get("text"), "Qwen") }) {
		t.Error("the launch command was not answered")
	}
	for _, leak := range []string{secret, "max-model-len", "base_model", "sk-live"} {
		if strings.Contains(logs.String(), leak) {
			t.Errorf("log holds %q:\n%s", leak, logs.String())
		}
	}
}

func regexpFind(t *testing.T, s, expr string) string {
	t.Helper()
	m := regexp.MustCompile(expr).FindString(s)
	if m == "" {
		t.Fatalf("no %s in %q", expr, s)
	}
	return m
}

// TestSplitFences reads code blocks as Slack and Markdown write them.
func TestSplitFences(t *testing.T) {
	tests := []struct {
		text    string
		blocks  []string
		outside string
	}{
		{"no block", nil, "no block"},
		{"fit? ```a: 1\nb: 2```", []string{"a: 1\nb: 2"}, "fit?"},
		{"```\na: 1\n```\nthanks", []string{"a: 1\n"}, "thanks"},
		{"```yaml\na: 1\n```", []string{"a: 1\n"}, ""},
		{"```{\n\"a\": 1}```", []string{"{\n\"a\": 1}"}, ""},
		{"```vllm serve x --port 1```", []string{"vllm serve x --port 1"}, ""},
		{"one ```a: 1``` two ```b: 2``` three", []string{"a: 1", "b: 2"}, "one   two   three"},
		{"open ```a: 1\nb: 2", []string{"a: 1\nb: 2"}, "open"},
		{"``````", nil, ""},
	}
	for _, tt := range tests {
		blocks, outside := splitFences(tt.text)
		if !slices.Equal(blocks, tt.blocks) || outside != tt.outside {
			t.Errorf("splitFences(%q) = %q, %q; want %q, %q", tt.text, blocks, outside, tt.blocks, tt.outside)
		}
	}
}

// TestJobWords reads the words beside a job.
func TestJobWords(t *testing.T) {
	tests := []struct {
		outside, words string
	}{
		{"vram 4090", "4090"},
		{"/vram", ""},
		{"<!here> can this fit on an <#C1|ml> a100?", "can this fit on an a100?"},
		{"see <https://example.com|the docs> h100", "see h100"},
	}
	for _, tt := range tests {
		if got := jobWordsOf(tt.outside); got != tt.words {
			t.Errorf("jobWordsOf(%q) = %q, want %q", tt.outside, got, tt.words)
		}
	}
	readable := []struct {
		words, kept, dropped string
	}{
		{"4090 thanks", "4090", "thanks"},
		{"lol 2x a100 bs=4", "2x a100 bs=4", "lol"},
		{"FYI", "", "FYI"},
		{strings.Repeat("x ", maxWordTokens+1), "", strings.Repeat("x ", maxWordTokens+1)},
	}
	for _, tt := range readable {
		if kept, dropped := readableWords(tt.words); kept != tt.kept || dropped != tt.dropped {
			t.Errorf("readableWords(%q) = %q, %q; want %q, %q", tt.words, kept, dropped, tt.kept, tt.dropped)
		}
	}
}

// TestJobFileKinds names which attached files are read as text, as a job,
// and how much of each is downloaded.
func TestJobFileKinds(t *testing.T) {
	s := newTestServer(t, nil, nil).Server
	tests := []struct {
		f         slackFile
		text, job bool
		cap       int64
	}{
		{slackFile{Name: "qlora.yml", Filetype: "yaml"}, true, true, job.MaxBytes},
		{slackFile{Name: "train.py", Filetype: "python"}, true, true, job.MaxBytes},
		{slackFile{Name: "launch.sh", Filetype: "shell"}, true, true, job.MaxBytes},
		{slackFile{Name: "pyproject.toml", Filetype: "toml"}, true, true, job.MaxBytes},
		{slackFile{Name: "ds.json", Filetype: "json", Mimetype: "application/json"}, true, true, maxConfigFileBytes},
		{slackFile{Name: "run.yaml", Filetype: "binary"}, true, true, job.MaxBytes},
		{slackFile{Name: "Untitled", Filetype: "python", Mode: "snippet"}, true, true, DefaultMaxFileBytes},
		{slackFile{Name: "train.log", Filetype: "text", Mimetype: "text/plain"}, true, false, DefaultMaxFileBytes},
		{slackFile{Name: "loss.png", Filetype: "png", Mimetype: "image/png"}, false, false, DefaultMaxFileBytes},
	}
	for _, tt := range tests {
		if isTextFile(tt.f) != tt.text || isJobFile(tt.f) != tt.job || s.fileCap(tt.f) != tt.cap {
			t.Errorf("%s (%s): text %v, job %v, cap %d; want %v, %v, %d", tt.f.Name, tt.f.Filetype, isTextFile(tt.f), isJobFile(tt.f), s.fileCap(tt.f), tt.text, tt.job, tt.cap)
		}
	}
	for _, tt := range []struct {
		data string
		want bool
	}{
		{`{"model_type": "llama"}`, true},
		{`{"architectures": ["X"], "hidden_size": 1}`, true},
		{`{"zero_optimization": {"stage": 3}}`, false},
		{`["model_type"]`, false},
		{`not json`, false},
	} {
		if got := hfConfigKeys(tt.data); got != tt.want {
			t.Errorf("hfConfigKeys(%s) = %v", tt.data, got)
		}
	}
}

// TestJobsInterfaceOptional: without Deps.Jobs a code block is no job, and
// a mention with one is answered as before.
func TestJobsInterfaceOptional(t *testing.T) {
	ts := realServer(t)
	readAll(t, ts.event(t, "EvNoJobs", mention("1700006100.000100", "```"+llamaLoRA+"```")))
	ts.idle(t)
	if h := headerOf(postedBlocks(t, onlyPost(t, ts))); h != "How I can help" {
		t.Errorf("header %q", h)
	}
}

var _ Jobs = realCommands{}
