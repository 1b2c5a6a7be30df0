package oom

import (
	"regexp"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/advisor/fix"
)

// frame is one stack frame: the function, its file and the source line.
type frame struct {
	fn, path, src string
}

var (
	rePyFrame      = regexp.MustCompile(`File "([^"]+)", line \d+, in (\S+)`)
	reJupyterFrame = regexp.MustCompile(`^(\S+\.py) in (\w+)\(`)
	// reIPythonFrame is IPython 8's "File ~/x/module.py:1518, in
	// Module._call_impl(self, ...)" and "Cell In[5], line 3".
	reIPythonFrame = regexp.MustCompile(`^\s*(?:File (\S+?):\d+, in (?:[\w.]*\.)?(\w+)\(|(Cell In\[\d*\]), line \d+)`)
	// reNumberedSource is an IPython context line ("   1496 x = 1") and
	// reArrowSource the line that ran ("-> 1501 ...", "----> 5 ...").
	reNumberedSource = regexp.MustCompile(`^\d+\s`)
	reArrowSource    = regexp.MustCompile(`^-+>\s*\d*\s*`)
	reModelCall      = regexp.MustCompile(`(?:^|[^\w])model\(`)
	// reFunctionalCall is a call of a torch.nn.functional op, which only a
	// forward computation makes ("F.conv2d(", "torch.nn.functional.scaled_dot_product_attention(").
	reFunctionalCall = regexp.MustCompile(`(?:\btorch\.nn\.functional|(?:^|[^\w.])F)\.\w+\(`)
	// reLoadName is a function that loads a model or its weights by name
	// ("load", "load_unet", "load_diffusion_model", "partially_load",
	// "model_load"); reDataName excludes loading data.
	reLoadName = regexp.MustCompile(`^_?(?:partially_)?load(?:_|$)|_load$`)
	reDataName = regexp.MustCompile(`(?i)data|image|img|batch|audio|video|sample|prompt|caption|text|token|loss|balanc`)
	// reModelTo matches moving a model to the device: "model.to(device)",
	// "model = Net(cfg).to(device)"; not "x.to(model.device)".
	reModelTo = regexp.MustCompile(`^\s*(?:self\.)?\w*model\w*\s*=.*\.(?:to|cuda)\(|\b\w*model\w*\.(?:to|cuda)\(`)
	// moduleFns are load functions only when nn.Module's own (Module.to).
	moduleFns = set("_apply", "convert", "to", "cuda")
)

// maxFrameLines bounds how far a traceback is followed from the OOM line.
const maxFrameLines = 400

func isFrameLine(s string) bool {
	_, ok := parseFrame(s)
	return ok
}

func parseFrame(s string) (frame, bool) {
	if strings.Contains(s, `File "`) {
		if m := rePyFrame.FindStringSubmatch(s); m != nil {
			return frame{fn: m[2], path: m[1]}, true
		}
	}
	if m := reJupyterFrame.FindStringSubmatch(s); m != nil {
		return frame{fn: m[2], path: m[1]}, true
	}
	if m := reIPythonFrame.FindStringSubmatch(s); m != nil {
		if m[3] != "" {
			return frame{fn: "<cell>", path: m[3]}, true
		}
		return frame{fn: m[2], path: m[1]}, true
	}
	return frame{}, false
}

// sourceLine returns the code of a traceback source line, or "" for an
// IPython context line (a neighbour of the line that ran, not evidence).
func sourceLine(trim string) string {
	if strings.Trim(trim, "^~ ") == "" {
		return "" // Python 3.11's markers under the failing expression
	}
	if loc := reArrowSource.FindStringIndex(trim); loc != nil {
		return trim[loc[1]:]
	}
	if reNumberedSource.MatchString(trim) {
		return ""
	}
	return trim
}

// framesInLine reads frames from a paste that lost its newlines: the text
// before the OOM message on its own line, split at each `File "`.
func framesInLine(s string) []frame {
	locs := rePyFrame.FindAllStringSubmatchIndex(s, -1)
	frames := make([]frame, 0, len(locs))
	for i, l := range locs {
		end := len(s)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		frames = append(frames, frame{path: s[l[2]:l[3]], fn: s[l[4]:l[5]], src: strings.TrimSpace(s[l[1]:end])})
	}
	return reverse(frames)
}

