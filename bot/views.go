package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// Views: the /vram and /oom forms (modals opened with views.open) and the
// App Home tab (views.publish). Limits of
// https://docs.slack.dev/reference/views/modal-views: a title, submit and
// close text of at most 24 characters, 100 blocks, private_metadata of at
// most 3,000 characters.
const (
	maxViewBlocks     = 100
	maxViewTitle      = 24
	maxPrivateMeta    = 3000
	maxInputLabel     = 2000
	maxPlaceholder    = 150
	maxPasteInput     = 3000 // plain_text_input max_length
	maxOptions        = 100  // options in a block_suggestion answer
	maxOptionText     = 75
	maxOptionValue    = 150
	viewOpenTimeout   = 2500 * time.Millisecond // a trigger id lasts 3 s
	viewPublishBudget = 10 * time.Second
)

// Form fields: block id and action id alike, so a submission can be read
// by either.
const (
	formModel  = "model"
	formMethod = "method"
	formGPU    = "gpu"
	formBatch  = "batch"
	formSeq    = "seq"
	formExtra  = "extra"
	formPaste  = "paste"
)

// vramFormFields are the /vram form's fields, in the order the query is
// built from them.
var vramFormFields = []string{formModel, formMethod, formGPU, formBatch, formSeq, formExtra}

// formMethods are the method menu's options: value, label.
var formMethods = [][2]string{
	{"inference", "Inference"}, {"lora", "LoRA fine-tuning"}, {"qlora", "QLoRA (4-bit base)"},
	{"full", "Full fine-tuning"}, {"freeze", "Freeze (train the head)"},
}

func plain(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
}

// vramForm is the /vram modal: model (a typeahead over the catalog and
// recent Hub lookups), method, GPU, batch, sequence and any other settings.
func vramForm(st formState) slack.ModalViewRequest {
	minQuery := 1
	model := slack.NewOptionsSelectBlockElement(slack.OptTypeExternal, plain("llama-3.1-8b, Qwen/Qwen3-8B, 7b…"), formModel)
	model.MinQueryLength = &minQuery
	var methods []*slack.OptionBlockObject
	for _, m := range formMethods {
		methods = append(methods, slack.NewOptionBlockObject(m[0], plain(m[1]), nil))
	}
	method := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Method"), formMethod, methods...)
	method.InitialOption = methods[0]
	gpu := slack.NewPlainTextInputBlockElement(plain("4090, 2x a100, h100 nvl, 24gb…"), formGPU)
	batch := slack.NewNumberInputBlockElement(plain("1"), formBatch, false)
	batch.MinValue = "1"
	seq := slack.NewPlainTextInputBlockElement(plain("2048, 8k, 32768…"), formSeq)
	extra := slack.NewPlainTextInputBlockElement(plain("gc=on zero=2 engine=vllm…"), formExtra)
	optional := func(b *slack.InputBlock) *slack.InputBlock { b.Optional = true; return b }
	blocks := []slack.Block{
		slack.NewInputBlock(formModel, plain("Model"), plain("A catalog name, a size, or any Hugging Face id"), model),
		slack.NewInputBlock(formMethod, plain("Method"), nil, method),
		optional(slack.NewInputBlock(formGPU, plain("GPU or memory budget"), plain("Empty: an A100 80GB"), gpu)),
		optional(slack.NewInputBlock(formBatch, plain("Batch size per GPU"), nil, batch)),
		optional(slack.NewInputBlock(formSeq, plain("Sequence length"), nil, seq)),
		optional(slack.NewInputBlock(formExtra, plain("More settings"), plain("Any of the query's key=value settings (/vram help)"), extra)),
	}
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           plain("GPU memory plan"),
		Submit:          plain("Estimate"),
		Close:           plain("Cancel"),
		CallbackID:      callbackVRAMForm,
		PrivateMetadata: st.encode(),
		Blocks:          slack.Blocks{BlockSet: blocks},
	}
}

// oomForm is the /oom modal: one box to paste the error into.
func oomForm(st formState) slack.ModalViewRequest {
	paste := slack.NewPlainTextInputBlockElement(plain("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate…"), formPaste)
	paste.Multiline = true
	paste.MaxLength = maxPasteInput
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           plain("Diagnose an OOM"),
		Submit:          plain("Diagnose"),
		Close:           plain("Cancel"),
		CallbackID:      callbackOOMForm,
		PrivateMetadata: st.encode(),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewInputBlock(formPaste, plain("The error"), plain("From the traceback to the last line of the message; longer logs: paste them in a channel as a snippet"), paste),
		}},
	}
}

// encode is the form state as private_metadata ("" when it would not fit).
func (st formState) encode() string {
	raw, err := json.Marshal(st)
	if err != nil || len(raw) > maxPrivateMeta {
		return ""
	}
	return string(raw)
}

// openForm answers a slash command without text: its form, opened with
// the command's trigger id before the command is acked (the id lasts 3 s).
// If Slack does not open it, the command's usage answers instead.
func (s *Server) openForm(ctx context.Context, cmd slashCommand, oom bool) (commandResponse, string) {
	st := formState{Channel: cmd.ChannelID, ResponseURL: cmd.ResponseURL}
	view := vramForm(st)
	if oom {
		view = oomForm(st)
	}
	if cmd.TriggerID != "" {
		vctx, cancel := context.WithTimeout(ctx, viewOpenTimeout)
		_, err := s.api.OpenViewContext(vctx, cmd.TriggerID, view)
		cancel()
		if err == nil {
			return commandResponse{}, outcomeInline
		}
		s.metrics.apiError("views.open")
		s.log.Warn("views.open failed; answering with the usage", "err", redactErr(err))
	}
	return s.responseFor(ctx, usageReply(cmd.Command)), outcomeInline
}

// vramFormQuery builds the /vram query a submitted form describes, or the
// errors to show under its fields.
func vramFormQuery(in interaction) (string, map[string]string) {
	fieldErrs := map[string]string{}
	model := in.formValue(formModel)
	switch {
	case model == "":
		fieldErrs[formModel] = "Choose a model, or type a Hugging Face id or a size such as 8b."
	case strings.ContainsAny(model, " \t"):
		fieldErrs[formModel] = "A model is one name without spaces (llama-3.1-8b, Qwen/Qwen3-8B, 8b)."
	}
	var parts []string
	parts = append(parts, model)
	if m := in.formValue(formMethod); m != "" {
		parts = append(parts, m)
	}
	if g := in.formValue(formGPU); g != "" {
		parts = append(parts, g)
	}
	if b := in.formValue(formBatch); b != "" {
		if n, err := strconv.Atoi(b); err != nil || n < 1 {
			fieldErrs[formBatch] = "A whole number of sequences, 1 or more."
		} else {
			parts = append(parts, "bs="+b)
		}
	}
	if q := in.formValue(formSeq); q != "" {
		if strings.ContainsAny(q, " \t=") {
			fieldErrs[formSeq] = "One length: 2048, 8k or 32768."
		} else {
			parts = append(parts, "seq="+q)
		}
	}
	if e := in.formValue(formExtra); e != "" {
		parts = append(parts, e)
	}
	query := strings.Join(parts, " ")
	if runeLen(query) > maxQueryRunes {
		fieldErrs[formExtra] = fmt.Sprintf("At most %d characters in all.", maxQueryRunes)
	}
	if len(fieldErrs) > 0 {
		return "", fieldErrs
	}
	return query, nil
}

// parseHTTPURL parses an absolute http(s) URL.
func parseHTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("not an http(s) URL")
	}
	return u, nil
}
