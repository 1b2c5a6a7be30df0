package hub

import "time"

// The Hub's rate limits (docs/hub-api.md §5: huggingface.co/docs/hub/rate-limits,
// the September 2025 table of hub-docs PR #1958): requests per fixed
// 5-minute window, counted per IP without a token and per account with
// one. These are the smallest, an anonymous client's; a token's account
// may have more, which vrambot cannot see, so it budgets for these.
const (
	// RateWindow is the Hub's fixed window.
	RateWindow = 5 * time.Minute
	// AnonymousAPIRequests is the "Hub APIs" bucket (/api/…: model info,
	// search) per window.
	AnonymousAPIRequests = 500
	// AnonymousResolverRequests is the "Resolvers" bucket (/resolve/…:
	// config.json) per window.
	AnonymousResolverRequests = 3000
)

// Bucket names the Hub's rate-limit bucket a request counts in.
type Bucket string

// The buckets vrambot's requests count in.
const (
	BucketAPI      Bucket = "api"
	BucketResolver Bucket = "resolvers"
)
