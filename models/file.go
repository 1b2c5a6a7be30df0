package models

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/vrambot/vrambot/advisor/hfconfig"
	"github.com/vrambot/vrambot/hub"
	"github.com/vrambot/vrambot/internal/safetext"
)

// FromConfig reads a local config.json (vrambot vram --config, a
// config.json attached to a Slack mention) as the model named name.
// Errors are advisor/hfconfig's: errs.Invalid, naming the missing key.
func FromConfig(data []byte, name string) (Resolution, error) {
	m, notes, err := hfconfig.Read(data, name)
	if err != nil {
		return Resolution{}, err
	}
	head := fmt.Sprintf("architecture of %s read from the config.json given, not from the catalog or the Hub", name)
	return Resolution{Model: m, Source: SourceFile, Notes: append([]string{head}, notes...)}, nil
}

// ConfigName names the model of a config.json file: the Hub id the file
// records in "_name_or_path" (transformers writes it when saving), else
// the folder of a file called config.json ("models/Foo-8B/config.json" is
// Foo-8B), else the file's name without ".json".
func ConfigName(path string, data []byte) string {
	var doc struct {
		NameOrPath string `json:"_name_or_path"`
	}
	if json.Unmarshal(data, &doc) == nil && strings.Contains(doc.NameOrPath, "/") && hub.ValidRepoID(doc.NameOrPath) {
		return doc.NameOrPath
	}
	base := filepath.Base(path)
	if strings.EqualFold(base, "config.json") {
		if dir := filepath.Base(filepath.Dir(path)); dir != "." && dir != string(filepath.Separator) {
			return safetext.OneLine(dir, maxRefShown)
		}
		return "config.json"
	}
	if name := strings.TrimSuffix(base, filepath.Ext(base)); name != "" && name != "-" && name != "." {
		return safetext.OneLine(name, maxRefShown)
	}
	return "config.json"
}
