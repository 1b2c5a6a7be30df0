package oom

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/fix"
)

// maxMessage bounds the text read as one OOM message.
const maxMessage = 4096

// message returns the OOM message that starts at a: the rest of its line
// and the continuation lines after it, up to the next anchor.
func (sc *scan) message(a anchor) string {
	end := len(sc.text)
	if i, _ := slices.BinarySearchFunc(sc.anchors, a.pos+1, func(b anchor, pos int) int { return b.pos - pos }); i < len(sc.anchors) {
		end = sc.anchors[i].pos
	}
	end = min(end, a.pos+maxMessage)
	li := sc.lineOf(a.pos)
	stop := sc.starts[li] + len(sc.lines[li].text)
	for k := li + 1; k < len(sc.lines) && k <= li+4; k++ {
		t := sc.lines[k].text
		// Traceback lines are indented by two or more; one blank is where a
		// console wrapped the message at a space. A console that re-flows
		// what it prints (Rich) pads a row to its width and indents the
		// next: a row that ended in blanks, mid-sentence, goes on.
		indented := strings.HasPrefix(t, "  ") || strings.HasPrefix(t, "\t")
		if strings.TrimSpace(t) == "" || isFrameLine(t) || startsRecord(t) || indented && !reflowed(sc.lines[k-1]) {
			break
		}
		stop = sc.starts[k] + len(t)
	}
	return joinRows(sc.text[a.pos:min(end, stop)])
}

// reflowed reports a row a re-flowing console ended: it was padded with
// blanks and stops mid-sentence.
func reflowed(l line) bool {
	t := strings.TrimRight(l.text, " ")
	return l.space && t != "" && !strings.ContainsRune(".:)", rune(t[len(t)-1]))
}

// joinRows puts the rows of a message on one line. Rows join with a blank
// (a row's indentation dropped), except where a wrap cut a number ("9." |
// "18 GiB"), whose digits join.
func joinRows(s string) string {
	if strings.IndexByte(s, '\n') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\n' {
			b.WriteByte(s[i])
			continue
		}
		var prev byte
		if i > 0 {
			prev = s[i-1]
		}
		for i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '\t') {
			i++
		}
		if i+1 < len(s) && (isDigit(prev) || prev == '.') && isDigit(s[i+1]) {
			continue
		}
		b.WriteByte(' ')
	}
	return b.String()
}

