package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/vrambot/vrambot/internal/safetext"
	"github.com/vrambot/vrambot/reply"
)

// ConfigVRAM answers a vram query for the model a Hugging Face config.json
// describes: `@vrambot vram lora 4090` with a config.json attached does
// what `vrambot vram --config config.json lora 4090` does. name is the
// file's name as uploaded.
type ConfigVRAM interface {
	VRAMConfig(ctx context.Context, query string, config []byte, name string) (reply.Reply, error)
}

// maxConfigFileBytes caps an attached config.json, downloaded into memory
// for one answer: all but two of 223 real ones fit (nvidia/MiniMax-M3-NVFP4's
// pair, 3 MiB of per-module quantisation lists, are better named by their
// Hub id); the reader's own bound is advisor/hfconfig.MaxConfigBytes.
const maxConfigFileBytes = 1 << 20

// attachedConfig returns the first attached config.json of a mention (a
// file named config.json, or any .json the user attached), when Configs is
// set.
func (s *Server) attachedConfig(ev innerEvent) (slackFile, bool) {
	if s.deps.Configs == nil {
		return slackFile{}, false
	}
	for _, f := range ev.Files[:min(len(ev.Files), maxFilesPerMessage)] {
		name := strings.ToLower(f.Name)
		if name == "config.json" || strings.HasSuffix(name, ".json") && (f.Filetype == "json" || f.Filetype == "text" || f.Filetype == "") {
			return f, true
		}
	}
	return slackFile{}, false
}

// configQuery is the query of a mention that attached a config: its text
// without a leading "vram".
func configQuery(text string) string {
	if word, rest, _ := strings.Cut(text, " "); strings.EqualFold(word, "vram") {
		return strings.TrimSpace(rest)
	}
	if strings.EqualFold(text, "vram") {
		return ""
	}
	return text
}

// vramConfigReply downloads the attached config.json and answers query
// for it, in public (a mention's answer has no share button).
func (s *Server) vramConfigReply(ctx context.Context, query string, f slackFile) reply.Reply {
	if f.Size > maxConfigFileBytes {
		return errorReply(fmt.Sprintf("The attached %s is %d KiB; a model's config.json is a few KiB. Attach config.json, not the weights.", safeFileName(f.Name), f.Size>>10))
	}
	data, err := s.download(ctx, f)
	if err != nil {
		s.log.Info("attached config.json not read", "file", f.ID, "err", err)
		return errorReply("Could not download the attached " + safeFileName(f.Name) + "; please try again.")
	}
	r, err := s.deps.Configs.VRAMConfig(ctx, query, []byte(data), f.Name)
	return s.vramOutcome(query, false, r, err)
}

// safeFileName is an uploaded file's name for a message.
func safeFileName(name string) string {
	if name == "" {
		return "file"
	}
	return safetext.OneLine(name, 60)
}
