package redact

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	tests := map[string]string{
		"https://user:pw@prices.example.com/list.csv?token=abc#x": "https://prices.example.com/list.csv",
		"redis://:hunter2@10.0.0.7:6379/2":                        "redis://10.0.0.7:6379/2",
		"http://prom:9090":                                        "http://prom:9090",
		"not a url\x7f":                                           Invalid,
		"/relative/path":                                          Invalid,
	}
	for in, want := range tests {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Origin("https://hooks.slack.com/actions/T1/B2/SECRET"); got != "https://hooks.slack.com" {
		t.Errorf("Origin = %q", got)
	}
}

func TestErrorKeepsOpAndCause(t *testing.T) {
	const raw = "https://hooks.slack.com/actions/T1/B2/SECRET?x=1"
	ue := &url.Error{Op: "Post", URL: raw, Err: context.DeadlineExceeded}
	for _, err := range []error{ue, fmt.Errorf("respond: %w", ue)} {
		got := Error(err, Origin)
		if strings.Contains(got.Error(), "SECRET") {
			t.Errorf("Error leaks the path: %v", got)
		}
		if !strings.Contains(got.Error(), "Post") || !strings.Contains(got.Error(), "deadline") {
			t.Errorf("Error lost the op or the cause: %v", got)
		}
		if !errors.Is(got, context.DeadlineExceeded) {
			t.Errorf("Error hides the cause from errors.Is: %v", got)
		}
		var leaked *url.Error
		if errors.As(got, &leaked) {
			t.Errorf("the raw *url.Error is still reachable: %v", leaked.URL)
		}
	}
	plain := errors.New("boom")
	if Error(plain, URL) != plain {
		t.Error("an error without a URL must come back unchanged")
	}
}

func TestSecret(t *testing.T) {
	if got := Secret(`bad password "p\"w" in p"w`, `p"w`); strings.Contains(got, `p"w`) || strings.Contains(got, `p\"w`) {
		t.Errorf("Secret = %q", got)
	}
	if Secret("x", "") != "x" {
		t.Error("an empty secret must change nothing")
	}
}