// Field patterns. sizePattern contributes two groups (number, unit).
var (
	reTried       = regexp.MustCompile(`Tried to allocate\s+` + sizePattern)
	reTorchPrefix = regexp.MustCompile(`(?:\b(CUDA|HIP|XPU|NPU|MTIA|GPU)\s)?out of memory`)
	reNewTotal    = regexp.MustCompile(`(?:GPU|XPU|NPU)\s+(\d+) has a total capac\w*\s+of\s+` + sizePattern)
	// reNewDevice reads the device of a sentence-form message cut before
	// the capacity's unit.
	reNewDevice   = regexp.MustCompile(`(?:GPU|XPU|NPU)\s+(\d+) has a total capac`)
	reNewFree     = regexp.MustCompile(`of which\s+` + sizePattern + `\s+is free`)
	reProcess     = regexp.MustCompile(`Process\s+(\d+)\s+has\s+` + sizePattern + `\s+memory in use`)
	reThisProcess = regexp.MustCompile(`this process has\s+` + sizePattern + `\s+memory in use`)
	reAllocated   = regexp.MustCompile(`Of the allocated memory\s+` + sizePattern + `\s+is allocated by`)
	rePrivate     = regexp.MustCompile(sizePattern + `\s+allocated in private pools`)
	reUnallocated = regexp.MustCompile(sizePattern + `\s+is reserved by\s+\w+\s+but unallocated`)
	reAllowed     = regexp.MustCompile(sizePattern + `\s+allowed;`)
	reOldDevice   = regexp.MustCompile(`\((GPU|NPU|XPU)\s+(\d+);`)
	reOldTotal    = regexp.MustCompile(sizePattern + `\s+total capacity`)
	reOldAlloc    = regexp.MustCompile(sizePattern + `\s+already allocated`)
	reOldFree     = regexp.MustCompile(sizePattern + `\s+free\b`)
	reOldReserved = regexp.MustCompile(sizePattern + `\s+reserved in total`)
	reOldCached   = regexp.MustCompile(sizePattern + `\s+cached\)`)

	// The torch<=2.0 memory-fraction message puts one field per line
	// ("Requested               : 4.83 GiB"); a Rust Debug rendering keeps
	// them on one line, joined by a literal \n.
	reLimitDevice    = regexp.MustCompile(`Allocation on device (\d+) would exceed`)
	reLimitAllocated = regexp.MustCompile(`Currently allocated\s*:\s*` + sizePattern)
	reLimitRequested = regexp.MustCompile(`Requested\s*:\s*` + sizePattern)
	reLimitDevTotal  = regexp.MustCompile(`Device limit\s*:\s*` + sizePattern)
	reLimitFree      = regexp.MustCompile(`Free \(according to CUDA\)\s*:\s*` + sizePattern)
	reLimitAllowed   = regexp.MustCompile(`memory fraction\)(?:\s|\\n)*:\s*` + sizePattern)

	reMPSAllocated = regexp.MustCompile(`MPS allocated:\s*` + sizePattern)
	reMPSOther     = regexp.MustCompile(`other allocations:\s*` + sizePattern)
	reMPSMax       = regexp.MustCompile(`max allowed:\s*` + sizePattern)
	reMPSPool      = regexp.MustCompile(`on (\w+) pool`)

	reTFShape     = regexp.MustCompile(`OOM when allocating tensor (?:with|of) shape ?(\[[^\]\n]*\])?`)
	reTFType      = regexp.MustCompile(`and type (\w+)`)
	reTFDevice    = regexp.MustCompile(`device:(GPU|CPU):(\d+)|/(gpu|cpu):(\d+)`)
	reTFAllocator = regexp.MustCompile(`(?:by allocator|Allocator \()\s*(\w+)`)
	reBFCName     = regexp.MustCompile(`\b(GPU|gpu)_(\d+)_bfc\b`)
	reTFNode      = regexp.MustCompile(`\[\[Node: ([^\s=\]]+)|\{\{node ([^}]+)\}\}|Node: '([^']+)'|\[\[node ([^\s\]]+)`)
	reTFKernel    = regexp.MustCompile(`OP_REQUIRES failed at (\w+)\.cc`)
	reTFEagerOp   = regexp.MustCompile(`\[Op:(\w+)\]`)
	reTFWarnSize  = regexp.MustCompile(`ran out of memory trying to allocate\s+` + sizePattern)
	reDriverSize  = regexp.MustCompile(`failed to allocate\s+` + sizePattern + `\s*(?:\((\d+) bytes\))?`)
	reHostSize    = regexp.MustCompile(`failed to alloc (\d+) bytes on host`)
	reEigenSize   = regexp.MustCompile(`when allocating (\d+)`)
	reBFCStat     = regexp.MustCompile(`(?m)^\s*(Limit|InUse|MaxInUse|NumAllocs|MaxAllocSize):\s+(\d+)\s*$`)

	reXLABytes     = regexp.MustCompile(`Out of memory (?:while trying to allocate|allocating)\s+` + sizePattern)
	reXLARequest   = regexp.MustCompile(`Failed to allocate request for\s+` + sizePattern + `(?:\s*\((\d+)B\))?(?:\s+on device ordinal (\d+))?`)
	reXLAUsed      = regexp.MustCompile(`Used\s+` + sizePattern + `\s+of\s+` + sizePattern + `\s+(\w+)`)
	reXLAExceeded  = regexp.MustCompile(`Exceeded \w+ capacity by\s+` + sizePattern)
	reXLACode      = regexp.MustCompile(`\b(E\d{3,5}: \w+)`)
	reXLAShape     = regexp.MustCompile(`Shape:\s*(\w+\[[\d,]*\])`)
	reXLAReserve   = regexp.MustCompile(`Attempting to (?:reserve|allocate)\s+` + sizePattern)
	reXLAFree      = regexp.MustCompile(`There (?:are|is)\s+` + sizePattern + `\s+free`)
	reRoundedTo    = regexp.MustCompile(`\(rounded to (\d+)\)`)
	reVLLMFree     = regexp.MustCompile(`Free memory on device (?:(\w+):(\d+) )?\((\d+(?:\.\d+)?)/(\d+(?:\.\d+)?) (GiB|MiB|GB)\)`)
	reTPUIndex     = regexp.MustCompile(`\bTPU[_:](\d+)\b`)
	reTPUException = regexp.MustCompile(`Exception in device=TPU:(\d+)`)

	reCPUBytes   = regexp.MustCompile(`tried to allocate (\d+) bytes`)
	reAllocating = regexp.MustCompile(`(?i)allocat\w*\s+` + sizePattern)

	reVLLMMaxSeq   = regexp.MustCompile(`max seq len \((\d+)\)`)
	reVLLMKVTokens = regexp.MustCompile(`stored in KV cache \((\d+)\)`)
	reVLLMBlocks   = regexp.MustCompile(`# GPU blocks: (\d+)`)
	reVLLMTotal    = regexp.MustCompile(`total_gpu_memory\s*[=(]\s*` + sizePattern)
	reVLLMKVSize   = regexp.MustCompile(`kv_cache_size\s*[=(]\s*` + sizePattern)
	reVLLMPeak     = regexp.MustCompile(`peak_torch_memory\s*[=(]\s*` + sizePattern)
	reVLLMUtil     = regexp.MustCompile(`(?i)gpu[_ ]memory[_ ]utilization\s*[=(]\s*(0?\.\d+|1\.0+|1)\b`)
	reVLLMWeights  = regexp.MustCompile(`Loading model weights took (\d+(?:\.\d+)? GB)`)
	reVLLMEstimate = regexp.MustCompile(`estimated maximum model length is (\d+)`)
	// reVLLMUtilFlag is the utilization on a command line or in a config
	// repr: "--gpu-memory-utilization 0.9", "gpu_memory_utilization=0.95".
	reVLLMUtilFlag = regexp.MustCompile(`(?i)--gpu[-_]memory[-_]utilization[= ](0?\.\d+|1\.0*)\b`)
	// The opening parenthesis is gone where the message was reflowed
	// ("max seq len (1048576),\n22.5 GiB KV cache is needed").
	reVLLMV1 = regexp.MustCompile(`\(?` + sizePattern + ` KV cache is needed, which is larger than the available KV cache memory \(` + sizePattern + `\)`)

	// reRawCUDAOOM is the CUDA runtime's allocation error (code 2,
	// cudaErrorMemoryAllocation; the driver's CUDA_ERROR_OUT_OF_MEMORY) as
	// a library words it: spconv's "cuda failed with error 2 out of memory".
	reRawCUDAOOM = regexp.MustCompile(`(?i)cuda\b[^\n]{0,60}\berror[ =(]*2\b|cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY`)

	reTGIPrefill = regexp.MustCompile(`Not enough memory to handle (\d+) prefill tokens`)
)

// sizeAt reads the size whose number is group g of m (the unit is g+1).
func sizeAt(m []string, g int) *int64 {
	if m == nil || g+1 >= len(m) || m[g] == "" {
		return nil
	}
	if n, ok := parseSize(m[g], m[g+1]); ok {
		return &n
	}
	return nil
}

func ptrSize(num, unit string) (*int64, bool) {
	n, ok := parseSize(num, unit)
	if !ok {
		return nil, false
	}
	return &n, true
}

func findSize(re *regexp.Regexp, s string, g int) *int64 { return sizeAt(re.FindStringSubmatch(s), g) }

func str(s string) *string { return &s }

func cudaDevice(idx string) *string { return str("cuda:" + idx) }

// extract fills rep from the anchor a of scan sc: the anchor's own reader
// (extractors), then what every paste gives (finishExtract).
func extract(sc *scan, a anchor, rep *Report) {
	msg := sc.message(a)
	rep.Stack = detectStack(sc.text, a.kind)
	rep.Framework = FrameworkPyTorch
	rep.Format = FormatOther
	if read := extractors[a.kind]; read != nil {
		read(sc, a, msg, rep)
	}
	finishExtract(sc, a, msg, rep)
}

