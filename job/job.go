package job

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/query"
)

// MaxBytes bounds a job file: the largest public example configs are a
// few KiB, a Kubernetes manifest or a notebook's cells a few dozen
// (docs/jobs.md §5). Larger text is refused before it is parsed.
const MaxBytes = 256 << 10

// Format is the tool a job is written for, by its content. The names are
// the --json contract (docs/jobs.md §1).
type Format string

// Formats.
const (
	Axolotl      Format = "axolotl"
	LlamaFactory Format = "llama-factory"
	Torchtune    Format = "torchtune"
	TRL          Format = "trl"
	Transformers Format = "transformers"
	Unsloth      Format = "unsloth"
	DeepSpeed    Format = "deepspeed"
	Accelerate   Format = "accelerate"
	VLLM         Format = "vllm"
	SGLang       Format = "sglang"
	LlamaCpp     Format = "llama.cpp"
	Ollama       Format = "ollama"
	Docker       Format = "docker"
	Kubernetes   Format = "kubernetes"
)

// Formats are the formats Read recognises, in the order the messages
// list them.
var Formats = []Format{Axolotl, LlamaFactory, Torchtune, TRL, Transformers, Unsloth, DeepSpeed, Accelerate, VLLM, SGLang, LlamaCpp, Ollama, Docker, Kubernetes}

// Job is what a job file says, in the /vram grammar's words.
type Job struct {
	Format Format
	// Model is the model as the file names it (a Hub id exactly as
	// written; a local path or a GGUF file by the name in it); "" when
	// the file names none (a DeepSpeed or accelerate config).
	Model string
	// Method is the grammar's method word (full, lora, qlora, dora,
	// freeze, inference); Sharding fsdp or ddp when the file says so.
	Method, Sharding string
	// GPU is a catalog GPU the file names (a Kubernetes node selector).
	GPU string
	// Settings are the grammar's settings the file states, or that the
	// tool's defaults fill for what it leaves out, in the canonical order.
	Settings []query.KeyValue
	// Read lists the file's keys that were read, with what each became;
	// Ignored the keys that do not change memory; Unknown the keys that
	// were not used although they may change memory (keys vrambot does
	// not know, and settings it has no word for: Notes say which).
	Read    []Item
	Ignored []string
	Unknown []string
	Notes   []string
}

// Item is one key the file states and what it was read as.
type Item struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// As is the grammar's words for it ("bs=2", "qlora"), "" when the key
	// only confirms what the estimate assumes (Note says so).
	As   string `json:"as"`
	Note string `json:"note,omitempty"`
}

// Words is the job as the parts of a query.
func (j Job) Words() query.Words {
	return query.Words{Model: j.Model, Method: j.Method, GPU: j.GPU, Sharding: j.Sharding, Settings: slices.Clone(j.Settings)}
}

// Setting is the job's value of a grammar setting ("" when not set).
func (j Job) Setting(key string) string {
	for _, s := range j.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// Error is a job file that cannot be read: a syntax error (with its line
// and column), a file over the bounds, or no job at all. It is bad input
// (errs.Invalid); its message is meant for the user and never quotes the
// file beyond a key's name.
type Error struct {
	Line, Column int
	Reason       string
	// NotAJob marks text that holds no job vrambot reads.
	NotAJob bool
	why     string // what it is instead, when known
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("job file: line %d, column %d: %s", e.Line, e.Column, e.Reason)
	}
	return "job file: " + e.Reason
}

// ErrorKind makes a job error bad input (internal/errs).
func (e *Error) ErrorKind() errs.Kind { return errs.Invalid }

// notAJob is the error for text that holds no job.
func notAJob(why string) *Error {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	reason := "not a training config or launch command I know: formats I read are " + strings.Join(names, ", ")
	if why != "" {
		reason = why + "; " + reason
	}
	return &Error{Reason: reason, NotAJob: true, why: why}
}

