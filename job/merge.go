package job

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/query"
)

// Override is a part the query words gave that the file also says: the
// words win (docs/jobs.md §4).
type Override struct {
	// Setting is the grammar's key ("bs"), or model, method, gpu,
	// sharding.
	Setting string `json:"setting"`
	// File is what the file says ("micro_batch_size: 2"); Query the
	// words' value ("bs=4").
	File  string `json:"file"`
	Query string `json:"query"`
}

// Merge is the job with the query words given beside it: the words add
// what the file does not say and win where both say something. Settings
// of the file that no longer apply (a rank once the words say full) are
// left out, each with a note.
func Merge(j Job, user query.Words) (query.Words, []Override, []string) {
	w := j.Words()
	var over []Override
	var notes []string
	part := func(name, file, words string) string {
		if words == "" {
			return file
		}
		if file != "" && !strings.EqualFold(file, words) {
			over = append(over, Override{Setting: name, File: j.said(name, file), Query: words})
		}
		return words
	}
	w.Model = part("model", w.Model, user.Model)
	method := part("method", w.Method, user.Method)
	if method != w.Method && w.Method != "" {
		// A method of the words' brings its own precision.
		if p := j.Setting("precision"); p != "" && settingOf(user.Settings, "precision") == "" {
			notes = append(notes, fmt.Sprintf("precision=%s from the file left out: %s brings its own", p, method))
			w.Settings = dropSetting(w.Settings, "precision")
		}
	}
	w.Method = method
	w.Sharding = part("sharding", w.Sharding, user.Sharding)
	if user.GPU != "" {
		w.GPU = part("gpu", w.GPU, user.GPU)
		w.Count = user.Count
		if user.Count > 0 {
			if g := settingOf(w.Settings, "gpus"); g != "" && g != fmt.Sprint(user.Count) {
				over = append(over, Override{Setting: "gpus", File: j.said("gpus", g), Query: fmt.Sprintf("%dx %s", user.Count, user.GPU)})
			}
			w.Settings = dropSetting(w.Settings, "gpus")
		}
	}
	for _, s := range user.Settings {
		if f := settingOf(w.Settings, s.Key); f != "" {
			if f != s.Value {
				over = append(over, Override{Setting: s.Key, File: j.said(s.Key, f), Query: s.Key + "=" + s.Value})
			}
			w.Settings = dropSetting(w.Settings, s.Key)
		}
		w.Settings = append(w.Settings, s)
	}
	w.Settings, notes = inScope(w, notes)
	if w.Count > 0 {
		w.Settings = dropSetting(w.Settings, "gpus")
	}
	query.SortSettings(w.Settings)
	return w, over, notes
}

// inScope leaves out the settings that do not apply to the method.
func inScope(w query.Words, notes []string) ([]query.KeyValue, []string) {
	training := w.Method != "" && w.Method != "inference"
	adapter := slices.Contains([]string{"lora", "qlora", "dora"}, w.Method)
	var out []query.KeyValue
	for _, s := range w.Settings {
		sc := query.ScopeOf(s.Key)
		drop := ""
		switch {
		case !training && (sc == query.ScopeTraining || sc == query.ScopeAdapter) && w.Method != "":
			drop = "a training setting"
		case training && (sc == query.ScopeInference || sc == query.ScopeServing || s.Key == "engine"):
			drop = "a serving setting"
		case !adapter && sc == query.ScopeAdapter && w.Method != "":
			drop = "an adapter's setting"
		}
		if drop != "" {
			notes = append(notes, fmt.Sprintf("%s=%s left out: %s, and the method is %s", s.Key, s.Value, drop, w.Method))
			continue
		}
		out = append(out, s)
	}
	return out, notes
}

// said is what the file wrote for a part: the key and value it was read
// from, or the tool's default it was filled with.
func (j Job) said(name, value string) string {
	switch name {
	case "model":
		for _, it := range j.Read {
			if strings.HasPrefix(it.As, "model ") {
				return it.Key + ": " + it.Value
			}
		}
	case "method":
		return "method: " + value
	}
	for _, it := range j.Read {
		for _, w := range strings.Fields(it.As) {
			if strings.HasPrefix(w, name+"=") {
				return it.Key + ": " + it.Value
			}
		}
	}
	return fmt.Sprintf("%s=%s (the tool's default)", name, value)
}

func settingOf(kvs []query.KeyValue, key string) string {
	for _, s := range kvs {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

func dropSetting(kvs []query.KeyValue, key string) []query.KeyValue {
	return slices.DeleteFunc(slices.Clone(kvs), func(s query.KeyValue) bool { return s.Key == key })
}
