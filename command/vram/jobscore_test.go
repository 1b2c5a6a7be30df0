package vram

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/job"
	"github.com/vrambot/vrambot/models"
	"github.com/vrambot/vrambot/query"
)

// TestJobCorpus scores the job reader on a labelled set of public job
// files kept outside the repository (docs/jobs.md §6): with
// VRAMBOT_JOBS_DATA=DIR (holding index.jsonl and files/) and
// VRAMBOT_JOBS_SPLIT=blind|holdout, it prints, file by file, whether the
// format was recognised, each stated setting read right, and the
// estimate against the measured number; without them it is skipped.
func TestJobCorpus(t *testing.T) {
	dir, split := os.Getenv("VRAMBOT_JOBS_DATA"), os.Getenv("VRAMBOT_JOBS_SPLIT")
	if dir == "" || split == "" {
		t.Skip("VRAMBOT_JOBS_DATA and VRAMBOT_JOBS_SPLIT not set")
	}
	f, err := os.Open(filepath.Join(dir, "index.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	deps := Deps{Models: models.New(models.Options{})}
	var s corpusScore
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Split != split {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, "files", e.File))
		if err != nil {
			t.Fatal(err)
		}
		s.add(t, e, string(data), deps)
	}
	s.report(t)
}

type corpusEntry struct {
	File     string         `json:"file"`
	Format   string         `json:"format"`
	States   map[string]any `json:"states"`
	Measured *struct {
		What    string  `json:"what"`
		Value   float64 `json:"value"`
		Unit    string  `json:"unit"`
		GPU     *string `json:"gpu"`
		PerGPU  bool    `json:"per_gpu"`
		NumGPUs int     `json:"num_gpus"`
	} `json:"measured"`
	Split string `json:"split"`
}

type corpusScore struct {
	files, formatOK, jobs, readOK, keys, keysOK int
	negatives, negOK                            int
	errsPct                                     map[string][]float64 // training, serving
	lines                                       []string
}

func (s *corpusScore) add(t *testing.T, e corpusEntry, text string, deps Deps) {
	s.files++
	j, err := job.Read(text)
	if e.Format == "none" {
		s.negatives++
		if err != nil {
			s.negOK++
			s.formatOK++
			s.lines = append(s.lines, fmt.Sprintf("OK   none   %s", e.File))
		} else {
			s.lines = append(s.lines, fmt.Sprintf("FAIL none   %s: read as %s", e.File, j.Format))
		}
		return
	}
	s.jobs++
	if err != nil {
		s.lines = append(s.lines, fmt.Sprintf("FAIL %-6s %s: %v", "read", e.File, err))
		return
	}
	if string(j.Format) != e.Format {
		s.lines = append(s.lines, fmt.Sprintf("FAIL format %s: %s, want %s", e.File, j.Format, e.Format))
	} else {
		s.formatOK++
	}
	var bad []string
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range e.States {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		s.keys++
		if why := checkState(j, k, e.States[k]); why != "" {
			bad = append(bad, why)
			continue
		}
		s.keysOK++
	}
	mem := s.memory(t, e, text, deps)
	if os.Getenv("VRAMBOT_JOBS_VERBOSE") != "" {
		st, _ := json.Marshal(e.States)
		w := j.Words()
		s.lines = append(s.lines, fmt.Sprintf("     %s\n       states %s\n       read   %s", e.File, st, w.String()))
	}
	if len(bad) == 0 && string(j.Format) == e.Format {
		s.readOK++
		s.lines = append(s.lines, fmt.Sprintf("OK   %-6s %s%s", "read", e.File, mem))
	} else {
		s.lines = append(s.lines, fmt.Sprintf("FAIL keys   %s: %s%s", e.File, strings.Join(bad, "; "), mem))
	}
}

