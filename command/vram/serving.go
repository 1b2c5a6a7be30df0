package vram

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/serving"
	"github.com/vrambot/vrambot/command/layout"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/query"
	"github.com/vrambot/vrambot/reply"
)

// VRAMServing is the `serving` object of `vram --json` with a serving
// engine (docs/contracts.md §3): the engine's own start-up numbers on the GPU
// asked, per GPU, and what the deployment costs. Fields after PricedOn are
// additions to the contract.
type Serving struct {
	Engine               string  `json:"engine"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization"`
	MaxModelLen          int     `json:"max_model_len"`
	TP                   int     `json:"tp"`
	// WeightsBytes is "Model loading took"; KVCacheAvailableBytes
	// "Available KV cache memory"; KVCacheTokens "GPU KV cache size";
	// MaxConcurrency "Maximum concurrency for max_model_len tokens".
	WeightsBytes          int64   `json:"weights_bytes"`
	KVCacheAvailableBytes int64   `json:"kv_cache_available_bytes"`
	KVCacheTokens         int64   `json:"kv_cache_tokens"`
	MaxConcurrency        float64 `json:"max_concurrency"`
	Starts                bool    `json:"starts"`
	// MaxModelLenThatFits is the engine's estimate when it does not start
	// (null when it starts).
	MaxModelLenThatFits *int `json:"max_model_len_that_fits"`
	// DecodeTokensPerS is output tokens per second of one replica on the
	// GPU asked at Concurrency sequences.
	DecodeTokensPerS float64 `json:"decode_tokens_per_s"`
	// CostPerMillionTokensUSD is the price of a million output tokens on
	// PricedOn, the cheapest offer that serves it (null without one).
	CostPerMillionTokensUSD *float64           `json:"cost_per_million_tokens_usd"`
	PricedOn                *OfferCost         `json:"priced_on"`
	PP                      int                `json:"pp"`
	KVCacheDtype            string             `json:"kv_cache_dtype"`
	MaxNumSeqs              int                `json:"max_num_seqs,omitempty"`
	MaxNumBatchedTokens     int                `json:"max_num_batched_tokens,omitempty"`
	BlockSize               int                `json:"block_size,omitempty"`
	TotalGPUMemoryBytes     int64              `json:"total_gpu_memory_bytes"`
	BudgetBytes             int64              `json:"budget_bytes"`
	ActivationPeakBytes     int64              `json:"activation_peak_bytes"`
	NonTorchBytes           int64              `json:"non_torch_bytes"`
	CUDAGraphBytes          int64              `json:"cuda_graph_bytes"`
	KVBytesPerToken         int64              `json:"kv_bytes_per_token"`
	NvidiaSMIBytes          int64              `json:"nvidia_smi_bytes"`
	GPULayers               int                `json:"gpu_layers,omitempty"`
	Layers                  int                `json:"layers,omitempty"`
	Error                   string             `json:"error,omitempty"`
	Concurrency             int                `json:"concurrency"`
	Throughput              serving.Throughput `json:"throughput"`
	LogLines                []serving.LogLine  `json:"log_lines"`
	// Changes are the single changes that make it start (or hold the
	// users asked), cheapest first.
	Changes     []serving.Change `json:"changes"`
	Users       *Users           `json:"users,omitempty"`
	OfferCosts  []OfferCost      `json:"offer_costs"`
	Assumptions []string         `json:"assumptions"`
}

// VRAMUsers is the answer to users=N: whether the deployment asked holds
// N sequences of max_model_len at once, the smallest configuration of the
// GPU asked that does, and every catalog GPU's smallest configuration.
type Users struct {
	Users    int             `json:"users"`
	SeqLen   int             `json:"seq_len"`
	Holds    bool            `json:"holds"`
	Smallest *serving.Sized  `json:"smallest"`
	GPUs     []serving.Sized `json:"gpus"`
}

