package models

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/hub"
)

// logicalDtypes are safetensors dtypes that store one parameter per
// element. Any other dtype (U8, I32, ...) holds packed quantised values
// (GPTQ/AWQ int4 in I32, MXFP4/NVFP4 and bitsandbytes 4-bit in U8), whose
// element count is not the parameter count (docs/hub-api.md §2: gpt-oss-20b
// stores ~12.0e9 elements for 20.9e9 parameters).
var logicalDtypes = map[string]bool{
	"F64": true, "F32": true, "F16": true, "BF16": true,
	"F8_E4M3": true, "F8_E5M2": true, "I8": true,
}

// tolerance is how far two counts may differ and still be the same count
// (the 0.5% of issue 10's parameter-count table).
const tolerance = 0.005

// ParamsFromHub decides the parameter count of a model read from a Hub
// config.json, given the Hub's safetensors count, and says why in a note.
// catalog.Model.Params is the logical parameter count (advisor/catalog);
// the Hub's total counts stored tensors, so:
//   - a total with packed dtypes is never used: it counts packed elements;
//   - a total within 0.5% of the config's count, or equal to it plus a tied
//     lm_head stored separately, confirms the config's count, which is kept;
//   - any other total replaces the config's count: the checkpoint holds
//     tensors that the config reading missed (a vision tower, extra
//     layers of an architecture read as a generic decoder), and every
//     stored tensor is loaded.
func ParamsFromHub(m catalog.Model, st hub.Safetensors) (int64, string) {
	total := st.Total
	for dtype := range st.Parameters {
		if !logicalDtypes[dtype] {
			return m.Params, fmt.Sprintf("parameter count from config.json (%s): the Hub's safetensors total (%s elements) counts packed quantised tensors (%s), not parameters",
				thousands(m.Params), thousands(total), strings.Join(packed(st), ", "))
		}
	}
	switch {
	case near(total, m.Params):
		return m.Params, fmt.Sprintf("parameter count %s from config.json, confirmed by the Hub's safetensors total (%s)", thousands(m.Params), thousands(total))
	case m.TieWordEmbeddings && near(total, m.Params+m.EmbeddingParams()):
		return m.Params, fmt.Sprintf("parameter count %s from config.json; the Hub's safetensors total (%s) also counts the tied lm_head, which the checkpoint stores separately", thousands(m.Params), thousands(total))
	}
	return total, fmt.Sprintf("parameter count is the Hub's safetensors total (%s, every stored tensor); config.json alone gives %s", thousands(total), thousands(m.Params))
}

func near(a, b int64) bool {
	if b <= 0 {
		return false
	}
	d := float64(a-b) / float64(b)
	return d <= tolerance && d >= -tolerance
}

// packed lists the dtypes of st that do not store one parameter per element.
func packed(st hub.Safetensors) []string {
	var out []string
	for d := range st.Parameters {
		if !logicalDtypes[d] {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// thousands writes a parameter count with thousands separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// SizeInName reads the parameter count a model's name states, for when
// the Hub cannot be asked: "someorg/Foo-8B-Instruct" is 8B,
// "Mixtral-8x7B" 8×7B, "Qwen3-30B-A3B" 30B (A3B is the active size).
// Names that count experts ("Llama-4-Scout-17B-16E": 17B is the active
// size) and names without a size state nothing; of several sizes the
// largest is the total.
func SizeInName(ref string) (int64, bool) {
	name := ref[strings.LastIndexByte(ref, '/')+1:]
	var best int64
	for _, seg := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '-' || r == '_' || r == ' ' }) {
		if len(seg) > 1 && strings.Trim(seg[:len(seg)-1], "0123456789") == "" && seg[len(seg)-1] == 'e' {
			return 0, false // "16e": an expert count, so the size is the active one
		}
		n, ok := segmentSize(seg)
		if ok && n > best {
			best = n
		}
	}
	return best, best > 0
}

// segmentSize reads "8b", "0.5b", "350m" or "8x7b".
func segmentSize(seg string) (int64, bool) {
	if k, size, ok := strings.Cut(seg, "x"); ok && k != "" && strings.Trim(k, "0123456789") == "" {
		experts, err := strconv.Atoi(k)
		n, good := catalog.ParseSize(size)
		if err != nil || !good || experts < 1 || experts > 1024 {
			return 0, false
		}
		return catalog.ParseSize(strconv.FormatInt(int64(experts)*n/1_000_000, 10) + "m")
	}
	return catalog.ParseSize(seg)
}