// extractors read each kind of anchor's message into the report.
var extractors map[kind]func(sc *scan, a anchor, msg string, rep *Report)

func init() {
	extractors = map[kind]func(sc *scan, a anchor, msg string, rep *Report){
		kindTorch:           extractTorchAnchor,
		kindTorchBare:       extractTorchAnchor,
		kindMPS:             extractMPSAnchor,
		kindCUDAError:       extractCUDAError,
		kindTHC:             extractCUDAError,
		kindGGML:            extractGGMLAnchor,
		kindGGMLFollow:      extractGGMLAnchor,
		kindNCCL:            extractNCCLAnchor,
		kindNCCLFollow:      extractNCCLAnchor,
		kindOOMKiller:       extractHostAnchor,
		kindOOMKillerFollow: extractHostAnchor,
		kindKilled:          extractHostAnchor,
		kindSIGKILL:         extractHostAnchor,
		kindRustAlloc:       extractHostAnchor,
		kindBadAlloc:        extractHostAnchor,
		kindNumpyMemory:     extractHostAnchor,
		kindPyMemory:        extractHostAnchor,
		kindDataLoaderShm:   extractHostAnchor,
		kindHostRequires:    extractHostAnchor,
		kindAllocOnDevice:   extractAllocOnDevice,
		kindReport:          extractAllocOnDevice,
		kindTFTensor:        extractTFAnchor,
		kindTFWarning:       extractTFAnchor,
		kindTFDriver:        extractTFAnchor,
		kindTFEigen:         extractTFAnchor,
		kindPinnedHost:      extractPinnedHost,
		kindXLA:             extractXLAAnchor,
		kindXLAHBM:          extractXLAAnchor,
		kindXLAReserve:      extractXLAAnchor,
		kindCPU:             extractCPU,
		kindVLLMKV:          extractVLLMKV,
		kindVLLMNegativeKV:  extractVLLMNegative,
		kindVLLMCumem:       extractVLLMCumem,
		kindCUDADriver:      extractDriverAnchor,
		kindCuPy:            extractCuPyAnchor,
		kindTensorRT:        extractTensorRTAnchor,
		kindVLLMStartup:     extractVLLMStartup,
		kindTGI:             extractTGI,
		kindSGLang:          extractSGLang,
		kindCuBLAS:          extractCuBLAS,
		kindCuDNN:           extractCuDNN,
		kindDataLoader:      extractDataLoader,
		kindHostKilled:      extractHostKilled,
		kindTorchLimit:      extractTorchLimitAnchor,
		kindDriverCode:      extractDriverCode,
		kindRMM:             extractRMM,
		kindFallback:        extractFallback,
	}
}

// finishExtract reads what any anchor's paste says beyond its message:
// TGI's stack, the phase, the facts, the hints, the job and a second
// error.
func finishExtract(sc *scan, a anchor, msg string, rep *Report) {
	if _, ok := rep.Extra["stack"]; !ok && isTGI(sc.text) {
		rep.Extra["stack"] = "text-generation-inference"
		if sub := tgiSubphase(sc.lines[sc.lineOf(a.pos)].text); sub != "" {
			rep.Extra["subphase"] = sub
		} else if sub := tgiStage(sc.text); sub != "" {
			rep.Extra["subphase"] = sub
		}
	}
	if rep.Framework == FrameworkVLLM && rep.Stack == fix.FrameworkPyTorch {
		// vLLM named only by a worker prefix the normaliser stripped.
		rep.Stack = fix.FrameworkVLLM
	}
	readReport(sc, a, rep)
	rep.Phase, rep.PhaseEvidence = phaseOf(sc, a, msg, rep)
	frames := stackOf(sc, a)
	rep.Facts = readFacts(sc.text, a.pos, frames)
	if a.kind.family() == 1 {
		rep.Facts.GGMLBuffer = ggmlBuffer(sc, a)
	}
	switch rep.Extra["stack"] {
	case StackLlamaCPP:
		rep.Stack = fix.FrameworkLlamaCPP
	case StackOllama:
		rep.Stack = fix.FrameworkOllama
	}
	rep.ModelHint, rep.GPUHint = hints(sc.text[max(0, a.pos-hintReach):min(len(sc.text), a.pos+hintReach)])
	finishJob(sc, a, rep, frames)
	secondError(sc, a, rep)
}

func extractTorchAnchor(sc *scan, a anchor, msg string, rep *Report) {
	extractTorch(sc, sc.text[max(0, a.pos-120):a.pos], msg, rep)
}

func extractMPSAnchor(sc *scan, a anchor, msg string, rep *Report) {
	extractMPS(msg, rep)
}

func extractCUDAError(sc *scan, a anchor, msg string, rep *Report) {
	rep.Framework = sc.torchish()
	switch {
	case strings.Contains(msg, "HIP error"):
		rep.Framework = FrameworkROCm
	case isLuaTorch(sc.text):
		rep.Framework = FrameworkOther
	}
	rep.Extra["kind"] = KindCUDAError
	if a.kind == kindTHC {
		rep.Extra["kind"] = "thc-cuda-runtime-error-2"
	}
	if m := reGGMLCurrentDevice.FindStringSubmatch(sc.eventText(a)); m != nil && strings.HasPrefix(m[2], "ggml") || isGGML(sc.text) {
		// ggml's CUDA error (relayed by Ollama as "llama runner process
		// has terminated: CUDA error: out of memory") names the device
		// in its next line.
		rep.Framework = FrameworkOther
		rep.Extra["stack"] = ggmlStack(sc.text)
		if m != nil {
			rep.Device = cudaDevice(m[1])
		}
	}
}

func extractGGMLAnchor(sc *scan, a anchor, msg string, rep *Report) {
	extractGGML(sc, a, rep)
}

func extractNCCLAnchor(sc *scan, a anchor, msg string, rep *Report) {
	extractNCCL(sc, a, rep)
}

func extractHostAnchor(sc *scan, a anchor, msg string, rep *Report) {
	extractHost(sc, a, rep)
}

