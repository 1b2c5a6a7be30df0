package source

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vrambot/vrambot/internal/redact"
	"github.com/vrambot/vrambot/pricing"
)

// custom reads an internal or on-prem price list from a URL.
type custom struct {
	url    string
	client *http.Client
	now    func() time.Time
}

// NewCustom returns a source for a price list at url: either a CSV with the
// embedded snapshot's header (provider, instance_type, gpu, gpu_count,
// price_per_hour_usd required; gpu_memory_gb, spot_price_per_hour_usd,
// component_only, region, source, date optional) or JSON, an array of offers with the Offer
// JSON field names or an object {"offers": [...]}. Rows without a date are
// dated by the fetch. A nil client gets one with a timeout.
func NewCustom(url string, client *http.Client) pricing.Source {
	return &custom{url: url, client: httpClient(client), now: time.Now}
}

// Name implements pricing.Source: "custom:" and the URL without its query,
// which may hold a token.
func (c *custom) Name() string { return "custom:" + redact.URL(c.url) }

// Fetch implements pricing.Source.
func (c *custom) Fetch(ctx context.Context) (pricing.Fetched, error) {
	body, err := get(ctx, c.client, c.url)
	if err != nil {
		return pricing.Fetched{}, fmt.Errorf("custom price list: %w", err)
	}
	f, err := parseCustom(body, today(c.now()), customLabel(c.url))
	if err != nil {
		return pricing.Fetched{}, fmt.Errorf("custom price list %s: %w", redact.URL(c.url), err)
	}
	return f, nil
}

// customLabel is the Source of rows that name none: the list's host.
func customLabel(rawURL string) string {
	host := "unknown host"
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		host = u.Host
	}
	return "custom price list (" + host + ")"
}

// parseCustom reads a custom price list, JSON when it starts with '[' or
// '{', else CSV.
func parseCustom(data []byte, fetchDate, label string) (pricing.Fetched, error) {
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(trimmed) > 0 && (trimmed[0] == '[' || trimmed[0] == '{') {
		return parseCustomJSON(trimmed, fetchDate, label)
	}
	return parsePriceListCSV(data, fetchDate, func(_, rowSource string) string {
		if rowSource != "" {
			return rowSource
		}
		return label
	})
}

// customOffer is one JSON offer. Pointers tell a missing field from a zero;
// unknown fields (requested, hours_to_finish...) are ignored.
type customOffer struct {
	Provider           string   `json:"provider"`
	InstanceType       string   `json:"instance_type"`
	GPU                string   `json:"gpu"`
	GPUCount           *float64 `json:"gpu_count"`
	GPUMemoryBytes     float64  `json:"gpu_memory_bytes"`
	PricePerHourUSD    *float64 `json:"price_per_hour_usd"`
	PricePerGPUHourUSD *float64 `json:"price_per_gpu_hour_usd"`
	Spot               bool     `json:"spot"`
	ComponentOnly      bool     `json:"component_only"`
	Region             string   `json:"region"`
	AsOf               string   `json:"as_of"`
	Source             string   `json:"source"`
}

// parseCustomJSON reads an array of offers or {"offers": [...]}. An element
// that is not an offer object is dropped and counted, as a bad CSV row is.
func parseCustomJSON(data []byte, fetchDate, label string) (pricing.Fetched, error) {
	var elems []json.RawMessage
	if data[0] == '{' {
		var wrapped struct {
			Offers *[]json.RawMessage `json:"offers"`
		}
		if err := json.Unmarshal(data, &wrapped); err != nil {
			return pricing.Fetched{}, fmt.Errorf("decode JSON price list: %w", err)
		}
		if wrapped.Offers == nil {
			return pricing.Fetched{}, errors.New(`decode JSON price list: object has no "offers" array`)
		}
		elems = *wrapped.Offers
	} else if err := json.Unmarshal(data, &elems); err != nil {
		return pricing.Fetched{}, fmt.Errorf("decode JSON price list: %w", err)
	}
	var c collector
	for _, raw := range elems {
		var o customOffer
		if err := json.Unmarshal(raw, &o); err != nil {
			c.drop()
			continue
		}
		r, ok := o.row(fetchDate, label)
		if !ok {
			c.drop()
			continue
		}
		c.add(r)
	}
	return c.fetched, nil
}

// row turns a JSON offer into a row; the instance price may be given
// directly or as a price per GPU-hour.
func (o customOffer) row(fetchDate, label string) (row, bool) {
	if o.GPUCount == nil || strings.TrimSpace(o.Provider) == "" {
		return row{}, false
	}
	count, ok := wholeCount(*o.GPUCount)
	if !ok {
		return row{}, false
	}
	var price float64
	switch {
	case o.PricePerHourUSD != nil:
		price = *o.PricePerHourUSD
	case o.PricePerGPUHourUSD != nil:
		price = *o.PricePerGPUHourUSD * float64(count)
	default:
		return row{}, false
	}
	r := row{
		provider:      o.Provider,
		instance:      o.InstanceType,
		gpuName:       o.GPU,
		memoryGB:      max(o.GPUMemoryBytes, 0) / (1 << 30),
		hint:          o.InstanceType,
		count:         count,
		price:         price,
		spot:          o.Spot,
		componentOnly: o.ComponentOnly,
		region:        o.Region,
		asOf:          o.AsOf,
		source:        o.Source,
	}
	if r.asOf == "" {
		r.asOf = fetchDate
	}
	if r.source == "" {
		r.source = label
	}
	return r, true
}
