package oom

import (
	"regexp"
	"slices"
	"strings"
)

// kind is the message family an anchor belongs to; it decides format,
// framework and which extractor reads the numbers.
type kind int

const (
	kindTorch       kind = iota // "X out of memory. Tried to allocate", both forms
	kindTorchBare               // "Tried to allocate 20.00 MiB (GPU 0; ..." with no prefix
	kindMPS                     // "MPS backend out of memory"
	kindCUDAError               // "CUDA error: out of memory" (no numbers)
	kindTHC                     // THCudaCheck ... error=2 : out of memory
	kindTFTensor                // "OOM when allocating tensor"
	kindTFDriver                // "failed to allocate 2.12G (N bytes) from device: CUDA_ERROR_OUT_OF_MEMORY"
	kindPinnedHost              // "failed to alloc N bytes on host: CUDA_ERROR_OUT_OF_MEMORY"
	kindTFEigen                 // "EigenAllocator for GPU ran out of memory when allocating N"
	kindTFWarning               // "Allocator (GPU_0_bfc) ran out of memory trying to allocate ... not a failure"
	kindXLA                     // "Out of memory while trying to allocate", "Failed to allocate request for"
	kindXLAHBM                  // "Ran out of memory in memory space hbm"
	kindXLAReserve              // "Attempting to reserve 6.14G at the bottom of memory"
	kindCPU                     // DefaultCPUAllocator / posix_memalign
	kindVLLMKV                  // vLLM KV-cache sizing ValueErrors
	kindVLLMStartup             // vLLM V1 "Free memory on device (...) on startup is less than desired"
	kindTGI                     // "Not enough memory to handle N prefill tokens"
	kindSGLang                  // "Not enough memory. Please try to increase --mem-fraction-static"
	kindCuBLAS                  // CUBLAS_STATUS_ALLOC_FAILED
	kindCuDNN                   // CUDNN_STATUS_ALLOC_FAILED
	kindDataLoader              // "DataLoader worker (pid N) is killed by signal: Killed"
	kindHostKilled              // Kubernetes OOMKilled
	kindTorchLimit              // torch<=2.0 "Allocation on device 0 would exceed allowed memory. (out of memory)"
	kindFallback                // an error line saying "out of memory" in a wording not known here
)

// strength orders anchors when choosing the OOM a paste is about: the TF
// allocator's "not a failure" warnings and TF's driver retries only count
// when nothing stronger is in the paste, and the generic fallback last.
func (k kind) strength() int {
	switch k {
	case kindFallback:
		return 0
	case kindTFWarning:
		return 1
	case kindTFDriver, kindPinnedHost:
		return 2
	}
	return 3
}

// anchorRule finds one message family: needle is a literal that a cheap
// scan looks for; re confirms it on the line and gives the message start.
// Needles start with a rare byte ("f memory", not "out of memory"):
// strings.Index jumps between occurrences of the first byte, so a common
// one makes the scan of a big log many times slower.
type anchorRule struct {
	needle string
	re     *regexp.Regexp
	kind   kind
}

