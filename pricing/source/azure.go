package source

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/vrambot/vrambot/internal/redact"
	"github.com/vrambot/vrambot/pricing"
)

// DefaultAzureURL is the public, unauthenticated Azure Retail Prices API
// (docs/pricing.md §3.1).
const DefaultAzureURL = "https://prices.azure.com/api/retail/prices"

// azureAPIVersion makes $filter values case-sensitive and stable
// (docs/pricing.md §3.1).
const azureAPIVersion = "2023-01-01-preview"

// azureMaxPages bounds the pages read per VM series. A series has a few
// thousand Linux consumption rows over all regions at 1000 rows a page, so
// 50 pages only stop a server that pages forever.
const azureMaxPages = 50

// azureSeries are the GPU VM series: NC (compute), ND (training), NV
// (visualisation). One paged query each, because the API's $filter has
// contains() but documents no "or".
var azureSeries = []string{"NC", "ND", "NV"}

// azure reads the Azure Retail Prices API.
type azure struct {
	baseURL string
	client  *http.Client
	now     func() time.Time
}

// NewAzure returns a source for the Azure Retail Prices API at baseURL
// (DefaultAzureURL when empty): Linux pay-as-you-go and spot prices of the
// GPU VM sizes in the table azureSKUs, in every region. A nil client gets one
// with a timeout.
func NewAzure(baseURL string, client *http.Client) pricing.Source {
	if baseURL == "" {
		baseURL = DefaultAzureURL
	}
	return &azure{baseURL: baseURL, client: httpClient(client), now: time.Now}
}

// Name implements pricing.Source.
func (a *azure) Name() string { return "azure" }

// Fetch implements pricing.Source: one paged query per VM series, following
// NextPageLink (on the same host only) until it is empty.
func (a *azure) Fetch(ctx context.Context) (pricing.Fetched, error) {
	base, err := url.Parse(a.baseURL)
	if err != nil || base.Host == "" {
		return pricing.Fetched{}, fmt.Errorf("azure: base URL %s: not an absolute URL", redact.URL(a.baseURL))
	}
	asOf := today(a.now())
	label := fmt.Sprintf("Azure Retail Prices API (fetched %s)", asOf)
	var c collector
	for _, series := range azureSeries {
		if err := a.fetchSeries(ctx, base, series, asOf, label, &c); err != nil {
			return pricing.Fetched{}, fmt.Errorf("azure %s series: %w", series, err)
		}
	}
	return c.fetched, nil
}

// fetchSeries reads every page of one series into c.
func (a *azure) fetchSeries(ctx context.Context, base *url.URL, series, asOf, label string, c *collector) error {
	next := azureQueryURL(base, series)
	for page := 1; next != ""; page++ {
		if page > azureMaxPages {
			slog.WarnContext(ctx, "azure prices: page limit reached; later pages not read",
				"series", series, "pages", azureMaxPages)
			return nil
		}
		body, err := get(ctx, a.client, next)
		if err != nil {
			return fmt.Errorf("page %d: %w", page, err)
		}
		link, err := parseAzurePage(body, asOf, label, c)
		if err != nil {
			return fmt.Errorf("page %d: %w", page, err)
		}
		if next, err = sameHostLink(base, link); err != nil {
			return fmt.Errorf("page %d: %w", page, err)
		}
	}
	return nil
}

// azureQueryURL builds the first page's URL for a series. The filter asks for
// pay-as-you-go Linux prices without Low Priority meters; spot meters stay,
// as spot offers.
func azureQueryURL(base *url.URL, series string) string {
	filter := "serviceName eq 'Virtual Machines' and priceType eq 'Consumption'" +
		" and contains(armSkuName,'Standard_" + series + "')" +
		" and contains(productName,'Windows') eq false" +
		" and contains(meterName,'Low Priority') eq false"
	u := *base
	q := u.Query()
	q.Set("api-version", azureAPIVersion)
	q.Set("$filter", filter)
	u.RawQuery = q.Encode()
	return u.String()
}

// sameHostLink returns NextPageLink when it is on the API's own scheme and
// host; a link elsewhere is refused rather than followed.
func sameHostLink(base *url.URL, link string) (string, error) {
	if link == "" {
		return "", nil
	}
	u, err := url.Parse(link)
	if err != nil {
		return "", fmt.Errorf("NextPageLink: %w", unwrapURLError(err))
	}
	if u.Scheme != base.Scheme || u.Hostname() != base.Hostname() {
		return "", fmt.Errorf("NextPageLink %s: not on %s", redact.URL(link), base.Host)
	}
	return link, nil
}

// azurePage is the Retail Prices API envelope (docs/pricing.md §3.1).
type azurePage struct {
	Items        []azureItem `json:"Items"`
	NextPageLink *string     `json:"NextPageLink"`
}

// azureItem is one price row; only the fields used are decoded.
type azureItem struct {
	CurrencyCode         string  `json:"currencyCode"`
	RetailPrice          float64 `json:"retailPrice"`
	ArmRegionName        string  `json:"armRegionName"`
	MeterName            string  `json:"meterName"`
	ProductName          string  `json:"productName"`
	SkuName              string  `json:"skuName"`
	ServiceName          string  `json:"serviceName"`
	UnitOfMeasure        string  `json:"unitOfMeasure"`
	Type                 string  `json:"type"`
	IsPrimaryMeterRegion *bool   `json:"isPrimaryMeterRegion"`
	ArmSkuName           string  `json:"armSkuName"`
}

