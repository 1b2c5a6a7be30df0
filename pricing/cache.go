package pricing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/store"
)

// Book defaults. A refresh runs hourly to daily; a week-old price is still a
// useful guide and is shown with its age, an older one is dropped.
const (
	DefaultCacheTTL     = 7 * 24 * time.Hour
	DefaultFetchTimeout = 2 * time.Minute // per source; SkyPilot AWS is 2.5 MB
	// DefaultReadTimeout bounds the store reads on a user request: a Redis
	// that does not answer must not hold up a Slack reply (3 s budget).
	DefaultReadTimeout = time.Second
)

// Store keys, under the store's own "vrambot:" prefix.
const (
	refreshLock  = "prices:refresh"
	offersPrefix = "prices:offers:" // + source name: the last good fetch
	statusPrefix = "prices:status:" // + source name: the last attempt
)

// errUndecodable marks a cache entry that is there but cannot be read (an
// older or foreign format): the source counts as not cached, the store as up.
var errUndecodable = errors.New("unreadable cache entry")

// lockWaitInterval is how often a refresh that found another one running
// checks whether it has finished.
const lockWaitInterval = 100 * time.Millisecond

// Store is what the book needs from the store (store.Store has it): values
// with a TTL, and a lock that makes refreshes run one at a time.
type Store interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Lock(ctx context.Context, name string, ttl time.Duration) (unlock func(context.Context) error, ok bool, err error)
}

// Book is the price cache: Refresh fills the store from the sources, and
// Offers, Listing, FindOffers and PricePerGPUHour read only the store (never
// the network), falling back to the offline snapshot when the store is down
// or empty. A long-running process calls Reload on a schedule
// (ReloadInterval) so that user requests answer from memory.
type Book struct {
	store        Store
	sources      []Source
	fallback     Source
	ttl          time.Duration
	fetchTimeout time.Duration
	readTimeout  time.Duration
	now          func() time.Time
	gpus         []catalog.GPU
	usable       map[string]int64 // usable bytes by catalog key
	log          *slog.Logger

	fallbackMu     sync.Mutex
	fallbackOffers []Offer // nil until loaded once

	memo listingMemo
}

// ReloadInterval is how often a long-running process should call Reload:
// user requests answer from the listing it last read, so prices are at most
// this much older than the cache, and a slow or stopped Redis costs a
// request nothing.
const ReloadInterval = time.Minute

// listingMemo is the last listing read for user requests.
type listingMemo struct {
	mu      sync.Mutex
	listing Listing
	readAt  time.Time // zero: never read
}

// BookOption configures NewBook.
type BookOption func(*Book)

// WithCacheTTL sets how long fetched offers stay in the store.
func WithCacheTTL(d time.Duration) BookOption { return func(b *Book) { b.ttl = d } }

// WithFetchTimeout sets the time each source gets in a refresh.
func WithFetchTimeout(d time.Duration) BookOption { return func(b *Book) { b.fetchTimeout = d } }

// WithReadTimeout sets the time store reads get on a user request.
func WithReadTimeout(d time.Duration) BookOption { return func(b *Book) { b.readTimeout = d } }

// WithClock replaces time.Now (tests, and ages in golden files).
func WithClock(now func() time.Time) BookOption { return func(b *Book) { b.now = now } }

// WithLogger sets the logger for refresh results (default slog.Default()).
func WithLogger(l *slog.Logger) BookOption { return func(b *Book) { b.log = l } }

// NewBook returns a cache of the sources' offers in st. fallback is the
// offline snapshot (its Fetch must not use the network): it answers when the
// store is unreachable or holds nothing yet. fallback may be nil.
func NewBook(st Store, sources []Source, fallback Source, opts ...BookOption) *Book {
	b := &Book{
		store:        st,
		sources:      slices.Clone(sources),
		fallback:     fallback,
		ttl:          DefaultCacheTTL,
		fetchTimeout: DefaultFetchTimeout,
		readTimeout:  DefaultReadTimeout,
		now:          time.Now,
		gpus:         catalog.GPUs(),
		log:          slog.Default(),
	}
	for _, o := range opts {
		o(b)
	}
	b.usable = make(map[string]int64, len(b.gpus))
	for _, g := range b.gpus {
		b.usable[g.Key] = g.UsableBytes
	}
	return b
}

