// Package config reads vrambot's configuration from the environment
// (docs/contracts.md §4) into a validated Config. Invalid values fail at start with
// a message naming the variable; secrets never appear in errors.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Defaults of docs/contracts.md §4.
const (
	DefaultAddr        = ":3000"
	DefaultSlackAPIURL = "https://slack.com/api/"
	DefaultDigestCron  = "0 9 * * 1-5"
	DefaultPricesCron  = "0 */6 * * *"
	DefaultPriceSource = "embedded"
	// DefaultDrainTimeout is how long `serve` finishes acked work on
	// shutdown (VRAMBOT_DRAIN_TIMEOUT): well past Slack's 3 s, and long
	// enough for a queued channel to post its next answers.
	DefaultDrainTimeout = 30 * time.Second
	// MaxDrainTimeout bounds VRAMBOT_DRAIN_TIMEOUT: orchestrators kill a
	// pod long before (Kubernetes' default grace period is 30 s).
	MaxDrainTimeout = 10 * time.Minute
	// DefaultHFEndpoint is huggingface_hub's default HF_ENDPOINT
	// (docs/hub-api.md §1).
	DefaultHFEndpoint = "https://huggingface.co"
)

// Config is everything vrambot reads from its environment.
type Config struct {
	SlackBotToken      Secret
	SlackSigningSecret Secret
	SlackAppToken      Secret
	RedisURL           Secret // may carry a password
	Addr               string
	SlackAPIURL        string
	PrometheusURL      string
	DigestChannel      string
	DigestCron         string
	DigestWeeklyCron   string // empty: no weekly digest
	Location           *time.Location
	PriceSources       string
	PricesCron         string
	DrainTimeout       time.Duration

	// HFEndpoint is the Hugging Face Hub (or a mirror) without a trailing
	// slash: HF_ENDPOINT, default DefaultHFEndpoint.
	HFEndpoint string
	// HFToken is sent as a bearer token to HFEndpoint only, for gated and
	// private repos (HF_TOKEN).
	HFToken Secret
	// HFHubOffline is HF_HUB_OFFLINE: never call the Hub, use the catalog
	// and the cache only.
	HFHubOffline bool
}

// Secret is a string that never prints itself.
type Secret string

// String hides the value so a Secret can be logged or formatted safely.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// Value returns the secret itself, for the one place that needs it.
func (s Secret) Value() string { return string(s) }

// Mode is how the bot receives Slack traffic.
type Mode string

// Slack transport modes.
const (
	ModeHTTP   Mode = "http"
	ModeSocket Mode = "socket"
)

// Lookup is os.LookupEnv, or a map in tests.
type Lookup func(key string) (string, bool)

