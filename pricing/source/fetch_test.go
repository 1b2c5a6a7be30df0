package source

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestGetCapsTheBody(t *testing.T) {
	big := bytes.Repeat([]byte("x"), maxResponseBytes+1)
	srv := newRecordingServer(t, map[string]http.HandlerFunc{
		"/big":   body(big),
		"/exact": body(big[:maxResponseBytes]),
	})
	_, err := get(context.Background(), http.DefaultClient, srv.URL+"/big")
	if !errors.Is(err, errTooLarge) {
		t.Errorf("err = %v, want errTooLarge", err)
	}
	got, err := get(context.Background(), http.DefaultClient, srv.URL+"/exact")
	if err != nil || len(got) != maxResponseBytes {
		t.Errorf("a body of exactly the cap: %d bytes, err %v; want it whole", len(got), err)
	}
}

func TestGetHidesURLSecrets(t *testing.T) {
	srv := newRecordingServer(t, map[string]http.HandlerFunc{"/p": status(http.StatusUnauthorized)})
	u := strings.Replace(srv.URL, "http://", "http://user:pa55word@", 1) + "/p?token=s3cret"
	_, err := get(context.Background(), http.DefaultClient, u)
	if err == nil {
		t.Fatal("want an error for 401")
	}
	for _, secret := range []string{"pa55word", "s3cret", "user"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("err = %q shows %q", err, secret)
		}
	}
	if !strings.Contains(err.Error(), "401 Unauthorized") {
		t.Errorf("err = %q, want the status", err)
	}
	// A connection failure wraps net/http's *url.Error, whose message holds
	// the whole URL; get must not pass that on.
	_, err = get(context.Background(), http.DefaultClient, "http://127.0.0.1:1/p?token=s3cret")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("err = %v, want a connection error without the token", err)
	}
}