// cachedOffers is what the store holds for one source's last good fetch.
type cachedOffers struct {
	FetchedAt time.Time     `json:"fetched_at"`
	Dropped   int           `json:"dropped"`
	Offers    []cachedOffer `json:"offers"`
}

// cachedOffer keeps the catalog key, which Offer's JSON leaves out.
type cachedOffer struct {
	Offer
	GPUKey string `json:"gpu_key"`
}

// attempt is what the store holds about a source's last refresh attempt.
type attempt struct {
	At    time.Time `json:"at"`
	Error string    `json:"error,omitempty"`
}

// Refresh fetches every source concurrently, each under the fetch timeout,
// and stores each one's offers with the cache TTL. A source that fails, or
// returns no usable offer, keeps its last good offers in the store; its
// status carries the error and, when old offers remain, Stale. A lock in the
// store makes concurrent refreshes (several replicas, cron and the CLI) run
// one at a time; a refresh that finds another running waits for it and
// returns what that one stored instead of fetching again.
func (b *Book) Refresh(ctx context.Context) []SourceStatus {
	unlock, ok, err := b.store.Lock(ctx, refreshLock, b.fetchTimeout+time.Minute)
	if err != nil {
		if ctx.Err() != nil {
			return b.allFailed(fmt.Errorf("price refresh cancelled: %w", ctx.Err()))
		}
		return b.allFailed(fmt.Errorf("price cache unreachable: %w", err))
	}
	if !ok {
		if err := b.waitForRefresh(ctx); err != nil {
			return b.allFailed(err)
		}
		if l, err := b.Listing(ctx); err == nil {
			b.remember(l) // the other refresh's prices, at once
		}
		return b.statuses(ctx)
	}
	defer func() {
		// Release even when ctx is done, or the next refresh waits for the TTL.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := unlock(uctx); err != nil {
			b.log.Warn("price refresh: unlock failed; the lock will expire", "err", err)
		}
	}()

	statuses := make([]SourceStatus, len(b.sources))
	var wg sync.WaitGroup
	for i, src := range b.sources {
		wg.Go(func() {
			fetched, err := b.fetch(ctx, src)
			statuses[i] = b.record(ctx, src.Name(), fetched, err)
		})
	}
	wg.Wait()
	if l, err := b.Listing(ctx); err == nil {
		b.remember(l) // requests on this replica see the new prices at once
	}
	for _, s := range statuses {
		if s.Error != nil {
			b.log.Warn("price refresh: source failed", "source", s.Name, "err", *s.Error, "stale_offers", s.Offers)
		} else {
			b.log.Info("price refresh: source fetched", "source", s.Name, "offers", s.Offers, "dropped", s.Dropped)
		}
	}
	return statuses
}

// waitForRefresh polls the refresh lock until the refresh holding it ends.
func (b *Book) waitForRefresh(ctx context.Context) error {
	ticker := time.NewTicker(lockWaitInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for another price refresh: %w", ctx.Err())
		case <-ticker.C:
		}
		unlock, ok, err := b.store.Lock(ctx, refreshLock, lockWaitInterval)
		if err != nil {
			return fmt.Errorf("price cache unreachable: %w", err)
		}
		if ok {
			// Only probing: release at once so a later refresh can run.
			if err := unlock(ctx); err != nil {
				return fmt.Errorf("releasing the price refresh lock: %w", err)
			}
			return nil
		}
	}
}

// fetch runs one source under the fetch timeout. A source that ignores its
// context, or panics, costs a goroutine until it returns, never the refresh.
func (b *Book) fetch(ctx context.Context, src Source) (Fetched, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, b.fetchTimeout, fmt.Errorf("timed out after %s", b.fetchTimeout))
	defer cancel()
	type result struct {
		fetched Fetched
		err     error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("source %s panicked: %v", src.Name(), p)}
			}
		}()
		f, err := src.Fetch(ctx)
		done <- result{f, err}
	}()
	select {
	case r := <-done:
		if r.err == nil && len(r.fetched.Offers) == 0 {
			// An empty catalog is a broken catalog: keep the last good one.
			r.err = fmt.Errorf("no usable offers (%d rows dropped)", r.fetched.Dropped)
		}
		return r.fetched, r.err
	case <-ctx.Done():
		return Fetched{}, fmt.Errorf("fetching %s: %w", src.Name(), context.Cause(ctx))
	}
}

