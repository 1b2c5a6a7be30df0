package oom

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/internal/oomcorpus"
)

// corpusCase is one labelled paste of the public corpus or the extra set.
type corpusCase = oomcorpus.Case

// strictFields are the index fields the parser must reproduce exactly.
var strictFields = []string{
	"framework", "format", "device", "tried_to_allocate_bytes", "total_capacity_bytes", "free_bytes",
	"allocated_by_framework_bytes", "reserved_by_framework_bytes", "reserved_unallocated_bytes",
	"process_in_use_bytes", "other_processes", "phase", "fragmentation_hint",
}

// extraKeys are the extra keys the parser fills; others in the index are
// one-off notes of the person who read the case (e.g. the per-error list
// of a REPL session) and are reported, not asserted.
var extraKeys = map[string]bool{
	"kind": true, "shape": true, "dtype": true, "allocator": true, "op_node": true, "mps_other_allocations": true,
	"mps_pool": true, "cached_label": true, "backend": true, "allowed_bytes": true, "private_pools_bytes": true,
	"hbm_used_bytes": true, "hbm_exceeded_by_bytes": true, "largest_alloc_shape": true, "xla_error_code": true,
	"max_seq_len": true, "kv_cache_tokens": true, "gpu_blocks": true, "kv_cache_size_bytes": true,
	"peak_torch_memory_bytes": true, "gpu_memory_utilization": true, "stack": true, "subphase": true,
	"prefill_tokens": true, "non_fatal": true, "non_fatal_lines": true, "driver_failed_allocs": true,
	"sizes": true, "bfc_stats": true, "bfc_max_alloc_size": true, "training_step": true, "second_error": true,
	"weights_GB_label": true,
}

// loadCorpus returns the public corpus and its texts by file name.
func loadCorpus(tb testing.TB) ([]corpusCase, map[string]string) {
	tb.Helper()
	cases := oomcorpus.MustLoad(oomcorpus.Public)
	texts := map[string]string{}
	for _, c := range cases {
		texts[c.File] = c.Text
	}
	return cases, texts
}

// asJSONMap renders a Report the way `vrambot oom --json` does, as a map.
func asJSONMap(tb testing.TB, r Report) map[string]any {
	tb.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		tb.Fatalf("marshal: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("unmarshal: %v", err)
	}
	return m
}

// knownMisses are index values that no reading of the paste can give,
// with the reason; the accuracy test still counts them as misses.
var knownMisses = map[string]string{
	"116.txt framework": "vLLM is named only in the issue's title; the paste is a bare XLA TPU error",
}

// diffCase lists the strict fields and known extra keys where got differs.
func diffCase(c corpusCase, got map[string]any) []string {
	var diffs []string
	for _, k := range strictFields {
		if !reflect.DeepEqual(got[k], c.Fields[k]) && knownMisses[c.File+" "+k] == "" {
			diffs = append(diffs, fmt.Sprintf("%s: got %v, want %v", k, got[k], c.Fields[k]))
		}
	}
	gotExtra, _ := got["extra"].(map[string]any)
	for k, want := range c.Extra {
		if extraKeys[k] && !reflect.DeepEqual(gotExtra[k], want) {
			diffs = append(diffs, fmt.Sprintf("extra.%s: got %v, want %v", k, gotExtra[k], want))
		}
	}
	if got["detected"] != true {
		diffs = append(diffs, "detected: got false")
	}
	return diffs
}

func TestCorpus(t *testing.T) {
	cases, texts := loadCorpus(t)
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.File, ".txt"), func(t *testing.T) {
			got := asJSONMap(t, Parse(texts[c.File]))
			for _, d := range diffCase(c, got) {
				t.Errorf("%s (%s): %s", c.File, c.Source, d)
			}
		})
	}
}

// slackEscape is what Slack does to message text: & < > become entities.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// TestCorpusSlackForms checks that the same pastes, Slack-escaped and
// wrapped in a code fence, or quoted, give the same fields.
func TestCorpusSlackForms(t *testing.T) {
	cases, texts := loadCorpus(t)
	forms := map[string]func(string) string{
		"escaped-fenced": func(s string) string { return "```\n" + slackEscape(s) + "\n```" },
		"escaped-quoted": func(s string) string {
			return "&gt; " + strings.ReplaceAll(strings.TrimRight(slackEscape(s), "\n"), "\n", "\n&gt; ")
		},
		"crlf": func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
	}
	for name, form := range forms {
		for _, c := range cases {
			t.Run(name+"/"+strings.TrimSuffix(c.File, ".txt"), func(t *testing.T) {
				plain := asJSONMap(t, Parse(texts[c.File]))
				got := asJSONMap(t, Parse(form(texts[c.File])))
				for _, k := range append(strictFields, "extra", "detected") {
					if !reflect.DeepEqual(got[k], plain[k]) {
						t.Errorf("%s: %s: got %v, plain paste gives %v", c.File, k, got[k], plain[k])
					}
				}
			})
		}
	}
}

// TestCorpusAccuracy asserts the parser's accuracy on the public corpus in
// each form a paste reaches it (accuracyTargets). model_hint and gpu_hint
// are not scored because the index often takes them from the prose,
// outside the paste.
func TestCorpusAccuracy(t *testing.T) {
	checkAccuracy(t, oomcorpus.Public, strictFields)
}
