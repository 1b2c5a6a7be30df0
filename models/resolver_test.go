package models_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/hub"
	"github.com/vrambot/vrambot/hub/hubtest"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/models"
	"github.com/vrambot/vrambot/store"
	"github.com/vrambot/vrambot/store/storetest"
)

func newFake(t *testing.T) *hubtest.Server {
	fake := hubtest.New(t)
	st := &hub.Safetensors{Parameters: map[string]int64{"BF16": hubtest.Qwen3Params}, Total: hubtest.Qwen3Params}
	fake.Add(hubtest.Model{ID: "acme/Open-8B", Config: []byte(hubtest.Qwen3Config), Safetensors: st, Downloads: 900})
	fake.Add(hubtest.Model{ID: "mirror/Open-8B", Config: []byte(hubtest.Qwen3Config), Downloads: 12})
	fake.Add(hubtest.Model{ID: "acme/Open-8B-Extra", Config: []byte(hubtest.Qwen3Config), Downloads: 5000})
	fake.Add(hubtest.Model{ID: "acme/Gated-13B", Config: []byte(hubtest.Qwen3Config), Gated: true})
	fake.Add(hubtest.Model{ID: "acme/Broken-8B", Config: []byte(`{"model_type": "llama", "hidden_size": 4096}`)})
	fake.Add(hubtest.Model{ID: "acme/Weights-8B-GGUF"})
	return fake
}

func newResolver(t *testing.T, fake *hubtest.Server, cache models.Cache) *models.Resolver {
	t.Helper()
	var h models.Hub
	if fake != nil {
		c, err := hub.New(hub.Options{Endpoint: fake.URL, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		h = c
	}
	return models.New(models.Options{Hub: h, Endpoint: "hub.test", Cache: cache, Timeout: 2 * time.Second})
}

func configRequests(fake *hubtest.Server) int {
	n := 0
	for _, r := range fake.Requests() {
		if strings.HasSuffix(r.Path, "/config.json") {
			n++
		}
	}
	return n
}

func hasNote(t *testing.T, res models.Resolution, sub string) {
	t.Helper()
	for _, n := range res.Notes {
		if strings.Contains(n, sub) {
			return
		}
	}
	t.Errorf("no note contains %q: %q", sub, res.Notes)
}

func TestCatalogFirst(t *testing.T) {
	fake := newFake(t)
	r := newResolver(t, fake, store.NewMemory())
	m := catalog.Models()[0]
	for _, ref := range []string{m.Name, m.HFID, "https://huggingface.co/" + m.HFID} {
		res, err := r.Resolve(t.Context(), ref)
		if err != nil || res.Source != models.SourceCatalog || res.Model.Name != m.Name {
			t.Errorf("Resolve(%q) = %v %+v, want the catalog's %s", ref, err, res.Source, m.Name)
		}
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("catalog models reached the Hub: %d requests", n)
	}
}

// TestHubThenCache: a model only on the Hub is fetched once, read with
// advisor/hfconfig, cached, listed as recent, and then answered from the
// cache without a request.
func TestHubThenCache(t *testing.T) {
	fake := newFake(t)
	r := newResolver(t, fake, store.NewMemory())
	res, err := r.Resolve(t.Context(), "acme/Open-8B")
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != models.SourceHub || res.RepoID != "acme/Open-8B" || res.Model.NumLayers != 36 || res.Name() != "acme/Open-8B" {
		t.Fatalf("got %+v", res)
	}
	hasNote(t, res, "acme/Open-8B: not in the catalog — looked up on the Hub (hub.test): architecture read from its config.json")
	hasNote(t, res, "safetensors total (8,190,735,360)")
	res, err = r.Resolve(t.Context(), "acme/Open-8B")
	if err != nil || res.Source != models.SourceCache || res.Model.NumLayers != 36 {
		t.Fatalf("second lookup: %v %+v", err, res.Source)
	}
	hasNote(t, res, "fetched")
	if n := configRequests(fake); n != 1 {
		t.Errorf("%d config.json requests, want 1", n)
	}
	recent, err := r.Recent(t.Context(), 10)
	if err != nil || len(recent) != 1 || recent[0] != "acme/Open-8B" {
		t.Errorf("Recent = %q, %v", recent, err)
	}
}

// TestOneFetchForConcurrentLookups: lookups of one uncached repo that
// overlap share one Hub request.
func TestOneFetchForConcurrentLookups(t *testing.T) {
	fake := newFake(t)
	fake.SetDelay(200 * time.Millisecond)
	r := newResolver(t, fake, store.NewMemory())
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := r.Resolve(t.Context(), "acme/Open-8B")
			errc <- err
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Error(err)
		}
	}
	if n := configRequests(fake); n != 1 {
		t.Errorf("%d config.json requests for 8 concurrent lookups, want 1", n)
	}
}

