package job

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/internal/safetext"
	"github.com/vrambot/vrambot/query"
)

// reading collects what one file says: the job, and the facts of a
// training job that only decide the method and the precision together.
type reading struct {
	j     Job
	train training
	// found is set once the file says something only a job says (a
	// model, a setting): a file of ignored keys is no job.
	found bool
	from  map[string]string // grammar key → the file key that set it
	py    *pyScript         // the script, for a Python file's values
	root  *node             // the config, for keys read together
}

func newReading(f Format) *reading {
	return &reading{j: Job{Format: f}, from: map[string]string{}}
}

// maxValueShown bounds a value echoed in the read list.
const maxValueShown = 80

// shown is a value as the reply may show it: one line, bounded, and
// never a secret (docs/jobs.md §5).
func shown(key, v string) string {
	if secretKey(key) || secretValue(v) {
		return "(secret, not shown)"
	}
	return safetext.OneLine(v, maxValueShown)
}

// secretWords in a key say its value is a credential (HF_TOKEN,
// WANDB_API_KEY, --api-key, hub_token, password).
var secretWords = []string{"token", "secret", "password", "passwd", "apikey", "api-key", "api_key", "credential", "auth"}

// secretKey reports whether key names a credential. Token counts
// (max_tokens) and tokenizers are not credentials.
func secretKey(key string) bool {
	l := strings.ToLower(key)
	if strings.Contains(l, "tokens") || strings.Contains(l, "tokenizer") {
		return false
	}
	for _, w := range secretWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return strings.HasSuffix(l, "_key") || strings.HasSuffix(l, "-key") || l == "key"
}

// secretPattern matches the credentials people paste: Hugging Face,
// OpenAI-style, Slack, GitHub and AWS tokens.
var secretPattern = regexp.MustCompile(`(hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_\-]{20,}|xox[abpr]-[A-Za-z0-9\-]{10,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16})`)

// secretValue reports whether v holds a credential.
func secretValue(v string) bool { return secretPattern.MatchString(v) }

// item records a file key that was read.
func (r *reading) item(key, raw, as, note string) {
	r.j.Read = append(r.j.Read, Item{Key: key, Value: shown(key, raw), As: as, Note: note})
}

// ignore records a key that does not change memory.
func (r *reading) ignore(key string) {
	if !slices.Contains(r.j.Ignored, key) {
		r.j.Ignored = append(r.j.Ignored, key)
	}
}

// unknown records a key that may change memory but is not used; note,
// when set, says why.
func (r *reading) unknown(key, note string) {
	if !slices.Contains(r.j.Unknown, key) {
		r.j.Unknown = append(r.j.Unknown, key)
	}
	if note != "" {
		r.note("%s: %s", key, note)
	}
}

func (r *reading) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	if !slices.Contains(r.j.Notes, n) {
		r.j.Notes = append(r.j.Notes, n)
	}
}

// set reads raw, the file's value of key, as the grammar setting gk. A
// value the setting does not take is not used, and said so.
func (r *reading) set(key, raw, gk string) bool {
	v, err := query.CheckValue(gk, raw)
	if err != nil {
		r.unknown(key, fmt.Sprintf("%s is not a value of %s=", shown(key, raw), gk))
		return false
	}
	return r.setAs(key, raw, gk, v)
}

// setAs records that key (raw as written) is the grammar's gk=v. A
// setting the file already gave keeps its first value.
func (r *reading) setAs(key, raw, gk, v string) bool {
	if v == "" {
		return false
	}
	if _, err := query.CheckValue(gk, v); err != nil {
		r.unknown(key, fmt.Sprintf("%s is not a value of %s=", shown(key, raw), gk))
		return false
	}
	r.found = true
	if prev := r.j.Setting(gk); prev != "" {
		note := fmt.Sprintf("%s=%s already from %s", gk, prev, r.from[gk])
		if prev == v {
			note = "the same as " + r.from[gk]
		}
		r.item(key, raw, "", note)
		return false
	}
	r.j.Settings = append(r.j.Settings, query.KeyValue{Key: gk, Value: v})
	r.from[gk] = key
	r.item(key, raw, gk+"="+v, "")
	return true
}