// FromEnv reads and validates the configuration. Every problem found is
// reported, each naming its variable.
func FromEnv(lookup Lookup) (Config, error) {
	get := func(k string) string {
		v, _ := lookup(k)
		return strings.TrimSpace(v)
	}
	c := Config{
		SlackBotToken:      Secret(get("SLACK_BOT_TOKEN")),
		SlackSigningSecret: Secret(get("SLACK_SIGNING_SECRET")),
		SlackAppToken:      Secret(get("SLACK_APP_TOKEN")),
		RedisURL:           Secret(get("REDIS_URL")),
		Addr:               orDefault(get("VRAMBOT_ADDR"), DefaultAddr),
		SlackAPIURL:        orDefault(get("VRAMBOT_SLACK_API_URL"), DefaultSlackAPIURL),
		PrometheusURL:      get("VRAMBOT_PROMETHEUS_URL"),
		DigestChannel:      get("VRAMBOT_DIGEST_CHANNEL"),
		DigestCron:         orDefault(get("VRAMBOT_DIGEST_CRON"), DefaultDigestCron),
		DigestWeeklyCron:   get("VRAMBOT_DIGEST_WEEKLY_CRON"),
		PriceSources:       orDefault(get("VRAMBOT_PRICE_SOURCES"), DefaultPriceSource),
		PricesCron:         orDefault(get("VRAMBOT_PRICES_CRON"), DefaultPricesCron),
		Location:           time.UTC,
		DrainTimeout:       DefaultDrainTimeout,
		HFEndpoint:         strings.TrimRight(orDefault(get("HF_ENDPOINT"), DefaultHFEndpoint), "/"),
		HFToken:            Secret(get("HF_TOKEN")),
	}
	var errs []error
	if err := checkHTTPURL(c.HFEndpoint); err != nil {
		errs = append(errs, fmt.Errorf("HF_ENDPOINT: %w", err))
	} else if u, _ := url.Parse(c.HFEndpoint); u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		errs = append(errs, errors.New("HF_ENDPOINT: must be a base URL such as https://huggingface.co, without credentials, query or fragment (value not shown)"))
	}
	if strings.ContainsFunc(c.HFToken.Value(), func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		// A space or control character would corrupt the Authorization header.
		errs = append(errs, errors.New("HF_TOKEN: contains a space or control character (value not shown); paste the token from huggingface.co/settings/tokens"))
	}
	if off, err := parseHubBool(get("HF_HUB_OFFLINE")); err != nil {
		errs = append(errs, fmt.Errorf("HF_HUB_OFFLINE: %w", err))
	} else {
		c.HFHubOffline = off
	}
	if tz := get("VRAMBOT_TZ"); tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			errs = append(errs, fmt.Errorf("VRAMBOT_TZ: unknown time zone %q (use an IANA name like Europe/Berlin)", tz))
		} else {
			c.Location = loc
		}
	}
	if v := get("VRAMBOT_DRAIN_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > MaxDrainTimeout {
			errs = append(errs, fmt.Errorf("VRAMBOT_DRAIN_TIMEOUT: %q is not a duration between 0 and %s (e.g. 30s, 2m)", v, MaxDrainTimeout))
		} else {
			c.DrainTimeout = d
		}
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("VRAMBOT_ADDR: %q is not host:port (e.g. :3000)", c.Addr))
	}
	if err := checkHTTPURL(c.SlackAPIURL); err != nil {
		errs = append(errs, fmt.Errorf("VRAMBOT_SLACK_API_URL: %w", err))
	}
	if c.PrometheusURL != "" {
		if err := checkHTTPURL(c.PrometheusURL); err != nil {
			errs = append(errs, fmt.Errorf("VRAMBOT_PROMETHEUS_URL: %w", err))
		}
	}
	if c.RedisURL != "" {
		// The URL may hold a password: name the problem, never echo the value.
		u, err := url.Parse(c.RedisURL.Value())
		if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss" && u.Scheme != "unix") {
			errs = append(errs, errors.New("REDIS_URL: not a redis://, rediss:// or unix:// URL (value not shown: it may hold a password)"))
		}
	}
	for name, spec := range map[string]string{"VRAMBOT_DIGEST_CRON": c.DigestCron, "VRAMBOT_DIGEST_WEEKLY_CRON": c.DigestWeeklyCron, "VRAMBOT_PRICES_CRON": c.PricesCron} {
		if spec == "" {
			continue // only the weekly digest may be unset
		}
		if _, err := ParseCron(spec); err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not a 5-field cron spec (e.g. %q) or a descriptor such as @daily: %w", name, spec, DefaultDigestCron, err))
		}
	}
	if c.DigestChannel != "" && strings.ContainsAny(c.DigestChannel, " \t,") {
		errs = append(errs, fmt.Errorf("VRAMBOT_DIGEST_CHANNEL: %q is not a channel id or name", c.DigestChannel))
	}
	if t := c.SlackBotToken.Value(); t != "" && !strings.HasPrefix(t, "xoxb-") {
		errs = append(errs, errors.New("SLACK_BOT_TOKEN: expected a bot token starting with xoxb-"))
	}
	if t := c.SlackAppToken.Value(); t != "" && !strings.HasPrefix(t, "xapp-") {
		errs = append(errs, errors.New("SLACK_APP_TOKEN: expected an app-level token starting with xapp-"))
	}
	return c, errors.Join(errs...)
}

// Mode is Socket Mode when an app token is set, HTTP otherwise.
func (c Config) Mode() Mode {
	if c.SlackAppToken != "" {
		return ModeSocket
	}
	return ModeHTTP
}

// ValidateServe checks what `vrambot serve` needs beyond FromEnv.
func (c Config) ValidateServe() error {
	var errs []error
	if c.SlackBotToken == "" {
		errs = append(errs, errors.New("SLACK_BOT_TOKEN: required for serve"))
	}
	if c.Mode() == ModeHTTP && c.SlackSigningSecret == "" {
		errs = append(errs, errors.New("SLACK_SIGNING_SECRET: required for serve in HTTP mode (or set SLACK_APP_TOKEN for Socket Mode)"))
	}
	return errors.Join(errs...)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// parseHubBool reads a boolean the way huggingface_hub does (its
// _is_true: 1, ON, YES, TRUE in any case), and the matching false words;
// anything else is refused rather than silently read as false.
func parseHubBool(v string) (bool, error) {
	switch strings.ToUpper(v) {
	case "1", "ON", "YES", "TRUE":
		return true, nil
	case "", "0", "OFF", "NO", "FALSE":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (use 1 to stay off the Hub, 0 or unset to use it)", v)
}

func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error echoes the input, which may hold credentials.
		return errors.New("not a URL (value not shown: it may hold credentials)")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", u.Redacted())
	}
	return nil
}

// cronParser is the one reading of a schedule in the project: the standard
// five fields (minute hour day-of-month month day-of-week), an optional
// leading seconds field, and robfig/cron's descriptors (@daily, @weekly,
// @every 1h). Every schedule (the digest, the
// price refresh) is read by ParseCron, so one spec means the same everywhere.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron reads a schedule spec (see cronParser).
func ParseCron(spec string) (cron.Schedule, error) { return cronParser.Parse(spec) }
