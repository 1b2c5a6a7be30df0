package config

import (
	"fmt"
	"strings"
	"testing"
)

func lookupFrom(m map[string]string) Lookup {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestFromEnvDefaults(t *testing.T) {
	c, err := FromEnv(lookupFrom(nil))
	if err != nil {
		t.Fatalf("empty env: %v", err)
	}
	if c.Addr != ":3000" || c.DigestCron != "0 9 * * 1-5" || c.DigestWeeklyCron != "" || c.SlackAPIURL != "https://slack.com/api/" || c.Location.String() != "UTC" {
		t.Errorf("defaults: %+v", c)
	}
	if c.Mode() != ModeHTTP {
		t.Errorf("mode = %s, want http", c.Mode())
	}
	if err := c.ValidateServe(); err == nil || !strings.Contains(err.Error(), "SLACK_BOT_TOKEN") {
		t.Errorf("serve without token: %v", err)
	}
}

func TestFromEnvValid(t *testing.T) {
	c, err := FromEnv(lookupFrom(map[string]string{
		"SLACK_BOT_TOKEN":            "xoxb-1",
		"SLACK_APP_TOKEN":            "xapp-1",
		"REDIS_URL":                  "redis://:pw@127.0.0.1:6379/2",
		"VRAMBOT_ADDR":               "127.0.0.1:8080",
		"VRAMBOT_SLACK_API_URL":      "http://127.0.0.1:9999/api",
		"VRAMBOT_PROMETHEUS_URL":     "http://127.0.0.1:9090",
		"VRAMBOT_DIGEST_CRON":        "30 8 * * *",
		"VRAMBOT_DIGEST_WEEKLY_CRON": "0 9 * * 1",
		"VRAMBOT_TZ":                 "Europe/Berlin",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode() != ModeSocket || c.SlackAPIURL != "http://127.0.0.1:9999/api" || c.Location.String() != "Europe/Berlin" || c.DigestWeeklyCron != "0 9 * * 1" {
		t.Errorf("got %+v", c)
	}
	if err := c.ValidateServe(); err != nil {
		t.Errorf("socket mode needs no signing secret: %v", err)
	}
}

func TestFromEnvErrorsNameTheVariable(t *testing.T) {
	tests := []struct {
		key, value, want string
	}{
		{"VRAMBOT_TZ", "Mars/Olympus", "VRAMBOT_TZ"},
		{"VRAMBOT_ADDR", "3000", "VRAMBOT_ADDR"},
		{"VRAMBOT_SLACK_API_URL", "ftp://x", "VRAMBOT_SLACK_API_URL"},
		{"VRAMBOT_PROMETHEUS_URL", "localhost:9090", "VRAMBOT_PROMETHEUS_URL"},
		{"VRAMBOT_DIGEST_CRON", "every day", "VRAMBOT_DIGEST_CRON"},
		{"VRAMBOT_DIGEST_WEEKLY_CRON", "mondays", "VRAMBOT_DIGEST_WEEKLY_CRON"},
		{"VRAMBOT_PRICES_CRON", "* *", "VRAMBOT_PRICES_CRON"},
		{"VRAMBOT_DIGEST_CHANNEL", "gpu cluster", "VRAMBOT_DIGEST_CHANNEL"},
		{"REDIS_URL", "http://:hunter2@x", "REDIS_URL"},
		{"SLACK_BOT_TOKEN", "xoxp-user", "SLACK_BOT_TOKEN"},
		{"SLACK_APP_TOKEN", "xoxb-wrong", "SLACK_APP_TOKEN"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			_, err := FromEnv(lookupFrom(map[string]string{tt.key: tt.value}))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to name %s", err, tt.want)
			}
			for _, secret := range []string{"hunter2", "xoxp-user", "xoxb-wrong"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error leaks a secret: %v", err)
				}
			}
		})
	}
}

func TestSecretNeverPrints(t *testing.T) {
	s := Secret("xoxb-very-secret")
	for _, got := range []string{s.String(), strings.TrimSpace(fmtAny(s))} {
		if strings.Contains(got, "very-secret") {
			t.Errorf("secret printed: %q", got)
		}
	}
}

func fmtAny(v any) string { return fmt.Sprint(v) }

func TestHubSettings(t *testing.T) {
	c, err := FromEnv(lookupFrom(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.HFEndpoint != "https://huggingface.co" || c.HFToken != "" || c.HFHubOffline {
		t.Errorf("Hub defaults: endpoint %q, token set %v, offline %v", c.HFEndpoint, c.HFToken != "", c.HFHubOffline)
	}
	c, err = FromEnv(lookupFrom(map[string]string{
		"HF_ENDPOINT": "https://hf-mirror.com/", "HF_TOKEN": "hf_secretvalue", "HF_HUB_OFFLINE": "true",
	}))
	if err != nil {
		t.Fatal(err)
	}
	// The trailing slash is stripped, as huggingface_hub does (docs/hub-api.md §1).
	if c.HFEndpoint != "https://hf-mirror.com" || c.HFToken.Value() != "hf_secretvalue" || !c.HFHubOffline {
		t.Errorf("got endpoint %q, offline %v", c.HFEndpoint, c.HFHubOffline)
	}
	if strings.Contains(fmt.Sprintf("%v %+v", c.HFToken, c), "hf_secretvalue") {
		t.Error("HF_TOKEN printed")
	}
	for v, want := range map[string]bool{"1": true, "ON": true, "yes": true, "0": false, "off": false, "False": false, "": false} {
		c, err := FromEnv(lookupFrom(map[string]string{"HF_HUB_OFFLINE": v}))
		if err != nil || c.HFHubOffline != want {
			t.Errorf("HF_HUB_OFFLINE=%q: offline %v, err %v; want %v", v, c.HFHubOffline, err, want)
		}
	}
}

func TestHubSettingsErrorsNameTheVariable(t *testing.T) {
	tests := []struct{ key, value string }{
		{"HF_ENDPOINT", "huggingface.co"},
		{"HF_ENDPOINT", "ftp://huggingface.co"},
		{"HF_ENDPOINT", "https://user:hf_pw_in_url@mirror.example"},
		{"HF_ENDPOINT", "https://mirror.example/?token=hf_pw_in_url"},
		{"HF_TOKEN", "hf_pw_in_url with space"},
		{"HF_TOKEN", "hf_pw_in_url\n"},
		{"HF_HUB_OFFLINE", "maybe"},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			env := map[string]string{tt.key: tt.value}
			if tt.key == "HF_TOKEN" {
				// FromEnv trims the value; an inner control character stays.
				env[tt.key] = strings.ReplaceAll(tt.value, "\n", "\x01x")
			}
			_, err := FromEnv(lookupFrom(env))
			if err == nil || !strings.Contains(err.Error(), tt.key) {
				t.Fatalf("err = %v, want it to name %s", err, tt.key)
			}
			if strings.Contains(err.Error(), "hf_pw_in_url") {
				t.Errorf("error leaks a secret: %v", err)
			}
		})
	}
}
