package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vrambot/vrambot/store"
	"github.com/vrambot/vrambot/store/storetest"
)

func TestRedisConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return storetest.NewRedis(t) })
}

// TestRedisPurgeKeepsOtherPrefixes checks that cleaning up one test's keys
// leaves another's (and a real bot's) alone.
func TestRedisPurgeKeepsOtherPrefixes(t *testing.T) {
	ctx := t.Context()
	mine, theirs := storetest.NewRedis(t), storetest.NewRedis(t)
	for _, s := range []store.Store{mine, theirs} {
		if err := s.Set(ctx, "k", []byte("v"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, "log", []byte("e"), 10); err != nil {
			t.Fatal(err)
		}
	}
	n, err := mine.Purge(ctx)
	if err != nil {
		t.Fatalf("Purge: %v", err)
	}
	if n != 2 {
		t.Errorf("Purge deleted %d keys, want 2 (value and log)", n)
	}
	if _, err := mine.Get(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("own key survived Purge: %v", err)
	}
	if _, err := theirs.Get(ctx, "k"); err != nil {
		t.Errorf("other prefix's key was purged: %v", err)
	}
}

// TestRedisUnreachable checks that a stopped Redis gives prompt, wrapped
// errors rather than a hang, and that NewRedis itself does not connect.
func TestRedisUnreachable(t *testing.T) {
	r, err := store.NewRedis("redis://127.0.0.1:1/0")
	if err != nil {
		t.Fatalf("NewRedis must not connect: %v", err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err = r.Get(ctx, "k")
	if err == nil || errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get on a stopped Redis = %v, want a connection error", err)
	}
	if !strings.Contains(err.Error(), "store redis get") {
		t.Errorf("error %q lacks the operation", err)
	}
	// About 0.1 s with one dial per attempt (store.NewRedis); the bound
	// leaves a wide margin for a loaded CI machine.
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Get took %s on a refused connection", d)
	}
	if err := r.Ping(ctx); err == nil {
		t.Error("Ping on a stopped Redis succeeded")
	}
}

func TestNewRedisURLs(t *testing.T) {
	const secret = "s3cr3t-p4ss"
	tests := []struct {
		url     string
		wantErr bool
	}{
		{"redis://127.0.0.1:6379/0", false},
		{"redis://127.0.0.1:6379", false},
		{"redis://:" + secret + "@127.0.0.1:6379/2", false},
		{"redis://user:" + secret + "@127.0.0.1:6379/15", false},
		{"rediss://user:" + secret + "@redis.example.com:6380/1", false},
		{"redis://user:" + secret + "@127.0.0.1:6379/notanumber", true},
		{"redis://user:" + secret + "@127.0.0.1:6379/1/2", true},
		{"http://user:" + secret + "@127.0.0.1:6379/0", true},
		{"redis://user:" + secret + "@[::1:6379/0", true},
		{"redis://user:" + secret + "@127.0.0.1:6379/0\x7f", true},
		{"::" + secret + "@", true},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.url, secret, "PW"), func(t *testing.T) {
			r, err := store.NewRedis(tt.url)
			if (err != nil) != tt.wantErr {
				t.Fatalf("NewRedis error = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error leaks the password: %q", err)
				}
				if !strings.Contains(err.Error(), "Redis URL") {
					t.Errorf("error %q does not say what was wrong", err)
				}
				return
			}
			r.Close()
		})
	}
}

// TestRedisErrorsHideWrongPassword checks an authentication failure against
// the real server: the error must say what failed without the password.
func TestRedisErrorsHideWrongPassword(t *testing.T) {
	storetest.NewRedis(t) // skips when Redis is absent
	const secret = "definitely-wrong-Pa55word"
	u := strings.Replace(storetest.RedisURL(), "redis://", "redis://nobody:"+secret+"@", 1)
	r, err := store.NewRedis(u)
	if err != nil {
		t.Fatalf("NewRedis: %v", err)
	}
	defer r.Close()
	err = r.Ping(t.Context())
	if err == nil {
		t.Skip("this Redis accepts any credentials")
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error leaks the password: %q", err)
	}
	if !strings.Contains(err.Error(), "store redis ping") || !strings.Contains(strings.ToUpper(err.Error()), "WRONGPASS") {
		t.Errorf("error %q does not say the ping failed on authentication", err)
	}
}

func TestOpen(t *testing.T) {
	s, err := store.Open("")
	if err != nil {
		t.Fatalf("Open(\"\"): %v", err)
	}
	if _, ok := s.(*store.Memory); !ok {
		t.Errorf("Open(\"\") = %T, want *store.Memory", s)
	}
	s, err = store.Open("redis://127.0.0.1:6379/0")
	if err != nil {
		t.Fatalf("Open(redis): %v", err)
	}
	defer s.Close()
	if _, ok := s.(*store.Redis); !ok {
		t.Errorf("Open(redis://...) = %T, want *store.Redis", s)
	}
	if _, err := store.Open("bogus://x"); err == nil {
		t.Error("Open(bogus://x) succeeded")
	}
}

// TestRedisDefaultPrefix checks that without WithPrefix keys land under
// "vrambot:", so the bot can share a Redis with other programs.
func TestRedisDefaultPrefix(t *testing.T) {
	storetest.NewRedis(t) // skips when Redis is absent
	bot, err := store.NewRedis(storetest.RedisURL())
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close()
	// Write through a store with the default prefix, read back unprefixed.
	unprefixed, err := store.NewRedis(storetest.RedisURL(), store.WithPrefix(""))
	if err != nil {
		t.Fatal(err)
	}
	defer unprefixed.Close()
	key := "storetest-default-prefix-" + t.Name() + "-" + time.Now().Format("150405.000000000")
	ctx := t.Context()
	if err := bot.Set(ctx, key, []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	defer bot.Delete(context.Background(), key)
	if got, err := unprefixed.Get(ctx, store.DefaultPrefix+key); err != nil || string(got) != "v" {
		t.Errorf("Get(%q) = %q, %v; want the bot's value under the default prefix", store.DefaultPrefix+key, got, err)
	}
}
