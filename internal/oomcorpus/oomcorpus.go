// Package oomcorpus holds the real out-of-memory pastes the tests read, with
// the fields read off each by hand, and the one loader for them.
//
//   - public/: the project's public OOM corpus (public/README.md: where each
//     case came from and the rules its fields follow), copied into the
//     repository so that a clone tests on its own.
//   - extra/: real pastes gathered later from public issue threads outside
//     that corpus, labelled by the same rules, including look-alikes that
//     are not OOMs (detected: false).
//   - fresh/: real pastes of 2024-26 from public issue threads of the kinds
//     people now paste (llama.cpp/ggml, Ollama, NCCL, the Linux OOM
//     killer and other host allocators, vLLM's start-up numbers, ComfyUI's
//     reports), labelled by the same rules (fresh/README.md says what the
//     new kinds' fields hold), with look-alikes (Triton shared memory,
//     NCCL timeouts and errors that are not memory).
//   - blind/: real pastes of every kind above, old and new, with look-alikes
//     (nvidia-smi and memory_summary() tables, device-side asserts, illegal
//     memory access), labelled by hand before the parser read them
//     (blind/README.md), so its first run measured how the rules generalise.
//   - fresh2026/: real pastes of 2025-26 with the job around the OOM (PEFT,
//     DeepSpeed, vLLM, llama.cpp, TensorRT-LLM, numba/CuPy, MPS/TPU), each
//     labelled by hand, before the diagnosis read it, with the job the paste
//     shows and the fix a practitioner tries first (fresh2026/README.md);
//     its blind half was scored first, its holdout half once at the end.
//
// Each set is index.jsonl (one line per case) beside the case files. It is
// imported by tests only; the binary does not embed it.
package oomcorpus

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"path"
)

//go:embed public/index.jsonl public/cases extra fresh blind/index.jsonl blind/*.txt fresh2026/index.jsonl fresh2026/*.txt
var files embed.FS

// Case is one labelled paste. Fields holds every index field as JSON
// decodes it (numbers as float64), for comparison with a parser's JSON.
type Case struct {
	File   string         `json:"file"`
	Source string         `json:"source"`
	Extra  map[string]any `json:"extra"`
	Fields map[string]any `json:"-"`
	Text   string         `json:"-"`
}

// Set names.
const (
	Public = "public"
	Extra  = "extra"
	Fresh  = "fresh"
	Blind  = "blind"
	// Fresh2026 is the set of pastes with their jobs (fresh2026/README.md).
	Fresh2026 = "fresh2026"
)

// Sets lists every set, in the order they were gathered.
var Sets = []string{Public, Extra, Fresh, Blind, Fresh2026}

// casesDir is where a set keeps its case files.
var casesDir = map[string]string{Public: "public/cases", Extra: "extra", Fresh: "fresh", Blind: "blind", Fresh2026: "fresh2026"}

// Load reads one set (one of Sets), in index order.
func Load(set string) ([]Case, error) {
	dir, ok := casesDir[set]
	if !ok {
		return nil, fmt.Errorf("oomcorpus: unknown set %q", set)
	}
	index, err := files.ReadFile(path.Join(set, "index.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("oomcorpus: %w", err)
	}
	var out []Case
	sc := bufio.NewScanner(bytes.NewReader(index))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var c Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("oomcorpus: %s index line %d: %w", set, n, err)
		}
		if err := json.Unmarshal(sc.Bytes(), &c.Fields); err != nil {
			return nil, fmt.Errorf("oomcorpus: %s index line %d: %w", set, n, err)
		}
		text, err := files.ReadFile(path.Join(dir, c.File))
		if err != nil {
			return nil, fmt.Errorf("oomcorpus: %s case %s: %w", set, c.File, err)
		}
		c.Text = string(text)
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("oomcorpus: %s index: %w", set, err)
	}
	return out, nil
}

// MustLoad is Load for tests, which have no use for a partial corpus.
func MustLoad(set string) []Case {
	cs, err := Load(set)
	if err != nil {
		panic(err)
	}
	return cs
}