// record stores one source's fetch result and returns its status.
func (b *Book) record(ctx context.Context, name string, fetched Fetched, fetchErr error) SourceStatus {
	now := b.now().UTC()
	if fetchErr == nil {
		entry := cachedOffers{FetchedAt: now, Dropped: fetched.Dropped, Offers: make([]cachedOffer, len(fetched.Offers))}
		for i, o := range fetched.Offers {
			entry.Offers[i] = cachedOffer{Offer: o, GPUKey: o.GPUKey}
		}
		if err := b.putJSON(ctx, offersPrefix+name, entry); err != nil {
			fetchErr = fmt.Errorf("fetched %d offers but could not cache them: %w", len(fetched.Offers), err)
		} else {
			b.putAttempt(ctx, name, attempt{At: now})
			return SourceStatus{Name: name, FetchedAt: now.Format(time.RFC3339), Offers: len(fetched.Offers), Dropped: fetched.Dropped}
		}
	}
	msg := fetchErr.Error()
	b.putAttempt(ctx, name, attempt{At: now, Error: msg})
	status := SourceStatus{Name: name, Error: &msg}
	var last cachedOffers
	if err := b.getJSON(ctx, offersPrefix+name, &last); err == nil {
		status.FetchedAt = last.FetchedAt.Format(time.RFC3339)
		status.Offers = len(last.Offers)
		status.Dropped = last.Dropped
		status.Stale = true
	}
	return status
}

func (b *Book) putAttempt(ctx context.Context, name string, a attempt) {
	if err := b.putJSON(ctx, statusPrefix+name, a); err != nil {
		b.log.Warn("price refresh: could not record the attempt", "source", name, "err", err)
	}
}

// allFailed reports the same error for every source.
func (b *Book) allFailed(err error) []SourceStatus {
	msg := err.Error()
	b.log.Warn("price refresh failed", "err", msg)
	out := make([]SourceStatus, len(b.sources))
	for i, src := range b.sources {
		out[i] = SourceStatus{Name: src.Name(), Error: &msg}
	}
	return out
}

// statuses reads every source's status from the store, as a refresh that
// just ran would have reported it.
func (b *Book) statuses(ctx context.Context) []SourceStatus {
	out := make([]SourceStatus, len(b.sources))
	for i, src := range b.sources {
		s, _, err := b.readSource(ctx, src.Name())
		if err != nil {
			msg := fmt.Sprintf("price cache unreachable: %v", err)
			s = SourceStatus{Name: src.Name(), Error: &msg}
		}
		out[i] = s
	}
	return out
}

// readSource reads one source's cached offers and last attempt. A source
// never fetched has no offers and an error saying so; err is for the store.
func (b *Book) readSource(ctx context.Context, name string) (SourceStatus, []Offer, error) {
	status := SourceStatus{Name: name}
	var last attempt
	switch err := b.getJSON(ctx, statusPrefix+name, &last); {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, errUndecodable):
		last = attempt{}
	case err != nil:
		return status, nil, err
	}
	var cached cachedOffers
	switch err := b.getJSON(ctx, offersPrefix+name, &cached); {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, errUndecodable):
		msg := "not in the price cache yet: run `vrambot prices --refresh`"
		if errors.Is(err, errUndecodable) {
			msg = err.Error() + "; run `vrambot prices --refresh`"
		}
		if last.Error != "" {
			msg = last.Error
		}
		status.Error = &msg
		return status, nil, nil
	case err != nil:
		return status, nil, err
	}
	offers := make([]Offer, len(cached.Offers))
	for i, c := range cached.Offers {
		offers[i] = c.Offer
		offers[i].GPUKey = c.GPUKey
	}
	status.FetchedAt = cached.FetchedAt.Format(time.RFC3339)
	status.Offers = len(offers)
	status.Dropped = cached.Dropped
	if last.Error != "" && last.At.After(cached.FetchedAt) {
		status.Stale = true
		status.Error = &last.Error
	}
	return status, offers, nil
}

