package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vrambot/vrambot/internal/safetext"
	"github.com/vrambot/vrambot/job"
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

// markConfigs marks the attached Hugging Face config.json files and
// returns the first, when Configs is set (without it such a file is
// neither a config nor a job). A config is a JSON file whose top level
// names a "model_type" or "architectures", as every transformers config
// does (a DeepSpeed or other JSON job does not), or one named config.json
// that holds no job; a JSON file too large to download is taken as one, so
// that its answer says what to attach instead.
func (s *Server) markConfigs(files []attachment) *attachment {
	var first *attachment
	for i := range files {
		a := &files[i]
		if !isJSON(a.file) {
			continue
		}
		a.config = a.err == nil && hfConfigKeys(a.data) || errors.Is(a.err, errFileTooLarge) ||
			strings.EqualFold(a.file.Name, "config.json") && !s.readsAsJob(a.data)
		if a.config && first == nil {
			first = a
		}
	}
	if s.deps.Configs == nil {
		return nil
	}
	return first
}

// readsAsJob reports text that holds a job (a DeepSpeed JSON someone named
// config.json), whether or not it names its model.
func (s *Server) readsAsJob(text string) bool {
	if s.deps.Jobs == nil || text == "" {
		return false
	}
	_, ok := job.Detect(text)
	return ok
}

// hfConfigKeys reports a JSON object with a model_type or architectures
// key at its top level (advisor/hfconfig reads such a file).
func hfConfigKeys(data string) bool {
	var top struct {
		ModelType     json.RawMessage `json:"model_type"`
		Architectures json.RawMessage `json:"architectures"`
	}
	return json.Unmarshal([]byte(data), &top) == nil && (len(top.ModelType) > 0 || len(top.Architectures) > 0)
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

// configReply answers query for an attached config.json, in public (a
// mention's answer has no share button).
func (s *Server) configReply(ctx context.Context, query string, a attachment) reply.Reply {
	switch {
	case errors.Is(a.err, errFileTooLarge):
		return errorReply(fmt.Sprintf("The attached %s is %d KiB; a model's config.json is a few KiB. Attach config.json, not the weights.", safeFileName(a.file.Name), a.file.Size>>10))
	case a.err != nil:
		return errorReply("Could not download the attached " + safeFileName(a.file.Name) + "; please try again.")
	}
	r, err := s.deps.Configs.VRAMConfig(ctx, query, []byte(a.data), a.file.Name)
	return s.vramOutcome(query, false, r, err)
}

// safeFileName is an uploaded file's name for a message.
func safeFileName(name string) string {
	if name == "" {
		return "file"
	}
	return safetext.OneLine(name, 60)
}
