package source

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vrambot/vrambot/pricing"
)

// SkyPilotCatalogURL is the raw-file address SkyPilot clients read a cloud's
// catalog from (docs/pricing.md §2.2); %s is the cloud ("lambda", "vast", ...).
const SkyPilotCatalogURL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/%s/vms.csv"

// SkyPilotDefaultClouds are the small SkyPilot catalogs docs/pricing.md §6
// recommends for breadth: Shadeform (many neoclouds), Vast and Lambda.
var SkyPilotDefaultClouds = []string{"shadeform", "vast", "lambda"}

// skypilotProviderNames maps SkyPilot cloud names to the provider names the
// embedded snapshot uses.
var skypilotProviderNames = map[string]string{"vast": "vastai"}

// skypilot fetches SkyPilot catalog vms.csv files.
type skypilot struct {
	urls   []string
	client *http.Client
	now    func() time.Time
}

// NewSkyPilot returns a source reading the SkyPilot catalog vms.csv files at
// urls; the cloud is the directory that holds each file
// (".../catalogs/v8/lambda/vms.csv" is lambda). A nil client gets one with a
// timeout.
func NewSkyPilot(urls []string, client *http.Client) pricing.Source {
	return &skypilot{urls: slices.Clone(urls), client: httpClient(client), now: time.Now}
}

// Name implements pricing.Source: "skypilot:lambda", or "skypilot:vast+lambda".
func (s *skypilot) Name() string {
	clouds := make([]string, len(s.urls))
	for i, u := range s.urls {
		clouds[i] = skypilotCloud(u)
	}
	return "skypilot:" + strings.Join(clouds, "+")
}

// Fetch implements pricing.Source. Any file failing fails the fetch, so the
// cache keeps the last complete data.
func (s *skypilot) Fetch(ctx context.Context) (pricing.Fetched, error) {
	if len(s.urls) == 0 {
		return pricing.Fetched{}, errors.New("skypilot: no catalog URL given")
	}
	asOf := today(s.now())
	var all pricing.Fetched
	for _, u := range s.urls {
		cloud := skypilotCloud(u)
		body, err := get(ctx, s.client, u)
		if err != nil {
			return pricing.Fetched{}, fmt.Errorf("skypilot %s: %w", cloud, err)
		}
		// The catalogs carry no date; the fetch day is the as-of, and the
		// label says so, as the snapshot does for these files.
		label := fmt.Sprintf("skypilot catalog %s/vms.csv (undated; fetched %s)", cloud, asOf)
		f, err := parseSkyPilotCSV(body, cloud, asOf, label)
		if err != nil {
			return pricing.Fetched{}, fmt.Errorf("skypilot %s: %w", cloud, err)
		}
		all.Offers = append(all.Offers, f.Offers...)
		all.Dropped += f.Dropped
	}
	return all, nil
}

// skypilotCloud is the directory name above vms.csv in u, or its host.
func skypilotCloud(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "invalid-url"
	}
	if dir := path.Base(path.Dir(u.Path)); dir != "." && dir != "/" && dir != "" {
		return dir
	}
	if u.Host != "" {
		return u.Host
	}
	return "unknown"
}

// SkyPilot catalog columns (README, schema v7/v8); order differs per file.
const (
	spInstance = "InstanceType"
	spAccel    = "AcceleratorName"
	spCount    = "AcceleratorCount"
	spGPUInfo  = "GpuInfo"
	spPrice    = "Price"
	spSpot     = "SpotPrice"
	spRegion   = "Region"
	spZone     = "AvailabilityZone"
)

// gpuInfoName and gpuInfoMiB read GpuInfo, a Python dict literal (single
// quotes, so not JSON): only the first GPU's name and memory are needed.
var (
	gpuInfoName = regexp.MustCompile(`'Name':\s*'([^']{0,64})'`)
	gpuInfoMiB  = regexp.MustCompile(`'SizeInMiB':\s*([0-9]{1,9}(?:\.[0-9]{1,6})?)`)
)