// memory compares the estimate with the measured number, like with like.
func (s *corpusScore) memory(t *testing.T, e corpusEntry, text string, deps Deps) string {
	m := e.Measured
	if m == nil {
		return ""
	}
	gpu := ""
	if m.GPU != nil {
		gpu = corpusGPU(*m.GPU)
	}
	words := strings.TrimPrefix(gpu, "1x ")
	if n, g, ok := strings.Cut(words, "x "); ok && strings.HasSuffix(g, "gb") {
		words = g + " gpus=" + n // a budget has no count before it
	}
	if n := m.NumGPUs; n > 1 && gpu != "" && !strings.Contains(words, "x ") && !strings.Contains(words, "gpus=") {
		words = fmt.Sprintf("%dx %s", n, gpu)
	}
	a, err := EstimateJob(context.Background(), text, words, deps)
	if err != nil {
		return fmt.Sprintf(" | memory: error %v (words %q)", err, words)
	}
	var got, want float64
	kind := "training"
	unit := map[string]float64{"GiB": 1 << 30, "GB": 1 << 30, "MiB": 1 << 20, "tokens": 1}[m.Unit]
	want = m.Value * unit
	switch m.What {
	case "peak reserved", "vram (unspecified)":
		got = float64(a.Result.Estimate.TotalBytes)
	case "max_memory_allocated":
		got = float64(a.Result.Estimate.PeakAllocatedBytes)
	case "nvidia-smi":
		got = float64(a.Result.Estimate.TotalBytes)
		if a.Result.Serving != nil {
			kind = "serving"
			got = float64(a.Result.Serving.NvidiaSMIBytes)
		}
	case "vllm Available KV cache memory":
		kind = "serving"
		if a.Result.Serving != nil {
			got = float64(a.Result.Serving.KVCacheAvailableBytes)
		}
	case "vllm GPU KV cache size tokens", "sglang #tokens":
		kind = "serving"
		if a.Result.Serving != nil {
			got = float64(a.Result.Serving.KVCacheTokens)
		}
	default:
		return " | memory: unknown measure " + m.What
	}
	if want <= 0 {
		return ""
	}
	pct := 100 * (got - want) / want
	if s.errsPct == nil {
		s.errsPct = map[string][]float64{}
	}
	s.errsPct[kind] = append(s.errsPct[kind], pct)
	// Offline, a model the catalog lacks is sized by its name, and a run
	// whose GPU is not known is sized on the default one: not like with
	// like, so reported apart.
	apart := ""
	for _, as := range a.Result.Workload.Assumptions {
		if strings.Contains(as, "estimated as a typical") {
			apart = " (model sized by its name: offline)"
		}
	}
	if gpu == "" && kind == "serving" {
		apart = " (GPU not known)"
	}
	if apart == "" {
		s.errsPct[kind+", comparable"] = append(s.errsPct[kind+", comparable"], pct)
	}
	return fmt.Sprintf(" | %s %s: got %.4g want %.4g (%+.0f%%)%s [%s]", kind, m.What, got/unit, m.Value, pct, apart, a.Result.Job.Query)
}

var corpusGPUs = []struct {
	re   *regexp.Regexp
	gpu  string
	from int
}{
	{regexp.MustCompile(`(?i)(\d+)x\s*(\d+)\s*GB`), "", 0},
	{regexp.MustCompile(`(?i)A100[- ]SXM4[- ]40GB|A100 40`), "a100-40gb", 0},
	{regexp.MustCompile(`(?i)A100.*80\s*GB\s*PCIe|A100 80GB PCIe`), "a100-80gb", 0},
	{regexp.MustCompile(`(?i)A100`), "a100", 0},
	{regexp.MustCompile(`(?i)H200`), "h200", 0},
	{regexp.MustCompile(`(?i)H100`), "h100", 0},
	{regexp.MustCompile(`(?i)\bH20\b`), "h20", 0},
	{regexp.MustCompile(`(?i)\bT4\b`), "t4", 0},
	{regexp.MustCompile(`(?i)V100`), "v100", 0},
	{regexp.MustCompile(`(?i)\bL4\b`), "l4", 0},
	{regexp.MustCompile(`(?i)5070 Ti`), "5070ti", 0},
	{regexp.MustCompile(`(?i)5090`), "5090", 0},
	{regexp.MustCompile(`(?i)4090`), "4090", 0},
}

// corpusGPU reads the index's free-text GPU as query words.
func corpusGPU(s string) string {
	for _, g := range corpusGPUs {
		m := g.re.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		if g.gpu == "" {
			return m[1] + "x " + m[2] + "gb"
		}
		return g.gpu
	}
	return ""
}

