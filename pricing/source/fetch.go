// Package source holds the places GPU prices come from, each behind
// pricing.Source: the embedded snapshot, dstack gpuhunt catalogs, SkyPilot
// catalog CSVs, the Azure Retail Prices API and a custom CSV/JSON price list.
// Every source maps provider GPU spellings onto the advisor GPU catalog
// (catalog.NormalizeGPU, the one owner of GPU names) and drops, counting
// them, the rows it cannot map.
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/vrambot/vrambot/internal/redact"
)

// maxResponseBytes caps every response body (and every file inside a zip).
// The largest documented catalog (SkyPilot AWS v7) is 2.5 MB; gpuhunt's AWS
// CSV is of the same order, so 64 MiB leaves ample room while keeping a
// misbehaving server from filling memory.
const maxResponseBytes = 64 << 20

// userAgent identifies the bot to the catalog hosts.
const userAgent = "vrambot"

// defaultClientTimeout bounds a request when the caller gives no client; the
// refresh normally also sets a deadline on ctx.
const defaultClientTimeout = 2 * time.Minute

// errTooLarge is returned when a body or a zipped file exceeds maxResponseBytes.
var errTooLarge = fmt.Errorf("larger than %d MiB", maxResponseBytes>>20)

// httpClient returns c, or a client with a timeout when c is nil.
func httpClient(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: defaultClientTimeout}
}

// get fetches rawURL with ctx and returns its body, capped at
// maxResponseBytes. A non-2xx status is an error that names the status.
// Errors show the URL without its query or credentials (internal/redact).
func get(ctx context.Context, client *http.Client, rawURL string) ([]byte, error) {
	shown := redact.URL(rawURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", shown, unwrapURLError(err))
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", shown, unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Drain a little so the connection can be reused; the body itself is
		// not shown, it may be a large HTML error page.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return nil, fmt.Errorf("get %s: %s", shown, resp.Status)
	}
	body, err := readCapped(resp.Body)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = ctxErr
		}
		return nil, fmt.Errorf("get %s: read body: %w", shown, err)
	}
	return body, nil
}

// readCapped reads r to the end, failing with errTooLarge past maxResponseBytes.
func readCapped(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, maxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxResponseBytes {
		return nil, errTooLarge
	}
	return body, nil
}

// unwrapURLError drops net/http's *url.Error wrapper, whose message repeats
// the full URL (query string included), keeping the cause for errors.Is.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