func extractAllocOnDevice(sc *scan, a anchor, msg string, rep *Report) {
	rep.Framework = sc.torchish()
	rep.Extra["kind"] = KindAllocOnDevice
}

func extractTFAnchor(sc *scan, a anchor, msg string, rep *Report) {
	extractTF(sc, a, msg, rep)
}

func extractPinnedHost(sc *scan, a anchor, msg string, rep *Report) {
	rep.Framework = FrameworkTensorFlow
	if isJAX(sc.text) {
		rep.Framework = FrameworkJAX
	}
	rep.Extra["kind"] = "pinned-host-alloc-failed"
	sizes := driverSizes(sc, kindPinnedHost)
	if len(sizes) > 0 {
		rep.TriedToAllocateBytes = &sizes[0]
	}
	if len(sizes) > 1 {
		rep.Extra["sizes"] = sizes
	}
}

func extractXLAAnchor(sc *scan, a anchor, msg string, rep *Report) {
	extractXLA(sc, a, msg, rep)
}

func extractCPU(sc *scan, a anchor, msg string, rep *Report) {
	rep.Format = FormatCPUAlloc
	rep.Device = str("cpu")
	if m := reCPUBytes.FindStringSubmatch(msg); m != nil {
		if n, ok := parseInt(m[1]); ok {
			rep.TriedToAllocateBytes = &n
		}
	}
}

func extractVLLMKV(sc *scan, a anchor, msg string, rep *Report) {
	extractVLLM(sc, sc.headedLine(a), msg, rep)
}

func extractVLLMNegative(sc *scan, a anchor, msg string, rep *Report) {
	extractVLLM(sc, sc.headedLine(a), msg, rep)
	extractVLLMNegativeKV(sc, a, rep)
}

func extractVLLMCumem(sc *scan, a anchor, msg string, rep *Report) {
	rep.Framework = FrameworkVLLM
	rep.Extra["kind"] = KindVLLMCumem
}

func extractDriverAnchor(sc *scan, a anchor, msg string, rep *Report) {
	extractDriver(sc, a, rep)
}

func extractCuPyAnchor(sc *scan, a anchor, msg string, rep *Report) {
	extractCuPy(sc, a, rep)
}

func extractTensorRTAnchor(sc *scan, a anchor, msg string, rep *Report) {
	extractTensorRT(sc, a, rep)
}

func extractVLLMStartup(sc *scan, a anchor, msg string, rep *Report) {
	rep.Framework = FrameworkVLLM
	if m := reVLLMFree.FindStringSubmatch(msg); m != nil {
		rep.FreeBytes, _ = ptrSize(m[3], m[5])
		rep.TotalCapacityBytes, _ = ptrSize(m[4], m[5])
		// vLLM names ROCm GPUs cuda too; other backends keep their name.
		if m[1] != "" {
			rep.Device = str(m[1] + ":" + m[2])
		}
	}
	if m := reVLLMUtil.FindStringSubmatch(msg); m != nil {
		if f, err := strconv.ParseFloat(m[1], 64); err == nil {
			rep.Extra["gpu_memory_utilization"] = f
		}
	}
}

func extractTGI(sc *scan, a anchor, msg string, rep *Report) {
	rep.Framework = FrameworkOther
	rep.Extra["stack"] = "text-generation-inference"
	if m := reTGIPrefill.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		rep.Extra["prefill_tokens"] = n
	}
	if strings.Contains(sc.text, "Warmup") || strings.Contains(sc.text, "warmup") {
		rep.Extra["subphase"] = "warmup"
	}
}

func extractSGLang(sc *scan, a anchor, msg string, rep *Report) {
	rep.Framework = FrameworkOther
	rep.Extra["stack"] = "sglang"
}

func extractCuBLAS(sc *scan, a anchor, msg string, rep *Report) {
	rep.Format = FormatCuBLAS
	rep.Framework = sc.torchish()
}

func extractCuDNN(sc *scan, a anchor, msg string, rep *Report) {
	rep.Framework = sc.torchish()
	rep.Extra["kind"] = "cudnn-alloc-failed"
}

func extractDataLoader(sc *scan, a anchor, msg string, rep *Report) {
	extractHost(sc, a, rep)
	rep.Framework = FrameworkPyTorch
}

func extractHostKilled(sc *scan, a anchor, msg string, rep *Report) {
	rep.Framework = FrameworkOther
	rep.Device = str("cpu")
	rep.Extra["kind"] = "oom-killed"
}

func extractTorchLimitAnchor(sc *scan, a anchor, msg string, rep *Report) {
	extractTorchLimit(sc, a, rep)
}

func extractFallback(sc *scan, a anchor, msg string, rep *Report) {
	// An unknown wording: say only what the text shows.
	rep.Framework = FrameworkOther
	if strings.Contains(sc.text, "torch") {
		rep.Framework = sc.torchish()
	}
	rep.Extra["kind"] = "unrecognised-wording"
	line := sc.lines[sc.lineOf(a.pos)].text
	if reRawCUDAOOM.MatchString(line) {
		// CUDA's own allocation error in a library's wording.
		rep.Extra["kind"] = KindCUDAError
	}
	rep.TriedToAllocateBytes = findSize(reAllocating, line, 1)
	if reSGLangSlots.MatchString(line) {
		// SGLang's scheduler ran out of request slots, not bytes.
		rep.Framework = FrameworkOther
		rep.Extra["stack"] = "sglang"
		rep.Extra["kind"] = KindSGLangSlots
	}
}

// KindSGLangSlots is SGLang's request-slot pool running out
// ("alloc_req_slots runs out of memory").
const KindSGLangSlots = "sglang-request-slots"

var reSGLangSlots = regexp.MustCompile(`alloc_req_slots runs out of memory|req_to_token_pool[^\n]{0,80}out of memory`)