// TestAGiveUpDoesNotFailOthers: a caller that gives up leaves the shared
// fetch running for the callers still waiting.
func TestAGiveUpDoesNotFailOthers(t *testing.T) {
	fake := newFake(t)
	fake.SetDelay(300 * time.Millisecond)
	r := newResolver(t, fake, store.NewMemory())
	impatient, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := r.Resolve(impatient, "acme/Open"); done <- err }()
	time.Sleep(10 * time.Millisecond)
	fake.Add(hubtest.Model{ID: "acme/Open", Config: []byte(hubtest.Qwen3Config)})
	if res, err := r.Resolve(t.Context(), "acme/Open"); err != nil || res.Source != models.SourceHub {
		t.Errorf("patient caller: %v %+v", err, res.Source)
	}
	if err := <-done; errs.KindOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "given up") {
		t.Errorf("impatient caller: %v, want Unavailable", err)
	}
}

// TestHubOutcomes: what the user reads for each thing the Hub can say,
// with the kind that sets the CLI's exit status.
func TestHubOutcomes(t *testing.T) {
	fake := newFake(t)
	fake.Override(hubtest.ConfigPath("acme/Down-8B"), func(w http.ResponseWriter, r *http.Request) { http.Error(w, "", http.StatusServiceUnavailable) })
	fake.Override(hubtest.ConfigPath("acme/Down"), func(w http.ResponseWriter, r *http.Request) { http.Error(w, "", http.StatusBadGateway) })
	tests := []struct {
		ref     string
		source  models.Source // "" = an error
		kind    errs.Kind
		message string
	}{
		{"acme/Nope", "", errs.NotFound, "unknown model 'acme/Nope': not in the catalog — looked up on the Hub: no model acme/Nope on the Hub (or it is private: set HF_TOKEN to a token that can read it)"},
		{"acme/Gated-13B", "", errs.NotFound, "not in the catalog — looked up on the Hub: acme/Gated-13B is gated: set HF_TOKEN to a token of an account that was granted access"},
		{"acme/Broken-8B", "", errs.Invalid, `looked up on the Hub: found acme/Broken-8B, but its config.json cannot be read: config.json has no "num_hidden_layers"`},
		{"acme/Down", "", errs.Unavailable, "looked up on the Hub: the Hub answered HTTP 502 for acme/Down; give its size (e.g. 8b) or its config.json"},
		{"acme/Down-8B", models.SourceSize, 0, "acme/Down-8B: not in the catalog — looked up on the Hub: the Hub answered HTTP 503 for acme/Down-8B: estimated as a typical 8B model from the size in its name"},
		{"acme/Weights-8B-GGUF", models.SourceSize, 0, "has no config.json on its main branch (GGUF-only and other non-transformers repos have none): estimated as a typical 8B model"},
		{"Open-8B", models.SourceHub, 0, "'Open-8B' read as acme/Open-8B, the most downloaded Hub model of that name"},
		{"open-8b-extra", models.SourceHub, 0, "'open-8b-extra' read as acme/Open-8B-Extra"},
		{"Open", "", errs.NotFound, "looked up on the Hub: no model named exactly Open there (it has acme/Open-8B-Extra, acme/Open-8B, mirror/Open-8B); give the full id"},
		{"Zork-70B", models.SourceSize, 0, "no model named exactly Zork-70B there: estimated as a typical 70B model"},
		{"zork", "", errs.NotFound, "no model named exactly zork there; give its Hub id (namespace/name)"},
		{"acme/x/y", "", errs.NotFound, "not a Hugging Face model id"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			r := newResolver(t, fake, store.NewMemory())
			res, err := r.Resolve(t.Context(), tt.ref)
			if tt.source == "" {
				var le *models.LookupError
				if !errors.As(err, &le) {
					t.Fatalf("Resolve = %+v, %v; want a *LookupError", res, err)
				}
				if errs.KindOf(err) != tt.kind {
					t.Errorf("kind %s, want %s", errs.KindOf(err), tt.kind)
				}
				if !strings.Contains(errs.UserMessage(err), tt.message) {
					t.Errorf("message\n %q\nwant it to contain\n %q", errs.UserMessage(err), tt.message)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if res.Source != tt.source {
				t.Errorf("source %s, want %s", res.Source, tt.source)
			}
			hasNote(t, res, tt.message)
		})
	}
}

func TestMissingRepoIsRememberedBriefly(t *testing.T) {
	fake := newFake(t)
	r := newResolver(t, fake, store.NewMemory())
	for range 3 {
		if _, err := r.Resolve(t.Context(), "acme/Nope"); errs.KindOf(err) != errs.NotFound {
			t.Fatalf("err = %v", err)
		}
	}
	if n := configRequests(fake); n != 1 {
		t.Errorf("%d requests for a missing repo asked 3 times, want 1", n)
	}
}

func TestUnreachable(t *testing.T) {
	fake := hubtest.New(t)
	fake.Close()
	r := newResolver(t, fake, store.NewMemory())
	res, err := r.Resolve(t.Context(), "someorg/Foo-8B-Instruct")
	if err != nil || res.Source != models.SourceSize || res.Model.Params != 8e9 {
		t.Fatalf("Resolve = %+v, %v; want the 8B shape", res, err)
	}
	hasNote(t, res, "cannot be reached (the connection was refused): estimated as a typical 8B model from the size in its name")
	_, err = r.Resolve(t.Context(), "someorg/Foo-Instruct")
	if errs.KindOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "cannot be reached (the connection was refused); give its size (e.g. 8b) or its config.json") {
		t.Errorf("err = %v", err)
	}
}