// VRAMOfferCost is one offer priced per million output tokens: as many
// replicas of the deployment as the instance holds, each decoding at the
// stated concurrency.
type OfferCost struct {
	Provider                string   `json:"provider"`
	InstanceType            string   `json:"instance_type"`
	GPU                     string   `json:"gpu"`
	GPUCount                int      `json:"gpu_count"`
	PricePerHourUSD         float64  `json:"price_per_hour_usd"`
	Replicas                int      `json:"replicas"`
	DecodeTokensPerS        float64  `json:"decode_tokens_per_s"`
	CostPerMillionTokensUSD *float64 `json:"cost_per_million_tokens_usd"`
}

// maxListedGPUs bounds the other-GPU list of a users= reply.
const maxListedGPUs = 6

// servingAnswer is the serving half of a /vram answer: the engine's plan
// on the GPU asked, the changes that make it start or hold the load, the
// users= sizing, the offers and their price per million tokens.
type servingAnswer struct {
	engine serving.Engine
	result serving.Result // as asked
	config serving.Result // what the offers are for: as asked, or the sizing that holds the load
	load   int            // users asked (0: none)
	sized  *serving.Sized // smallest configuration of the GPU asked holding the load
	// setup is set when no GPU was named and one assumed GPU does not
	// hold the load: the answer is for the smallest setup of it that does
	// ("what GPU do I need to serve X for 50 users"); result is its plan.
	setup   *serving.Sized
	all     []serving.Sized  // every catalog GPU's
	changes []serving.Change // what makes it start / hold the load
	conc    int              // concurrency for throughput and cost
	speed   serving.Throughput
	costs   []OfferCost
	offers  []pricing.Offer
	prov    []string
}

func answerServing(ctx context.Context, q query.Query, w memory.Workload, offers OfferFinder) servingAnswer {
	a := servingAnswer{engine: serving.Engine(w.Engine), load: memory.ServingLoad(w)}
	d := memory.ServingDeployment(w, q.GPU)
	if d.Engine == serving.EngineTGI && slices.Contains(q.Defaults, query.DefaultSeq) {
		// TGI v3 sizes max_total_tokens from memory when it is not set:
		// the planner lowers it to what fits only when it was not given.
		d.MaxModelLen = 0
	}
	a.result = serving.Plan(d)
	a.config = a.result
	gpus := catalog.GPUs()
	if a.load > 0 {
		a.all = serving.SizeAll(a.result.Input, a.load, gpus)
		if i := slices.IndexFunc(a.all, func(s serving.Sized) bool { return s.GPUKey != "" && s.GPUKey == q.GPU.Key }); i >= 0 {
			a.sized = &a.all[i]
		} else if s, ok := serving.Size(a.result.Input, a.load); ok { // a memory budget, not a catalog GPU
			a.sized = &s
		}
		if a.sized != nil && !serving.HoldsLoad(a.load)(a.result) {
			a.config = a.sized.Result
			if slices.Contains(q.Defaults, query.DefaultGPU) && a.sized.Result.Starts {
				// Planned again for its log lines, which sizing skips.
				a.setup, a.result = a.sized, serving.Plan(a.sized.Result.Deployment)
			}
		}
	}
	switch {
	case !a.result.Starts:
		a.changes = serving.Changes(a.result, func(r serving.Result) bool { return r.Starts }, true, gpus)
	case a.load > 0 && !serving.HoldsLoad(a.load)(a.result):
		a.changes = serving.Changes(a.result, serving.HoldsLoad(a.load), false, gpus)
	}
	a.conc = a.load
	if a.conc == 0 {
		a.conc = max(1, min(int(a.config.MaxConcurrency), a.config.MaxNumSeqs))
		if a.config.MaxNumSeqs == 0 {
			a.conc = max(1, int(a.config.MaxConcurrency))
		}
	}
	if a.config.Starts {
		a.speed = serving.Speed(a.config, a.conc)
	}
	if offers == nil {
		a.prov = []string{"prices: no price source configured"}
		return a
	}
	if req, ok := servingRequirement(q, a); ok {
		found, prov := offers.FindOffers(ctx, req)
		a.offers, a.prov = found, prov
	}
	for _, o := range a.offers {
		a.costs = append(a.costs, a.offerCost(o))
	}
	return a
}