// Read reads text as a job. The error is an *Error.
func Read(text string) (Job, error) {
	if len(text) > MaxBytes {
		return Job{}, &Error{Reason: fmt.Sprintf("%d KiB is more than the %d KiB a job file may have", (len(text)+1023)>>10, MaxBytes>>10)}
	}
	if !utf8.ValidString(text) || strings.ContainsRune(text, 0) {
		return Job{}, &Error{Reason: "not text (not valid UTF-8)"}
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	blocks := fencedBlocks(text)
	if len(blocks) > 3 && markdownHeadings(text) >= 2 {
		return Job{}, notAJob(fmt.Sprintf("a Markdown document with %d code blocks: paste the one that runs the job", len(blocks)))
	}
	if len(blocks) == 0 {
		blocks = []string{beforeTraceback(text)}
	}
	var first error
	for _, b := range blocks {
		j, err := readBlock(b)
		if err == nil {
			j.finish()
			return j, nil
		}
		if first == nil {
			first = err
		}
	}
	return Job{}, first
}

// Detect reports whether text holds a job and its format. It reads the
// text (well under a millisecond for a config; go test -bench).
func Detect(text string) (Format, bool) {
	j, err := Read(text)
	return j.Format, err == nil
}

// fencedBlocks are the contents of the ``` fences of a message or a
// Markdown file, in order.
func fencedBlocks(text string) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		open := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(open, "```") {
			continue
		}
		rest := strings.TrimPrefix(open, "```")
		if end := strings.Index(rest, "```"); end >= 0 { // ```one line```
			out = append(out, rest[:end])
			continue
		}
		var body []string
		if !isFenceTag(rest) { // ```vllm serve x, ```{ (Slack puts code on the fence line)
			body = append(body, rest)
		}
		j := i + 1
		for ; j < len(lines); j++ {
			if strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
				break
			}
			body = append(body, lines[j])
		}
		out = append(out, strings.Join(body, "\n"))
		i = j
	}
	return out
}

// isFenceTag reports whether what follows a fence's backticks is a
// Markdown info string ("yaml", "python", "c++", none) rather than code.
func isFenceTag(rest string) bool {
	return !strings.ContainsFunc(rest, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_+.#-", r))
	})
}

// markdownHeadings counts a Markdown document's headings outside its
// fences.
func markdownHeadings(text string) int {
	n, fenced := 0, false
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "```"):
			fenced = !fenced
		case !fenced && (strings.HasPrefix(t, "# ") || strings.HasPrefix(t, "## ") || strings.HasPrefix(t, "### ")):
			n++
		}
	}
	return n
}

// tracebackMarks start the part of a paste that is a traceback or an
// OOM message, not the job (a paste may hold both: docs/jobs.md §4).
var tracebackMarks = []string{"Traceback (most recent call last):", "torch.OutOfMemoryError", "torch.cuda.OutOfMemoryError", "CUDA out of memory", "RuntimeError: CUDA error"}

// beforeTraceback is text up to the first line of a traceback.
func beforeTraceback(text string) string {
	cut := len(text)
	for _, m := range tracebackMarks {
		if i := strings.Index(text, m); i >= 0 && i < cut {
			cut = strings.LastIndexByte(text[:i], '\n') + 1
		}
	}
	return text[:cut]
}

// readBlock reads one block of text by its content: JSON, YAML, an
// Ollama Modelfile or a Dockerfile, Python, or shell commands.
func readBlock(text string) (Job, error) {
	s := strings.TrimSpace(text)
	if s == "" {
		return Job{}, notAJob("the file is empty")
	}
	if s[0] == '{' || s[0] == '[' {
		n, err := parseJSON([]byte(s))
		var je *Error
		if err != nil {
			if strings.HasPrefix(s, "{") || looksJSON(s) || errors.As(err, &je) && je.Line == 0 {
				return Job{}, err // a syntax error, or a bound
			}
		} else {
			return readTree([]*node{n})
		}
	}
	code := func() bool { return looksPython(s) || looksShell(s) }
	if looksYAML(s) {
		docs, err := parseYAML([]byte(s))
		switch {
		case err == nil:
			j, terr := readTree(docs)
			if terr == nil || structured(docs) || !code() {
				return j, terr
			}
		case !code():
			return Job{}, err
		}
	}
	if looksInstructions(s) && !pythonImports(s) {
		return readInstructions(s)
	}
	if looksPython(s) {
		j, err := readPython(s)
		if err == nil || !looksShell(s) {
			return j, err
		}
	}
	return readShell(s)
}

// structured reports whether YAML documents are a manifest or a Compose
// file: their commands are read from their containers, not as a script.
func structured(docs []*node) bool {
	return kubernetesDocs(docs) || len(docs) > 0 && docs[0].get("services") != nil
}
