package query

import (
	"fmt"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/internal/errs"
)

// Reading key=value settings into a Query: keyValue takes each as typed
// (any of the table's spellings), query() builds the Query: the model,
// the GPU, the method and the settings' scopes, then the table applied
// phase by phase (apply.go).

// fullFinetuneBelow is the size under which "finetune" means every weight:
// encoders and small decoders (BERT, GPT-2, T5-base) are fully fine-tuned,
// LLMs with adapters.
const fullFinetuneBelow = 1_000_000_000

// keyValue reads one key=value as typed.
func (p *parsedQuery) keyValue(tok, k, v string) error {
	key := normKey(k)
	switch {
	case key == "model" && v != "":
		return p.modelValue(v)
	case key == "method" && v != "":
		return p.token(v)
	case key == "sharding" && v != "":
		return p.shardingValue(tok, v)
	case precisionFlags[key] != "" && v != "":
		on, err := boolEnum.parse(key, v)
		if err != nil {
			return err
		}
		if on == "off" {
			return nil // fp16=False says what is not used
		}
		return p.keyValue(tok, "precision", precisionFlags[key])
	case unused[key] && v != "":
		p.notes = append(p.notes, fmt.Sprintf("%s does not change the memory of one step: not used", ShowToken(k+"="+v)))
		return nil
	}
	if c := canonicalKey(key); c != "" {
		key = c
	} else {
		err := Errorf(tok, "unknown setting '%s'", ShowToken(k))
		err.Suggestion = closestWord(key, queryKeys)
		if err.Suggestion == "" {
			err.Reason += " (one of " + strings.Join(queryKeys, ", ") + ")"
		}
		return err
	}
	if v == "" {
		return Errorf(tok, "%s= needs a value", key)
	}
	if _, dup := p.kv[key]; dup {
		return Errorf(tok, "%s given twice ('%s' and '%s')", key, ShowToken(key+"="+p.kv[key]), ShowToken(tok))
	}
	if key == "gpu" {
		return p.gpuValue(tok, v)
	}
	p.kv[key] = v
	return nil
}

// shardingValue reads a sharding word (fsdp, ddp) or sharding=WORD.
func (p *parsedQuery) shardingValue(tok, v string) error {
	c, err := shardingEnum.parse("sharding", v)
	if err != nil {
		return err
	}
	if p.sharding != "" {
		return Errorf(tok, "two sharding strategies given: '%s' and '%s'", ShowToken(p.shardingTok), ShowToken(tok))
	}
	p.sharding, p.shardingTok = memory.Sharding(c), tok
	return nil
}

// gpuValue reads gpu=NAME|BUDGET.
func (p *parsedQuery) gpuValue(tok, v string) error {
	if g, ok := catalog.LookupGPU(v); ok {
		return p.setGPU(g, v, false)
	}
	if n, ok := parseBudgetGPU(strings.ToLower(v)); ok {
		return p.setGPU(budgetGPU(n), v, true)
	}
	return &Error{Token: tok, Reason: fmt.Sprintf("unknown GPU '%s'", ShowToken(v)), Suggestion: catalog.SuggestGPU(v)}
}

// query applies the settings and the defaults and builds the Query.
func (p *parsedQuery) query() (Query, error) {
	if p.model == nil {
		return Query{}, Errorf("", "no model given: add a catalog name (llama-2-7b), a Hugging Face id (Qwen/Qwen3-8B) or a size (7b), e.g. /vram llama-2-7b lora a100 bs=4")
	}
	var q Query
	r := &reading{p: p, q: &q}
	p.modelOf(r)
	// GPU first: precision defaults depend on it.
	if err := p.gpuOf(r); err != nil {
		return Query{}, err
	}
	if err := p.methodOf(r); err != nil {
		return Query{}, err
	}
	r.training = q.Workload.Method != memory.MethodInference
	if err := p.checkScopes(r); err != nil {
		return Query{}, err
	}
	if err := p.applySettings(&q, r.training); err != nil {
		return Query{}, err
	}
	return q, nil
}

// modelOf names the model as the reply calls it.
func (p *parsedQuery) modelOf(r *reading) {
	w, m := r.w(), *p.model
	w.Model = m
	w.ModelName = m.Name
	if len(m.Aliases) > 0 {
		w.ModelName = m.Aliases[0]
	}
	w.Params = m.Params
	if m.Scaled { // memory.Resolve states the made-up architecture as an assumption
		w.ModelName = strings.ToLower(m.Name)
	}
	if p.resolved != nil { // a Hub model or a config.json: named and explained by the resolver
		w.ModelName = p.resolved.Name()
		w.Assumptions = append(w.Assumptions, p.resolved.Notes...)
	}
	if p.modelID != "" {
		// The user's repo is the one every command names; its size is
		// the catalog model's, whose architecture it shares.
		if p.modelID != m.HFID {
			r.note("sized with %s's architecture, which %s shares", m.HFID, p.modelID)
		}
		w.Model.HFID, w.ModelName = p.modelID, p.modelID
	}
}