// framesBefore returns the traceback that ends at the OOM line li,
// innermost frame first. Lines of other ranks are skipped. The line right
// before the OOM counts as source even when unindented (a clipped paste).
func framesBefore(sc *scan, li int) []frame {
	rank := sc.lines[li].rank
	var frames []frame
	var src []string
	blanks := 0
	for k := li - 1; k >= 0 && k >= li-maxFrameLines; k-- {
		l := sc.lines[k]
		if rank >= 0 && l.rank != rank {
			continue
		}
		t := l.text
		trim := strings.TrimSpace(t)
		if trim == "" {
			if blanks++; blanks > 1 {
				break
			}
			continue
		}
		blanks = 0
		if f, ok := parseFrame(t); ok {
			slices.Reverse(src) // collected bottom-up
			f.src = strings.Join(src, " ")
			src = src[:0]
			frames = append(frames, f)
			continue
		}
		if strings.HasPrefix(trim, "Traceback") || strings.HasPrefix(trim, "Stack (most recent") {
			break
		}
		if t[0] == ' ' || t[0] == '\t' || reArrowSource.MatchString(trim) || trim == "..." || trim == "...." || k == li-1 && !startsRecord(t) {
			if code := sourceLine(trim); code != "" {
				src = append(src, code)
			}
			continue
		}
		break
	}
	if len(frames) == 0 && len(src) > 0 {
		slices.Reverse(src)
		frames = append(frames, frame{src: strings.Join(src, " ")})
	}
	return frames
}

// framesAfter returns the traceback printed after the OOM line (THCudaCheck
// and TF 0.x print the error first), innermost frame first.
func framesAfter(sc *scan, li int) []frame {
	rank := sc.lines[li].rank
	var frames []frame
	started, report := false, false
	for k := li + 1; k < len(sc.lines) && k <= li+maxFrameLines; k++ {
		l := sc.lines[k]
		if rank >= 0 && l.rank != rank || rank < 0 && l.rank >= 0 {
			continue
		}
		t := l.text
		trim := strings.TrimSpace(t)
		switch {
		case strings.HasPrefix(trim, "During handling") || strings.HasPrefix(trim, "The above exception"):
			// What follows is another exception's traceback.
			return reverse(frames)
		case strings.HasPrefix(trim, "Traceback"):
			if started {
				return reverse(frames)
			}
			started = true
		case strings.HasPrefix(trim, "## Stack Trace"):
			// ComfyUI's Error Report lists the traceback in its own
			// section, its frames apart by blank lines.
			started, report = true, true
		case report && strings.HasPrefix(trim, "## "):
			return reverse(frames)
		case started && trim == "" && !report:
			return reverse(frames)
		case trim == "":
		case started:
			if f, ok := parseFrame(t); ok {
				frames = append(frames, f)
			} else if len(frames) > 0 && (t[0] == ' ' || t[0] == '\t') {
				frames[len(frames)-1].src = strings.TrimSpace(frames[len(frames)-1].src + " " + sourceLine(trim))
			} else if startsRecord(t) {
				return reverse(frames)
			}
		case k > li+8:
			return nil
		}
	}
	return reverse(frames)
}

func reverse(f []frame) []frame {
	for i, j := 0, len(f)-1; i < j; i, j = i+1, j-1 {
		f[i], f[j] = f[j], f[i]
	}
	return f
}