// checkState says what is wrong with the reading of one stated setting
// ("" when it is right).
func checkState(j job.Job, key string, want any) string {
	ws := fmt.Sprint(want)
	if b, ok := want.(bool); ok {
		ws = strconv.FormatBool(b)
	}
	if f, ok := want.(float64); ok {
		ws = strconv.FormatFloat(f, 'f', -1, 64)
	}
	set := func(k string) string { return j.Setting(k) }
	expect := func(k, v string) string {
		if got := set(k); got != v {
			return fmt.Sprintf("%s=%s: got %s=%q", key, ws, k, got)
		}
		return ""
	}
	switch key {
	case "model":
		if j.Model == ws || strings.HasSuffix(strings.TrimRight(ws, "/"), j.Model) && j.Model != "" || strings.Contains(ws, j.Model) && j.Model != "" {
			return ""
		}
		return fmt.Sprintf("model %q: got %q", ws, j.Model)
	case "method":
		if j.Method != ws {
			return fmt.Sprintf("method %s: got %q", ws, j.Method)
		}
		return ""
	case "micro_batch":
		return expect("bs", ws)
	case "grad_accum":
		return expect("ga", ws)
	case "lora_r":
		return expect("rank", ws)
	case "seq_len", "max_model_len", "ctx":
		return expect("seq", ws)
	case "tp":
		return expect("tp", ws)
	case "pp":
		return expect("pp", ws)
	case "gpu_memory_utilization", "mem_fraction_static":
		return expect("gpu-util", ws)
	case "max_num_seqs", "max_running_requests":
		return expect("max-num-seqs", ws)
	case "max_num_batched_tokens":
		return expect("max-num-batched-tokens", ws)
	case "deepspeed_stage":
		return expect("zero", ws)
	case "num_gpus":
		if set("gpus") == ws || set("tp") == ws && set("pp") == "" {
			return ""
		}
		if j.Method == "inference" && (ws == "1" && set("tp") == "" && set("pp") == "" || ws == "all" && readKey(j, "gpus")) {
			return ""
		}
		if tp, pp := set("tp"), set("pp"); tp != "" || pp != "" {
			a, b := 1, 1
			if tp != "" {
				a, _ = strconv.Atoi(tp)
			}
			if pp != "" {
				b, _ = strconv.Atoi(pp)
			}
			if strconv.Itoa(a*b) == ws {
				return ""
			}
		}
		return fmt.Sprintf("num_gpus=%s: got gpus=%q tp=%q pp=%q", ws, set("gpus"), set("tp"), set("pp"))
	case "gradient_checkpointing":
		on := set("gc")
		switch strings.ToLower(ws) {
		case "false":
			return expect("gc", "off")
		case "unsloth", "offload":
			return expect("gc", "offloaded")
		}
		if on == "on" || on == "offloaded" || on == "selective" {
			return ""
		}
		return fmt.Sprintf("gradient_checkpointing=%s: got gc=%q", ws, on)
	case "flash_attention":
		switch strings.ToLower(ws) {
		case "false", "off":
			return ""
		case "eager":
			return expect("attn", "eager")
		}
		return expect("attn", "flash")
	case "precision":
		// The key that says it must be read, and the precision not
		// another dtype.
		for _, it := range j.Read {
			k := it.Key[strings.LastIndexAny(it.Key, ".-")+1:]
			if slices.Contains([]string{"bf16", "fp16", "dtype", "torch_dtype", "pure_bf16", "mixed_precision", "enabled", "precision", "float32"}, k) {
				return ""
			}
		}
		return fmt.Sprintf("precision=%s: no dtype key read", ws)
	case "load_in_4bit":
		if ws == "false" {
			return ""
		}
		if j.Method == "qlora" || set("precision") == "nf4" {
			return ""
		}
		return fmt.Sprintf("load_in_4bit: got method %s precision %q", j.Method, set("precision"))
	case "load_in_8bit":
		if ws == "false" {
			return ""
		}
		return expect("precision", "int8")
	case "kv_cache_dtype":
		l := strings.ToLower(ws)
		if m := map[string]string{"q8_0": "int8", "f16": "fp16"}[l]; m != "" {
			return expect("kv", m)
		}
		if v, err := query.CheckValue("kv", l); err == nil {
			return expect("kv", v)
		}
	case "quantization", "gguf_type":
		if v, err := query.CheckValue("precision", strings.ToLower(ws)); err == nil {
			return expect("precision", v)
		}
		if l := strings.ToLower(ws); strings.Contains(l, "4-bit") || strings.Contains(l, "4bit") || strings.Contains(l, "nf4") {
			if j.Method == "qlora" || set("precision") == "nf4" {
				return ""
			}
			return fmt.Sprintf("%s=%s: got method %s precision %q", key, ws, j.Method, set("precision"))
		}
		for _, n := range j.Notes {
			if strings.Contains(n, "GGUF type") {
				return ""
			}
		}
	case "optimizer":
		if set("optim") != "" {
			return ""
		}
	case "lora_targets":
		if set("targets") != "" {
			return ""
		}
	case "fsdp":
		if j.Sharding == "fsdp" || ws == "false" {
			return ""
		}
		return "fsdp: not read"
	}
	// Anything else: the key must be read (or said not used), not lost.
	if readKey(j, key) {
		return ""
	}
	for _, alias := range corpusAliases[key] {
		if readKey(j, alias) {
			return ""
		}
	}
	// A path to another file: said so.
	if strings.HasSuffix(key, "_config") || key == "config" || key == "recipe" {
		for _, it := range j.Read {
			if strings.Contains(ws, it.Value) && len(it.Value) > 3 {
				return ""
			}
		}
		for _, u := range append(append([]string{}, j.Unknown...), j.Notes...) {
			if strings.Contains(u, ws) || strings.Contains(ws, u) && len(u) > 3 {
				return ""
			}
		}
	}
	if f := strings.Fields(ws); len(f) > 0 && strings.HasPrefix(f[0], "-") && readKey(j, f[0]) {
		return ""
	}
	return fmt.Sprintf("%s=%s: not read", key, ws)
}

