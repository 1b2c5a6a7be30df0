package main

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// pricesOffer is one offer of `prices --json` / `vram --json`, as a reader
// outside the code sees it.
type pricesOffer struct {
	Provider        string  `json:"provider"`
	InstanceType    string  `json:"instance_type"`
	GPU             string  `json:"gpu"`
	GPUCount        int     `json:"gpu_count"`
	GPUUsableBytes  int64   `json:"gpu_usable_bytes"`
	PricePerHourUSD float64 `json:"price_per_hour_usd"`
	Spot            bool    `json:"spot"`
	Requested       bool    `json:"requested"`
	Region          string  `json:"region"`
	AsOf            string  `json:"as_of"`
	Source          string  `json:"source"`
	AgeDays         int     `json:"age_days"`
	Stale           bool    `json:"stale"`
	ComponentOnly   bool    `json:"component_only"`
}

// TestVRAMBestOfferIsCheapestFreshWholeInstance is issue 14's acceptance
// check, made from outside the code: for each query, the first offer
// `vram --json` names is the cheapest whole instance that fits among the
// fresh on-demand offers `prices --json` lists (same price; ties may name
// either), and no offer it names is older than 180 days while `prices`
// knows a fresher one for the same GPU.
func TestVRAMBestOfferIsCheapestFreshWholeInstance(t *testing.T) {
	code, out, stderr := runCLI(t, nil, "", "prices", "--json")
	if code != 0 {
		t.Fatalf("prices exit %d: %s", code, stderr)
	}
	var prices struct {
		Offers []pricesOffer `json:"offers"`
	}
	if err := json.Unmarshal([]byte(out), &prices); err != nil {
		t.Fatal(err)
	}
	freshFor := map[string]bool{} // GPUs with a whole-instance price of at most 180 days
	for _, o := range prices.Offers {
		if !o.ComponentOnly && o.AgeDays <= 180 {
			freshFor[o.GPU] = true
		}
	}

	for _, query := range []string{
		"7b lora a100",
		"llama-2-7b qlora 4090",
		"mistral-7b inference l4",
		"13b lora",
		"llama-2-13b full a100 gc=on",
		"70b qlora h100",
		"1b inference t4",
	} {
		t.Run(query, func(t *testing.T) {
			code, out, stderr := runCLI(t, nil, "", append([]string{"vram", "--json"}, strings.Fields(query)...)...)
			if code != 0 {
				t.Fatalf("vram exit %d: %s", code, stderr)
			}
			var v struct {
				Workload struct {
					GPUs int `json:"gpus"`
				} `json:"workload"`
				Estimate struct {
					TotalBytes int64 `json:"total_bytes"`
				} `json:"estimate"`
				Stages []struct {
					Fixes []struct {
						TotalAfterBytes *int64 `json:"total_after_bytes"`
					} `json:"fixes"`
				} `json:"stages"`
				Offers []pricesOffer `json:"offers"`
			}
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatal(err)
			}
			// The offers fit the plan's final workload: after the last fix.
			need := v.Estimate.TotalBytes
			if n := len(v.Stages); n > 0 {
				fixes := v.Stages[n-1].Fixes
				if after := fixes[len(fixes)-1].TotalAfterBytes; after != nil {
					need = *after
				}
			}
			gpus := max(v.Workload.GPUs, 1)
			var cheapest *pricesOffer
			for i, o := range prices.Offers {
				if o.ComponentOnly || o.Spot || o.AgeDays > 30 || o.GPUCount < gpus || o.GPUUsableBytes < need {
					continue
				}
				if cheapest == nil || o.PricePerHourUSD < cheapest.PricePerHourUSD {
					cheapest = &prices.Offers[i]
				}
			}
			if cheapest == nil {
				t.Fatalf("no fresh whole instance in prices fits %d bytes on %d GPUs", need, gpus)
			}
			if len(v.Offers) == 0 {
				t.Fatalf("vram names no offer; prices has %s %s at $%.3f/h", cheapest.Provider, cheapest.InstanceType, cheapest.PricePerHourUSD)
			}
			best := v.Offers[0]
			if best.PricePerHourUSD != cheapest.PricePerHourUSD || best.ComponentOnly || best.Spot {
				t.Errorf("vram's best offer %s %s ($%.3f/h, %d days old) is not the cheapest fresh whole instance that fits: %s %s ($%.3f/h)",
					best.Provider, best.InstanceType, best.PricePerHourUSD, best.AgeDays,
					cheapest.Provider, cheapest.InstanceType, cheapest.PricePerHourUSD)
			}
			for _, o := range v.Offers {
				if o.ComponentOnly {
					t.Errorf("a GPU-only price is ranked: %s %s", o.Provider, o.InstanceType)
				}
				if o.AgeDays > 180 && freshFor[o.GPU] {
					t.Errorf("%s %s is %d days old, ranked while prices has a fresher %s price", o.Provider, o.InstanceType, o.AgeDays, o.GPU)
				}
				if o.Stale != (o.AgeDays > 30) {
					t.Errorf("%s %s: %d days old, stale %v", o.Provider, o.InstanceType, o.AgeDays, o.Stale)
				}
			}
		})
	}
}

