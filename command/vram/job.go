package vram

import (
	"context"
	"fmt"
	"strings"

	"github.com/vrambot/vrambot/command/layout"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/job"
	"github.com/vrambot/vrambot/query"
	"github.com/vrambot/vrambot/reply"
)

// JobResult is the `job` object of `vram --json --job` (docs/jobs.md §1):
// the format the file was read as, each key read and what it became, the
// keys that do not change memory, those not used, and which of the query
// words won over the file. Query is the job as query words.
type JobResult struct {
	Format    string         `json:"format"`
	Model     string         `json:"model,omitempty"`
	Read      []job.Item     `json:"read"`
	Ignored   []string       `json:"ignored"`
	Unknown   []string       `json:"unknown"`
	Notes     []string       `json:"notes"`
	Overrides []job.Override `json:"overrides"`
	Query     string         `json:"query"`
}

// JobQuery reads a job (a training config, a launch command: docs/jobs.md)
// with the query words given beside it, which add to it and win over it,
// and returns the job as one /vram query ("Qwen/Qwen3-8B qlora 4090 bs=2
// seq=4096 framework=axolotl") with what was read. Another command (the
// OOM diagnosis) sizes a paste's job from that query. Errors are bad
// input: a *job.Error (not a job, a syntax error with its line and
// column) or a *query.Error.
func JobQuery(jobText, words string) (string, JobResult, error) {
	j, err := job.Read(jobText)
	if err != nil {
		return "", JobResult{}, err
	}
	user, err := query.ReadWords(words)
	if err != nil {
		return "", JobResult{}, err
	}
	merged, over, notes := job.Merge(j, user)
	res := JobResult{
		Format: string(j.Format), Model: j.Model, Read: nonNil(j.Read), Ignored: nonNil(j.Ignored), Unknown: nonNil(j.Unknown),
		Notes: nonNil(append(j.Notes, notes...)), Overrides: nonNil(over),
	}
	if merged.Model == "" {
		return "", res, errs.New(errs.Invalid, "the %s file names no model: add one to the query words (e.g. vrambot vram --job FILE llama-3.1-8b a100)", j.Format)
	}
	res.Query = merged.String()
	return res.Query, res, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// EstimateJob answers a job as written (vrambot vram --job, a job pasted
// or attached in Slack): the vram Answer for the workload the file runs,
// with the query words adding to it and winning over it, and the Job
// block saying what was read. Errors are those of JobQuery and Estimate.
func EstimateJob(ctx context.Context, jobText, words string, deps Deps) (Answer, error) {
	text, jr, err := JobQuery(jobText, words)
	if err != nil {
		return Answer{}, err
	}
	a, err := estimate(ctx, text, nil, deps)
	if err != nil {
		return Answer{}, err
	}
	a.Result.Job = &jr
	a.Reply = jobReply(a.Reply, jr)
	return a, nil
}

// jobReply adds what was read from the file: a line in the lead, the
// whole reading in the details.
func jobReply(r reply.Reply, jr JobResult) reply.Reply {
	lead := fmt.Sprintf("From your %s %s: %s", jr.Format, formatNoun(jr.Format), plural(len(jr.Read), "key read", "keys read"))
	if n := len(jr.Ignored); n > 0 {
		lead += fmt.Sprintf(", %s that do not change memory", plural(n, "other", "others"))
	}
	if n := len(jr.Unknown); n > 0 {
		lead += fmt.Sprintf("; not used: %s", layout.OneLine(strings.Join(jr.Unknown, ", "), 120))
	}
	// The user did not type the query: its reading is always said, and
	// why a key was not used (-ngl 0 runs on the CPU) beside it.
	ctx := []string{lead, "Read as `" + jr.Query + "`"}
	ctx = append(ctx, unusedNotes(jr, maxLeadNotes)...)
	for _, o := range jr.Overrides {
		ctx = append(ctx, fmt.Sprintf("Your words won: %s over the file's %s", o.Query, o.File))
	}
	for _, c := range r.Context {
		if !strings.HasPrefix(c, "Read as `") {
			ctx = append(ctx, c)
		}
	}
	r.Context = ctx
	if r.Details != nil {
		r.Details.Sections = append([]reply.Section{jobSection(jr)}, r.Details.Sections...)
	}
	return r
}

// maxLeadNotes bounds the notes on unused keys in the lead; the details
// list them all.
const maxLeadNotes = 2

// unusedNotes are the notes that explain a key not used, at most n.
func unusedNotes(jr JobResult, n int) []string {
	var out []string
	for _, note := range jr.Notes {
		for _, k := range jr.Unknown {
			if len(out) < n && strings.HasPrefix(note, k+":") {
				out = append(out, layout.OneLine(note, 200))
				break
			}
		}
	}
	return out
}

// jobSection lists the reading key by key.
func jobSection(jr JobResult) reply.Section {
	s := reply.Section{Title: "Job file · " + jr.Format, Text: "Read as `" + jr.Query + "`"}
	for _, it := range jr.Read {
		line := it.Key + ": " + it.Value
		switch {
		case it.As != "":
			line += " → " + it.As
		case it.Note != "":
			line += " (" + it.Note + ")"
		}
		if it.As != "" && it.Note != "" {
			line += " (" + it.Note + ")"
		}
		s.Items = append(s.Items, layout.OneLine(line, 200))
	}
	if len(jr.Ignored) > 0 {
		s.Items = append(s.Items, layout.OneLine("Do not change memory: "+strings.Join(jr.Ignored, ", "), 600))
	}
	if len(jr.Unknown) > 0 {
		s.Items = append(s.Items, layout.OneLine("Not used: "+strings.Join(jr.Unknown, ", "), 600))
	}
	for _, n := range jr.Notes {
		s.Items = append(s.Items, layout.OneLine(n, 300))
	}
	return s
}

// formatNoun says what kind of file a format is.
func formatNoun(f string) string {
	switch job.Format(f) {
	case job.VLLM, job.SGLang, job.LlamaCpp, job.Ollama:
		return "launch"
	case job.Docker, job.Kubernetes:
		return "container spec"
	case job.TRL, job.Transformers, job.Unsloth:
		return "training script"
	}
	return "config"
}