// extractTorch reads both PyTorch caching-allocator forms (and their HIP,
// XPU and NPU variants).
func extractTorch(sc *scan, lookback, msg string, rep *Report) {
	prefix := ""
	if m := reTorchPrefix.FindStringSubmatch(msg); m != nil {
		prefix = m[1]
	}
	if prefix == "" && lookback != "" {
		// A bare "Tried to allocate" whose "CUDA out of memory." ended the
		// line before.
		if ms := reTorchPrefix.FindAllStringSubmatch(lookback, -1); ms != nil {
			prefix = ms[len(ms)-1][1]
		}
	}
	if prefix == "" && sc.mentionsXPU() {
		prefix = "XPU"
	}
	rep.TriedToAllocateBytes = findSize(reTried, msg, 1)
	newForm := reNewTotal.MatchString(msg)
	oldForm := !newForm && reOldDevice.MatchString(msg)
	// A message cut after the request still shows its generation: the
	// sentence form puts a full stop after the size, the old one "(GPU".
	cutNew, cutOld := false, false
	if loc := reTried.FindStringIndex(msg); loc != nil && !newForm && !oldForm {
		rest := strings.TrimLeft(msg[loc[1]:], " ")
		cutNew, cutOld = strings.HasPrefix(rest, "."), strings.HasPrefix(rest, "(")
	}
	idx := ""
	switch {
	case newForm:
		m := reNewTotal.FindStringSubmatch(msg)
		idx = m[1]
		rep.TotalCapacityBytes = sizeAt(m, 2)
		rep.FreeBytes = findSize(reNewFree, msg, 1)
		for _, p := range reProcess.FindAllStringSubmatch(msg, -1) {
			pid, _ := strconv.Atoi(p[1])
			if n := sizeAt(p, 2); n != nil {
				rep.OtherProcesses = append(rep.OtherProcesses, OtherProcess{PID: pid, Bytes: *n})
			}
		}
		rep.ProcessInUseBytes = findSize(reThisProcess, msg, 1)
		rep.AllocatedByFrameworkBytes = findSize(reAllocated, msg, 1)
		rep.ReservedUnallocatedBytes = findSize(reUnallocated, msg, 1)
		if n := findSize(rePrivate, msg, 1); n != nil {
			rep.Extra["private_pools_bytes"] = *n
		}
		if n := findSize(reAllowed, msg, 1); n != nil {
			rep.Extra["allowed_bytes"] = *n
		}
	case oldForm:
		m := reOldDevice.FindStringSubmatch(msg)
		idx = m[2]
		if prefix == "" && m[1] != "GPU" {
			prefix = m[1]
		}
		rep.TotalCapacityBytes = findSize(reOldTotal, msg, 1)
		rep.AllocatedByFrameworkBytes = findSize(reOldAlloc, msg, 1)
		rep.FreeBytes = findSize(reOldFree, msg, 1)
		rep.ReservedByFrameworkBytes = findSize(reOldReserved, msg, 1)
		if n := findSize(reAllowed, msg, 1); n != nil {
			rep.Extra["allowed_bytes"] = *n
		}
		if n := findSize(reOldCached, msg, 1); n != nil {
			rep.ReservedUnallocatedBytes = n
			rep.Extra["cached_label"] = true
		}
	}
	switch prefix {
	case "HIP":
		rep.Framework = FrameworkROCm
		rep.Format = FormatHIP
	case "XPU":
		rep.Format = FormatOther
		rep.Extra["backend"] = "xpu"
		if oldForm {
			rep.Extra["backend"] = "xpu-ipex-old"
		}
		if idx != "" {
			rep.Device = str("xpu:" + idx)
		}
		return
	default:
		rep.Framework = sc.torchish()
		switch {
		case newForm || cutNew:
			rep.Format = FormatPyTorchNew
		case oldForm || cutOld:
			rep.Format = FormatPyTorchOld
		}
	}
	if m := reNewDevice.FindStringSubmatch(msg); idx == "" && m != nil && (cutNew || newForm) {
		idx = m[1]
	}
	if idx != "" && prefix != "NPU" {
		rep.Device = cudaDevice(idx)
	}
}

// limitReach is how far after the anchor the fields of the
// memory-fraction message are read: it spans six short lines.
const limitReach = 768

// extractTorchLimit reads the message the caching allocator of torch<=2.0
// raises when a per-process memory fraction is set. "Device limit" is the
// device's total memory; the fraction's cap goes in extra.
func extractTorchLimit(sc *scan, a anchor, rep *Report) {
	rep.Framework = sc.torchish()
	t := sc.text[a.pos:min(len(sc.text), a.pos+limitReach)]
	if m := reLimitDevice.FindStringSubmatch(t); m != nil {
		rep.Device = cudaDevice(m[1])
	}
	rep.TriedToAllocateBytes = findSize(reLimitRequested, t, 1)
	rep.AllocatedByFrameworkBytes = findSize(reLimitAllocated, t, 1)
	rep.TotalCapacityBytes = findSize(reLimitDevTotal, t, 1)
	rep.FreeBytes = findSize(reLimitFree, t, 1)
	if n := findSize(reLimitAllowed, t, 1); n != nil {
		rep.Extra["allowed_bytes"] = *n
	}
}

func extractMPS(msg string, rep *Report) {
	rep.Framework = FrameworkMPS
	rep.Format = FormatMPS
	rep.Device = str("mps")
	rep.AllocatedByFrameworkBytes = findSize(reMPSAllocated, msg, 1)
	rep.TotalCapacityBytes = findSize(reMPSMax, msg, 1)
	rep.TriedToAllocateBytes = findSize(reTried, msg, 1)
	if n := findSize(reMPSOther, msg, 1); n != nil {
		rep.Extra["mps_other_allocations"] = *n
	}
	if m := reMPSPool.FindStringSubmatch(msg); m != nil {
		rep.Extra["mps_pool"] = m[1]
	}
}

