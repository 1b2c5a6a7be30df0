package hfconfig

import (
	"strings"
	"testing"

	"github.com/vrambot/vrambot/internal/errs"
)

// qwen3_8b is Qwen/Qwen3-8B's config.json (shape keys), whose published
// safetensors total is 8,190,735,360 parameters.
const qwen3_8b = `{"architectures": ["Qwen3ForCausalLM"], "head_dim": 128, "hidden_size": 4096,
 "intermediate_size": 12288, "max_position_embeddings": 40960, "model_type": "qwen3",
 "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8,
 "tie_word_embeddings": false, "vocab_size": 151936}`

func TestReadDecoder(t *testing.T) {
	m, notes, err := Read([]byte(qwen3_8b), "Qwen/Qwen3-8B")
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "Qwen3-8B" || m.NumKVHeads != 8 || m.HeadDim != 128 || m.NumLayers != 36 {
		t.Errorf("got %+v", m)
	}
	// Qwen3 adds q/k norms (2·128 per layer) the generic decoder does not count.
	if want := int64(8_190_735_360); m.Params < want*99/100 || m.Params > want*101/100 {
		t.Errorf("params %d, published %d", m.Params, want)
	}
	if len(notes) == 0 {
		t.Error("no note on how the config was read")
	}
}

func TestReadRefusesWithTheMissingKey(t *testing.T) {
	tests := map[string]string{
		`{"hidden_size": 4096}`: `"num_hidden_layers"`,
		`[1, 2]`:                "not a JSON object",
		`{"hidden_size": -1, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 8}`: `"hidden_size" is -1`,
		`{"hidden_size": "big"}`: `"hidden_size" is big`,
	}
	for in, want := range tests {
		_, _, err := Read([]byte(in), "x/y")
		if err == nil || !strings.Contains(errs.UserMessage(err), want) || errs.KindOf(err) != errs.Invalid {
			t.Errorf("Read(%s) = %v, want an Invalid error naming %s", in, err, want)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(qwen3_8b))
	f.Add([]byte(`{"hidden_size": 1e300, "num_hidden_layers": 1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _, err := Read(data, "fuzz/model")
		if err == nil && (m.Params <= 0 || m.HiddenSize <= 0) {
			t.Fatalf("accepted a config with no shape: %+v", m)
		}
	})
}
