package vram

import "testing"

func TestArticle(t *testing.T) {
	for _, tt := range []struct{ n, want string }{
		{"8k", "an"}, {"80k", "an"}, {"11k", "an"}, {"18k", "an"}, {"11,000", "an"},
		{"4k", "a"}, {"110k", "a"}, {"1,500", "a"}, {"128k", "a"}, {"2,048", "a"},
	} {
		if got := article(tt.n); got != tt.want {
			t.Errorf("article(%q) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