// extractTF reads TensorFlow's BFC allocator messages, its StreamExecutor
// driver failures and the Eigen allocator's fatal line.
func extractTF(sc *scan, a anchor, msg string, rep *Report) {
	rep.Framework = FrameworkTensorFlow
	if a.kind == kindTFDriver && isJAX(sc.text) {
		rep.Framework = FrameworkJAX
	}
	rep.Format = FormatTFBFC
	switch a.kind {
	case kindTFEigen:
		rep.Format = FormatOther
		rep.Extra["kind"] = "tf-eigen-allocator-fatal"
		if m := reEigenSize.FindStringSubmatch(msg); m != nil {
			if n, ok := parseInt(m[1]); ok {
				rep.TriedToAllocateBytes = &n
			}
		}
		return
	case kindTFWarning:
		rep.TriedToAllocateBytes = findSize(reTFWarnSize, msg, 1)
		if m := reRoundedTo.FindStringSubmatch(msg); m != nil {
			if n, ok := parseInt(m[1]); ok {
				rep.TriedToAllocateBytes = &n
			}
		}
		if isJAX(sc.text) || strings.Contains(sc.text, "external/xla") {
			// XLA's GPU allocator is TF's BFC; alone it is JAX's warning.
			rep.Framework = FrameworkJAX
		}
		rep.Extra["non_fatal"] = true
	case kindTFDriver:
		sizes := driverSizes(sc, kindTFDriver)
		if len(sizes) > 0 {
			rep.TriedToAllocateBytes = &sizes[0]
		}
		if !reBFCName.MatchString(sc.text) {
			rep.Format = FormatOther
			rep.Extra["kind"] = "tf-cuda-driver-failed-to-allocate"
			return
		}
		if len(sizes) > 1 {
			rep.Extra["driver_failed_allocs"] = sizes
		}
		if strings.Contains(sc.text, "not a failure") {
			rep.Extra["non_fatal_lines"] = true
		}
	case kindTFTensor:
		if m := reTFShape.FindStringSubmatch(msg); m != nil {
			rep.Extra["shape"] = parseShape(m[1])
		}
		if m := reTFType.FindStringSubmatch(msg); m != nil {
			rep.Extra["dtype"] = m[1]
		}
	}
	if m := reTFAllocator.FindStringSubmatch(msg); m != nil {
		rep.Extra["allocator"] = m[1]
	} else if m := reBFCName.FindString(sc.text); m != "" && a.kind != kindTFTensor {
		rep.Extra["allocator"] = m
	}
	rep.Device = tfDevice(sc, a, msg)
	if node := tfNode(sc, a); node != "" && a.kind == kindTFTensor {
		rep.Extra["op_node"] = node
	}
	if a.kind == kindTFTensor && (strings.Contains(sc.text, ".fit(") || strings.Contains(sc.text, "train_function")) {
		rep.Extra["training_step"] = true
	}
	readBFCStats(sc, a, rep)
}

// parseShape turns "[64,2016,9,9]" into []int; no brackets gives nil
// (TF 0.x printed nothing after "shape").
func parseShape(s string) any {
	if s == "" {
		return nil
	}
	dims := []int{}
	for f := range strings.SplitSeq(strings.Trim(s, "[]"), ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil
		}
		dims = append(dims, n)
	}
	return dims
}

// tfDevice reads the GPU from the message, the allocator name, or the
// _device of the node line that follows.
func tfDevice(sc *scan, a anchor, msg string) *string {
	if d := tfDeviceIn(msg); d != nil {
		return d
	}
	if m := reBFCName.FindStringSubmatch(sc.text); m != nil {
		return cudaDevice(m[2])
	}
	li := sc.lineOf(a.pos)
	for k := li; k < len(sc.lines) && k <= li+6; k++ {
		if d := tfDeviceIn(sc.lines[k].text); d != nil {
			return d
		}
	}
	return nil
}

func tfDeviceIn(s string) *string {
	if m := reBFCName.FindStringSubmatch(s); m != nil {
		return cudaDevice(m[2])
	}
	m := reTFDevice.FindStringSubmatch(s)
	switch {
	case m == nil:
		return nil
	case m[1] == "GPU":
		return cudaDevice(m[2])
	case m[3] == "gpu":
		return cudaDevice(m[4])
	}
	return str("cpu")
}

// tfNode returns the first op node named after the OOM line (the failing
// op; later nodes are consumers), or one named just before it (cuDNN).
func tfNode(sc *scan, a anchor) string {
	li := sc.lineOf(a.pos)
	for k := li; k < len(sc.lines) && k <= li+8; k++ {
		if n := nodeIn(sc.lines[k].text); n != "" {
			return n
		}
	}
	for k := li - 1; k >= 0 && k >= li-4; k-- {
		if n := nodeIn(sc.lines[k].text); n != "" {
			return n
		}
	}
	return ""
}

func nodeIn(s string) string {
	m := reTFNode.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	return m[1] + m[2] + m[3] + m[4]
}

// readBFCStats reads the allocator's "Stats:" block printed before the
// OOM: Limit is the allocator's capacity, InUse what it has allocated.
func readBFCStats(sc *scan, a anchor, rep *Report) {
	lo := max(0, a.pos-8192)
	stats := map[string]int64{}
	for _, m := range reBFCStat.FindAllStringSubmatch(sc.text[lo:a.pos], -1) {
		if n, ok := parseInt(m[2]); ok {
			stats[m[1]] = n
		}
	}
	limit, hasLimit := stats["Limit"]
	switch {
	case hasLimit:
		rep.TotalCapacityBytes = &limit
		if n, ok := stats["InUse"]; ok {
			rep.AllocatedByFrameworkBytes = &n
		}
		rep.Extra["bfc_stats"] = stats
	case stats["MaxAllocSize"] > 0:
		rep.Extra["bfc_max_alloc_size"] = stats["MaxAllocSize"]
	}
}

// driverSizes lists the byte counts of every driver failure of kind k in
// the scan (TF retries with smaller sizes; exact counts preferred).
func driverSizes(sc *scan, k kind) []int64 {
	var out []int64
	for _, b := range sc.anchors {
		if b.kind != k {
			continue
		}
		li := sc.lineOf(b.pos)
		t := sc.text[b.pos : sc.starts[li]+len(sc.lines[li].text)]
		if k == kindPinnedHost {
			if m := reHostSize.FindStringSubmatch(t); m != nil {
				if n, ok := parseInt(m[1]); ok {
					out = append(out, n)
				}
			}
			continue
		}
		m := reDriverSize.FindStringSubmatch(t)
		if m == nil {
			continue
		}
		if m[3] != "" {
			if n, ok := parseInt(m[3]); ok {
				out = append(out, n)
				continue
			}
		}
		if n := sizeAt(m, 1); n != nil {
			out = append(out, *n)
		}
	}
	return out
}