var anchorRules = []anchorRule{
	{"f memory", regexp.MustCompile(`MPS backend out of memory`), kindMPS},
	{"f memory", regexp.MustCompile(`(?:\b(?:CUDA|HIP|XPU|NPU|MTIA|GPU)\s)?out of memory\.?\s*Tried to allocate`), kindTorch},
	{"Tried to allocate", regexp.MustCompile(`Tried to allocate\s+` + sizePattern + `\s*(?:\((?:GPU|NPU|XPU)\s+\d+;|\.\s*(?:GPU|XPU|NPU)\s+\d+ has a total)`), kindTorchBare},
	{"f memory", regexp.MustCompile(`\b(?:CUDA|HIP|XPU)(?: driver)? error: out of memory`), kindCUDAError},
	{"f memory", regexp.MustCompile(`THCudaCheck FAIL[^\n]{0,200}error=2 : out of memory|cuda runtime error \(2\) : out of memory`), kindTHC},
	{"OOM when", regexp.MustCompile(`OOM when allocating tensor`), kindTFTensor},
	// TF2 eager ops that fail in the BFC allocator without naming a tensor:
	// "ResourceExhaustedError: failed to allocate memory [Op:AddV2]". The
	// needles skip the common first letter of "exhausted".
	{"xhausted", reTFAllocFailed, kindTFTensor},
	{"XHAUSTED", reTFAllocFailed, kindTFTensor},
	{"OUT_OF_MEMORY", regexp.MustCompile(`failed to allocate\s+` + sizePattern + `\s*(?:\(\d+ bytes\))?\s*from device: CUDA_ERROR_OUT_OF_MEMORY`), kindTFDriver},
	{"OUT_OF_MEMORY", regexp.MustCompile(`failed to alloc \d+ bytes on host: CUDA_ERROR_OUT_OF_MEMORY`), kindPinnedHost},
	{"f memory", regexp.MustCompile(`EigenAllocator for GPU ran out of memory when allocating`), kindTFEigen},
	{"f memory", regexp.MustCompile(`Allocator \(\w+\) ran out of memory trying to allocate`), kindTFWarning},
	{"f memory", regexp.MustCompile(`Out of memory (?:while trying to allocate|allocating)`), kindXLA},
	{"Failed to allocate request", regexp.MustCompile(`Failed to allocate request for`), kindXLA},
	{"f memory", regexp.MustCompile(`Ran out of memory in memory space`), kindXLAHBM},
	{"Attempting to reserve", regexp.MustCompile(`Attempting to reserve\s+` + sizePattern + ` at the bottom of memory`), kindXLAReserve},
	{"That was not possible", regexp.MustCompile(`Attempting to allocate\s+` + sizePattern + `\. That was not possible`), kindXLAReserve},
	{"DefaultCPUAllocator", regexp.MustCompile(`(?:\[enforce fail at [^\]]{0,300}\][^\n]{0,40})?DefaultCPUAllocator: (?:can't allocate memory|not enough memory)`), kindCPU},
	// The leading "[" is optional: a selection that starts at the message
	// clips it ("enforce fail at CPUAllocator.cpp:56] posix_memalign").
	{"x_memalign", regexp.MustCompile(`\[?enforce fail at CPUAllocator\.cpp:\d+\] posix_memalign`), kindCPU},
	{"KV cache", regexp.MustCompile(`larger than the maximum number of tokens that can be stored in KV cache|KV cache is needed, which is larger than the available KV cache memory|[Ii]nsufficient memory for (?:the )?KV cache`), kindVLLMKV},
	{"No available memory", regexp.MustCompile(`No available memory for the cache blocks`), kindVLLMKV},
	{"Not enough memory", regexp.MustCompile(`Not enough memory to handle \d+ (?:prefill|total) tokens`), kindTGI},
	{"Not enough memory", regexp.MustCompile(`Not enough memory\. Please try to increase --mem-fraction-static`), kindSGLang},
	// Only the failing check is an OOM: vLLM also logs "Free memory on
	// device (X/Y GiB) on startup." when the check passes. Newer builds
	// name the device ("on device cuda:1 (...)").
	{"Free memory on device", regexp.MustCompile(`Free memory on device (?:\w+:\d+ )?\([^()\n]{1,40}\) on startup is less than`), kindVLLMStartup},
	{"ALLOC_FAILED", regexp.MustCompile(`CUBLAS_STATUS_ALLOC_FAILED`), kindCuBLAS},
	{"ALLOC_FAILED", regexp.MustCompile(`CUDNN_STATUS_ALLOC_FAILED`), kindCuDNN},
	{"killed by signal", regexp.MustCompile(`DataLoader worker \(pid \d+\) is killed by signal: Killed`), kindDataLoader},
	{"OOMKilled", regexp.MustCompile(`\bOOMKilled\b`), kindHostKilled},
	{"xceed allowed memory", regexp.MustCompile(`Allocation on device \d+ would exceed allowed memory`), kindTorchLimit},
	// The fallback wants an error marker in log style (an exception class,
	// ERROR, RESOURCE_EXHAUSTED, "failed"), so that prose about running
	// out of memory is not an OOM.
	{"f memory", regexp.MustCompile(`(?:\b[A-Z][\w.]*(?:Error|Exception)\b|\bERROR\b|\bFATAL\b|\bFatal\b|RESOURCE_EXHAUSTED|\bfailed\b|\bFAILED\b)[^\n]{0,80}?\b[Oo]ut of memory\b`), kindFallback},
	{"OutOfMemory", regexp.MustCompile(`\b[\w.]*OutOfMemoryError\b:`), kindFallback},
}

