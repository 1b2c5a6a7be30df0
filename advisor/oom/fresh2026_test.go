package oom

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/internal/oomcorpus"
)

// jobKeys are the job fields the fresh2026 set labels
// (internal/oomcorpus/fresh2026/README.md).
var jobKeys = []string{"model", "method", "engine", "zero_stage", "tp", "max_model_len", "gguf_type", "n_ctx", "ngl",
	"quantization", "trainable_params", "all_params", "where"}

// score2026 is what the set measures of the parser and the diagnosis.
type score2026 struct {
	cases, fields, fieldsRight      int
	oomLabelled, detected, falsePos int
	missed, fp                      []string
	jobRight, jobTotal, jobSpurious map[string]int
	firstTotal, firstRight          int
	firstMiss                       []string
	sized, over3                    int
	overCases                       []string
}

// scoreSet scores every case of split ("blind", "holdout" or "" for all).
func scoreSet(t *testing.T, split string) score2026 {
	t.Helper()
	s := score2026{jobRight: map[string]int{}, jobTotal: map[string]int{}, jobSpurious: map[string]int{}}
	for _, c := range oomcorpus.MustLoad(oomcorpus.Fresh2026) {
		if split != "" && c.Fields["split"] != split {
			continue
		}
		s.cases++
		r := Parse(c.Text)
		got := asJSONMap(t, r)
		for _, k := range extraFields {
			s.fields++
			if reflect.DeepEqual(got[k], c.Fields[k]) {
				s.fieldsRight++
			} else {
				t.Logf("%s %s: got %v, want %v", c.File, k, got[k], c.Fields[k])
			}
		}
		want := c.Fields["detected"] == true
		switch {
		case want && r.Detected:
			s.oomLabelled++
			s.detected++
		case want:
			s.oomLabelled++
			s.missed = append(s.missed, c.File)
		case r.Detected:
			s.fp = append(s.fp, c.File)
			s.falsePos++
		}
		if !want {
			continue
		}
		// An OOM the parser missed reads no job and gets no fix.
		d := Diagnose(r)
		gotJob := map[string]any{}
		if r.Detected {
			gotJob = jobFields(r, d)
		}
		wantJob, _ := c.Fields["job"].(map[string]any)
		for _, k := range jobKeys {
			switch {
			case wantJob[k] != nil:
				s.jobTotal[k]++
				if jsonEqual(gotJob[k], wantJob[k]) {
					s.jobRight[k]++
					continue
				}
			case gotJob[k] != nil:
				s.jobSpurious[k]++
			default:
				continue
			}
			t.Logf("%s job.%s: got %v, want %v", c.File, k, gotJob[k], wantJob[k])
		}
		if ids, _ := c.Fields["expected_first_fix_ids"].([]any); len(ids) > 0 {
			s.firstTotal++
			first := firstFixID(d)
			if slices.ContainsFunc(ids, func(v any) bool { return v == first }) {
				s.firstRight++
			} else {
				s.firstMiss = append(s.firstMiss, fmt.Sprintf("%s(%s, want %v)", c.File, first, ids))
			}
		}
		if r.Detected && d.Sizing != nil {
			s.sized++
			capacity := d.Sizing.UsableBytes
			if r.TotalCapacityBytes != nil {
				capacity = *r.TotalCapacityBytes
			}
			if capacity > 0 && d.Sizing.Estimate.TotalBytes > 3*capacity {
				s.over3++
				s.overCases = append(s.overCases, fmt.Sprintf("%s(%s of %s)", c.File, GiB(d.Sizing.Estimate.TotalBytes), GiB(capacity)))
			}
		}
	}
	return s
}

// firstFixID is the id of the first fix the diagnosis proposes.
func firstFixID(d Diagnosis) string {
	for _, st := range d.Stages {
		for _, f := range st.Fixes {
			return f.ID
		}
	}
	return ""
}