// gpuOf is the GPU named, a memory budget, or the default.
func (p *parsedQuery) gpuOf(r *reading) error {
	q := r.q
	if p.gpu == nil {
		g, ok := catalog.LookupGPU(defaultGPUKey)
		if !ok {
			return errs.New(errs.Internal, "default GPU %s missing from the catalog", defaultGPUKey)
		}
		q.GPU = g
		r.w().GPUMemoryBytes = g.UsableBytes
		r.assume(DefaultGPU, "GPU not given: assuming %s", g.Name)
		return nil
	}
	q.GPU = *p.gpu
	r.w().GPUMemoryBytes = q.GPU.UsableBytes
	q.Budget = p.budget
	if p.budget {
		r.note("budget '%s' read as %s usable (GPU tools label GiB as GB), on a GPU with bf16 and without fp8", ShowToken(p.gpuTok), budgetGiB(q.GPU.UsableBytes))
	} else {
		q.RequestedGPU = q.GPU.Key
	}
	return nil
}

// methodOf is the method named, implied ("finetune", "serving", rank=),
// or inference.
func (p *parsedQuery) methodOf(r *reading) error {
	w := r.w()
	w.Method = p.method
	if w.Method == "" && p.loose != "" {
		p.looseMethod(r)
	}
	if w.Method == memory.MethodLoRA && p.kv["precision"] != "" {
		if c, err := precisionEnum.parse("precision", p.kv["precision"]); err == nil && c == "nf4" {
			w.Method = memory.MethodQLoRA
			r.note("LoRA on 4-bit NF4 weights is QLoRA: estimated as qlora")
		}
	}
	w.Assumptions = append(w.Assumptions, p.notes...)
	if w.Method != "" {
		return nil
	}
	switch {
	case p.hasAny(keysIn(ScopeAdapter)) != "":
		w.Method = memory.MethodLoRA
		r.assume(DefaultMethod, "method not given: %s= implies lora", p.hasAny(keysIn(ScopeAdapter)))
	case p.hasAny(keysIn(ScopeTraining)) != "":
		k := p.hasAny(keysIn(ScopeTraining))
		return Errorf(k+"="+p.kv[k], "%s= is a training setting: add a method (full, lora, qlora, dora or freeze)", k)
	case p.sharding != "":
		return Errorf(p.shardingTok, "%s is a training setting: add a method (full, lora, qlora, dora or freeze)", p.sharding)
	default:
		w.Method = memory.MethodInference
		r.assume(DefaultMethod, "method not given: assuming inference")
	}
	return nil
}

// looseMethod reads a method only implied: training is LoRA for an LLM
// and full fine-tuning for a model under 1B parameters.
func (p *parsedQuery) looseMethod(r *reading) {
	w := r.w()
	w.Method = p.loose
	switch {
	case p.loose != memory.MethodLoRA:
	case w.Model.Params > 0 && w.Model.Params < fullFinetuneBelow:
		w.Method = memory.MethodFull
		r.note("'%s' read as full fine-tuning, the usual way for a model under 1B parameters: say lora for adapters", ShowToken(p.looseTok))
	default:
		r.note("'%s' read as LoRA, the usual way to fine-tune an LLM on one GPU: say full to train every weight, qlora for 4-bit weights", ShowToken(p.looseTok))
	}
}

// checkScopes refuses a setting given outside its scope (the table's
// Scope): training settings for inference, adapter settings without an
// adapter, the KV cache for training.
func (p *parsedQuery) checkScopes(r *reading) error {
	w := r.w()
	if k := p.hasAny(keysIn(ScopeTraining)); k != "" && !r.training {
		return Errorf(k+"="+p.kv[k], "%s= is a training setting and does not apply to inference", k)
	}
	if p.sharding != "" && !r.training {
		return Errorf(p.shardingTok, "%s shards training state and does not apply to inference (tp= or pp= split a served model)", p.sharding)
	}
	if k := p.hasAny(keysIn(ScopeAdapter)); k != "" && !w.Method.IsAdapter() {
		return Errorf(k+"="+p.kv[k], "%s= applies to lora, qlora and dora only, not %s", k, w.Method)
	}
	if k := p.hasAny(keysIn(ScopeInference)); k != "" && r.training {
		return Errorf(k+"="+p.kv[k], "kv= is the inference KV cache and does not apply to training")
	}
	return nil
}