// servingRequirement is what an offer needs to serve the configuration:
// GPUs with at least the memory on which it starts and holds the load,
// as many as its tensor × pipeline parallelism, fp8 when it uses fp8.
func servingRequirement(q query.Query, a servingAnswer) (pricing.Requirement, bool) {
	in := a.config.Input
	bytes, _, ok := serving.Requirement(in, max(1, a.load))
	if !ok {
		return pricing.Requirement{}, false
	}
	sizedFP8 := a.sized != nil && a.config.Input.Model.Quant == a.sized.Result.Input.Model.Quant && a.sized.Weights == serving.WeightsFP8
	return pricing.Requirement{
		MemoryPerGPUBytes: bytes,
		GPUCount:          max(1, a.config.TP*a.config.PP),
		// An fp8 KV cache, or the FP8 checkpoint the sizing chose for fp8 cards.
		NeedFP8:      in.KVCacheDtype == serving.KVFP8 || sizedFP8,
		NeedBF16:     !slices.Contains(q.Defaults, query.DefaultPrecision) && q.Workload.Precision == memory.PrecisionBF16,
		RequestedGPU: q.RequestedGPU,
	}, true
}

// pricedAt says what a price per million tokens assumes: how many
// sequences decode at once, and of what length.
func (a servingAnswer) pricedAt() string {
	return fmt.Sprintf(" at %s of %s at once", plural(a.conc, "sequence", "sequences"), lenWords(a.config.MaxModelLen))
}

// offerCost prices the configuration on one offer's GPU.
func (a servingAnswer) offerCost(o pricing.Offer) OfferCost {
	c := OfferCost{Provider: o.Provider, InstanceType: o.InstanceType, GPU: o.GPU, GPUCount: o.GPUCount, PricePerHourUSD: o.PricePerHourUSD}
	g, ok := catalog.LookupGPU(o.GPUKey)
	if !ok {
		return c
	}
	r := serving.OnGPU(a.config, g)
	t := serving.Speed(r, a.conc)
	c.Replicas = o.GPUCount / max(1, r.TP*r.PP)
	c.DecodeTokensPerS = float64(c.Replicas) * t.DecodeTokensPerS
	if cost := serving.CostPerMillionTokens(o.PricePerHourUSD, o.GPUCount, r, t); cost > 0 {
		c.CostPerMillionTokensUSD = &cost
	}
	return c
}