// fill sets gk=v as the tool's own default for what the file leaves out
// (docs/jobs.md §2), unless the file said it.
func (r *reading) fill(gk, v, why string) {
	if r.j.Setting(gk) != "" {
		return
	}
	r.j.Settings = append(r.j.Settings, query.KeyValue{Key: gk, Value: v})
	r.from[gk] = why
	if gk != "framework" {
		r.note("%s=%s: not in the file, %s", gk, v, why)
	}
}

// model records the model the file names.
func (r *reading) model(key, raw string) {
	ref, note := modelRef(raw)
	if ref == "" {
		r.unknown(key, note)
		return
	}
	if r.j.Model != "" {
		r.item(key, raw, "", "the model is already "+r.j.Model)
		return
	}
	r.found = true
	r.j.Model = ref
	r.item(key, raw, "model "+ref, note)
}

// generic reads a key no format table lists: a grammar alias (the
// TrainingArguments, PEFT, DeepSpeed and engines' names the table holds),
// a key that does not change memory, or an unknown one.
func (r *reading) generic(key string, v *node) {
	norm := normKey(key)
	switch {
	case secretKey(key):
		r.ignore(key)
	case unusedKey(norm):
		r.ignore(key)
	default:
		if s, ok := query.Lookup(norm); ok && v != nil && v.kind == scalarNode && !slices.Contains([]string{"model", "method", "gpu"}, s.Key) {
			r.set(key, v.str(), s.Key)
			return
		}
		r.unknown(key, "")
	}
}

// normKey is a key as the grammar's table keys it: lower case, - for _,
// without a flag's dashes.
func normKey(k string) string {
	return strings.TrimLeft(strings.ReplaceAll(strings.ToLower(k), "_", "-"), "-")
}

// unusedKey reports whether a normalised key does not change the memory
// of a step: the grammar's own list (query.UnusedKeys) and the keys every
// format shares (logging, saving, data, the hub).
func unusedKey(norm string) bool {
	if slices.Contains(query.UnusedKeys, norm) {
		return true
	}
	for _, p := range unusedPrefixes {
		if strings.HasPrefix(norm, p) {
			return true
		}
	}
	return slices.Contains(unusedCommon, norm)
}

// unusedPrefixes start keys of logging, tracking, evaluation and saving.
var unusedPrefixes = []string{"wandb-", "mlflow-", "comet-", "swanlab-", "trackio-", "hub-", "push-to-hub", "logging-", "log-", "save-", "eval-", "report-", "run-name", "output-", "seed", "dataset", "lr-", "warmup-", "adam-", "weight-decay", "learning-rate", "num-train-epochs", "max-steps", "resume-from", "overwrite-", "ddp-", "dataloader-", "gradio-", "special-tokens", "chat-template", "tokenizer", "preprocessing-", "val-", "test-", "train-on-", "early-stopping", "metric-", "greater-is-better", "load-best-model", "plot-", "profiler", "trust-remote-code", "hf-", "cache-dir", "streaming", "shuffle", "galore-", "apollo-", "badam-"}

// unusedCommon are single keys of that kind.
var unusedCommon = []string{
	"template", "dataset", "datasets", "stage", "do-train", "do-eval", "do-predict", "lr", "epochs", "num-epochs", "strict",
	"optim-args", "lr-scheduler", "scheduler", "local-rank", "debug", "resume", "bos-token", "eos-token", "pad-token", "unk-token",
	"max-grad-norm", "clip-grad-norm", "gradient-clipping", "loss-watchdog-threshold", "loss-watchdog-patience", "group-by-length",
	"train-dataset", "eval-dataset", "max-samples", "cutoff", "label-names", "remove-unused-columns", "ignore-pad-token-for-loss",
	"bf16-full-eval", "fp16-full-eval", "use-cpu", "model-type", "model-class", "processor-type", "base-model-config",
	"lora-model-dir", "lora-modules-to-save", "lora-fan-in-fan-out", "peft-use-rslora", "use-rslora", "merge-lora", "is-llama-derived-model",
	"is-mistral-derived-model", "is-qwen-derived-model", "is-falcon-derived-model", "auto-resume-from-checkpoints", "use-tensorboard",
	"evals-per-epoch", "saves-per-epoch", "default-system-message", "gc-steps", "torch-empty-cache-steps", "device", "xformers",
	"name", "description", "version", "license", "tags", "use-cache",
}

