package hub

import (
	"net/http"
	"testing"
	"time"
)

// FuzzRetryAfter: whatever the Hub puts in Retry-After and RateLimit, the
// wait read from them is between 0 and the Hub's window.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range [][2]string{{"42", ""}, {"", `"api";r=0;t=17`}, {"Wed, 21 Oct 2015 07:28:00 GMT", ""}, {"999999999", "t=-5"}, {"-1", `;;t=;t=9`}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, retry, rateLimit string) {
		h := http.Header{}
		h.Set("Retry-After", retry)
		h.Set("RateLimit", rateLimit)
		if d := retryAfter(h); d < 0 || d > RateWindow || d%time.Second != 0 {
			t.Fatalf("retryAfter(%q, %q) = %s", retry, rateLimit, d)
		}
	})
}