// Function names that put a frame in a phase. A frame on the stack means
// that call is in progress, so the innermost such frame says where the OOM
// happened: a forward inside evaluate() is evaluation, a forward inside a
// checkpointed backward is backward.
var (
	backwardFns  = set("backward", "run_backward", "_engine_run_backward", "manual_backward")
	optimizerFns = set("step", "_optimizer_step", "_take_model_step", "optimizer_step", "_single_tensor_adam", "_multi_tensor_adam",
		"_single_tensor_adamw", "_multi_tensor_adamw", "adam", "adamw", "_init_group", "initialize_optimizer_states", "_fused_adamw", "_fused_adam",
		"clip_grad_norm_", "_clip_grads_with_norm_")
	loadFns = set("_apply", "convert", "to", "cuda", "load_checkpoint_and_dispatch", "load_state_dict", "_load_from_state_dict", "from_pretrained", "load_checkpoint",
		"_load_pretrained_model", "load_model", "load_weights", "set_module_tensor_to_device", "dispatch_model",
		"load_state_dict_into_meta_model", "_load_state_dict_into_meta_model", "profile_run", "determine_num_available_blocks",
		"_initialize_kv_caches", "initialize_cache", "init_device", "determine_available_memory", "load_sharded_checkpoint", "load_checkpoint_in_model",
		// Wrapping the model for distributed training allocates its
		// buffers before any step: DDP's gradient buckets, DeepSpeed's and
		// accelerate's model set-up.
		"_ddp_init_helper", "prepare_model", "_prepare_deepspeed", "_configure_distributed_model", "_move_model_to_device", "_broadcast_model",
		// Serving engines size their memory pools and capture CUDA graphs
		// at start-up (vLLM, SGLang).
		"init_cuda_graphs", "init_memory_pool", "capture_model", "compile_or_warm_up_model", "initialize_kv_cache",
		// DDP checks and broadcasts the parameters when it wraps the model.
		"_verify_param_shape_across_processes", "_sync_module_states")
	evalFns = set("evaluate", "evaluation_loop", "eval_step", "validation_step", "prediction_step", "test_step",
		"predict_step", "validate", "_validate", "eval_epoch", "evaluate_epoch", "run_eval", "validation_loop", "_evaluation_step", "eval_loop",
		"eval", "val_step", "validation_epoch", "valid_epoch", "validate_epoch", "_evaluate", "evaluation", "run_validation")
	generateFns = set("generate", "_sample", "greedy_search", "beam_search", "_beam_search", "generate_step",
		"_greedy_search", "_assisted_decoding", "prefill", "decode_step", "execute_model", "chat", "stream_generate")
	forwardFns = set("forward", "_call_impl", "_wrapped_call_impl", "_forward", "forward_call")
	// stepFns run a whole training step (forward, then backward) inside
	// an optimizer's closure (Lightning) or a trainer: reaching one from
	// the inside means the OOM is in that step's forward, not in the
	// update or backward around it; an eval or generate around it still
	// counts.
	stepFns = set("training_step", "closure", "_closure", "_training_step", "training_step_and_backward",
		"compute_loss", "_run_closure", "_step_fn")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// framePhase classifies one frame; "" when it says nothing.
func framePhase(f frame) string {
	p := strings.ReplaceAll(f.path, `\`, "/")
	switch {
	case backwardFns[f.fn] || strings.Contains(f.src, ".backward(") || strings.Contains(f.src, "run_backward"):
		return PhaseBackward
	case optimizerFns[f.fn] && (strings.Contains(p, "optim") || strings.Contains(p, "deepspeed/runtime") || f.fn != "step") ||
		strings.Contains(f.src, "optimizer.step(") || strings.Contains(f.src, "optimizer_step(") || optimizerInit(f):
		return PhaseOptimizer
	case loadFns[f.fn] && (!moduleFns[f.fn] || strings.Contains(p, "torch/nn/modules/module.py")) || loadName(f.fn) ||
		strings.Contains(f.src, "from_pretrained(") || strings.Contains(f.src, "load_state_dict(") || strings.Contains(f.src, "torch.load(") ||
		reModelTo.MatchString(f.src) || moduleConvert(f.src) || modelConstruction(f, p):
		return PhaseLoad
	case evalFns[f.fn] || strings.Contains(f.src, "evaluate(") || strings.Contains(f.src, "validation_step("):
		return PhaseEval
	case generateFns[f.fn] || strings.Contains(f.src, ".generate("):
		return PhaseGenerate
	case strings.Contains(f.fn, "backward"):
		return PhaseBackward
	case forwardFns[f.fn] || strings.Contains(f.fn, "forward") || strings.Contains(p, "torch/nn/functional.py") || strings.Contains(p, "torch/nn/modules/") ||
		strings.Contains(p, "/modeling_") || reModelCall.MatchString(f.src) || reFunctionalCall.MatchString(f.src) || strings.Contains(f.src, ".forward("):
		return PhaseForward
	}
	return ""
}

// reOptimizerInitFile is a file whose constructor builds an optimizer's
// partitions and states: DeepSpeed's ZeRO and bf16 optimizers.
var reOptimizerInitFile = regexp.MustCompile(`deepspeed/runtime/(?:zero/stage_1_and_2|zero/stage3|bf16_optimizer|fp16/fused_optimizer|fp16/unfused_optimizer)\.py`)

// optimizerInitFns are the functions of those files that create the fp32
// partitions and the optimizer states before the first step.
var optimizerInitFns = set("__init__", "_setup_for_real_optimizer", "_create_fp32_partitions", "_create_fp16_partitions_with_defragmentation",
	"initialize_optimizer_states", "_link_all_hp_params", "_configure_zero_optimizer", "_configure_bf16_optimizer", "_configure_fp16_optimizer",
	"_configure_optimizer", "_setup_for_real_optimizer_states")

// optimizerInit reports a frame that is building an optimizer: DeepSpeed's
// ZeRO or bf16 optimizer in its constructor, or the engine configuring it.
func optimizerInit(f frame) bool {
	p := strings.ReplaceAll(f.path, `\`, "/")
	return optimizerInitFns[f.fn] && (reOptimizerInitFile.MatchString(p) || strings.Contains(p, "deepspeed/runtime/engine.py") && strings.HasPrefix(f.fn, "_configure_"))
}

// modelConstruction reports a model's constructor putting its parameters
// on the device: an __init__ in a model file, or a Parameter made there.
func modelConstruction(f frame, p string) bool {
	if f.fn != "__init__" {
		return false
	}
	return strings.Contains(f.src, "Parameter(torch.empty(") || strings.Contains(p, "/models/") || strings.Contains(p, "/modeling_") || strings.Contains(p, "model_executor/")
}

// moduleConvert reports the source line of nn.Module.to's convert(), "return
// t.to(device, dtype if t.is_floating_point() ...)": a paste that kept only
// that line still shows the model being moved to the device.
func moduleConvert(src string) bool {
	return strings.Contains(src, "t.to(") && strings.Contains(src, "t.is_floating_point()")
}

// loadName reports a function named for loading a model or its weights.
func loadName(fn string) bool {
	return reLoadName.MatchString(fn) && !reDataName.MatchString(fn)
}

// reVLLMMethod is the method a vLLM worker names when it fails ("Exception
// in worker VllmWorkerProcess while processing method
// determine_num_available_blocks: CUDA out of memory...").
var reVLLMMethod = regexp.MustCompile(`while processing method (\w+)`)

func vllmMethodLoad(line string) bool {
	m := reVLLMMethod.FindStringSubmatch(line)
	return m != nil && vllmLoad(frame{fn: m[1]})
}

// vllmLoad reports frames of vLLM's start-up profiling, which runs the
// model (execute_model) but is the load phase.
func vllmLoad(f frame) bool {
	switch f.fn {
	case "profile_run", "determine_num_available_blocks", "_initialize_kv_caches", "initialize_cache", "determine_available_memory":
		return true
	}
	return false
}

// phaseFromFrames returns the innermost context phase, or forward when
// only forward frames are seen, with the frame that said so.
func phaseFromFrames(frames []frame) (string, string) {
	for _, f := range frames {
		if vllmLoad(f) {
			return PhaseLoad, describe(f)
		}
	}
	var fwd *frame
	inStep := false
	for i, f := range frames {
		p := framePhase(f)
		if (p == PhaseOptimizer || p == PhaseBackward) && inStep {
			p = ""
		}
		inStep = inStep || stepFns[f.fn]
		switch p {
		case "":
		case PhaseForward:
			if fwd == nil {
				fwd = &frames[i]
			}
		default:
			return p, describe(f)
		}
	}
	if fwd != nil {
		return PhaseForward, describe(*fwd)
	}
	return PhaseUnknown, ""
}

func describe(f frame) string {
	if i := strings.Index(f.src, "  #"); i > 0 {
		f.src = strings.TrimSpace(f.src[:i])
	}
	switch {
	case f.src != "" && f.fn != "":
		return "`" + trimTo(f.src, 80) + "` in " + f.fn + "()"
	case f.src != "":
		return "`" + trimTo(f.src, 80) + "`"
	}
	return "frame " + f.fn + "() in " + shortPath(f.path)
}

func trimTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func shortPath(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	if i := strings.Index(p, "site-packages/"); i >= 0 {
		return p[i+len("site-packages/"):]
	}
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// reTGIShardStart is TGI's launcher reporting a shard that died during
// start-up.
var reTGIShardStart = regexp.MustCompile(`ShardCannotStart|Shard \d+ failed to start`)

// phaseOf decides the phase from what the format offers: vLLM's engine
// start-up, TGI's spans, TF's op node, else the Python stack.
func phaseOf(sc *scan, a anchor, msg string, rep *Report) (string, string) {
	switch {
	case a.kind == kindGGML || a.kind == kindGGMLFollow || a.kind == kindCUDAError && rep.Extra["stack"] != nil:
		return ggmlPhase(sc, a)
	case a.kind == kindOOMKiller || a.kind == kindOOMKillerFollow || a.kind == kindKilled || a.kind == kindSIGKILL:
		return hostPhase(sc, a)
	case a.kind == kindDataLoader || a.kind == kindDataLoaderShm:
		// The innermost frame is where the main process noticed the dead
		// worker, not what filled the memory.
		return PhaseUnknown, ""
	case a.kind == kindHostRequires:
		return PhaseLoad, "Ollama refused to load the model"
	case a.kind == kindTensorRT && strings.Contains(sc.text, "Executor creation failed"):
		return PhaseLoad, "TensorRT-LLM could not create its executor at start-up"
	case a.kind == kindTensorRT && (reTRTBuild.MatchString(sc.text) || reTRTScratch.MatchString(sc.text)):
		return PhaseLoad, "TensorRT was building the engine"
	case a.kind == kindVLLMKV || a.kind == kindVLLMStartup || a.kind == kindSGLang || a.kind == kindVLLMNegativeKV:
		return PhaseLoad, "the server raised it while sizing its KV cache at start-up"
	case strings.Contains(sc.text, "when initializing the engine"):
		// vLLM re-raises an OOM of its start-up warm-up with this advice.
		return PhaseLoad, "vLLM raised it while initializing the engine"
	case vllmMethodLoad(sc.lines[sc.lineOf(a.pos)].text):
		return PhaseLoad, "a vLLM worker was profiling memory at start-up"
	case rep.Extra["subphase"] == "warmup":
		return PhaseLoad, "TGI warmup"
	case rep.Extra["subphase"] == "prefill" || rep.Extra["subphase"] == "decode":
		return PhaseGenerate, "TGI " + rep.Extra["subphase"].(string) + " span"
	case strings.Contains(sc.text, "Request failed during generation"):
		// TGI's router relays a generation request's failure so.
		return PhaseGenerate, "TGI: \"Request failed during generation\""
	case rep.Extra["stack"] == "text-generation-inference" && reTGIShardStart.MatchString(sc.text):
		// A shard that cannot start failed while loading its weights.
		return PhaseLoad, "TGI shard failed to start"
	case a.kind == kindTFWarning || a.kind == kindTFDriver:
		return PhaseUnknown, ""
	}
	if rep.Framework == FrameworkTensorFlow || a.kind == kindCuDNN {
		if node := tfNode(sc, a); node != "" {
			return nodePhase(node), "op node " + node
		}
		if m := reTFKernel.FindStringSubmatch(sc.lines[sc.lineOf(a.pos)].text); m != nil {
			return kernelPhase(m[1]), "op kernel " + m[1]
		}
		if m := reTFEagerOp.FindStringSubmatch(msg); m != nil && !strings.HasPrefix(m[1], "__inference") {
			return eagerOpPhase(m[1]), "eager op " + m[1]
		}
		if a.kind != kindCuDNN {
			return PhaseUnknown, ""
		}
	}
	frames := stackOf(sc, a)
	if a.kind.family() == kindNCCL.family() && !hasFrame(frames) {
		frames = ncclFrames(sc, a)
	}
	return phaseFromFrames(frames)
}

// ncclReach is how many lines after NCCL's debug lines torch's exception
// about them is looked for.
const ncclReach = 200

// ncclFrames is the traceback of torch's exception that reports NCCL's
// failure ("NCCL error in: ..., unhandled cuda error"): NCCL's own debug
// lines, which say why, come before it and have no frames of their own.
func ncclFrames(sc *scan, a anchor) []frame {
	li := sc.lineOf(a.pos)
	for k := li; k < len(sc.lines) && k <= li+ncclReach; k++ {
		if t := sc.lines[k].text; strings.Contains(t, "NCCL error") || strings.Contains(t, "DistBackendError") {
			if f := framesBefore(sc, k); hasFrame(f) {
				return f
			}
		}
	}
	return nil
}

// stackOf returns the traceback of the OOM at a, innermost frame first:
// the frames before its line (or on it, in a paste that lost its
// newlines), else those printed after it.
func stackOf(sc *scan, a anchor) []frame {
	li := sc.lineOf(a.pos)
	frames := framesInLine(sc.text[sc.starts[li]:a.pos])
	frames = append(frames, framesBefore(sc, li)...)
	if len(frames) == 0 || !hasFrame(frames) {
		if after := framesAfter(sc, li); len(after) > 0 {
			frames = append(frames, after...)
		}
	}
	return frames
}

func hasFrame(frames []frame) bool {
	for _, f := range frames {
		if f.fn != "" {
			return true
		}
	}
	return false
}

// nodePhase reads a TF op node name: gradients/... is backward, an
// .../Initializer/... variable init is model construction, optimizer slots
// are the update, and any other scoped layer op is forward.
func nodePhase(node string) string {
	switch {
	case strings.HasPrefix(node, "gradients") || strings.HasPrefix(node, "gradient_tape/") || strings.Contains(node, "/gradients/") || strings.Contains(node, "_grad/"):
		return PhaseBackward
	case strings.Contains(node, "/Initializer/"):
		return PhaseLoad
	case strings.Contains(node, "/Adam/") || strings.HasPrefix(node, "Adam/") || strings.Contains(node, "ApplyAdam") || strings.HasPrefix(node, "training/") ||
		strings.Contains(node, "/Momentum/") || strings.HasPrefix(node, "SGD/") || strings.HasPrefix(node, "RMSprop/"):
		return PhaseOptimizer
	case strings.Contains(node, "/"):
		return PhaseForward
	}
	return PhaseUnknown
}

// kernelPhase reads the op kernel file TF names ("conv_ops_3d"): gradient
// kernels are backward, training_ops the update, others forward ops.
func kernelPhase(k string) string {
	switch {
	case strings.Contains(k, "grad"):
		return PhaseBackward
	case strings.Contains(k, "training_ops"):
		return PhaseOptimizer
	}
	return PhaseForward
}

// eagerOpPhase reads a TF eager op type ("[Op:Conv2D]").
func eagerOpPhase(op string) string {
	switch {
	case strings.Contains(op, "Grad") || strings.Contains(op, "Backprop"):
		return PhaseBackward
	case strings.HasPrefix(op, "ResourceApply") || strings.HasPrefix(op, "Apply"):
		return PhaseOptimizer
	}
	return PhaseForward
}

// detectStack picks the idiom for fix snippets from what the paste shows.
func detectStack(text string, k kind) fix.Framework {
	lower := strings.ToLower(text)
	switch {
	case k == kindSGLang || strings.Contains(lower, "sglang"):
		return fix.FrameworkSGLang
	case k == kindTGI || isTGI(text):
		return fix.FrameworkTGI
	case k == kindVLLMKV || k == kindVLLMStartup || strings.Contains(lower, "vllm") || strings.Contains(text, "LLM engine (v"):
		return fix.FrameworkVLLM
	case strings.Contains(lower, "deepspeed"):
		return fix.FrameworkDeepSpeed
	case strings.Contains(lower, "lightning"):
		return fix.FrameworkLightning
	case strings.Contains(text, "transformers/trainer") || strings.Contains(text, `transformers\trainer`) ||
		strings.Contains(text, "/trl/") || strings.Contains(text, "accelerate/"):
		// PEFT alone is a model wrapper: the loop may be the user's own.
		return fix.FrameworkHF
	case (k == kindXLA || k == kindXLAHBM || k == kindXLAReserve) && isTensorFlow(text):
		// TensorFlow on a TPU reports through XLA too.
		return fix.FrameworkKeras
	case k == kindXLA || k == kindXLAHBM || k == kindXLAReserve || strings.Contains(lower, "jax") || strings.Contains(lower, "flax"):
		return fix.FrameworkJAX
	case k == kindTFTensor || k == kindTFWarning || k == kindTFDriver || k == kindTFEigen || strings.Contains(lower, "tensorflow") || strings.Contains(lower, "keras"):
		return fix.FrameworkKeras
	}
	return fix.FrameworkPyTorch
}