func TestTimeout(t *testing.T) {
	fake := newFake(t)
	fake.SetDelay(time.Minute)
	c, _ := hub.New(hub.Options{Endpoint: fake.URL})
	r := models.New(models.Options{Hub: c, Cache: store.NewMemory(), Timeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := r.Resolve(t.Context(), "acme/Open")
	if errs.KindOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "did not answer in time") {
		t.Errorf("err = %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %s with a 200ms timeout", took)
	}
}

// TestOffline: with HF_HUB_OFFLINE=1 (no Hub) the cache still answers,
// and nothing else reaches the network.
func TestOffline(t *testing.T) {
	fake := newFake(t)
	cache := store.NewMemory()
	if _, err := newResolver(t, fake, cache).Resolve(t.Context(), "acme/Open-8B"); err != nil {
		t.Fatal(err)
	}
	offline := newResolver(t, nil, cache)
	if res, err := offline.Resolve(t.Context(), "acme/Open-8B"); err != nil || res.Source != models.SourceCache {
		t.Errorf("cached model offline: %v %+v", err, res.Source)
	}
	res, err := offline.Resolve(t.Context(), "acme/Other-13B")
	if err != nil || res.Source != models.SourceSize || res.Model.Params != 13e9 {
		t.Errorf("offline with a size: %v %+v", err, res)
	}
	hasNote(t, res, "not looked up on the Hub (HF_HUB_OFFLINE=1)")
	_, err = offline.Resolve(t.Context(), "acme/Other")
	if errs.KindOf(err) != errs.NotFound || !strings.Contains(err.Error(), "HF_HUB_OFFLINE=1") {
		t.Errorf("offline without a size: %v", err)
	}
	if n := configRequests(fake); n != 1 {
		t.Errorf("offline resolutions made requests: %d", n)
	}
}

// TestFamilyWithoutSize: a family named without a size ("gemma3") is
// refused with the catalog's models of it, not answered with one of them
// and not with a spelling suggestion from another family.
func TestFamilyWithoutSize(t *testing.T) {
	offline := newResolver(t, nil, store.NewMemory())
	_, err := offline.Resolve(t.Context(), "gemma3")
	var le *models.LookupError
	if !errors.As(err, &le) || !slices.Contains(le.Family, "gemma-3-27b") || le.Suggestion != "" {
		t.Fatalf("gemma3: %v", err)
	}
	if !strings.Contains(err.Error(), "which one? gemma-3-") {
		t.Errorf("message: %v", err)
	}
	_, err = offline.Resolve(t.Context(), "gema-3")
	if !errors.As(err, &le) || len(le.Family) != 0 {
		t.Errorf("a misspelt family is not a family: %v", err)
	}
}

// TestSearchUnsupported: a mirror without the listing endpoint (404) is
// a Hub that cannot be asked, not a model that does not exist.
func TestSearchUnsupported(t *testing.T) {
	fake := newFake(t)
	fake.Override("/api/models", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	r := newResolver(t, fake, store.NewMemory())
	res, err := r.Resolve(t.Context(), "Open-8B")
	if err != nil || res.Source != models.SourceSize {
		t.Fatalf("Resolve = %+v, %v", res, err)
	}
	hasNote(t, res, "does not answer name searches")
}

func TestCorruptCacheEntryIsRefetched(t *testing.T) {
	fake := newFake(t)
	cache := store.NewMemory()
	if err := cache.Set(t.Context(), "hub:config:acme/open-8b", []byte("{not json"), 0); err != nil {
		t.Fatal(err)
	}
	res, err := newResolver(t, fake, cache).Resolve(t.Context(), "acme/Open-8B")
	if err != nil || res.Source != models.SourceHub {
		t.Errorf("Resolve = %v %+v", err, res.Source)
	}
}

// slowCache is a store that never answers in time.
type slowCache struct{}

func (slowCache) Get(ctx context.Context, _ string) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (slowCache) Set(ctx context.Context, _ string, _ []byte, _ time.Duration) error {
	<-ctx.Done()
	return ctx.Err()
}
func (slowCache) Append(ctx context.Context, _ string, _ []byte, _ int) error {
	<-ctx.Done()
	return ctx.Err()
}
func (slowCache) Entries(ctx context.Context, _ string, _ int) ([][]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestSlowStoreCostsLittle(t *testing.T) {
	fake := newFake(t)
	r := newResolver(t, fake, slowCache{})
	start := time.Now()
	if _, err := r.Resolve(t.Context(), "acme/Open-8B"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("a stalled store made the lookup take %s", took)
	}
}

func TestRecentIsBoundedAndUnique(t *testing.T) {
	cache := store.NewMemory()
	r := newResolver(t, nil, cache)
	for i := range models.RecentLen + 20 {
		id := fmt.Sprintf("acme/M%d", i%(models.RecentLen+5))
		if err := cache.Append(t.Context(), "hub:recent", []byte(id), models.RecentLen); err != nil {
			t.Fatal(err)
		}
	}
	_ = cache.Append(t.Context(), "hub:recent", []byte("../bad"), models.RecentLen)
	_ = cache.Append(t.Context(), "hub:recent", []byte("ACME/M3"), models.RecentLen)
	got, err := r.Recent(t.Context(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "ACME/M3,acme/M14,acme/M13,acme/M12,acme/M11" {
		t.Errorf("Recent = %q", got)
	}
}

// TestRedisCache runs the cache on the real Redis: two replicas share it,
// so the second one answers from the first one's fetch, and entries carry
// the TTL.
func TestRedisCache(t *testing.T) {
	replicas := storetest.NewRedisReplicas(t, 2)
	fake := newFake(t)
	a := newResolver(t, fake, replicas[0])
	b := newResolver(t, fake, replicas[1])
	if res, err := a.Resolve(t.Context(), "acme/Open-8B"); err != nil || res.Source != models.SourceHub {
		t.Fatalf("replica a: %v %+v", err, res.Source)
	}
	res, err := b.Resolve(t.Context(), "acme/Open-8B")
	if err != nil || res.Source != models.SourceCache || res.Model.HiddenSize != 4096 {
		t.Fatalf("replica b: %v %+v", err, res.Source)
	}
	if n := configRequests(fake); n != 1 {
		t.Errorf("%d Hub requests for two replicas, want 1", n)
	}
	if recent, err := b.Recent(t.Context(), 3); err != nil || len(recent) != 1 || recent[0] != "acme/Open-8B" {
		t.Errorf("Recent = %q, %v", recent, err)
	}
	// A short TTL expires on Redis itself.
	c, _ := hub.New(hub.Options{Endpoint: fake.URL})
	short := models.New(models.Options{Hub: c, Cache: replicas[0], TTL: 200 * time.Millisecond})
	if _, err := short.Resolve(t.Context(), "acme/Open-8B-Extra"); err != nil {
		t.Fatal(err)
	}
	if _, err := replicas[1].Get(t.Context(), "hub:config:acme/open-8b-extra"); err != nil {
		t.Fatalf("entry not in Redis: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := replicas[1].Get(t.Context(), "hub:config:acme/open-8b-extra")
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("entry did not expire: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRepoRef(t *testing.T) {
	for in, want := range map[string]string{
		"https://huggingface.co/Qwen/Qwen3-8B":           "Qwen/Qwen3-8B",
		"huggingface.co/Qwen/Qwen3-8B/tree/main":         "Qwen/Qwen3-8B",
		"https://hf.co/Qwen/Qwen3-8B/blob/main/config.j": "Qwen/Qwen3-8B",
		" Qwen/Qwen3-8B ":                                "Qwen/Qwen3-8B",
		"qwen3-8b":                                       "qwen3-8b",
	} {
		if got := models.RepoRef(in); got != want {
			t.Errorf("RepoRef(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHubErrorsNeverShowTheToken(t *testing.T) {
	fake := newFake(t)
	fake.Override(hubtest.ConfigPath("acme/Echo"), func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, r.Header.Get("Authorization"))
	})
	c, _ := hub.New(hub.Options{Endpoint: fake.URL, Token: hubtest.Token})
	r := models.New(models.Options{Hub: c})
	for _, ref := range []string{"acme/Echo", "acme/Nope", "acme/Gated-13B"} {
		_, err := r.Resolve(t.Context(), ref)
		if err != nil && (strings.Contains(err.Error(), hubtest.Token) || strings.Contains(fmt.Sprintf("%+v", err), hubtest.Token)) {
			t.Errorf("%s: %v", ref, err)
		}
	}
}

// TestRecentWritesAreThrottled: a model answered over and over is logged
// as recent once per minute, not once per answer.
func TestRecentWritesAreThrottled(t *testing.T) {
	fake := newFake(t)
	cache := store.NewMemory()
	r := newResolver(t, fake, cache)
	for range 5 {
		if _, err := r.Resolve(t.Context(), "acme/Open-8B"); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := cache.Entries(t.Context(), "hub:recent", 0)
	if err != nil || len(entries) != 1 {
		t.Errorf("%d recent-log entries for 5 answers, want 1 (%v)", len(entries), err)
	}
}

// TestResolvesWithoutHub: the store-only check says which names need the
// Hub, and never calls it.
func TestResolvesWithoutHub(t *testing.T) {
	fake := newFake(t)
	cache := store.NewMemory()
	r := newResolver(t, fake, cache)
	ctx := context.Background()
	for _, ref := range []string{"llama-3.1-8b", "meta-llama/Llama-2-7b-hf", "not a name!"} {
		if !r.ResolvesWithoutHub(ctx, ref) {
			t.Errorf("%q needs the Hub?", ref)
		}
	}
	for _, ref := range []string{"acme/Open-8B", "Open-8B", "acme/Nope-8B"} {
		if r.ResolvesWithoutHub(ctx, ref) {
			t.Errorf("%q resolves without the Hub before it was looked up", ref)
		}
	}
	if n := len(fake.Requests()); n != 0 {
		t.Fatalf("the check made %d Hub requests", n)
	}
	for _, ref := range []string{"acme/Open-8B", "Open-8B", "acme/Nope-8B"} {
		r.Resolve(ctx, ref)
		if !r.ResolvesWithoutHub(ctx, ref) {
			t.Errorf("%q still needs the Hub after a lookup", ref)
		}
	}
	if !newResolver(t, nil, cache).ResolvesWithoutHub(ctx, "acme/Other-8B") {
		t.Error("offline, nothing needs the Hub")
	}
}
