package accuracy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/memory"
)

// Query is the case as a /vram query (docs/contracts.md §2): the words a user
// types to ask `vrambot vram` for this workload, every setting the case
// states spelled with the grammar's tokens. ok is false for a case that
// does not specify its workload (Workload's reason).
func (c Case) Query() (q string, ok bool) {
	w, _, reason := c.Workload()
	if reason != "" {
		return "", false
	}
	var t []string
	add := func(format string, args ...any) { t = append(t, fmt.Sprintf(format, args...)) }
	if w.Model.HiddenSize > 0 {
		add("%s", strings.ToLower(w.Model.Name))
	} else {
		add("%sb", strconv.FormatFloat(c.ParamsB, 'f', -1, 64))
	}
	add("%s", w.Method)
	add("bs=%d", w.Batch)
	add("seq=%d", w.SeqLen)
	add("gpus=%d", w.GPUs)
	if _, word, ok := caseGPU(c.GPU); ok {
		add("%s", word)
	}
	if memory.KnownPrecision(w.Precision) || memory.IsCheckpointPrecision(w.Precision) {
		// A pre-quantised checkpoint's format (awq, gptq, fp8) is a
		// precision= word too (docs/contracts.md §2).
		add("precision=%s", w.Precision)
	}
	if w.Method != memory.MethodInference {
		add("optim=%s", w.Optimizer)
		switch w.Checkpointing {
		case memory.CheckpointOff:
			add("gc=off")
		case memory.CheckpointFull:
			add("gc=on")
		case memory.CheckpointSelective, memory.CheckpointOffloaded:
			add("gc=%s", w.Checkpointing)
		}
	}
	switch w.Sharding {
	case memory.ShardingFSDP:
		add("fsdp")
		if w.ZeroStage == 2 {
			add("zero=2")
		}
	case memory.ShardingDDP:
		add("ddp")
	default:
		if w.ZeroStage > 0 {
			add("zero=%d", w.ZeroStage)
		}
	}
	if w.Offload != "" && w.Offload != memory.OffloadNone {
		add("offload=%s", w.Offload)
	}
	if w.Loss != "" {
		add("loss=%s", w.Loss)
	}
	if w.OptimizerInBackward {
		add("optim-in-bwd=on")
	}
	if w.GradAccumSteps > 1 {
		add("ga=%d", w.GradAccumSteps)
	}
	if w.ActivationOffload {
		add("act-offload=on")
	}
	if w.Framework != "" {
		add("framework=%s", w.Framework)
	}
	if w.Method.IsAdapter() {
		if w.LoRARank > 0 {
			add("rank=%d", w.LoRARank)
		}
		add("targets=%s", w.LoRATargets)
	}
	if w.LoRAExperts != "" {
		add("lora-experts=%s", w.LoRAExperts)
	}
	if w.QuantizeExperts != "" {
		add("quantize-experts=%s", w.QuantizeExperts)
	}
	if w.SyncEachBatch != "" {
		add("sync-each-batch=%s", w.SyncEachBatch)
	}
	if w.TP > 1 {
		add("tp=%d", w.TP)
	}
	if w.PP > 1 {
		add("pp=%d", w.PP)
	}
	if w.Attention != "" {
		add("attn=%s", w.Attention)
	}
	return strings.Join(t, " "), true
}
