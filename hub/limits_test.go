package hub_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/vrambot/vrambot/hub"
	"github.com/vrambot/vrambot/hub/hubtest"
)

// TestRetryAfter: when the Hub says to ask again is read from Retry-After
// or the RateLimit header (docs/hub-api.md §5), capped at the Hub's window.
func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		headers map[string]string
		want    time.Duration
	}{
		{"Retry-After", 429, map[string]string{"Retry-After": "42"}, 42 * time.Second},
		{"RateLimit t=", 429, map[string]string{"RateLimit": `"api";r=0;t=17`}, 17 * time.Second},
		{"Retry-After wins", 429, map[string]string{"Retry-After": "5", "RateLimit": `"api";r=0;t=17`}, 5 * time.Second},
		{"a date is ignored", 429, map[string]string{"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0},
		{"capped at the window", 429, map[string]string{"Retry-After": "999999"}, hub.RateWindow},
		{"503 with Retry-After", 503, map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{"none", 429, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := hubtest.New(t)
			fake.Override(hubtest.ConfigPath("acme/Busy"), func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.headers {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
			})
			_, err := newClient(t, fake.URL, "", time.Second).Config(t.Context(), "acme/Busy")
			var he *hub.Error
			if !errors.As(err, &he) || he.RetryAfter != tt.want {
				t.Fatalf("Config = %v (RetryAfter %v), want %v", err, he, tt.want)
			}
		})
	}
}

// TestConfigWithNonFiniteNumbers: a config.json holding Infinity or NaN
// (nvidia/Nemotron-H configs do) is fetched; reading it is hfconfig's job.
func TestConfigWithNonFiniteNumbers(t *testing.T) {
	fake := hubtest.New(t)
	fake.Add(hubtest.Model{ID: "acme/Inf", Config: []byte(`{"hidden_size": 64, "time_step_limit": [0.0, Infinity], "x": NaN}`)})
	if _, err := newClient(t, fake.URL, "", time.Second).Config(t.Context(), "acme/Inf"); err != nil {
		t.Fatal(err)
	}
}