// corpusAliases are the index's names for keys the files write otherwise.
var corpusAliases = map[string][]string{
	"ngl": {"gpu_layers", "ngl", "num_gpu"}, "dcp": {"decode_context_parallel_size"}, "gpus_per_pod": {"nvidia.com/gpu"},
	"compile": {"torch_compile"}, "parallel": {"np"}, "offload": {"offload", "nkvo", "override_tensor", "cpu_moe"},
	"trainer": {"Trainer"}, "nnodes": {"nnodes", "num_nodes", "num_machines"},
}

// readKey reports whether the reading mentions a stated key.
func readKey(j job.Job, key string) bool {
	norm := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(strings.ToLower(strings.TrimLeft(s, "-")), "-", "_"), ".", "_")
	}
	k := norm(key)
	for _, it := range j.Read {
		if strings.Contains(norm(it.Key), k) {
			return true
		}
	}
	for _, u := range append(append(append([]string{}, j.Unknown...), j.Notes...), j.Ignored...) {
		if strings.Contains(norm(u), k) {
			return true
		}
	}
	return false
}

func (s *corpusScore) report(t *testing.T) {
	for _, l := range s.lines {
		t.Log(l)
	}
	t.Logf("files %d: format right %d; jobs %d read right %d (keys %d/%d); negatives %d/%d refused",
		s.files, s.formatOK, s.jobs, s.readOK, s.keysOK, s.keys, s.negOK, s.negatives)
	for _, kind := range []string{"training", "training, comparable", "serving", "serving, comparable"} {
		e := s.errsPct[kind]
		if len(e) == 0 {
			continue
		}
		abs := make([]float64, len(e))
		for i, v := range e {
			abs[i] = math.Abs(v)
		}
		sort.Float64s(abs)
		med := abs[len(abs)/2]
		if len(abs)%2 == 0 {
			med = (abs[len(abs)/2-1] + abs[len(abs)/2]) / 2
		}
		t.Logf("%s: %d measured, median |error| %.1f%%, within 15%%: %d", kind, len(e), med, countBelow(abs, 15))
	}
}

func countBelow(a []float64, lim float64) int {
	n := 0
	for _, v := range a {
		if v <= lim {
			n++
		}
	}
	return n
}
