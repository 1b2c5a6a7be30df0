package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/vrambot/vrambot/internal/redact"
)

// maxFilesPerMessage bounds how many attached files one message may make
// the bot download.
const maxFilesPerMessage = 3

// textFiletypes are Slack filetypes of pasted text (snippets and logs).
var textFiletypes = map[string]bool{
	"text": true, "log": true, "python": true, "shell": true, "json": true,
	"yaml": true, "markdown": true, "csv": true, "javascript": true, "c": true, "cpp": true,
}

// gatherText returns text followed by the contents of the message's text
// files (pasted long snippets arrive as files), each under the size cap.
func (s *Server) gatherText(ctx context.Context, ev innerEvent, text string) string {
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

var errFileTooLarge = errors.New("file over the size cap")

// download fetches a file with the bot token. slack-go sends the token only
// to https Slack hosts or the configured API host.
func (s *Server) download(ctx context.Context, f slackFile) (string, error) {
	if f.Size > s.cfg.MaxFileBytes {
		return "", fmt.Errorf("download %s (%d bytes): %w", f.ID, f.Size, errFileTooLarge)
	}
	w := &cappedBuffer{limit: s.cfg.MaxFileBytes}
	if err := s.api.GetFileContext(ctx, f.URLPrivateDownload, w); err != nil {
		if !errors.Is(err, errFileTooLarge) {
			s.metrics.apiError("files.download")
		}
		return "", fmt.Errorf("download %s: %w", f.ID, redact.Error(err, redact.Origin))
	}
	return w.b.String(), nil
}

// cappedBuffer is a writer that fails once more than limit bytes arrive.
type cappedBuffer struct {
	b     strings.Builder
	limit int64
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if int64(c.b.Len()+len(p)) > c.limit {
		return 0, errFileTooLarge
	}
	return c.b.Write(p)
}