var reTFAllocFailed = regexp.MustCompile(`(?:ResourceExhaustedError|Resource exhausted|RESOURCE_EXHAUSTED):? failed to allocate memory`)

// anchor is one OOM message found in the normalised text.
type anchor struct {
	pos  int // byte offset of the message start in the joined text
	kind kind
}

// findAnchors lists the OOM messages in text (normalised lines joined by
// \n), in order. A message quoted in source code (`raise ValueError("No
// available memory ...`) is not a message; a weaker anchor inside a
// stronger one's line is dropped.
func findAnchors(text string) []anchor {
	var found []anchor
	// specific holds the lines with an anchor of a known wording; the
	// fallback rules (last in anchorRules) skip them.
	specific := map[int]bool{}
	for _, r := range anchorRules {
		for off := 0; off < len(text); {
			i := strings.Index(text[off:], r.needle)
			if i < 0 {
				break
			}
			i += off
			ls, le := lineBounds(text, i)
			off = le + 1
			if r.kind == kindFallback && specific[ls] {
				continue
			}
			for _, loc := range r.re.FindAllStringIndex(text[ls:le], -1) {
				if inSourceCode(text[max(ls, ls+loc[0]-sourceReach) : ls+loc[0]]) {
					continue
				}
				found = append(found, anchor{pos: ls + loc[0], kind: r.kind})
				if r.kind != kindFallback {
					specific[ls] = true
				}
			}
		}
	}
	slices.SortStableFunc(found, func(a, b anchor) int { return a.pos - b.pos })
	return dedupeAnchors(text, found)
}

// dedupeAnchors keeps one anchor per message: a fallback match on a line
// that holds a specific anchor is the same message ("torch.OutOfMemoryError:
// CUDA out of memory" is both), and so is a bare "Tried to allocate" right
// after "CUDA out of memory.".
func dedupeAnchors(text string, found []anchor) []anchor {
	out := make([]anchor, 0, len(found))
	for i := 0; i < len(found); {
		ls, le := lineBounds(text, found[i].pos)
		j := i
		specific := false
		for j < len(found) && found[j].pos < le {
			specific = specific || found[j].kind != kindFallback
			j++
		}
		lastTorch := -1
		for _, a := range found[i:j] {
			switch {
			case a.kind == kindFallback && (specific || len(out) > 0 && out[len(out)-1].pos >= ls):
				continue
			case a.kind == kindTorchBare && lastTorch >= 0 && a.pos-lastTorch < 64:
				continue
			case a.kind == kindTorch:
				lastTorch = a.pos
			}
			out = append(out, a)
		}
		i = j
	}
	return out
}

// lineBounds returns the start and end offsets of the line holding i.
func lineBounds(text string, i int) (int, int) {
	ls := strings.LastIndexByte(text[:i], '\n') + 1
	le := strings.IndexByte(text[i:], '\n')
	if le < 0 {
		return ls, len(text)
	}
	return ls, i + le
}

// sourceReach is how far before a match a `raise` is looked for.
const sourceReach = 200

// inSourceCode reports whether the text before a match on its line makes
// it a string literal in a raise statement rather than a printed message:
// a quote opened after "raise " is still open. A title such as `raise
// ValueError("No available memory ... " ValueError: No available memory`
// holds both, and the second is the message.
func inSourceCode(before string) bool {
	i := strings.LastIndex(before, "raise ")
	if i < 0 {
		return false
	}
	var quote byte
	for _, c := range []byte(before[i:]) {
		switch {
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case c == quote:
			quote = 0
		}
	}
	return quote != 0
}

// primary picks the anchor the report is about: the first of the
// strongest kind present.
func primary(anchors []anchor) (anchor, bool) {
	best := -1
	for i, a := range anchors {
		if best < 0 || a.kind.strength() > anchors[best].kind.strength() {
			best = i
		}
	}
	if best < 0 {
		return anchor{}, false
	}
	return anchors[best], true
}
