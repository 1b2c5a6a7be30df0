package source

import (
	"math"
	"testing"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/pricing"
)

// checkOffers asserts what every parser promises for any input: offers carry
// a catalog GPU, a positive count and finite positive prices.
func checkOffers(t *testing.T, f pricing.Fetched) {
	t.Helper()
	if f.Dropped < 0 {
		t.Fatalf("dropped = %d", f.Dropped)
	}
	for _, o := range f.Offers {
		if g, ok := catalog.LookupGPU(o.GPUKey); !ok || g.Key != o.GPUKey || o.GPU == "" {
			t.Fatalf("offer with a GPU not in the catalog: %s", offerLine(o))
		}
		if o.GPUCount < 1 || o.PricePerHourUSD <= 0 || math.IsInf(o.PricePerHourUSD, 0) ||
			o.PricePerGPUHourUSD <= 0 || !validDate(o.AsOf) {
			t.Fatalf("malformed offer: %s", offerLine(o))
		}
	}
}

func FuzzParseGPUHuntCSV(f *testing.F) {
	f.Add(mustRead(f, "gpuhunt/aws.csv"))
	f.Add(mustRead(f, "gpuhunt/lambdalabs.csv"))
	f.Add([]byte("instance_name,location,price,gpu_count,gpu_name,gpu_memory,spot\nx,y,1e308,1,H100,80,True\n"))
	f.Add([]byte("\"unterminated"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseGPUHuntCSV(data, "aws", "20261120-1", "2026-11-20")
		if err == nil {
			checkOffers(t, got)
		}
	})
}

func FuzzGPUHuntZip(f *testing.F) {
	f.Add(zipOf(f, map[string][]byte{"aws.csv": mustRead(f, "gpuhunt/aws.csv")}))
	f.Add([]byte("PK\x03\x04garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		csvData, err := gpuhuntCSV(data, "aws")
		if err == nil && len(csvData) > maxResponseBytes {
			t.Fatalf("zip gave %d bytes, over the cap", len(csvData))
		}
	})
}

func FuzzParseSkyPilotCSV(f *testing.F) {
	for _, cloud := range []string{"lambda", "gcp", "vast", "shadeform"} {
		f.Add(mustRead(f, "skypilot/"+cloud+"/vms.csv"), cloud)
	}
	f.Add([]byte("InstanceType,AcceleratorName,AcceleratorCount,Price,Region\n,A100,8,1,r\na2-megagpu-16g,,,1,r\n"), "gcp")
	f.Fuzz(func(t *testing.T, data []byte, cloud string) {
		got, err := parseSkyPilotCSV(data, cloud, "2026-11-29", "test")
		if err == nil {
			checkOffers(t, got)
		}
	})
}

func FuzzParseAzurePage(f *testing.F) {
	for _, page := range []string{"nc-page1", "nc-page2", "nc-page3", "nd", "nv"} {
		f.Add(mustRead(f, "azure/"+page+".json"))
	}
	f.Add([]byte(`{"Items": [{"type": "Consumption", "unitOfMeasure": "1 Hour", "armSkuName": "Standard_ND96isr_H100_v5", "retailPrice": -1}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c collector
		if _, err := parseAzurePage(data, "2026-11-29", "test", &c); err == nil {
			checkOffers(t, c.fetched)
		}
	})
}

func FuzzParseCustom(f *testing.F) {
	for _, file := range []string{"rates.csv", "rates.json", "wrapped.json"} {
		f.Add(mustRead(f, "custom/"+file))
	}
	f.Add(snapshotCSV)
	f.Add([]byte(`{"offers": [{"gpu_count": 1e300, "provider": "x", "gpu": "T4", "price_per_gpu_hour_usd": 1e300}]}`))
	f.Add([]byte(`[{"gpu_count": 2, "provider": "x", "gpu": "T4", "price_per_gpu_hour_usd": 1e308}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseCustom(data, "2026-11-29", "test")
		if err == nil {
			checkOffers(t, got)
		}
	})
}

func FuzzFromSpec(f *testing.F) {
	f.Add("embedded,gpuhunt:aws,skypilot:lambda,azure,custom:https://x/y.csv")
	f.Add("gpuhnt:,,custom:")
	f.Fuzz(func(t *testing.T, spec string) {
		sources, err := FromSpec(spec, nil)
		if err == nil && len(sources) == 0 {
			t.Fatalf("FromSpec(%q) gave no source and no error", spec)
		}
	})
}
