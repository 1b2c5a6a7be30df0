package vram_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vrambot/vrambot/command/vram"
	"github.com/vrambot/vrambot/hub"
	"github.com/vrambot/vrambot/hub/hubtest"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/models"
	"github.com/vrambot/vrambot/query"
	"github.com/vrambot/vrambot/store"
	"github.com/vrambot/vrambot/store/storetest"
)

// The resolver is the production ModelResolver.
var _ query.ModelResolver = (*models.Resolver)(nil)

func hubDeps(t testing.TB, cache models.Cache) (vram.Deps, *hubtest.Server) {
	t.Helper()
	fake := hubtest.New(t)
	fake.Add(hubtest.Model{ID: "acme/Hubonly-8B", Config: []byte(hubtest.Qwen3Config), Downloads: 10,
		Safetensors: &hub.Safetensors{Parameters: map[string]int64{"BF16": 8_190_735_360}, Total: 8_190_735_360}})
	fake.Add(hubtest.Model{ID: "acme/Gated-8B", Config: []byte(hubtest.Qwen3Config), Gated: true})
	c, err := hub.New(hub.Options{Endpoint: fake.URL, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r := models.New(models.Options{Hub: c, Endpoint: "hub.test", Cache: cache})
	return vram.Deps{Models: r, Offers: newVRAMOffers()}, fake
}

func TestVRAMHubModel(t *testing.T) {
	deps, _ := hubDeps(t, store.NewMemory())
	r, err := vram.Estimate(t.Context(), "acme/Hubonly-8B lora 4090 bs=2", deps)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Result
	if res.Workload.ModelName != "acme/Hubonly-8B" || res.Workload.Params < 8e9 || !strings.HasPrefix(r.Title, "acme/Hubonly-8B · LoRA") {
		t.Errorf("workload %s %d, title %q", res.Workload.ModelName, res.Workload.Params, r.Title)
	}
	if !strings.Contains(strings.Join(res.Workload.Assumptions, "\n"), "not in the catalog — looked up on the Hub (hub.test): architecture read from its config.json") {
		t.Errorf("assumptions %q", res.Workload.Assumptions)
	}
	// A bare name found by the Hub's search.
	if r, err := vram.Estimate(t.Context(), "hubonly-8b inference h100", deps); err != nil || r.Result.Workload.ModelName != "acme/Hubonly-8B" {
		t.Errorf("bare name: %v", err)
	}
	_, err = vram.Estimate(t.Context(), "acme/Gated-8B inference", deps)
	if errs.KindOf(err) != errs.NotFound || !strings.Contains(errs.UserMessage(err), "HF_TOKEN") {
		t.Errorf("gated: %v", err)
	}
}

func TestVRAMWithConfig(t *testing.T) {
	r, err := vram.EstimateConfig(t.Context(), "inference h100 seq=4096 bs=2", []byte(hubtest.Qwen3Config), "Private-8B", vram.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Result
	if res.Workload.ModelName != "Private-8B" || res.GPU.Key != "H100-SXM" || res.Estimate.KVCacheBytes <= 0 || len(r.Actions) != 0 {
		t.Errorf("got %s on %s, kv %d, actions %v", res.Workload.ModelName, res.GPU.Key, res.Estimate.KVCacheBytes, r.Actions)
	}
	_, err = vram.EstimateConfig(t.Context(), "inference", []byte(`{"hidden_size": 4096}`), "x", vram.Deps{})
	if errs.KindOf(err) != errs.Invalid || !strings.Contains(errs.UserMessage(err), "num_hidden_layers") {
		t.Errorf("bad config: %v", err)
	}
}

// BenchmarkVRAMCachedHubModel is a full /vram answer for a model that only
// the Hub has, once its config.json is in the cache: cache read, config
// translation, estimate, plan and offers.
func BenchmarkVRAMCachedHubModel(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchmarkCachedHubModel(b, store.NewMemory()) })
	// serve's store: one GET and one log append per answer.
	b.Run("redis", func(b *testing.B) { benchmarkCachedHubModel(b, storetest.NewRedis(b)) })
}

func benchmarkCachedHubModel(b *testing.B, cache models.Cache) {
	deps, fake := hubDeps(b, cache)
	const query = "acme/Hubonly-8B lora 4090 bs=4 seq=4096"
	if _, err := vram.Estimate(context.Background(), query, deps); err != nil {
		b.Fatal(err)
	}
	before := len(fake.Requests())
	for b.Loop() {
		if _, err := vram.Estimate(context.Background(), query, deps); err != nil {
			b.Fatal(err)
		}
	}
	if n := len(fake.Requests()); n != before {
		b.Fatalf("%d Hub requests while cached", n-before)
	}
}