// Listing is what the book can answer with now: the offers, each source's
// status, and provenance lines for the reader (sources, ages, fallbacks).
type Listing struct {
	Offers  []Offer
	Sources []SourceStatus
	Notes   []string
	// Fallback is true when the offers come from the offline snapshot
	// because the store was unreachable or empty.
	Fallback bool
}

// Listing reads the cached offers of every source from the store (never the
// network). With the store unreachable or holding nothing, it answers from
// the fallback snapshot and says so in Notes. The error is only for having
// no prices at all.
func (b *Book) Listing(ctx context.Context) (Listing, error) {
	rctx, cancel := context.WithTimeout(ctx, b.readTimeout)
	defer cancel()
	var l Listing
	for _, src := range b.sources {
		status, offers, err := b.readSource(rctx, src.Name())
		if err != nil {
			if ctx.Err() != nil {
				return Listing{}, fmt.Errorf("reading the price cache: %w", ctx.Err())
			}
			b.log.Warn("price cache unreachable; answering from the offline snapshot", "err", err)
			return b.fallbackListing(ctx, "Redis unreachable: using the %s", "price cache unreachable")
		}
		l.Sources = append(l.Sources, status)
		l.Offers = append(l.Offers, offers...)
		if offers != nil {
			l.Notes = append(l.Notes, b.note(status, offers))
		}
	}
	if len(l.Offers) == 0 {
		onlyFallback := b.fallback != nil && !slices.ContainsFunc(b.sources, func(s Source) bool { return s.Name() != b.fallback.Name() })
		if onlyFallback {
			return b.fallbackListing(ctx, "prices: %s (offline default)", "")
		}
		return b.fallbackListing(ctx, "price cache empty: using the %s; run `vrambot prices --refresh`", "not in the price cache yet")
	}
	Annotate(l.Offers, b.now(), b.usable)
	return l, nil
}

// fallbackListing answers from the fallback snapshot. noteFormat gets the
// snapshot's description; otherErr, when set, is the status error of the
// configured sources other than the fallback.
func (b *Book) fallbackListing(ctx context.Context, noteFormat, otherErr string) (Listing, error) {
	if b.fallback == nil {
		return Listing{}, errors.New("no prices: the price cache is unavailable and there is no offline snapshot")
	}
	offers, err := b.fallbackData(ctx)
	if err != nil {
		return Listing{}, fmt.Errorf("no prices: offline snapshot: %w", err)
	}
	Annotate(offers, b.now(), b.usable)
	date := newestAsOf(offers)
	l := Listing{
		Offers:   offers,
		Notes:    []string{fmt.Sprintf(noteFormat, "embedded snapshot of "+date)},
		Fallback: true,
	}
	fetchedAt := ""
	if t, err := time.Parse(time.DateOnly, date); err == nil {
		fetchedAt = t.Format(time.RFC3339)
	}
	l.Sources = append(l.Sources, SourceStatus{Name: b.fallback.Name(), FetchedAt: fetchedAt, Offers: len(offers)})
	if otherErr != "" {
		for _, src := range b.sources {
			if src.Name() != b.fallback.Name() {
				msg := otherErr
				l.Sources = append(l.Sources, SourceStatus{Name: src.Name(), Error: &msg})
			}
		}
	}
	return l, nil
}

// fallbackData loads the snapshot once; a failed load is retried next time.
func (b *Book) fallbackData(ctx context.Context) ([]Offer, error) {
	b.fallbackMu.Lock()
	defer b.fallbackMu.Unlock()
	if b.fallbackOffers == nil {
		f, err := b.fallback.Fetch(ctx)
		if err != nil {
			return nil, err
		}
		if len(f.Offers) == 0 {
			return nil, errors.New("it holds no offers")
		}
		b.fallbackOffers = f.Offers
	}
	return slices.Clone(b.fallbackOffers), nil
}

