package catalog

import (
	"strings"
	"testing"
)

func TestPublishedCheckpoint(t *testing.T) {
	if repo, ok := PublishedCheckpoint("Qwen/Qwen3-32B", CheckpointAWQ); !ok || repo != "Qwen/Qwen3-32B-AWQ" {
		t.Errorf("Qwen3-32B AWQ: %q %v", repo, ok)
	}
	if repo, ok := PublishedCheckpoint("meta-llama/llama-3.1-8b-instruct", CheckpointAWQ); !ok || !strings.HasPrefix(repo, "hugging-quants/") {
		t.Errorf("a Hub id is matched without its case: %q %v", repo, ok)
	}
	// A base model's checkpoint is not its instruct model's.
	if repo, ok := PublishedCheckpoint("meta-llama/Llama-3.1-8B", CheckpointAWQ); ok {
		t.Errorf("the base model got the instruct model's checkpoint %q", repo)
	}
	for key, repo := range checkpoints {
		if !strings.Contains(repo, "/") || strings.EqualFold(repo, key[0]) {
			t.Errorf("%v → %q is no other repo", key, repo)
		}
	}
}
