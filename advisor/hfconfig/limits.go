package hfconfig

import (
	"context"
	"errors"
	"fmt"

	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/jsonlimit"
)

// The bounds of a config.json, set near the largest real ones so a
// published file of another shape is refused before it is decoded
// (docs/hub-api.md §3, "How large a config.json gets"). Measured over 223
// real files: the 113 Hub config.json and hf_quant_config.json files that
// ai-dynamo/aiconfigurator vendors (@095f58a, model_configs/) and the 110
// this repo keeps (advisor/catalog/models, testdata/configs):
//
//   - bytes: nvidia/MiniMax-M3-NVFP4 is 3,087,083 (its quantization_config
//     lists every one of 22,422 quantised modules); next come 928,086
//     (Nemotron-3.5-Lightning-30B-A3B-NVFP4's hf_quant_config) and 88,567
//     (Qwen3.6-27B-NVFP4); all others are under 60 KiB;
//   - values and keys (encoding/json tokens, closing brackets excepted):
//     MiniMax-M3-NVFP4 again, 133,899;
//   - nesting: at most 7 levels of containers, the file itself being 1
//     (moonshotai/Kimi-K2.5 and Kimi-K3);
//   - one array or object: MiniMax-M3-NVFP4's 22,422 keys; the longest
//     array is GLM-5-FP8's modules_to_not_convert, 712 names.
const (
	// MaxConfigBytes is 4 MiB: the largest real config.json, 2.94 MiB,
	// with a third to spare.
	MaxConfigBytes = 4 << 20
	// MaxConfigTokens is 262,144 values and keys, twice the largest.
	MaxConfigTokens = 1 << 18
	// MaxConfigDepth is 16 levels, over twice the 7 of the deepest.
	MaxConfigDepth = 16
	// MaxConfigElements is 65,536 entries in one array or object, about
	// three times the largest (a per-module list of a bigger MoE).
	MaxConfigElements = 1 << 16
)

// ReaderVersion identifies what this reader makes of a config.json. It
// goes up whenever a change reads some config differently, so an
// architecture cached by an older reader is read again from the text
// (models keys its parsed cache by it).
const ReaderVersion = 1

// configLimits are the bounds above, for the pre-check.
var configLimits = jsonlimit.Limits{Bytes: MaxConfigBytes, Tokens: MaxConfigTokens, Depth: MaxConfigDepth, Elements: MaxConfigElements}

// checkBounds refuses, before any decoding, a config.json that runs past a
// bound: one linear scan that allocates nothing, stopped when ctx ends.
func checkBounds(ctx context.Context, data []byte) error {
	err := jsonlimit.Check(ctx, data, configLimits)
	if err == nil {
		return nil
	}
	le, ok := errors.AsType[*jsonlimit.Error](err)
	if !ok {
		return errs.Wrap(errs.Unavailable, err, "reading config.json was given up")
	}
	var what string
	switch le.What {
	case jsonlimit.WhatBytes:
		what = fmt.Sprintf("is %d bytes", len(data))
	case jsonlimit.WhatTokens:
		what = fmt.Sprintf("holds more than %d values and keys", MaxConfigTokens)
	case jsonlimit.WhatDepth:
		what = fmt.Sprintf("nests more than %d levels deep", MaxConfigDepth)
	case jsonlimit.WhatElements:
		what = fmt.Sprintf("has an array or object of more than %d entries", MaxConfigElements)
	default:
		return errs.Wrap(errs.Invalid, err, "config.json is not a JSON object")
	}
	return errs.New(errs.Invalid, "config.json %s, more than any real one (at most %d KiB, %d values and keys, %d levels, %d entries in one list)",
		what, MaxConfigBytes>>10, MaxConfigTokens, MaxConfigDepth, MaxConfigElements)
}
