package pricing

import "context"

// Fetched is one source's answer: its offers and the rows it had to drop.
type Fetched struct {
	Offers  []Offer
	Dropped int // rows whose GPU could not be mapped to the catalog, or malformed
}

// Source is one place prices come from. Fetch may use the network and must
// honour ctx; it is only ever called by a refresh, never on a user request.
type Source interface {
	Name() string
	Fetch(ctx context.Context) (Fetched, error)
}