// json is the `serving` object.
func (a servingAnswer) json() *Serving {
	r := a.result
	s := &Serving{
		Engine: string(a.engine), GPUMemoryUtilization: r.MemoryFraction, MaxModelLen: r.MaxModelLen, TP: r.TP, PP: r.PP,
		WeightsBytes: r.WeightsBytes, KVCacheAvailableBytes: r.KVCacheAvailableBytes, KVCacheTokens: r.KVCacheTokens,
		MaxConcurrency: round2(r.MaxConcurrency), Starts: r.Starts, DecodeTokensPerS: math.Round(a.speed.DecodeTokensPerS*10) / 10,
		KVCacheDtype: r.KVCacheDtype, MaxNumSeqs: r.MaxNumSeqs, MaxNumBatchedTokens: r.MaxNumBatchedTokens, BlockSize: r.BlockSize,
		TotalGPUMemoryBytes: r.TotalMemoryBytes, BudgetBytes: r.BudgetBytes, ActivationPeakBytes: r.ActivationBytes,
		NonTorchBytes: r.NonTorchBytes, CUDAGraphBytes: r.GraphBytes, KVBytesPerToken: r.KVBytesPerToken, NvidiaSMIBytes: r.NvidiaSMIBytes,
		GPULayers: r.GPULayers, Layers: r.Layers, Error: r.Error, Concurrency: a.conc, Throughput: a.speed,
		LogLines: r.Log, Changes: a.changes, OfferCosts: a.costs, Assumptions: r.Assumptions,
	}
	if s.LogLines == nil {
		s.LogLines = []serving.LogLine{}
	}
	if s.Changes == nil {
		s.Changes = []serving.Change{}
	}
	if s.OfferCosts == nil {
		s.OfferCosts = []OfferCost{}
	}
	if !r.Starts {
		n := r.MaxModelLenThatFits
		s.MaxModelLenThatFits = &n
	}
	for i := range a.costs {
		if c := a.costs[i]; c.CostPerMillionTokensUSD != nil {
			s.PricedOn = &a.costs[i]
			v := *c.CostPerMillionTokensUSD
			s.CostPerMillionTokensUSD = &v
			break
		}
	}
	if a.load > 0 {
		u := &Users{Users: a.load, SeqLen: r.MaxModelLen, Holds: serving.HoldsLoad(a.load)(r), Smallest: a.sized, GPUs: a.all}
		if u.GPUs == nil {
			u.GPUs = []serving.Sized{}
		}
		s.Users = u
	}
	return s
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// verdict leads the reply: "vLLM starts: 61k tokens of KV cache, 7.4
// requests of 8k at once", or why it does not, in its words.
func (a servingAnswer) verdict() string {
	r := a.result
	e := a.engine.Label()
	if !r.Starts {
		return e + " does not start: " + failureWords(r)
	}
	var b strings.Builder
	switch {
	case r.Layers > 0:
		ctxLen := lenWords(r.MaxModelLen)
		fmt.Fprintf(&b, "%s starts: %d/%d layers on the GPU, %s %s-token context", e, r.GPULayers, r.Layers, article(ctxLen), ctxLen)
		if r.GPULayers < r.Layers {
			b.WriteString(" (the other layers run on the CPU)")
		}
	default:
		fmt.Fprintf(&b, "%s starts: %s tokens of KV cache, %s requests of %s at once", e, tokenWords(r.KVCacheTokens), concurrencyWords(r.MaxConcurrency), lenWords(r.MaxModelLen))
	}
	if a.load > 0 {
		if serving.HoldsLoad(a.load)(r) {
			fmt.Fprintf(&b, "; holds the %d sequences asked", a.load)
		} else {
			fmt.Fprintf(&b, "; %d sequences asked, so %s wait in the queue", a.load, concurrencyWords(float64(a.load)-r.MaxConcurrency))
		}
	}
	return b.String()
}

// failureWords is why the engine stops, short, with its own estimate.
func failureWords(r serving.Result) string {
	switch {
	case r.Failure == serving.FailKVMemory:
		return fmt.Sprintf("no memory left for the KV cache (%s of weights and %s of activation peak fill the %s budget)",
			layout.GiB(r.WeightsBytes), layout.GiB(r.ActivationBytes), layout.GiB(r.BudgetBytes))
	case r.Failure == serving.FailStartupMemory:
		return fmt.Sprintf("gpu_memory_utilization %.2f asks for %s free at start-up, more than the %s GPU has beside the CUDA context",
			r.MemoryFraction, layout.GiB(r.BudgetBytes), layout.GiB(r.TotalMemoryBytes))
	case r.Failure == serving.FailWeights:
		return fmt.Sprintf("the weights (%s per GPU) do not fit on the %s GPU", layout.GiB(r.WeightsBytes), layout.GiB(r.TotalMemoryBytes))
	case r.Failure == serving.FailContext && r.Deployment.Generation == serving.GenerationV0:
		return fmt.Sprintf("its max seq len (%s) is larger than the %s tokens the KV cache can store (%s available)",
			commasInt(int64(r.MaxModelLen)), commasInt(int64(r.MaxModelLenThatFits)), layout.GiB(max(0, r.KVCacheAvailableBytes)))
	case r.Failure == serving.FailContext && r.MaxModelLenThatFits > 0:
		return fmt.Sprintf("one %s-token request needs more KV cache than the %s available (%s's estimated maximum model length is %s)",
			commasInt(int64(r.MaxModelLen)), layout.GiB(max(0, r.KVCacheAvailableBytes)), r.Engine.Label(), commasInt(int64(r.MaxModelLenThatFits)))
	}
	return r.Error
}

// tokenWords writes 61,440 as "61k" and 1,234,567 as "1.23M".
func tokenWords(n int64) string {
	switch {
	case n >= 1e6:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 2, 64) + "M"
	case n >= 1e4:
		return strconv.FormatInt(int64(math.Round(float64(n)/1e3)), 10) + "k"
	}
	return commasInt(n)
}

