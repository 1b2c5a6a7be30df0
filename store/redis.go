package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/vrambot/vrambot/internal/redact"
)

// DefaultPrefix is put before every key the Redis store writes, so vrambot
// can share a Redis with other programs.
const DefaultPrefix = "vrambot:"

// Redis is the Store on a Redis server (go-redis v9). Values live at
// prefix+key, logs (lists) at prefix+"log:"+name, locks at
// prefix+"lock:"+name and counters at prefix+"count:"+key.
type Redis struct {
	client   *redis.Client
	prefix   string
	password string // only to scrub it from error text
}

var _ Store = (*Redis)(nil)

// RedisOption configures NewRedis.
type RedisOption func(*Redis)

// WithPrefix replaces DefaultPrefix, e.g. "vrambot:test:<random>:" so a test
// can remove exactly its own keys (Purge).
func WithPrefix(prefix string) RedisOption {
	return func(r *Redis) { r.prefix = prefix }
}

// NewRedis parses a redis:// or rediss:// URL (host, port, DB number,
// user and password) and returns a Store on it. It does not connect: the first
// command does, so a Redis that is down at start degrades instead of failing.
// Errors never contain the password.
func NewRedis(rawURL string, opts ...RedisOption) (*Redis, error) {
	// Parse first ourselves: url.Parse errors quote the whole URL, password
	// included, so only their reason is kept.
	if _, err := url.Parse(rawURL); err != nil {
		reason := err.Error()
		if ue, ok := errors.AsType[*url.Error](err); ok {
			reason = ue.Err.Error()
		}
		return nil, fmt.Errorf("store: invalid Redis URL %q: %s", redact.URL(rawURL), scrub(reason, rawURL, manualPassword(rawURL)))
	}
	options, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store: invalid Redis URL %q: %s", redact.URL(rawURL), scrub(err.Error(), rawURL, manualPassword(rawURL)))
	}
	routeRedisLogs.Do(func() { redis.SetLogger(slogRedisLogger{}) })
	// Maintenance push notifications only exist on Redis Cloud/Enterprise;
	// "auto" would probe every new connection for nothing.
	options.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	// Let ctx deadlines cut socket reads short too, so a hung Redis costs a
	// request its read timeout, not go-redis's own (3 s, then retries).
	options.ContextTimeoutEnabled = true
	// One dial per command attempt: go-redis's default of 5 dial retries
	// 100 ms apart sits under its 3 command retries, so a refused
	// connection took ~3.5 s to report; the command retries (with their
	// backoff) already dial again.
	options.DialerRetries = 1
	r := &Redis{client: redis.NewClient(options), prefix: DefaultPrefix, password: options.Password}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// routeRedisLogs sends go-redis's own log lines (dial retries and such, on
// stderr by default) to slog at debug level: the errors that matter reach
// the caller anyway, and a CLI run with Redis down should not spray stderr.
var routeRedisLogs sync.Once

type slogRedisLogger struct{}

func (slogRedisLogger) Printf(ctx context.Context, format string, v ...any) {
	slog.DebugContext(ctx, "go-redis: "+fmt.Sprintf(format, v...))
}

// userinfo returns what sits between "scheme://" and the last "@" of rawURL,
// found without url.Parse so that it works on URLs that do not parse.
func userinfo(rawURL string) (info string, ok bool) {
	_, rest, found := strings.Cut(rawURL, "://")
	if !found {
		rest = rawURL
	}
	if slash := strings.IndexAny(rest, "/?#"); slash >= 0 && !strings.Contains(rest[slash:], "@") {
		rest = rest[:slash]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return "", false
	}
	return rest[:at], true
}

// manualPassword returns the password part of rawURL's userinfo, "" if none.
func manualPassword(rawURL string) string {
	info, ok := userinfo(rawURL)
	if !ok {
		return ""
	}
	_, password, _ := strings.Cut(info, ":")
	return password
}

// scrub removes the raw URL and the password from an error message, in
// plain and in %q-quoted form (internal/redact).
func scrub(msg, rawURL, password string) string {
	return redact.Secret(strings.ReplaceAll(msg, rawURL, redact.URL(rawURL)), password)
}

// scrubbedError keeps an error's identity (errors.Is on context errors and
// ErrNotFound) while guaranteeing its text carries no password.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// wrap adds the operation to err, maps redis.Nil to ErrNotFound and scrubs
// the password from the text.
func (r *Redis) wrap(op, name string, err error) error {
	if errors.Is(err, redis.Nil) {
		return ErrNotFound
	}
	wrapped := fmt.Errorf("store redis %s %q: %w", op, name, err)
	if r.password != "" && strings.Contains(wrapped.Error(), r.password) {
		return &scrubbedError{msg: strings.ReplaceAll(wrapped.Error(), r.password, "xxxxx"), err: err}
	}
	return wrapped
}

// Get returns the value of key or ErrNotFound.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := r.client.Get(ctx, r.prefix+key).Bytes()
	if err != nil {
		return nil, r.wrap("get", key, err)
	}
	return b, nil
}

// Set stores value under key; ttl <= 0 means no expiry.
func (r *Redis) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := r.client.Set(ctx, r.prefix+key, value, max(ttl, 0)).Err(); err != nil {
		return r.wrap("set", key, err)
	}
	return nil
}