// shadeformMiBIsGB is the largest SizeInMiB taken as GB: the Shadeform file
// writes GB in that field (80 for an A100 80GB), real MiB values are larger.
const shadeformMiBIsGB = 1024

// skypilotRow is one vms.csv row with its price cells read.
type skypilotRow struct {
	instance, accel, gpuName, region, zone string
	count                                  int
	memoryGB                               float64
	price, spot                            float64 // spot 0: none
}

// parseSkyPilotCSV reads a SkyPilot vms.csv by header name. Rows with an
// accelerator are offers (plus a spot offer when SpotPrice is set). GCP
// splits a GPU machine's price into a host-VM row (no accelerator) and a
// GPU row (no instance type); those are added together per zone. A host VM
// of a GPU family whose GPU row is missing is dropped and counted; a GPU row
// no host VM claims (n1-attachable T4, V100) is an offer of its own whose
// instance type says the host VM is not included. Rows without accelerator
// that are no GPU family are CPU instances and are skipped uncounted.
func parseSkyPilotCSV(data []byte, cloud, asOf, label string) (pricing.Fetched, error) {
	t, err := newCSVTable(data, spInstance, spAccel, spCount, spPrice, spRegion)
	if err != nil {
		return pricing.Fetched{}, err
	}
	provider := cloud
	if n, ok := skypilotProviderNames[cloud]; ok {
		provider = n
	}
	var (
		c        collector
		hosts    []skypilotRow
		gpuParts = make(map[string]*gpuPart)
		partKeys []string // insertion order, so output does not depend on map order
	)
	for rec := range t.rows(&c) {
		if t.get(rec, spAccel) == "" {
			if _, _, gpuHost := gcpHostGPUs(t.get(rec, spInstance)); !gpuHost {
				continue // a CPU instance
			}
		}
		r, ok := readSkyPilotRow(t, rec)
		if !ok {
			c.drop()
			continue
		}
		switch {
		case r.accel == "":
			hosts = append(hosts, r)
		case r.instance == "":
			k := partKey(r.accel, r.count, r.region, r.zone)
			if _, dup := gpuParts[k]; !dup {
				partKeys = append(partKeys, k)
			}
			gpuParts[k] = &gpuPart{row: r}
		default:
			addSkyPilotOffers(&c, r, rowProvider(provider, cloud, r.instance), asOf, label, false)
		}
	}
	for _, h := range hosts {
		accel, count, _ := gcpHostGPUs(h.instance)
		part, ok := gpuParts[partKey(accel, count, h.region, h.zone)]
		if !ok {
			c.drop()
			continue
		}
		part.claimed = true
		combined := h
		combined.accel, combined.gpuName, combined.count = part.row.accel, part.row.gpuName, count
		combined.memoryGB = part.row.memoryGB
		combined.price = h.price + part.row.price
		combined.spot = 0
		if h.spot > 0 && part.row.spot > 0 {
			combined.spot = h.spot + part.row.spot
		}
		addSkyPilotOffers(&c, combined, provider, asOf, label, false)
	}
	for _, k := range partKeys {
		part := gpuParts[k]
		if part.claimed {
			continue
		}
		r := part.row
		r.instance = fmt.Sprintf("%dx %s (GPU only; add a host VM)", r.count, r.accel)
		addSkyPilotOffers(&c, r, provider, asOf, label, true)
	}
	return c.fetched, nil
}

// gpuPart is a GCP GPU-only row waiting for its host VM.
type gpuPart struct {
	row     skypilotRow
	claimed bool
}

// partKey joins a GPU row to host VMs of the same accelerator, count and zone.
func partKey(accel string, count int, region, zone string) string {
	return strings.ToLower(accel) + "|" + strconv.Itoa(count) + "|" + region + "|" + zone
}

