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
	"github.com/vrambot/vrambot/query"
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

// formSettings are the grammar's settings behind the form's fields: their
// labels, placeholders and options come from the settings table.
var formSettings = map[string]string{formModel: "model", formMethod: "method", formGPU: "gpu", formBatch: "bs", formSeq: "seq"}

// formField is the field of the grammar's setting behind a form field.
func formField(id string) query.FormField {
	s, ok := query.Lookup(formSettings[id])
	if !ok || s.Form == nil {
		panic("bot: the form's " + id + " field has no setting with a form field")
	}
	return *s.Form
}

// formText is a text block if s is not empty, else nil.
func formText(s string) *slack.TextBlockObject {
	if s == "" {
		return nil
	}
	return plain(s)
}

func plain(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
}

// vramForm is the /vram modal: model (a typeahead over the catalog and
// recent Hub lookups), method, GPU, batch, sequence and any other settings.
func vramForm(st formState) slack.ModalViewRequest {
	minQuery := 1
	f := map[string]query.FormField{}
	for id := range formSettings {
		f[id] = formField(id)
	}
	model := slack.NewOptionsSelectBlockElement(slack.OptTypeExternal, plain(f[formModel].Placeholder), formModel)
	model.MinQueryLength = &minQuery
	var methods []*slack.OptionBlockObject
	for _, m := range f[formMethod].Options {
		methods = append(methods, slack.NewOptionBlockObject(m.Value, plain(m.Label), nil))
	}
	method := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain(f[formMethod].Placeholder), formMethod, methods...)
	method.InitialOption = methods[0]
	gpu := slack.NewPlainTextInputBlockElement(plain(f[formGPU].Placeholder), formGPU)
	batch := slack.NewNumberInputBlockElement(plain(f[formBatch].Placeholder), formBatch, false)
	batch.MinValue = "1"
	seq := slack.NewPlainTextInputBlockElement(plain(f[formSeq].Placeholder), formSeq)
	extra := slack.NewPlainTextInputBlockElement(plain("gc=on zero=2 engine=vllm…"), formExtra)
	optional := func(b *slack.InputBlock) *slack.InputBlock { b.Optional = true; return b }
	input := func(id string, el slack.BlockElement) *slack.InputBlock {
		return slack.NewInputBlock(id, plain(f[id].Label), formText(f[id].Hint), el)
	}
	blocks := []slack.Block{
		input(formModel, model),
		input(formMethod, method),
		optional(input(formGPU, gpu)),
		optional(input(formBatch, batch)),
		optional(input(formSeq, seq)),
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
			parts = append(parts, formSettings[formBatch]+"="+b)
		}
	}
	if q := in.formValue(formSeq); q != "" {
		if strings.ContainsAny(q, " \t=") {
			fieldErrs[formSeq] = "One length: 2048, 8k or 32768."
		} else {
			parts = append(parts, formSettings[formSeq]+"="+q)
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