// parseAzurePage adds one page's offers to c and returns its NextPageLink.
// Rows the query should not have returned (Windows, Low Priority,
// reservations, other units or currencies, secondary meter regions) are
// skipped uncounted; GPU sizes not in azureSKUs, fractional-GPU sizes and
// unusable prices are dropped and counted.
func parseAzurePage(data []byte, asOf, label string, c *collector) (string, error) {
	var page azurePage
	if err := json.Unmarshal(data, &page); err != nil {
		return "", fmt.Errorf("decode prices page: %w", err)
	}
	for _, it := range page.Items {
		if !it.wanted() {
			continue
		}
		gpu, count, ok := azureSKU(it.ArmSkuName)
		if !ok {
			c.drop()
			continue
		}
		c.add(row{
			provider: "azure",
			instance: it.ArmSkuName,
			gpuName:  gpu,
			hint:     strings.ToLower(it.ArmSkuName),
			count:    count,
			price:    it.RetailPrice,
			spot:     strings.HasSuffix(it.MeterName, "Spot") || strings.HasSuffix(it.SkuName, "Spot"),
			region:   it.ArmRegionName,
			asOf:     asOf,
			source:   label,
		})
	}
	if page.NextPageLink == nil {
		return "", nil
	}
	return *page.NextPageLink, nil
}

// wanted reports a Linux pay-as-you-go (or spot) hourly USD VM price.
func (it azureItem) wanted() bool {
	switch {
	case it.Type != "Consumption",
		it.ServiceName != "" && it.ServiceName != "Virtual Machines",
		it.CurrencyCode != "" && it.CurrencyCode != "USD",
		it.UnitOfMeasure != "1 Hour",
		strings.Contains(it.ProductName, "Windows"),
		strings.Contains(it.MeterName, "Low Priority"),
		it.IsPrimaryMeterRegion != nil && !*it.IsPrimaryMeterRegion:
		return false
	}
	return true
}

// azureSize is a family of Azure GPU VM sizes: the GPU and its count per
// vCPU size (the number after NC/ND/NV). A size missing from counts holds a
// fraction of a GPU, which no offer can express, so it is dropped.
type azureSize struct {
	sku    *regexp.Regexp
	gpu    string
	counts map[int]int
}

// azureSKUs is the table of GPU VM sizes, after gpuhunt's gpu_vm_series and
// Microsoft's size pages (docs/pricing.md §3.1). The regexps see armSkuName.
var azureSKUs = []azureSize{
	{regexp.MustCompile(`^Standard_NC(\d+)ads_A100_v4$`), "A100 80GB", map[int]int{24: 1, 48: 2, 96: 4}},
	{regexp.MustCompile(`^Standard_ND(\d+)amsr_A100_v4$`), "A100 80GB", map[int]int{96: 8}},
	{regexp.MustCompile(`^Standard_ND(\d+)asr(?:_A100)?_v4$`), "A100 40GB", map[int]int{96: 8}},
	{regexp.MustCompile(`^Standard_NCC?(\d+)adi?s_H100_v5$`), "H100 NVL", map[int]int{40: 1, 80: 2}},
	{regexp.MustCompile(`^Standard_ND(\d+)isr_H100_v5$`), "H100 SXM", map[int]int{96: 8}},
	{regexp.MustCompile(`^Standard_ND(\d+)isr_H200_v5$`), "H200", map[int]int{96: 8}},
	{regexp.MustCompile(`^Standard_ND(\d+)isr_MI300X_v5$`), "MI300X", map[int]int{96: 8}},
	{regexp.MustCompile(`^Standard_NC(\d+)as_T4_v3$`), "T4", map[int]int{4: 1, 8: 1, 16: 1, 64: 4}},
	{regexp.MustCompile(`^Standard_NC(\d+)r?s_v3$`), "V100 16GB", map[int]int{6: 1, 12: 2, 24: 4}},
	{regexp.MustCompile(`^Standard_ND(\d+)rs_v2$`), "V100 32GB", map[int]int{40: 8}},
	{regexp.MustCompile(`^Standard_NV(\d+)adm?s_A10_v5$`), "A10", map[int]int{36: 1, 72: 2}},
	{regexp.MustCompile(`^Standard_NC(\d+)ads_A10_v4$`), "A10", map[int]int{32: 1}},
}

// azureSKU returns the GPU name and count of a whole-GPU VM size.
func azureSKU(armSkuName string) (gpu string, count int, ok bool) {
	for _, s := range azureSKUs {
		m := s.sku.FindStringSubmatch(armSkuName)
		if m == nil {
			continue
		}
		vcpus, err := strconv.Atoi(m[1])
		if err != nil {
			return "", 0, false
		}
		count, ok = s.counts[vcpus]
		return s.gpu, count, ok
	}
	return "", 0, false
}
