// Package oom reads out-of-memory errors as people paste them (PyTorch's
// message generations, ROCm/HIP, XPU, MPS, TensorFlow BFC, JAX/XLA on GPU
// and TPU, vLLM and TGI, cuBLAS/cuDNN, CPU allocator) into a Report, and
// turns a Report into a Diagnosis: likely causes with their evidence and
// staged fixes in the idiom of the stack the paste shows.
//
// Field names, units and vocabularies are those of the corpus
// (internal/oomcorpus/public/README.md): sizes are bytes, converted as binary
// (round(v*1024^n)), and a field is nil where the paste does not say.
// Parsing is pure, bounded and linear in the input size.
package oom

import (
	"encoding/json"
	"fmt"

	"github.com/vrambot/vrambot/advisor/fix"
)

// Format values (the corpus vocabulary).
const (
	FormatPyTorchNew = "pytorch-new" // torch >= 2.1 sentence form
	FormatPyTorchOld = "pytorch-old" // torch <= 2.0 "(GPU 0; ... total capacity; ...)" form
	FormatHIP        = "hip"         // ROCm builds, either form
	FormatMPS        = "mps"
	FormatCPUAlloc   = "cpu-alloc" // DefaultCPUAllocator
	FormatTFBFC      = "tf-bfc"    // TensorFlow BFC allocator
	FormatXLA        = "xla"       // JAX/XLA on GPU or TPU
	FormatVLLMKV     = "vllm-kv"   // vLLM KV-cache sizing errors
	FormatCuBLAS     = "cublas"    // CUBLAS_STATUS_ALLOC_FAILED
	FormatOther      = "other"
)

// Framework values (the corpus vocabulary).
const (
	FrameworkPyTorch    = "pytorch"
	FrameworkTensorFlow = "tensorflow"
	FrameworkJAX        = "jax"
	FrameworkMPS        = "mps"
	FrameworkROCm       = "rocm"
	FrameworkVLLM       = "vllm"
	FrameworkDeepSpeed  = "deepspeed"
	FrameworkOther      = "other"
)

// Phase values (the corpus vocabulary): where in the job the OOM happened,
// read only from evidence inside the paste.
const (
	PhaseUnknown   = "unknown"
	PhaseLoad      = "load"
	PhaseForward   = "forward"
	PhaseBackward  = "backward"
	PhaseOptimizer = "optimizer"
	PhaseEval      = "eval"
	PhaseGenerate  = "generate"
)

// Report is what a paste says about one OOM. Where the paste holds several,
// the fields are from the first and Occurrences counts them all.
type Report struct {
	Detected                  bool           `json:"detected"`
	Framework                 string         `json:"framework"`
	Format                    string         `json:"format"`
	Device                    *string        `json:"device"`
	TriedToAllocateBytes      *int64         `json:"tried_to_allocate_bytes"`
	TotalCapacityBytes        *int64         `json:"total_capacity_bytes"`
	FreeBytes                 *int64         `json:"free_bytes"`
	AllocatedByFrameworkBytes *int64         `json:"allocated_by_framework_bytes"`
	ReservedByFrameworkBytes  *int64         `json:"reserved_by_framework_bytes"`
	ReservedUnallocatedBytes  *int64         `json:"reserved_unallocated_bytes"`
	ProcessInUseBytes         *int64         `json:"process_in_use_bytes"`
	OtherProcesses            []OtherProcess `json:"other_processes"`
	Phase                     string         `json:"phase"`
	FragmentationHint         bool           `json:"fragmentation_hint"`
	ModelHint                 *string        `json:"model_hint"`
	GPUHint                   *string        `json:"gpu_hint"`
	Extra                     map[string]any `json:"extra"`
	Occurrences               int            `json:"occurrences"`
	// Job is the workload the paste's own lines show and where in it the
	// OOM happened (docs/oom-diagnosis.md §3); null when nothing was
	// detected. An addition to the corpus contract.
	Job *Job `json:"job"`

	// Stack is the training/serving stack the paste shows, for the idiom of
	// the fix snippets; PhaseEvidence quotes what set Phase. Neither is part
	// of the JSON contract.
	Stack         fix.Framework `json:"-"`
	PhaseEvidence string        `json:"-"`
	// Facts are what the rest of the paste says, for the diagnosis.
	Facts Facts `json:"-"`

	// Typed views of the extra keys that code outside this package reads
	// (set by Parse from Extra, which the JSON keeps): the error's kind
	// (KindCUDAError, "ggml-alloc-failed", …), the engine or library named
	// (StackLlamaCPP, "sglang", "text-generation-inference", …) and
	// whether the paste says the run went on after it.
	ErrorKind string `json:"-"`
	Engine    string `json:"-"`
	NonFatal  bool   `json:"-"`
}

// OtherProcess is one "Process NNN has X memory in use" line. The JSON
// contract (the corpus index) lists only the bytes, so it marshals as a bare
// number; the PID is kept for the human reply.
type OtherProcess struct {
	PID   int
	Bytes int64
}

// MarshalJSON writes the byte count alone, as the corpus index does.
func (p OtherProcess) MarshalJSON() ([]byte, error) { return json.Marshal(p.Bytes) }

// UnmarshalJSON reads a bare byte count (the PID is not in the JSON).
func (p *OtherProcess) UnmarshalJSON(b []byte) error {
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("other_processes entry: %w", err)
	}
	*p = OtherProcess{Bytes: n}
	return nil
}

// notDetected is the Report for text that holds no OOM.
func notDetected() Report {
	return Report{
		Framework:      FrameworkOther,
		Format:         FormatOther,
		OtherProcesses: []OtherProcess{},
		Phase:          PhaseUnknown,
		Extra:          map[string]any{},
	}
}