// truth reads a boolean as configs write it: true/false, yes/no, on/off,
// 1/0 in any case.
func truth(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on", "1", "y":
		return true, true
	case "false", "no", "off", "0", "n", "none", "null":
		return false, true
	}
	return false, false
}

// modelRef is the model a file's value names, as the query takes it: a
// Hub id or a name exactly as written; for a local path its last part
// (a GGUF file without .gguf and its shard suffix), with a note saying
// so. "" when nothing in it names a model.
func modelRef(raw string) (string, string) {
	v := strings.Trim(strings.TrimSpace(raw), `"'`)
	if v == "" || strings.ContainsAny(v, " \t\n$`{}") {
		return "", "not a model name or id"
	}
	if strings.HasPrefix(strings.ToLower(v), "hf://") {
		v = v[len("hf://"):]
	}
	local := strings.HasSuffix(strings.ToLower(v), ".gguf") || strings.HasPrefix(v, "/") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "~") ||
		strings.Contains(v, `\`) || len(v) > 2 && v[1] == ':' || strings.Count(v, "/") > 1 && !strings.Contains(v, "huggingface.co")
	name := v
	if local {
		parts := strings.FieldsFunc(v, func(r rune) bool { return r == '/' || r == '\\' })
		if len(parts) == 0 {
			return "", "a local path, not a model name"
		}
		name = parts[len(parts)-1]
		// A checkpoint directory ("…/Llama-3-8B/original", "…/snapshots/<hash>"):
		// the model's name is further up.
		for i := len(parts) - 1; i > 0 && dirWord(parts[i]); i-- {
			name = parts[i-1]
		}
	}
	name = ggufName(name)
	if local {
		if !nameLike(name) {
			return "", fmt.Sprintf("a local path (%s) that names no model: name it in the query words", shown("", v))
		}
		return name, fmt.Sprintf("a local path: read as the model named %s", name)
	}
	return name, ""
}

// dirWord is a path part that is a checkpoint's folder, not its name.
func dirWord(p string) bool {
	l := strings.ToLower(p)
	return slices.Contains([]string{"original", "hf", "checkpoints", "snapshots", "models", "model", "weights", "main"}, l) ||
		len(l) >= 32 && strings.Trim(l, "0123456789abcdef") == ""
}

// nameLike reports whether a path part can be a model's name: letters
// and a digit ("Qwen3-235B-A22B-FP8"), not "data" or "model".
func nameLike(s string) bool {
	letters, digits := false, false
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters = true
		}
	}
	return letters && digits
}

// ggufShard is a split GGUF's suffix ("-00001-of-00003").
var ggufShard = regexp.MustCompile(`(?i)-\d{5}-of-\d{5}$`)

// ggufName is a GGUF file's model name: without .gguf and a shard suffix.
func ggufName(name string) string {
	if strings.HasSuffix(strings.ToLower(name), ".gguf") {
		name = ggufShard.ReplaceAllString(name[:len(name)-len(".gguf")], "")
	}
	return name
}

// finish puts the job's lists in their final form: the settings in the
// canonical order, each list without repeats.
func (j *Job) finish() {
	query.SortSettings(j.Settings)
	j.Settings = slices.CompactFunc(j.Settings, func(a, b query.KeyValue) bool { return a.Key == b.Key })
	j.Ignored = dedupe(j.Ignored)
	j.Unknown = dedupe(j.Unknown)
	j.Notes = dedupe(j.Notes)
	// A key read is neither ignored nor unknown.
	for _, it := range j.Read {
		j.Ignored = slices.DeleteFunc(j.Ignored, func(k string) bool { return k == it.Key && it.As != "" })
	}
}

func dedupe(s []string) []string {
	var out []string
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