// lenWords writes a context as "8k" when it is a multiple of 1024.
func lenWords(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return strconv.Itoa(n/1024) + "k"
	}
	return commasInt(int64(n))
}

// article is "an" before a number read with a vowel sound ("an 8k",
// "an 11k", "an 18,000"), else "a".
func article(number string) string {
	lead, _, _ := strings.Cut(strings.ReplaceAll(number, ",", ""), "k")
	digits := strings.TrimRightFunc(lead, func(r rune) bool { return r < '0' || r > '9' })
	if strings.HasPrefix(number, "8") || digits == "11" || digits == "18" || digits == "11000" || digits == "18000" {
		return "an"
	}
	return "a"
}

func concurrencyWords(c float64) string {
	if c >= 100 {
		return strconv.FormatFloat(math.Round(c), 'f', 0, 64)
	}
	return strconv.FormatFloat(c, 'f', 1, 64)
}

func commasInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && c != '-' && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// fields is the breakdown in the engine's terms, each named by its log line.
func (a servingAnswer) fields() []reply.Field {
	r := a.result
	if r.Layers > 0 {
		return []reply.Field{
			{Label: "Weights on the GPU (model buffer)", Value: layout.GiB(r.WeightsBytes)},
			{Label: "KV cache (KV buffer)", Value: layout.GiB(r.KVCacheAvailableBytes)},
			{Label: "Compute buffer", Value: layout.GiB(r.ActivationBytes)},
			{Label: "nvidia-smi shows", Value: layout.GiB(r.NvidiaSMIBytes)},
		}
	}
	weightsLine, kvLine := `"Model loading took"`, `"Available KV cache memory"`
	switch a.engine {
	case serving.EngineSGLang:
		weightsLine, kvLine = `"Load weight end … mem usage"`, `"KV Cache is allocated"`
	case serving.EngineTGI:
		weightsLine, kvLine = "loaded shards", `"KV-cache blocks"`
	}
	out := []reply.Field{{Label: "Weights per GPU (" + weightsLine + ")", Value: layout.GiB(r.WeightsBytes)}}
	if r.ActivationBytes > 0 {
		out = append(out, reply.Field{Label: "Activation peak (profile run)", Value: layout.GiB(r.ActivationBytes)})
	}
	if r.NonTorchBytes > 0 {
		out = append(out, reply.Field{Label: "Non-torch memory", Value: layout.GiB(r.NonTorchBytes)})
	}
	out = append(out,
		reply.Field{Label: "KV cache (" + kvLine + ")", Value: layout.GiB(max(0, r.KVCacheAvailableBytes))},
		reply.Field{Label: fmt.Sprintf("Budget (%.2f × %s)", r.MemoryFraction, layout.GiB(r.TotalMemoryBytes)), Value: layout.GiB(r.BudgetBytes)},
		reply.Field{Label: "nvidia-smi shows", Value: layout.GiB(r.NvidiaSMIBytes)})
	if a.speed.DecodeTokensPerS > 0 {
		label := "Decode"
		if a.config.Input.KVCacheDtype != r.Input.KVCacheDtype || a.config.TP != r.TP || a.config.Input.Model.Quant != r.Input.Model.Quant {
			label = "Decode (smallest setup that holds them)"
		}
		out = append(out, reply.Field{Label: label, Value: fmt.Sprintf("%s tok/s at %s (%s tok/s each)",
			commasInt(int64(math.Round(a.speed.DecodeTokensPerS))), plural(a.speed.Concurrency, "sequence", "sequences"), strconv.FormatFloat(a.speed.PerSequence, 'f', 1, 64))})
	}
	return out
}