// TestPricesCLI checks the prices command from outside: families, the names
// people type, bare --min-memory numbers, the 2025-26 GPUs with dated
// sources, ages in JSON, and text within 100 columns.
func TestPricesCLI(t *testing.T) {
	listing := func(args ...string) []pricesOffer {
		t.Helper()
		code, out, stderr := runCLI(t, nil, "", append([]string{"prices", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("prices %v: exit %d: %s", args, code, stderr)
		}
		var p struct {
			Offers []pricesOffer `json:"offers"`
		}
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		return p.Offers
	}
	variants := map[string]bool{}
	for _, o := range listing("--gpu", "h100") {
		variants[o.GPU] = true
	}
	for _, want := range []string{"H100 80GB SXM", "H100 80GB PCIe", "H100 NVL 94GB"} {
		if !variants[want] {
			t.Errorf("--gpu h100 lacks %s: %v", want, variants)
		}
	}
	for _, name := range []string{"rtx 4090", "a100 80gb", "mi300x", "b200", "rtx pro 6000"} {
		if len(listing("--gpu", name)) == 0 {
			t.Errorf("--gpu %q lists nothing", name)
		}
	}
	// Unquoted, as people type it: the words after --gpu are the name.
	for _, o := range listing("--gpu", "rtx", "4090") {
		if o.GPU != "GeForce RTX 4090" {
			t.Errorf("--gpu rtx 4090 lists %s", o.GPU)
		}
	}
	// The GPUs of 2025-26 appear, each with a dated source.
	all := listing()
	seen := map[string]bool{}
	for _, o := range all {
		if o.AsOf == "" || o.Source == "" {
			t.Errorf("%s %s lacks its date or source", o.Provider, o.InstanceType)
		}
		if o.Stale != (o.AgeDays > 30) {
			t.Errorf("%s %s: %d days old, stale %v", o.Provider, o.InstanceType, o.AgeDays, o.Stale)
		}
		seen[o.GPU] = true
	}
	for _, want := range []string{"B200", "B300", "GB200 186GB", "GeForce RTX 5090", "RTX PRO 6000 Blackwell", "Instinct MI325X"} {
		if !seen[want] {
			t.Errorf("prices lists no %s", want)
		}
	}

	code, out, stderr := runCLI(t, nil, "", "prices", "--min-memory", "48")
	if code != 0 || !strings.Contains(out, "read as 48 GB") || strings.Contains(out, "GeForce RTX 4090") {
		t.Errorf("--min-memory 48: exit %d, stderr %q:\n%s", code, stderr, out)
	}
	code, out, _ = runCLI(t, nil, "", "prices")
	if code != 0 {
		t.Fatalf("prices exit %d", code)
	}
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("prices text line of %d columns: %q", n, line)
		}
	}
	if code, _, stderr := runCLI(t, nil, "", "prices", "--gpu", "b2000"); code != 2 || !strings.Contains(stderr, "b200") {
		t.Errorf("--gpu b2000: exit %d, %q; want 2 and a b200 suggestion", code, stderr)
	}
}