// note is the provenance line of one cached source.
func (b *Book) note(s SourceStatus, offers []Offer) string {
	var line string
	if b.fallback != nil && s.Name == b.fallback.Name() {
		line = "prices: embedded snapshot of " + newestAsOf(offers)
	} else {
		fetched, _ := time.Parse(time.RFC3339, s.FetchedAt)
		line = fmt.Sprintf("prices: %s fetched %s", s.Name, Age(b.now().Sub(fetched)))
	}
	if s.Stale {
		line += " (stale: the last refresh failed)"
	}
	return line
}

// newestAsOf returns the latest AsOf date among offers (YYYY-MM-DD sorts).
func newestAsOf(offers []Offer) string {
	newest := ""
	for _, o := range offers {
		newest = max(newest, o.AsOf)
	}
	if newest == "" {
		return "unknown date"
	}
	return newest
}

// Age says how long ago something happened, coarsely: "just now",
// "12 min ago", "3 h ago", "2 d ago".
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	default:
		return fmt.Sprintf("%d d ago", int(d/(24*time.Hour)))
	}
}

// Offers returns every cached offer and each source's status; see Listing.
func (b *Book) Offers(ctx context.Context) ([]Offer, []SourceStatus, error) {
	l, err := b.Listing(ctx)
	if err != nil {
		return nil, nil, err
	}
	return l.Offers, l.Sources, nil
}

// noPricesNote is FindOffers' line when no price can be read at all.
const noPricesNote = "prices unavailable: neither the price cache nor the offline snapshot could be read (logged)"

// FindOffers ranks the cached offers against req (see Rank) and returns
// them with provenance lines: where the prices come from, their age, any
// fallback, and the utilisation cost to finish assumes. It never fails: with
// no prices at all it returns no offers and a line saying why.
func (b *Book) FindOffers(ctx context.Context, req Requirement) ([]Offer, []string) {
	l, err := b.requestListing(ctx)
	if err != nil {
		// The detail (store and snapshot errors) is for the log; the line
		// reaches users, in Slack too.
		b.log.WarnContext(ctx, "price lookup failed", "err", err)
		return nil, []string{noPricesNote}
	}
	notes := l.Notes
	switch {
	case req.TrainFLOPs > 0 && req.UtilisationNote != "":
		notes = append(notes, req.UtilisationNote)
	case req.TrainFLOPs > 0:
		notes = append(notes, fmt.Sprintf("cost to finish assumes %.0f%% of each GPU's dense bf16 TFLOPS (model FLOPs utilisation)", TrainingMFU*100))
	}
	return Rank(l.Offers, req, b.gpus), notes
}

// requestListing is Listing for the path of a user request: the listing
// Reload (or a refresh) last remembered, or, before the first one, the store.
func (b *Book) requestListing(ctx context.Context) (Listing, error) {
	b.memo.mu.Lock()
	l, read := b.memo.listing, !b.memo.readAt.IsZero()
	b.memo.mu.Unlock()
	if read {
		return l, nil
	}
	l, err := b.Listing(ctx)
	if err == nil {
		b.remember(l)
	}
	return l, err
}

// Reload re-reads the listing from the store (never the network) into the
// memory user requests answer from. A long-running process calls it every
// ReloadInterval from its scheduler; with the store down the listing is the
// offline snapshot, saying so, until a later Reload finds the store again.
// The error is only for having no prices at all, or ctx ending.
func (b *Book) Reload(ctx context.Context) error {
	l, err := b.Listing(ctx)
	if err != nil {
		return err
	}
	b.remember(l)
	return nil
}

func (b *Book) remember(l Listing) {
	b.memo.mu.Lock()
	defer b.memo.mu.Unlock()
	b.memo.listing, b.memo.readAt = l, b.now()
}

func (b *Book) putJSON(ctx context.Context, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", key, err)
	}
	return b.store.Set(ctx, key, data, b.ttl)
}

func (b *Book) getJSON(ctx context.Context, key string, v any) error {
	data, err := b.store.Get(ctx, key)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: %s: %w", errUndecodable, key, err)
	}
	return nil
}
