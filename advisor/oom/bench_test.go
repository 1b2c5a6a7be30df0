package oom

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// noisyLog builds a training log of about size bytes: tqdm redraws, loss
// lines, warnings and a traceback, with one OOM at the end.
func noisyLog(size int) string {
	var b strings.Builder
	b.Grow(size + 4096)
	for i := 0; b.Len() < size; i++ {
		switch i % 5 {
		case 0, 1:
			fmt.Fprintf(&b, "Epoch %d:  %2d%%|████▌     | %d/1000 [02:13<02:43,  3.37it/s, loss=0.%03d, v_num=3]\r", i/1000, i%100, i%1000, i%997)
		case 2:
			fmt.Fprintf(&b, "{'loss': 2.%04d, 'grad_norm': 1.%03d, 'learning_rate': 1.9e-05, 'epoch': 0.%02d}\n", i%9973, i%991, i%97)
		case 3:
			fmt.Fprintf(&b, "2024-05-01 12:%02d:%02d,123 - WARNING - step %d: max_memory_allocated 31.2 GiB, reserved 33.0 GiB\n", i%60, i%59, i)
		case 4:
			b.WriteString("/usr/lib/python3.10/site-packages/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.\n")
		}
	}
	b.WriteString(`Traceback (most recent call last):
  File "train.py", line 120, in <module>
    trainer.train()
  File "/usr/lib/python3.10/site-packages/transformers/trainer.py", line 3782, in training_step
    self.accelerator.backward(loss, **kwargs)
  File "/usr/lib/python3.10/site-packages/torch/autograd/graph.py", line 825, in _engine_run_backward
    return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has 77.91 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.35 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.
`)
	return b.String()
}

func BenchmarkParseOOM(b *testing.B) {
	for _, size := range []int{1 << 20, 16 << 20} {
		log := noisyLog(size)
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(len(log)))
			cpu0, n := cpuTimeNs(), 0
			for b.Loop() {
				r := Parse(log)
				if !r.Detected || r.Phase != PhaseBackward {
					b.Fatalf("parse: detected=%v phase=%s", r.Detected, r.Phase)
				}
				n++
			}
			b.ReportMetric(float64(cpuTimeNs()-cpu0)/float64(n), "cpu-ns/op")
		})
	}
}

// TestNoisyLogEnd checks that the OOM at the end of a big log is found
// with its traceback, which the benchmark relies on.
func TestNoisyLogEnd(t *testing.T) {
	r := Parse(noisyLog(2 << 20))
	if !r.Detected || r.Phase != PhaseBackward || r.Format != FormatPyTorchNew || r.Occurrences != 1 {
		t.Fatalf("got detected=%v phase=%s format=%s occurrences=%d", r.Detected, r.Phase, r.Format, r.Occurrences)
	}
}

// TestWorstCaseInputs checks that inputs made of nothing but OOM messages,
// with and without newlines, cost linear time: 256 KiB may not cost much more
// than four times 64 KiB. It compares CPU time, which other tenants of a
// shared machine (and -race) scale alike for both sizes.
func TestWorstCaseInputs(t *testing.T) {
	msg := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.23 GiB is free. Process 7 has 1.00 GiB memory in use. "
	for name, sep := range map[string]string{"lines": "\n", "one line": ""} {
		t.Run(name, func(t *testing.T) {
			cost := func(size int) int64 {
				text := strings.Repeat(msg+sep, size/len(msg))
				start := cpuTimeNs()
				r := Parse(text)
				if !r.Detected || r.Occurrences < size/len(msg) {
					t.Fatalf("%d bytes: detected=%v occurrences=%d", size, r.Detected, r.Occurrences)
				}
				return cpuTimeNs() - start
			}
			small, big := cost(64<<10), cost(256<<10)
			if small > 0 && big > 6*small+int64(50*time.Millisecond) {
				t.Errorf("256 KiB cost %v of CPU, 64 KiB %v: not linear", time.Duration(big), time.Duration(small))
			}
		})
	}
}
