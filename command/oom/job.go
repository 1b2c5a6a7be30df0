package oom

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/oom"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/job"
	"github.com/vrambot/vrambot/query"
)

// JobFile is the `job_file` object of `oom --json` (docs/contracts.md §3):
// the job the paste holds beside its traceback (a training config, a
// launch line: docs/jobs.md), which the diagnosis is sized from. Note says
// why it was not used, when it was read but could not be.
type JobFile struct {
	Format string `json:"format"`
	// Query is the job in the /vram grammar's words.
	Query string `json:"query"`
	Used  bool   `json:"used"`
	Note  string `json:"note,omitempty"`
	// Overrides are what the run showed over what the file says (its
	// log's batch over the config's micro_batch_size).
	Overrides []job.Override `json:"overrides,omitempty"`

	words query.Words
}

// pastedJob reads the job a paste holds (package job reads the text
// before the traceback, or its code blocks) and resolves it as /vram
// would: the workload the diagnosis sizes from. What the run itself shows
// (its log lines and numbers: runWords) wins over the file, as query
// words win over a job file (job.Merge). It returns nil when the paste
// holds no job with a model; a job that does not read as a query, or
// whose model cannot be resolved, comes back with Used false and a note.
func pastedJob(ctx context.Context, rep oom.Report, text string, models query.ModelResolver) (*JobFile, oom.PastedJob) {
	j, err := job.Read(text)
	if err != nil {
		return nil, oom.PastedJob{}
	}
	run := runWords(rep)
	words, over, _ := job.Merge(j, run)
	if words.Model == "" {
		return nil, oom.PastedJob{}
	}
	jf := &JobFile{Format: string(j.Format), Query: words.String(), Overrides: over, words: words}
	q, err := query.ParseWith(ctx, jf.Query, models, nil)
	if err != nil {
		jf.Note = "it was not sized: " + userReason(err)
		return jf, oom.PastedJob{}
	}
	jf.Used = true
	pj := oom.PastedJob{Workload: q.Workload, Framework: q.Framework}
	if words.GPU != "" {
		pj.GPU, pj.HasGPU = q.GPU, true
	}
	return jf, pj
}

// runWords are the settings the paste shows the run used, as query words:
// the GPU it measured, the method, precision and sizes its log lines
// print. A value the grammar does not take is left out.
func runWords(rep oom.Report) query.Words {
	pw := rep.Facts.Workload
	var w query.Words
	if g, ok := oom.PasteGPU(rep); ok {
		w.GPU = gpuWord(g)
	}
	switch pw.Method {
	case "lora", "qlora":
		w.Method = pw.Method
	}
	method := memory.MethodFull
	if pw.Method != "" {
		method = memory.Method(pw.Method)
	}
	if pw.MaxModelLen > 0 || pw.NCtx > 0 || pw.Engine != "" && pw.Engine != "hf" {
		method = memory.MethodInference
	}
	switch pw.Sharding {
	case "full-shard":
		w.Sharding = "fsdp"
	case "shard-grad-op":
		w.Sharding = "fsdp"
		w.Settings = append(w.Settings, query.KeyValue{Key: "zero", Value: "2"})
	}
	for _, kv := range runSettings(pw, oom.RunPrecision(rep, method)) {
		if v, err := query.CheckValue(kv.Key, kv.Value); err == nil && kv.Value != "" {
			w.Settings = append(w.Settings, query.KeyValue{Key: kv.Key, Value: v})
		}
	}
	query.SortSettings(w.Settings)
	return w
}

// runSettings are the grammar's settings a paste's reading gives, by
// key; "" where the paste does not say.
func runSettings(pw oom.PasteWorkload, precision memory.Precision) []query.KeyValue {
	n := func(v int) string {
		if v <= 0 {
			return ""
		}
		return strconv.Itoa(v)
	}
	seq := n(pw.SeqLen)
	if pw.MaxModelLen > 0 || pw.NCtx > 0 {
		seq = n(max(pw.MaxModelLen, pw.NCtx))
	}
	gc := ""
	if pw.GradCheckpointing != nil {
		gc = map[bool]string{true: "on", false: "off"}[*pw.GradCheckpointing]
	}
	util := ""
	if pw.GPUMemoryUtilization > 0 {
		util = strconv.FormatFloat(pw.GPUMemoryUtilization, 'g', -1, 64)
	}
	ga := ""
	if pw.AccumSteps > 1 {
		ga = n(pw.AccumSteps)
	}
	zero := ""
	if pw.ZeroStage > 0 && pw.Sharding == "" {
		zero = n(pw.ZeroStage)
	}
	return []query.KeyValue{
		{Key: "bs", Value: n(pw.Batch)}, {Key: "seq", Value: seq}, {Key: "precision", Value: string(precision)},
		{Key: "gc", Value: gc}, {Key: "zero", Value: zero}, {Key: "offload", Value: pw.Offload},
		{Key: "gpus", Value: n(pw.GPUs)}, {Key: "tp", Value: n(pw.TP)}, {Key: "ga", Value: ga},
		{Key: "gpu-util", Value: util}, {Key: "gpu-layers", Value: n(pw.GPULayers)},
		{Key: "max-num-seqs", Value: n(pw.MaxSeqs)}, {Key: "max-num-batched-tokens", Value: n(pw.BatchedTokens)},
	}
}

// gpuWord is the query word of a GPU: its first alias, else its memory
// as a budget.
func gpuWord(g catalog.GPU) string {
	if len(g.Aliases) > 0 {
		return g.Aliases[0]
	}
	return query.BudgetWord(g.UsableBytes)
}

// userReason is what an error may say to the user (internal/errs): the
// grammar's own words, a fixed line for anything internal.
func userReason(err error) string {
	var qe *query.Error
	if errors.As(err, &qe) {
		return qe.Error()
	}
	return errs.UserMessage(err)
}

// jobEstimateQuery is the "Estimate this workload" query of a paste sized
// from its job: the job's words, with the paste's run settings.
func jobEstimateQuery(jf *JobFile) string {
	text, _ := jf.words.Text()
	return text
}

// jobLines say what the paste's job was read as, and whether the fixes
// are sized from it.
func jobLines(jf *JobFile, d oom.Diagnosis) []string {
	switch {
	case jf == nil:
		return nil
	case !jf.Used:
		return []string{"Your " + jf.Format + " job was read as `" + jf.Query + "`, but " + jf.Note + "."}
	}
	line := "Your " + jf.Format + " job, read with what the run printed: `" + jf.Query + "`"
	for _, o := range jf.Overrides {
		line += fmt.Sprintf("; the run shows %s over the file's %s", o.Query, o.File)
	}
	switch {
	case d.Sizing != nil:
		return []string{line + "; the fixes are sized from it."}
	case d.SetAside != nil:
		return []string{line + "; its estimate disagrees with the paste's numbers, which the fixes are sized against."}
	case jf.words.GPU == "":
		return []string{line + "; the paste names no GPU to size it on."}
	}
	return []string{line + "."} // an engine's own buffer sizes say more than an estimate
}