// xlaReach is how far after a TPU HBM message its own lines are read.
const xlaReach = 512

// extractXLA reads JAX/XLA's GPU allocator and TPU HBM messages.
func extractXLA(sc *scan, a anchor, msg string, rep *Report) {
	rep.Format = FormatXLA
	switch {
	case strings.Contains(strings.ToLower(sc.text), "vllm"):
		rep.Framework = FrameworkVLLM
	case strings.Contains(sc.text, "LoadError") || strings.Contains(sc.text, ".jl:"):
		rep.Framework = FrameworkOther
	case isTorchXLA(sc.text):
		rep.Framework = FrameworkPyTorch
	case isTensorFlow(sc.text):
		// TensorFlow on a TPU reports HBM through the same XLA compiler.
		rep.Framework = FrameworkTensorFlow
	default:
		rep.Framework = FrameworkJAX
	}
	tpu := false
	switch a.kind {
	case kindXLA:
		if m := reXLARequest.FindStringSubmatch(msg); m != nil {
			rep.TriedToAllocateBytes = sizeAt(m, 1)
			if n, ok := parseInt(m[3]); ok {
				rep.TriedToAllocateBytes = &n
			}
			if m[4] != "" {
				rep.Device = cudaDevice(m[4])
			}
		} else {
			rep.TriedToAllocateBytes = findSize(reXLABytes, msg, 1)
		}
	case kindXLAHBM:
		tpu = true
		if m := reXLAUsed.FindStringSubmatch(msg); m != nil {
			rep.TotalCapacityBytes = sizeAt(m, 3)
			if n := sizeAt(m, 1); n != nil {
				rep.Extra["hbm_used_bytes"] = *n
			}
		}
		// A console may wrap "Exceeded hbm capacity by" onto an indented
		// line, which the message stops before.
		if n := findSize(reXLAExceeded, sc.text[a.pos:min(len(sc.text), a.pos+xlaReach)], 1); n != nil {
			rep.Extra["hbm_exceeded_by_bytes"] = *n
		}
		if m := reXLAShape.FindStringSubmatch(sc.text[a.pos:min(len(sc.text), a.pos+16384)]); m != nil {
			rep.Extra["largest_alloc_shape"] = m[1]
		}
	case kindXLAReserve:
		tpu = true
		rep.TriedToAllocateBytes = findSize(reXLAReserve, msg, 1)
		rep.FreeBytes = findSize(reXLAFree, msg, 1)
	}
	if m := reXLACode.FindStringSubmatch(sc.lines[sc.lineOf(a.pos)].text); m != nil {
		rep.Extra["xla_error_code"] = m[1]
	}
	if m := reBFCName.FindStringSubmatch(sc.text); m != nil && rep.Device == nil && !tpu {
		// XLA's GPU allocator is TF's BFC and names the GPU.
		rep.Device = cudaDevice(m[2])
	}
	if tpu {
		rep.Device = str("tpu")
		if m := reTPUIndex.FindStringSubmatch(msg); m != nil {
			rep.Device = str("tpu:" + m[1])
		} else if m := reTPUException.FindStringSubmatch(sc.text[a.pos:min(len(sc.text), a.pos+xlaReach*8)]); m != nil {
			// torch_xla logs the status first and names the failing core
			// in the exception it raises a few lines below.
			rep.Device = str("tpu:" + m[1])
		}
	}
}

// extractVLLM reads vLLM's KV-cache sizing errors and the memory-profiling
// lines printed before them.
func extractVLLM(sc *scan, line, msg string, rep *Report) {
	rep.Framework = FrameworkVLLM
	rep.Format = FormatVLLMKV
	intExtra := func(re *regexp.Regexp, s, key string) {
		if m := re.FindStringSubmatch(s); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				rep.Extra[key] = n
			}
		}
	}
	sizeExtra := func(re *regexp.Regexp, key string) {
		if n := findSize(re, sc.text, 1); n != nil {
			rep.Extra[key] = *n
		}
	}
	intExtra(reVLLMMaxSeq, line, "max_seq_len")
	intExtra(reVLLMKVTokens, line, "kv_cache_tokens")
	intExtra(reVLLMBlocks, sc.text, "gpu_blocks")
	rep.TotalCapacityBytes = findSize(reVLLMTotal, sc.text, 1)
	sizeExtra(reVLLMKVSize, "kv_cache_size_bytes")
	sizeExtra(reVLLMPeak, "peak_torch_memory_bytes")
	if m := reVLLMUtil.FindStringSubmatch(sc.text); m != nil {
		if f, err := strconv.ParseFloat(m[1], 64); err == nil {
			rep.Extra["gpu_memory_utilization"] = f
		}
	}
	if m := reVLLMWeights.FindStringSubmatch(sc.text); m != nil {
		rep.Extra["weights_GB_label"] = m[1]
	}
	// The V1 message puts the sizes before the words the anchor starts at.
	if m := reVLLMV1.FindStringSubmatch(line); m != nil {
		if n := sizeAt(m, 1); n != nil {
			rep.Extra["kv_cache_needed_bytes"] = *n
		}
		if n := sizeAt(m, 3); n != nil {
			rep.Extra["kv_cache_available_bytes"] = *n
		}
	}
	intExtra(reVLLMEstimate, msg, "estimated_max_model_len")
	if _, ok := rep.Extra["gpu_memory_utilization"]; !ok {
		if m := reVLLMUtilFlag.FindStringSubmatch(sc.text); m != nil {
			if f, err := strconv.ParseFloat(m[1], 64); err == nil {
				rep.Extra["gpu_memory_utilization"] = f
			}
		}
	}
}

// mentionsXPU reports whether the scan shows an Intel XPU session, which
// makes a bare "Tried to allocate ... (GPU 0; ...)" an XPU message. It is
// computed once per scan.
func (sc *scan) mentionsXPU() bool {
	if sc.xpu == 0 {
		sc.xpu = -1
		if strings.Contains(sc.text, "XPU out of memory") || strings.Contains(sc.text, "device='xpu'") || strings.Contains(sc.text, `device="xpu"`) {
			sc.xpu = 1
		}
	}
	return sc.xpu > 0
}