// log writes the figures of the score.
func (s score2026) log(t *testing.T, name string) {
	t.Helper()
	t.Logf("%s: %d cases; fields %d/%d (%.1f%%); OOMs detected %d/%d, missed %v; look-alikes taken %d %v",
		name, s.cases, s.fieldsRight, s.fields, 100*float64(s.fieldsRight)/float64(max(1, s.fields)), s.detected, s.oomLabelled, s.missed, s.falsePos, s.fp)
	keys := append([]string{}, jobKeys...)
	sort.Strings(keys)
	right, total, spurious := 0, 0, 0
	var parts []string
	for _, k := range keys {
		right += s.jobRight[k]
		total += s.jobTotal[k]
		spurious += s.jobSpurious[k]
		if s.jobTotal[k]+s.jobSpurious[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d/%d (+%d read where the label is null)", k, s.jobRight[k], s.jobTotal[k], s.jobSpurious[k]))
		}
	}
	t.Logf("%s: labelled job values read right %d/%d (%.1f%%), %d read where the label is null: %s", name, right, total,
		100*float64(right)/float64(max(1, total)), spurious, strings.Join(parts, ", "))
	t.Logf("%s: first fix as expected %d/%d; misses %v", name, s.firstRight, s.firstTotal, s.firstMiss)
	t.Logf("%s: sized %d, over 3× the capacity %d %v", name, s.sized, s.over3, s.overCases)
}

// TestFresh2026Score logs the figures of both halves of the set (-v).
func TestFresh2026Score(t *testing.T) {
	for _, split := range []string{"blind", "holdout"} {
		s := scoreSet(t, split)
		if s.cases == 0 {
			continue
		}
		s.log(t, split)
	}
}

// jobFields is the job the report and the diagnosis read, in the set's
// vocabulary.
func jobFields(r Report, d Diagnosis) map[string]any {
	w := r.Facts.Workload
	out := map[string]any{}
	if w.Model != "" {
		out["model"] = w.Model
	}
	switch {
	case w.Method != "":
		out["method"] = w.Method
	case d.Sizing != nil:
		out["method"] = string(d.Sizing.Workload.Method)
	}
	engine := map[fix.Framework]string{fix.FrameworkVLLM: "vllm", fix.FrameworkSGLang: "sglang", fix.FrameworkTGI: "tgi",
		fix.FrameworkLlamaCPP: "llama.cpp", fix.FrameworkOllama: "ollama", fix.FrameworkHF: "hf"}[r.Stack]
	if engine != "" {
		out["engine"] = engine
	}
	if w.ZeroStage >= 0 {
		out["zero_stage"] = w.ZeroStage
	}
	if w.TP > 0 {
		out["tp"] = w.TP
	}
	if n, ok := r.Extra["max_seq_len"].(int); ok {
		out["max_model_len"] = n
	} else if w.SeqLen > 0 && (engine == "vllm" || engine == "tgi" || engine == "sglang") {
		out["max_model_len"] = w.SeqLen
	}
	if w.Quant != "" {
		out["gguf_type"] = w.Quant
	}
	if r.Facts.Engine.Ctx > 0 {
		out["n_ctx"] = r.Facts.Engine.Ctx
	} else if w.MaxModelLen > 0 {
		out["n_ctx"] = w.MaxModelLen
	}
	if w.GPULayers >= 0 {
		out["ngl"] = w.GPULayers
	}
	if w.Method == "qlora" {
		out["quantization"] = "bnb-4bit"
	}
	where := map[string]string{PhaseLoad: "weights-load", PhaseForward: "activations-forward", PhaseBackward: "backward",
		PhaseOptimizer: "optimizer-step", PhaseGenerate: "generate", PhaseEval: "activations-forward", PhaseUnknown: "unknown"}[r.Phase]
	if r.Format == FormatVLLMKV || r.Phase == PhaseLoad && engine != "" && engine != "hf" && r.Facts.GGMLBuffer != "weights" {
		where = "kv-cache-startup"
	}
	for _, c := range d.Causes {
		switch c.ID {
		case CauseFragmentation:
			where = "fragmentation"
		case CauseLeak:
			where = "leak-growth"
		}
	}
	out["where"] = where
	return out
}
