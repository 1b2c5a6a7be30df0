package source

import (
	"strings"
	"testing"
)

func TestFromSpec(t *testing.T) {
	tests := []struct {
		spec      string
		wantNames []string
	}{
		{"", []string{"embedded"}},
		{" , ,", []string{"embedded"}},
		{"embedded", []string{"embedded"}},
		{"Embedded, embedded", []string{"embedded"}},
		{"embedded,gpuhunt:aws,gpuhunt:lambdalabs", []string{"embedded", "gpuhunt:aws", "gpuhunt:lambdalabs"}},
		{"gpuhunt", []string{"gpuhunt:aws", "gpuhunt:azure", "gpuhunt:gcp", "gpuhunt:lambdalabs", "gpuhunt:runpod",
			"gpuhunt:oci", "gpuhunt:nebius", "gpuhunt:verda", "gpuhunt:cloudrift"}},
		{"gpuhunt:AWS,gpuhunt", []string{"gpuhunt:aws", "gpuhunt:azure", "gpuhunt:gcp", "gpuhunt:lambdalabs", "gpuhunt:runpod",
			"gpuhunt:oci", "gpuhunt:nebius", "gpuhunt:verda", "gpuhunt:cloudrift"}},
		{"skypilot", []string{"skypilot:shadeform", "skypilot:vast", "skypilot:lambda"}},
		{"skypilot:lambda", []string{"skypilot:lambda"}},
		{"skypilot:https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/vast/vms.csv", []string{"skypilot:vast"}},
		{"azure", []string{"azure"}},
		{"azure:http://localhost:8080/prices", []string{"azure"}},
		{"custom:https://rates.internal/gpus.csv?token=abc", []string{"custom:https://rates.internal/gpus.csv"}},
		{"embedded,gpuhunt:aws,skypilot:https://example.com/v8/gcp/vms.csv,azure,custom:https://example.com/r.json",
			[]string{"embedded", "gpuhunt:aws", "skypilot:gcp", "azure", "custom:https://example.com/r.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			sources, err := FromSpec(tt.spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range sources {
				names = append(names, s.Name())
			}
			if strings.Join(names, " ") != strings.Join(tt.wantNames, " ") {
				t.Errorf("names = %v, want %v", names, tt.wantNames)
			}
		})
	}
}

func TestFromSpecErrors(t *testing.T) {
	tests := []struct {
		spec    string
		wantErr []string // all must appear
	}{
		{"embeded", []string{`"embeded"`, `did you mean "embedded"?`}},
		{"gpuhnt:aws", []string{`"gpuhnt:aws"`, `did you mean "gpuhunt:aws"?`}},
		{"embedded,azur", []string{`"azur"`, `did you mean "azure"?`}},
		{"prometheus", []string{`"prometheus": unknown (accepted:`}},
		{"gpuhunt:lamdalabs", []string{`unknown gpuhunt provider; did you mean "gpuhunt:lambdalabs"?`}},
		{"gpuhunt:vastai", []string{"publishes no catalog for vastai"}},
		{"gpuhunt:", []string{"nothing after the colon"}},
		{"custom", []string{"custom needs a URL"}},
		{"custom:ftp://x/y.csv", []string{"not an http(s) URL"}},
		{"custom:rates.csv", []string{"not an http(s) URL"}},
		{"skypilot:../../etc", []string{"neither a cloud name"}},
		{"azure:not a url", []string{"not an http(s) URL"}},
		{"embedded:x", []string{"takes no argument"}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			sources, err := FromSpec(tt.spec, nil)
			if err == nil {
				t.Fatalf("FromSpec(%q) = %d sources, want an error", tt.spec, len(sources))
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

func TestFromSpecHidesCustomToken(t *testing.T) {
	_, err := FromSpec("custom:ftp://user:hunter2@rates.internal/x?token=abc", nil)
	if err == nil {
		t.Fatal("want an error for an ftp URL")
	}
	for _, secret := range []string{"hunter2", "abc"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("err = %q shows %q", err, secret)
		}
	}
}