// SetNX stores value only if key is absent (SET NX with PX ttl).
func (r *Redis) SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	ok, err := r.client.SetNX(ctx, r.prefix+key, value, max(ttl, 0)).Result()
	if err != nil {
		return false, r.wrap("setnx", key, err)
	}
	return ok, nil
}

// Delete removes key; a missing key is not an error.
func (r *Redis) Delete(ctx context.Context, key string) error {
	if err := r.client.Del(ctx, r.prefix+key).Err(); err != nil {
		return r.wrap("delete", key, err)
	}
	return nil
}

// Append pushes entry and trims the list in one MULTI/EXEC, so readers never
// see the log longer than maxLen.
func (r *Redis) Append(ctx context.Context, log string, entry []byte, maxLen int) error {
	key := r.prefix + "log:" + log
	_, err := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, key, entry)
		if maxLen > 0 {
			p.LTrim(ctx, key, int64(-maxLen), -1)
		}
		return nil
	})
	if err != nil {
		return r.wrap("append", log, err)
	}
	return nil
}

// Entries returns the newest n entries, oldest first (n <= 0: all).
func (r *Redis) Entries(ctx context.Context, log string, n int) ([][]byte, error) {
	start := int64(0)
	if n > 0 {
		start = int64(-n)
	}
	items, err := r.client.LRange(ctx, r.prefix+"log:"+log, start, -1).Result()
	if err != nil {
		return nil, r.wrap("entries", log, err)
	}
	out := make([][]byte, len(items))
	for i, s := range items {
		out[i] = []byte(s)
	}
	return out, nil
}

// unlockScript deletes the lock only if it still holds our token: after
// the TTL ran out another replica may have taken it.
var unlockScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// Lock takes the named lock with SET NX PX and a random token (128 bits
// from crypto/rand) that identifies the holder.
func (r *Redis) Lock(ctx context.Context, name string, ttl time.Duration) (func(context.Context) error, bool, error) {
	if ttl <= 0 {
		return nil, false, fmt.Errorf("store lock %q: %w", name, errLockTTL)
	}
	token := rand.Text()
	key := r.prefix + "lock:" + name
	ok, err := r.client.SetNX(ctx, key, token, ttl).Result()
	if err != nil {
		return nil, false, r.wrap("lock", name, err)
	}
	if !ok {
		return nil, false, nil
	}
	unlock := func(ctx context.Context) error {
		if err := unlockScript.Run(ctx, r.client, []string{key}, token).Err(); err != nil {
			return r.wrap("unlock", name, err)
		}
		return nil
	}
	return unlock, true, nil
}

// incrScript counts in a fixed window in one round trip: INCR, and the
// window's expiry set by the INCR that created the key (or repaired if a
// key somehow lost it), then the time left.
var incrScript = redis.NewScript(`local n = redis.call("INCR", KEYS[1])
local left = redis.call("PTTL", KEYS[1])
if left < 0 then
  redis.call("PEXPIRE", KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {n, left}`)

// Incr counts key in a window that its first Incr opens (INCR + PEXPIRE,
// atomic in a Lua script, so replicas share one count).
func (r *Redis) Incr(ctx context.Context, key string, window time.Duration) (int64, time.Duration, error) {
	if window <= 0 {
		return 0, 0, fmt.Errorf("store incr %q: %w", key, errWindow)
	}
	res, err := incrScript.Run(ctx, r.client, []string{r.prefix + "count:" + key}, window.Milliseconds()).Int64Slice()
	if err != nil {
		return 0, 0, r.wrap("incr", key, err)
	}
	if len(res) != 2 {
		return 0, 0, fmt.Errorf("store redis incr %q: unexpected reply %v", key, res)
	}
	return res[0], time.Duration(res[1]) * time.Millisecond, nil
}

// Ping reports whether Redis answers.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return r.wrap("ping", r.client.Options().Addr, err)
	}
	return nil
}

// Close closes the connection pool.
func (r *Redis) Close() error {
	if err := r.client.Close(); err != nil {
		return r.wrap("close", r.client.Options().Addr, err)
	}
	return nil
}

// Prefix returns the prefix put before every key (DefaultPrefix unless
// WithPrefix changed it), for tools that inspect the keys directly.
func (r *Redis) Prefix() string { return r.prefix }

// Purge deletes every key under this store's prefix and returns how many it
// deleted. Tests use it with a unique prefix to clean up after themselves
// without touching anyone else's keys.
func (r *Redis) Purge(ctx context.Context) (int, error) {
	deleted := 0
	iter := r.client.Scan(ctx, 0, escapeGlob(r.prefix)+"*", 500).Iterator()
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		n, err := r.client.Del(ctx, batch...).Result()
		deleted += int(n)
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			if err := flush(); err != nil {
				return deleted, r.wrap("purge", r.prefix, err)
			}
		}
	}
	if err := iter.Err(); err != nil {
		return deleted, r.wrap("purge", r.prefix, err)
	}
	if err := flush(); err != nil {
		return deleted, r.wrap("purge", r.prefix, err)
	}
	return deleted, nil
}

// escapeGlob escapes the characters SCAN MATCH treats as a pattern.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
