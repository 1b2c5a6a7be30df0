package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxFilesPerMessage bounds how many attached files one message may make
// the bot download.
const maxFilesPerMessage = 3

// maxDownloadRedirects bounds redirects on one download.
const maxDownloadRedirects = 3

// textFiletypes are Slack filetypes of pasted text (snippets and logs).
var textFiletypes = map[string]bool{
	"text": true, "log": true, "python": true, "shell": true, "json": true,
	"yaml": true, "markdown": true, "csv": true, "javascript": true, "c": true, "cpp": true,
}

// gatherText returns text followed by the contents of the message's text
// files (pasted long snippets arrive as files), each under the size cap.
// Downloads get the work timeout.
func (s *Server) gatherText(ctx context.Context, ev innerEvent, text string) string {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.WorkTimeout)
	defer cancel()
	var b strings.Builder
	b.WriteString(text)
	n := 0
	for _, f := range ev.Files {
		if n == maxFilesPerMessage {
			break
		}
		if !isTextFile(f) {
			continue
		}
		n++
		data, err := s.download(ctx, f)
		if err != nil {
			s.log.Info("snippet not read", "channel", ev.Channel, "file", f.ID, "err", err)
			continue
		}
		b.WriteString("\n")
		b.WriteString(data)
	}
	return b.String()
}

func isTextFile(f slackFile) bool {
	return f.Mode == "snippet" || strings.HasPrefix(f.Mimetype, "text/") || textFiletypes[f.Filetype]
}

var (
	errFileTooLarge    = errors.New("file over the size cap")
	errNotTokenHost    = errors.New("not a Slack file host: the token is not sent there")
	errRedirectRefused = errors.New("redirect away from Slack's file hosts refused")
	errSignIn          = errors.New("redirected to the sign-in page: the token cannot read this file")
)

// slackFileDomains serve the files that need the bot token (and their
// subdomains): files.slack.com, and slack-gov.com for GovSlack.
var slackFileDomains = []string{"slack.com", "slack-gov.com"}

// mayReceiveToken reports whether the bot token may be sent to u: an https
// Slack host, or exactly the origin (scheme, host and port) of the
// configured Web API URL, which gets the token on every call anyway.
func (s *Server) mayReceiveToken(u *url.URL) bool {
	if sameOrigin(u, s.apiURL) {
		return true
	}
	if u.Scheme != "https" || u.Port() != "" && u.Port() != "443" {
		return false
	}
	host := strings.ToLower(u.Hostname())
	for _, d := range slackFileDomains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

func sameOrigin(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && strings.EqualFold(a.Host, b.Host)
}

// checkDownloadRedirect follows a redirect only to where the token may go:
// a redirect to another scheme, host or port is refused, not followed
// without the token, so a file host can never bounce the bot elsewhere.
func (s *Server) checkDownloadRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxDownloadRedirects {
		return fmt.Errorf("download: %d redirects", len(via))
	}
	if !s.mayReceiveToken(req.URL) {
		return errRedirectRefused
	}
	return nil
}

// download fetches a pasted file with the bot token, at most MaxFileBytes.
func (s *Server) download(ctx context.Context, f slackFile) (string, error) {
	if f.Size > s.cfg.MaxFileBytes {
		return "", fmt.Errorf("download %s (%d bytes): %w", f.ID, f.Size, errFileTooLarge)
	}
	u, err := url.Parse(f.URLPrivateDownload)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("download %s: unusable URL", f.ID)
	}
	if !s.mayReceiveToken(u) {
		return "", fmt.Errorf("download %s from %s: %w", f.ID, redactOrigin(u), errNotTokenHost)
	}
	req, err := http.NewRequestWithContext(withCallLabel(ctx, "files.download"), http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("download %s: %w", f.ID, err)
	}
	req.Header.Set("Authorization", "Bearer "+s.cfg.BotToken)
	resp, err := s.files.Do(req)
	if err != nil {
		s.metrics.apiError("files.download")
		return "", fmt.Errorf("download %s: %w", f.ID, redactErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.metrics.apiError("files.download")
		return "", fmt.Errorf("download %s: HTTP %d", f.ID, resp.StatusCode)
	}
	// Without access, files.slack.com redirects to the workspace's sign-in
	// page with redir set to the file path.
	if redir := resp.Request.URL.Query().Get("redir"); redir != "" && redir == u.Path {
		return "", fmt.Errorf("download %s: %w", f.ID, errSignIn)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, s.cfg.MaxFileBytes+1))
	if err != nil {
		s.metrics.apiError("files.download")
		return "", fmt.Errorf("download %s: %w", f.ID, redactErr(err))
	}
	if int64(len(data)) > s.cfg.MaxFileBytes {
		return "", fmt.Errorf("download %s: %w", f.ID, errFileTooLarge)
	}
	return string(data), nil
}

func redactOrigin(u *url.URL) string { return u.Scheme + "://" + u.Host }
