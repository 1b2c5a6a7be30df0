package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/job"
)

// maxFilesPerMessage bounds how many attached files one message may make
// the bot download.
const maxFilesPerMessage = 3

// maxDownloadRedirects bounds redirects on one download.
const maxDownloadRedirects = 3

// textFiletypes are Slack filetypes of pasted text (snippets and logs) and
// of job files.
var textFiletypes = map[string]bool{
	"text": true, "log": true, "python": true, "shell": true, "json": true, "toml": true,
	"yaml": true, "markdown": true, "csv": true, "javascript": true, "c": true, "cpp": true,
}

// jobFiletypes and jobExtensions name the files read as a job (README,
// "Paste your job"): by Slack's filetype or by the file's name. What is in
// a file decides whether it is one (docs/jobs.md §3).
var (
	jobFiletypes  = map[string]bool{"yaml": true, "python": true, "shell": true, "json": true, "toml": true}
	jobExtensions = []string{".yaml", ".yml", ".json", ".py", ".sh", ".toml"}
)

// attachment is a text file attached to a message, downloaded once.
type attachment struct {
	file slackFile
	data string
	// err says why data is empty: errFileTooLarge (over the file's cap,
	// not downloaded), or the download's error.
	err error
	// config marks an attached Hugging Face config.json (configfile.go).
	config bool
}

// jobFile reports an attachment read as a job: a job file by its type or
// name that is not a model's config.json.
func (a *attachment) jobFile() bool { return isJobFile(a.file) && !a.config }

// attachments downloads the message's text files (at most
// maxFilesPerMessage), each under its cap (fileCap); those not read say
// why. Downloads get the work timeout.
func (s *Server) attachments(ctx context.Context, ev innerEvent) []attachment {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.WorkTimeout)
	defer cancel()
	var out []attachment
	for _, f := range ev.Files {
		if len(out) == maxFilesPerMessage {
			break
		}
		if !isTextFile(f) {
			continue
		}
		a := attachment{file: f}
		a.data, a.err = s.download(ctx, f, s.fileCap(f))
		if a.err != nil {
			s.log.Info("attached file not read", "channel", ev.Channel, "file", f.ID, "err", a.err)
		}
		out = append(out, a)
	}
	return out
}

// fileCap is how much of a file is downloaded: a JSON file is a model's
// config.json or a job, at most maxConfigFileBytes; a job file uploaded by
// name at most job.MaxBytes (the job reader's own bound, docs/jobs.md §5),
// so a larger one is never downloaded; a snippet or a log MaxFileBytes.
func (s *Server) fileCap(f slackFile) int64 {
	switch {
	case isJSON(f):
		return min(maxConfigFileBytes, s.cfg.MaxFileBytes)
	case f.Mode != "snippet" && hasJobExtension(f.Name):
		return min(job.MaxBytes, s.cfg.MaxFileBytes)
	}
	return s.cfg.MaxFileBytes
}

// gatherText returns text followed by the contents of the message's text
// files (pasted long snippets arrive as files), each under its cap.
func (s *Server) gatherText(ctx context.Context, ev innerEvent, text string) string {
	return joinText(text, s.attachments(ctx, ev))
}

// joinText is text followed by the attachments read.
func joinText(text string, files []attachment) string {
	var b strings.Builder
	b.WriteString(text)
	for _, a := range files {
		if a.err == nil {
			b.WriteString("\n")
			b.WriteString(a.data)
		}
	}
	return b.String()
}

func isTextFile(f slackFile) bool {
	return f.Mode == "snippet" || strings.HasPrefix(f.Mimetype, "text/") || textFiletypes[f.Filetype] || hasJobExtension(f.Name)
}

func isJobFile(f slackFile) bool { return jobFiletypes[f.Filetype] || hasJobExtension(f.Name) }

func isJSON(f slackFile) bool {
	return f.Filetype == "json" || strings.HasSuffix(strings.ToLower(f.Name), ".json")
}

func hasJobExtension(name string) bool {
	name = strings.ToLower(name)
	return slices.ContainsFunc(jobExtensions, func(ext string) bool { return strings.HasSuffix(name, ext) })
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

// download fetches a pasted file with the bot token, at most limit bytes:
// a file that says it is larger is not fetched at all.
func (s *Server) download(ctx context.Context, f slackFile, limit int64) (string, error) {
	if f.Size > limit {
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
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		s.metrics.apiError("files.download")
		return "", fmt.Errorf("download %s: %w", f.ID, redactErr(err))
	}
	if int64(len(data)) > limit {
		return "", fmt.Errorf("download %s: %w", f.ID, errFileTooLarge)
	}
	return string(data), nil
}

func redactOrigin(u *url.URL) string { return u.Scheme + "://" + u.Host }