// torchish names the framework of a PyTorch-style message from the stack
// around it: DeepSpeed and vLLM run on PyTorch but are what people name.
func torchish(text string) string {
	switch {
	case strings.Contains(text, "deepspeed"):
		return FrameworkDeepSpeed
	case strings.Contains(text, "vllm/") || strings.Contains(text, "vllm.") || strings.Contains(text, "VllmWorker") ||
		strings.Contains(text, "when initializing the engine"):
		// vLLM's worker class and its advice name it where no path does.
		return FrameworkVLLM
	case strings.Contains(text, "tensorflow/") || strings.Contains(text, "tensorflow."):
		return FrameworkTensorFlow
	}
	return FrameworkPyTorch
}

// headedLine is the anchor's line, with the line before it when the
// message began there and was broken after a comma (a log viewer or a
// person reflowing vLLM's one-line ValueError): the values before the
// anchor's words are on that line.
func (sc *scan) headedLine(a anchor) string {
	li := sc.lineOf(a.pos)
	line := sc.lines[li].text
	if li > 0 {
		if prev := sc.lines[li-1].text; strings.HasSuffix(prev, ",") && !isFrameLine(prev) {
			return prev + " " + line
		}
	}
	return line
}

// torchish is torchish of the scan's text, where a worker prefix that
// named vLLM counts as vLLM's name: the normaliser strips the prefix.
func (sc *scan) torchish() string {
	if fw := torchish(sc.text); fw != FrameworkPyTorch || !sc.vllmWorker {
		return fw
	}
	return FrameworkVLLM
}

// isTorchXLA reports PyTorch/XLA: its package, its XRT client's log path,
// or the RuntimeError its C++ status check raises.
func isTorchXLA(text string) bool {
	return strings.Contains(text, "torch_xla") || strings.Contains(text, "torch-xla") ||
		strings.Contains(text, "xla/xla_client/") || strings.Contains(text, "Bad StatusOr access")
}

// isTensorFlow reports TensorFlow's own output: its Python logger
// ("INFO:tensorflow:"), its Python and runtime source paths, and the
// "/job:worker/replica:0/task:0" names of its distributed runtime. JAX
// vendors TensorFlow's XLA and runtime (external/org_tensorflow), so a JAX
// paste is not TensorFlow's whatever paths it shows.
func isTensorFlow(text string) bool {
	if isJAX(text) {
		return false
	}
	for _, s := range []string{":tensorflow:", "tensorflow/python", "tensorflow/core/", "tensorflow/stream_executor", "tensorflow_core/", "/job:worker/", "/job:localhost/", "/job:tpu_worker/"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// isLuaTorch reports Lua Torch7, whose cutorch prints the same THCudaCheck
// lines as early PyTorch: its packages and Lua's stack traceback.
func isLuaTorch(text string) bool {
	return strings.Contains(text, "cutorch") || strings.Contains(text, ".lua:") && strings.Contains(text, "stack traceback:")
}

func isJAX(text string) bool {
	return strings.Contains(text, "jax") || strings.Contains(text, "external/org_tensorflow") || strings.Contains(text, "flax")
}

// isTGI reports Hugging Face TGI by its own modules and binaries, not by
// "text_generation" alone, which text-generation-webui's modules share.
func isTGI(text string) bool {
	for _, name := range []string{"text_generation_server", "text_generation_launcher", "text_generation_router",
		"text_generation_client", "text_generation_inference", "text-generation-inference", "text-generation-launcher"} {
		if strings.Contains(text, name) {
			return true
		}
	}
	return false
}

// reTGIStage is where TGI's router or launcher names the stage that failed:
// a tracing span on the relayed copy of the message, or "Method Prefill
// encountered an error".
var reTGIStage = regexp.MustCompile(`batch\{[^}\n]{0,200}\}:(prefill|decode)|Method (Prefill|Decode|Warmup) encountered an error|\b(warmup)\{`)

// tgiStage returns the stage the first such line in text names, or "".
func tgiStage(text string) string {
	m := reTGIStage.FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	return strings.ToLower(m[1] + m[2] + m[3])
}

// tgiSubphase reads TGI's tracing span ("batch{..}:prefill:prefill{..}").
func tgiSubphase(s string) string {
	switch {
	case strings.Contains(s, ":prefill") || strings.Contains(s, "prefill{"):
		return "prefill"
	case strings.Contains(s, ":decode") || strings.Contains(s, "decode{"):
		return "decode"
	case strings.Contains(strings.ToLower(s), "warmup"):
		return "warmup"
	}
	return ""
}

// maxSecondLook bounds how many later OOMs are compared with the first.
const maxSecondLook = 64

// secondError records, in extra, the first later OOM whose numbers differ
// from the first one's ("fields are from the first; extra holds the other").
func secondError(sc *scan, a anchor, rep *Report) {
	looked := 0
	for _, b := range sc.anchors {
		if b.pos <= a.pos || b.kind != a.kind {
			continue
		}
		if looked++; looked > maxSecondLook {
			return
		}
		var other Report
		other.Extra = map[string]any{}
		m := sc.message(b)
		switch b.kind {
		case kindTorch, kindTorchBare:
			extractTorch(sc, "", m, &other)
		case kindMPS:
			extractMPS(m, &other)
		default:
			return
		}
		if eqPtr(other.TriedToAllocateBytes, rep.TriedToAllocateBytes) && eqPtr(other.AllocatedByFrameworkBytes, rep.AllocatedByFrameworkBytes) {
			continue
		}
		second := map[string]any{}
		put := func(k string, v *int64) {
			if v != nil {
				second[k] = *v
			}
		}
		put("tried", other.TriedToAllocateBytes)
		put("alloc", other.AllocatedByFrameworkBytes)
		if v, ok := other.Extra["mps_other_allocations"]; ok {
			second["other"] = v
		}
		put("reserved", other.ReservedByFrameworkBytes)
		put("free", other.FreeBytes)
		rep.Extra["second_error"] = second
		return
	}
}

func eqPtr(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
