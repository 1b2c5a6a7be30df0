package catalog

import "github.com/vrambot/vrambot/advisor/arch"

// Model is a transformer architecture from the catalog (or scaled from a
// size). The type lives in advisor/arch, so that the config reader
// (advisor/hfconfig) can build it and the catalog can build its entries with
// that reader; see arch.Model for the fields and methods (ComputeParams,
// ActiveParams, AttentionGroups, KVCacheBytes, WeightBytesByGroup).
type Model = arch.Model

// Model families.
const (
	FamilyDecoderOnly    = arch.FamilyDecoderOnly
	FamilyEncoderOnly    = arch.FamilyEncoderOnly
	FamilyEncoderDecoder = arch.FamilyEncoderDecoder
)
