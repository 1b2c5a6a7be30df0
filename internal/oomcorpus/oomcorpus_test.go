package oomcorpus_test

import (
	"testing"

	"github.com/vrambot/vrambot/internal/oomcorpus"
)

func TestSetsLoad(t *testing.T) {
	for _, set := range oomcorpus.Sets {
		cs, err := oomcorpus.Load(set)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) < 30 {
			t.Errorf("%s: %d cases, want the whole set", set, len(cs))
		}
		for _, c := range cs {
			if c.Text == "" || c.Fields["file"] != c.File {
				t.Errorf("%s/%s: empty text or fields", set, c.File)
			}
		}
	}
	if _, err := oomcorpus.Load("nope"); err == nil {
		t.Error("an unknown set must be an error")
	}
}