// readSkyPilotRow reads the cells of one row; false means malformed.
func readSkyPilotRow(t *csvTable, rec []string) (skypilotRow, bool) {
	r := skypilotRow{
		instance: t.get(rec, spInstance),
		accel:    t.get(rec, spAccel),
		region:   t.get(rec, spRegion),
		zone:     t.get(rec, spZone),
		count:    1,
	}
	price, ok := parsePrice(t.get(rec, spPrice))
	if !ok {
		return r, false
	}
	r.price = price
	if cell := t.get(rec, spSpot); cell != "" && parseFloat(cell) != 0 {
		spot, ok := parsePrice(cell)
		if !ok {
			return r, false
		}
		r.spot = spot
	}
	if r.accel == "" {
		return r, true
	}
	if r.count, ok = parseCount(t.get(rec, spCount)); !ok {
		return r, false
	}
	info := t.get(rec, spGPUInfo)
	if m := gpuInfoName.FindStringSubmatch(info); m != nil {
		r.gpuName = m[1]
	}
	if m := gpuInfoMiB.FindStringSubmatch(info); m != nil {
		mib := parseFloat(m[1])
		if mib > 0 && mib <= shadeformMiBIsGB {
			r.memoryGB = mib
		} else {
			r.memoryGB = mib / 1024
		}
	}
	return r, true
}

// addSkyPilotOffers adds the on-demand offer of r and, when it has one, its
// spot offer; componentOnly marks a GPU row no host VM claimed.
func addSkyPilotOffers(c *collector, r skypilotRow, provider, asOf, label string, componentOnly bool) {
	o := row{
		provider:      provider,
		instance:      r.instance,
		gpuName:       r.accel,
		memoryGB:      r.memoryGB,
		hint:          r.instance + " " + r.gpuName,
		count:         r.count,
		price:         r.price,
		componentOnly: componentOnly,
		region:        r.region,
		asOf:          asOf,
		source:        label,
	}
	c.add(o)
	if r.spot > 0 {
		o.price, o.spot = r.spot, true
		c.add(o)
	}
}

// rowProvider names the provider of a row: Shadeform resells other clouds
// and names each instance "<cloud>_<type>".
func rowProvider(provider, cloud, instance string) string {
	if cloud == "shadeform" {
		if p, _, ok := strings.Cut(instance, "_"); ok && p != "" {
			return strings.ToLower(p)
		}
	}
	return provider
}

// gcpGPUFamilies maps GCP machine families with built-in GPUs to the
// AcceleratorName of their GPU rows in the SkyPilot GCP catalog.
var gcpGPUFamilies = map[string]string{
	"a2-highgpu":  "A100",
	"a2-megagpu":  "A100",
	"a2-ultragpu": "A100-80GB",
	"a3-highgpu":  "H100",
	"a3-edgegpu":  "H100",
	"a3-megagpu":  "H100-MEGA",
	"a3-ultragpu": "H200",
	"a4-highgpu":  "B200",
}

// gcpGPUMachine reads "<family>-<N>g" (a2-highgpu-8g).
var gcpGPUMachine = regexp.MustCompile(`^([a-z0-9]+-[a-z]+gpu)-([0-9]{1,2})g$`)

// g2L4Count is the L4 count of each g2-standard size (GCP G2 machine types).
var g2L4Count = map[string]int{
	"g2-standard-4": 1, "g2-standard-8": 1, "g2-standard-12": 1, "g2-standard-16": 1,
	"g2-standard-32": 1, "g2-standard-24": 2, "g2-standard-48": 4, "g2-standard-96": 8,
}

// gcpHostGPUs reports the GPUs built into a GCP machine type.
func gcpHostGPUs(instance string) (accel string, count int, ok bool) {
	if n, ok := g2L4Count[instance]; ok {
		return "L4", n, true
	}
	m := gcpGPUMachine.FindStringSubmatch(instance)
	if m == nil {
		return "", 0, false
	}
	accel, ok = gcpGPUFamilies[m[1]]
	if !ok {
		return "", 0, false
	}
	count, err := strconv.Atoi(m[2])
	if err != nil || count < 1 {
		return "", 0, false
	}
	return accel, count, true
}