// sections: the log lines to expect, what makes it start or hold the
// load, the users= sizing and the priced offers.
func (a servingAnswer) sections(w memory.Workload) []reply.Section {
	r := a.result
	e := a.engine.Label()
	var out []reply.Section
	logs := reply.Section{Title: "What " + e + " will log"}
	for _, l := range r.Log {
		logs.Items = append(logs.Items, fmt.Sprintf("`%s` — %s", l.Text, l.Means))
	}
	out = append(out, logs)
	if len(a.changes) > 0 {
		title := "Any one of these makes " + e + " start (cheapest first)"
		if r.Starts {
			title = fmt.Sprintf("Any one of these holds the %d sequences (cheapest first)", a.load)
		}
		out = append(out, reply.Section{Title: title})
		for _, c := range a.changes {
			out = append(out, fixSection(c.Fix))
		}
	} else if !r.Starts {
		out = append(out, reply.Section{Title: "No single change makes " + e + " start", Text: "Not on up to 8 GPUs of the catalog with these settings: a multi-node deployment or a smaller model."})
	}
	if a.load > 0 {
		out = append(out, a.usersSection())
	}
	out = append(out, a.offersSection())
	return out
}

func (a servingAnswer) usersSection() reply.Section {
	s := reply.Section{Title: fmt.Sprintf("%d sequences of %s at once", a.load, lenWords(a.result.MaxModelLen))}
	if a.sized != nil {
		s.Text = fmt.Sprintf("Smallest %s setup: %s (holds %s at once).", a.sized.GPUName, sizedWords(*a.sized), concurrencyWords(a.sized.Concurrency))
	} else {
		s.Text = fmt.Sprintf("No setup of up to %d× %s holds them.", serving.MaxChangeTP, a.result.Deployment.GPU.Name)
	}
	others := slices.Clone(a.all)
	slices.SortStableFunc(others, func(x, y serving.Sized) int { return x.GPUs - y.GPUs })
	for i, o := range others {
		if i >= maxListedGPUs {
			break
		}
		s.Items = append(s.Items, fmt.Sprintf("%s: %s", o.GPUName, sizedWords(o)))
	}
	return s
}

// sizedWords describes a sized configuration: "tp=2, fp8 KV cache".
func sizedWords(s serving.Sized) string {
	parts := []string{fmt.Sprintf("%d GPU", s.GPUs)}
	if s.GPUs > 1 {
		parts[0] += "s"
		if s.TP > 1 {
			parts[0] += fmt.Sprintf(" (tp=%d)", s.TP)
		}
	}
	if s.KVCacheDtype != "auto" && s.KVCacheDtype != "" {
		parts = append(parts, s.KVCacheDtype+" KV cache")
	}
	switch s.Weights {
	case serving.WeightsFP8:
		parts = append(parts, "an FP8 checkpoint")
	case serving.WeightsInt4:
		parts = append(parts, "a 4-bit AWQ/GPTQ checkpoint")
	}
	return strings.Join(parts, ", ")
}

func (a servingAnswer) offersSection() reply.Section {
	s := reply.Section{Title: fmt.Sprintf("GPUs that serve it (best price first; cost per million output tokens at %s)", plural(a.conc, "sequence", "sequences"))}
	if len(a.offers) == 0 {
		s.Text = "No offer in the price data serves this configuration."
		return s
	}
	for i, o := range a.offers {
		line := offerLine(o)
		if i < len(a.costs) {
			if c := a.costs[i]; c.CostPerMillionTokensUSD != nil {
				line += fmt.Sprintf(" — %s per million tokens (%s, %s tok/s)", layout.USD(*c.CostPerMillionTokensUSD), plural(c.Replicas, "replica", "replicas"), commasInt(int64(math.Round(c.DecodeTokensPerS))))
			}
		}
		s.Items = append(s.Items, line)
	}
	return s
}

// servingStages are the changes as the staged fixes the other answers
// share (each one alone makes it start or hold the load).
func (a servingAnswer) servingStages() []fix.Stage {
	var stages []fix.Stage
	for _, c := range a.changes {
		level := fix.LevelOneLiner
		if d, ok := fix.Lookup(c.ID); ok {
			level = d.Level
		}
		if n := len(stages); n == 0 || stages[n-1].Level != level {
			stages = append(stages, fix.Stage{Stage: n + 1, Level: level, Title: level.Title()})
		}
		stages[len(stages)-1].Fixes = append(stages[len(stages)-1].Fixes, c.Fix)
	}
	if stages == nil {
		stages = []fix.Stage{}
	}
	return stages
}
