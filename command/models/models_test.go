package models

import (
	"testing"

	"github.com/vrambot/vrambot/advisor/catalog"
)

func TestChoices(t *testing.T) {
	got := Choices("llama 3.1", []string{"acme/Llama-3.1-Fancy-8B", "other/Thing"}, 5)
	if len(got) < 2 || got[0].Value != "acme/Llama-3.1-Fancy-8B" || got[1].Value != "llama-3.1-8b" {
		t.Errorf("choices %+v", got)
	}
	if all := Choices("", nil, 100); len(all) != min(100, len(catalog.Models())) {
		t.Errorf("%d choices for an empty word", len(all))
	}
}
