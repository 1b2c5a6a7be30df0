// Package redact is the one place that makes URLs and transport errors safe
// to log or show: a URL can carry a password (redis://:pw@host), a token in
// its query (?sig=...), or be a credential itself (Slack's response_url and
// file-upload URLs grant write access through their path).
package redact

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Invalid stands for a URL that does not parse: nothing of it is shown,
// since any part of it may be the secret.
const Invalid = "(invalid URL)"

// URL returns rawURL as scheme://host/path: without user info (passwords),
// query and fragment (tokens). A URL that does not parse, or has no host,
// gives Invalid.
func URL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return Invalid
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// Origin returns rawURL as scheme://host only, for URLs whose path is the
// credential (webhooks, response_url, upload URLs).
func Origin(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return Invalid
	}
	return u.Scheme + "://" + u.Host
}

// Error returns err with the URL of any *url.Error in it rewritten by
// show (URL or Origin). The text keeps the operation and the cause, so the
// log still says what failed ("Post \"https://slack.com\": context deadline
// exceeded"), and the result unwraps to the cause, so errors.Is still sees a
// deadline; the raw URL is no longer reachable through it.
func Error(err error, show func(string) string) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	return &redacted{msg: strings.ReplaceAll(err.Error(), ue.URL, show(ue.URL)), cause: ue.Err}
}

// redacted is an error whose text had a URL rewritten.
type redacted struct {
	msg   string
	cause error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.cause }

// Secret replaces every occurrence of secret (plain and %q-quoted) in msg,
// for error texts from libraries that echo their input.
func Secret(msg, secret string) string {
	if secret == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, secret, "xxxxx")
	if quoted := strings.Trim(fmt.Sprintf("%q", secret), `"`); quoted != secret {
		msg = strings.ReplaceAll(msg, quoted, "xxxxx")
	}
	return msg
}
