package job

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Shell is read as words, never run: lines joined at their continuations
// (\ in sh, ^ in cmd.exe, ` in PowerShell), split into commands at ;, &&,
// || and |, each split into words as sh quotes them; a heredoc's body
// travels with its command (kubectl apply -f - <<EOF). Prompts pasted
// with a command ("~/llama.cpp$ ", "C:\llama>") and environment
// assignments before it are taken off (docs/jobs.md §3).

// command is one command line: its environment and its words.
type command struct {
	env   map[string]string
	words []string
	body  string // a heredoc's text
}

// maxCommands bounds the commands of one file.
const maxCommands = 2000

var (
	unixPrompt = regexp.MustCompile(`^(\([^()\s]*\)\s+)?[A-Za-z0-9_.@:~/\\-]*[$%#]\s+`)
	winPrompt  = regexp.MustCompile(`^(PS\s+)?[A-Za-z]:\\[^>]*>\s*`)
	heredoc    = regexp.MustCompile(`(?:^|[^<])<<(-?)\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)
)

// stripPrompt takes a shell prompt off a pasted line.
func stripPrompt(line string) string {
	sp := strings.IndexAny(line, " \t")
	if !strings.Contains(line, `:\`) && !strings.HasPrefix(line, "(") && (sp < 1 || !strings.ContainsRune("$%#", rune(line[sp-1]))) {
		return line // no prompt: the cheap test, before the patterns
	}
	if m := winPrompt.FindString(line); m != "" {
		return line[len(m):]
	}
	if m := unixPrompt.FindString(line); m != "" && !strings.HasPrefix(strings.TrimSpace(line), "#") {
		return line[len(m):]
	}
	return line
}

// commands reads a script's commands.
func commands(s string) []command {
	lines := strings.Split(s, "\n")
	var out []command
	global := map[string]string{}
	for i := 0; i < len(lines) && len(out) < maxCommands; i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "REM ") || strings.HasPrefix(line, "::") {
			continue
		}
		line = stripPrompt(line)
		line, i = joinLines(lines, i, line)
		var body string
		hasHeredoc := strings.Contains(line, "<<")
		if m := heredoc.FindStringSubmatch(line); hasHeredoc && m != nil {
			body, i = heredocBody(lines, i, m[2], m[1] == "-")
		}
		windows := winDrive.MatchString(line)
		for _, part := range splitCommands(line) {
			words := shellWords(part)
			if windows {
				words = cmdWords(part)
			}
			c := command{env: map[string]string{}}
			if hasHeredoc && heredoc.MatchString(part) { // cat <<EOF | kubectl apply -f -: cat's
				c.body = body
			}
			for k, v := range global {
				c.env[k] = v
			}
			words = c.takeEnv(words)
			if len(words) == 0 {
				continue
			}
			switch strings.ToLower(words[0]) {
			case "export", "set", "setx":
				for _, w := range words[1:] {
					if k, v, ok := strings.Cut(w, "="); ok && envName.MatchString(k) {
						global[k] = v
					} else if strings.ToLower(words[0]) == "setx" && len(words) == 3 {
						global[words[1]] = words[2]
						break
					}
				}
				continue
			}
			c.words = words
			out = append(out, c)
		}
	}
	return out
}

// joinLines joins line, the text of lines[i], with the lines that go on
// it: its continuations, and the rest of a line a terminal wrapped (a
// line of only flags or dotted overrides, or hardWrapped's). It returns
// the line and the index of the last line joined.
func joinLines(lines []string, i int, line string) (string, int) {
	for i+1 < len(lines) {
		switch {
		case continued(line):
			line = strings.TrimRight(line[:len(line)-1], " \t") + " "
		case wrapped(lines[i+1]):
			line = strings.TrimRight(line, " \t") + " "
		default:
			glue, ok := hardWrapped(line, lines[i], lines[i+1])
			if !ok {
				return line, i
			}
			if !glue {
				line += " "
			}
		}
		i++
		next := strings.TrimSpace(lines[i])
		if strings.HasPrefix(next, "#") {
			continue
		}
		line += next
	}
	return line, i
}

// heredocBody is the text of a heredoc that starts after lines[i] and
// ends at the line delim (<<-: its lines' leading tabs taken off), and the
// index of that line.
func heredocBody(lines []string, i int, delim string, tabs bool) (string, int) {
	var b []string
	for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != delim {
		i++
		l := lines[i]
		if tabs {
			l = strings.TrimLeft(l, "\t")
		}
		b = append(b, l)
	}
	return strings.Join(b, "\n"), i + 1
}

// wrapped reports whether a line is the rest of the one before: it holds
// only flags or dotted key=value overrides, which run nothing alone.
func wrapped(next string) bool {
	t := strings.TrimSpace(next)
	if t == "" || t[0] == '#' {
		return false
	}
	w := strings.Fields(t)[0]
	if flagWord(w) {
		return true
	}
	k, _, ok := strings.Cut(w, "=")
	return ok && strings.Contains(k, ".") && !strings.ContainsAny(k, "/\\")
}

// minWrap is the narrowest terminal whose hard wraps are joined.
const minWrap = 60

// hardWrapped reports whether next is the rest of a command line a
// terminal hard-wrapped at a fixed column (prev, the line before as
// pasted, is that wide; no backslash) and whether the two glue with no
// space, the wrap having split a word (docs/jobs.md §3). The command must
// run a program read here, and next cannot start one: its words are
// overrides (batch_size=4, lowercase or dotted), flags and their values,
// the first perhaps the rest of a word and the last one wrapped again.
func hardWrapped(line, prev, next string) (glue, ok bool) {
	t := strings.TrimSpace(next)
	width := utf8.RuneCountInString(prev)
	if width < minWrap || t == "" || t[0] == '#' || !runsJob(line) {
		return false, false
	}
	words := strings.Fields(t)
	if startsCommand(words[0]) {
		return false, false
	}
	pw := strings.Fields(line)
	tail, before := pw[len(pw)-1], ""
	if len(pw) > 1 {
		before = pw[len(pw)-2]
	}
	space := strings.HasSuffix(prev, " ") || strings.HasSuffix(prev, "\t") || next[0] == ' ' || next[0] == '\t'
	if glue, ok = wrapJoin(tail, before, words, space); !ok {
		return false, false
	}
	lead := words[0]
	if glue {
		lead = tail + lead
	}
	for k := 1; k < len(words); k++ {
		last := words[k-1]
		if k == 1 {
			last = lead
		}
		rewrapped := k == len(words)-1 && utf8.RuneCountInString(next) >= width
		if !argWord(words[k]) && !flagWord(last) && !rewrapped {
			return false, false
		}
	}
	return glue, true
}

// wrapJoin is how a wrapped line's words go on the line before, whose
// last words are before and tail: whether they glue (the wrap split a
// word) and whether they go on it at all.
func wrapJoin(tail, before string, words []string, space bool) (glue, ok bool) {
	first := words[0]
	switch {
	case space: // the wrap fell on a space
		return false, argWord(first) || flagWord(tail)
	case flagWord(tail) && !argWord(first):
		// --config|llama3_1/8B_full batch_size=4: the flag's value;
		// --c|onfig llama3_1/8B_full: the rest of the flag.
		return len(words) > 1 && !argWord(words[1]), true
	case flagWord(tail):
		return false, true
	case !argWord(first):
		return true, true // the rest of a word: compile=Tr|ue, batch_size=|4
	}
	// key=value after a word cut short (enabl|e_activation_checkpointing=True),
	// or after a whole one whose trailing space the paste lost.
	return !argWord(tail) && !flagWord(before), true
}

// runsJob reports whether a command line's last command runs a program
// a reader reads.
func runsJob(line string) bool {
	parts := splitCommands(line)
	c := command{env: map[string]string{}}
	words := c.takeEnv(shellWords(parts[len(parts)-1]))
	if len(words) == 0 {
		return false
	}
	prog := programName(words[0])
	if a, ok := programAliases[prog]; ok {
		prog = a
	}
	return commandReaders[prog] != nil
}

// startsCommand reports whether a word can start a command in a script:
// a program read here, a wrapper, a shell keyword or builtin, or a
// variable set in capitals (CUDA_VISIBLE_DEVICES=0).
func startsCommand(w string) bool {
	p := programName(w)
	if programs[p] || wrappers[p] || commandReaders[p] != nil || programAliases[p] != "" || commonCommands[p] {
		return true
	}
	k, _, ok := strings.Cut(w, "=")
	return ok && envName.MatchString(k) && strings.ToUpper(k) == k
}

// commonCommands are sh's keywords and builtins, and the programs a
// script's lines most often start with.
var commonCommands = boolSet("if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "in",
	"function", "select", "cd", "echo", "printf", "exit", "return", "wait", "set", "unset", "source", "read", "trap", "shift",
	"eval", "exec", "local", "declare", "true", "false", "sleep", "pushd", "popd", "mkdir", "cat", "tee", "curl", "wget", "git",
	"pip", "nvidia-smi", "ls", "rm", "cp", "mv", "ssh", "tar", "kill", "sudo", "env", "time", "nohup", "make", "cmake", "bash", "sh")

// flagWord reports whether a word is a command-line flag (-c, --tp).
func flagWord(w string) bool {
	return len(w) > 1 && w[0] == '-' && (w[1] == '-' || w[1] >= 'a' && w[1] <= 'z' || w[1] >= 'A' && w[1] <= 'Z')
}

// argWord reports whether a word is an argument that starts no command:
// a flag, or an override key=value whose key is lowercase or dotted
// (batch_size=4, tokenizer.max_seq_len=4096).
func argWord(w string) bool {
	if flagWord(w) {
		return true
	}
	k, _, ok := strings.Cut(w, "=")
	return ok && k != "" && !strings.ContainsAny(k, "/\\") && (strings.Contains(k, ".") || strings.ToUpper(k) != k) && !strings.ContainsAny(k[:1], "0123456789")
}

// continued reports whether a line goes on on the next.
func continued(line string) bool {
	return strings.HasSuffix(line, `\`) || strings.HasSuffix(line, "^") || strings.HasSuffix(line, "`")
}

// takeEnv takes VAR=value words (and sudo, nohup, time, env, exec) off
// the front of a command.
func (c *command) takeEnv(words []string) []string {
	for len(words) > 0 {
		w := words[0]
		if k, v, ok := strings.Cut(w, "="); ok && envName.MatchString(k) {
			c.env[k] = v
			words = words[1:]
			continue
		}
		if wrappers[w] || (w == "bash" || w == "sh") && len(words) > 1 && (envAssignment(words[1]) || programs[programName(words[1])]) {
			// numactl --membind=1 llama-server …: the program is further on.
			rest := words[1:]
			for len(rest) > 0 && !envAssignment(rest[0]) && !programs[programName(rest[0])] && !strings.HasPrefix(programName(rest[0]), "llama-") {
				rest = rest[1:]
			}
			if len(rest) > 0 {
				words = rest
				continue
			}
			return words
		}
		switch w {
		case "sudo", "nohup", "time", "env", "exec", "command", "srun", "uv", "poetry", "conda":
			words = words[1:]
			if (w == "uv" || w == "poetry") && len(words) > 0 && words[0] == "run" {
				words = words[1:]
			}
			if w == "conda" && len(words) > 2 && words[0] == "run" {
				words = words[3:] // conda run -n ENV
			}
			continue
		}
		return words
	}
	return nil
}

// wrappers run a command they are given after their own options.
var wrappers = map[string]bool{"numactl": true, "taskset": true, "nice": true, "ionice": true, "stdbuf": true, "chrt": true, "timeout": true, "xvfb-run": true, "caffeinate": true}

// splitCommands splits a line at ;, &&, || and | outside quotes.
func splitCommands(line string) []string {
	var out []string
	var b strings.Builder
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == ';' || c == '|' || c == '&' && (i == 0 || line[i-1] != '>') && (i+1 >= len(line) || line[i+1] != '>'):
			out = append(out, b.String())
			b.Reset()
			if i+1 < len(line) && (line[i+1] == '&' || line[i+1] == '|') {
				i++
			}
			continue
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			out = append(out, b.String())
			return out // a comment to the end of the line
		}
		b.WriteByte(c)
	}
	return append(out, b.String())
}

// winDrive is a Windows path (C:\models): the line is cmd.exe's, where
// a backslash is no escape.
var winDrive = regexp.MustCompile(`(^|[\s"'=])[A-Za-z]:\\`)

// cmdWords splits a cmd.exe command into words: double quotes group,
// nothing escapes.
func cmdWords(s string) []string {
	var out []string
	var b strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			quoted, in = !quoted, true
			continue
		case !quoted && (c == ' ' || c == '\t'):
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
			continue
		}
		b.WriteByte(c)
		in = true
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// shellWords splits a command into words as sh quotes them.
func shellWords(s string) []string {
	var out []string
	var b strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
				continue
			}
		case quote == '"':
			if c == '"' {
				quote = 0
				continue
			}
			if c == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
				i++
				c = s[i]
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
			continue
		case c == ' ' || c == '\t':
			if inWord {
				out = append(out, b.String())
				b.Reset()
				inWord = false
			}
			continue
		case c == '\\' && i+1 < len(s):
			i++
			c = s[i]
		}
		b.WriteByte(c)
		inWord = true
	}
	if inWord {
		out = append(out, b.String())
	}
	return out
}

// programName is a command's program without its directory and .exe
// ("./build/bin/llama-server.exe" → llama-server).
func programName(w string) string {
	w = strings.ReplaceAll(w, `\`, "/")
	w = path.Base(w)
	w = strings.TrimSuffix(strings.ToLower(w), ".exe")
	if strings.HasPrefix(w, "python3.") || strings.HasPrefix(w, "python2") {
		return "python"
	}
	return w
}

// readShell reads the first command of a script that runs a job.
func readShell(s string) (Job, error) { return readShellEnv(s, nil) }

// readShellEnv reads a script run with env set (a container's).
func readShellEnv(s string, env map[string]string) (Job, error) {
	cmds := commands(s)
	for _, c := range cmds {
		for k, v := range env {
			if _, ok := c.env[k]; !ok {
				c.env[k] = v
			}
		}
	}
	var first error
	for i, c := range cmds {
		j, err := readCommand(c)
		if err == nil {
			rest := cmds[i+1:]
			if j.Model == "" {
				// ollama serve, then ollama run MODEL: the server's
				// settings and the model run on it.
				for k, n := range rest {
					if later, err := readCommand(n); err == nil && later.Format == j.Format && later.Model != "" {
						j = joinJobs(j, later)
						rest = rest[k+1:]
						break
					}
				}
			}
			if more := countJobs(rest); more > 0 {
				j.Notes = append(j.Notes, plural(more, "more command", "more commands")+" in the file: the first job is read")
			}
			return j, nil
		}
		if je, ok := err.(*Error); first == nil && ok && (!je.NotAJob || je.why != "") {
			first = err
		}
	}
	if first != nil {
		return Job{}, first
	}
	return Job{}, notAJob("")
}

// joinJobs is a job that names no model with a later command's model
// and settings; the first one's settings win.
func joinJobs(j, later Job) Job {
	j.Model = later.Model
	for _, s := range later.Settings {
		if j.Setting(s.Key) == "" {
			j.Settings = append(j.Settings, s)
		}
	}
	j.Read = append(j.Read, later.Read...)
	j.Ignored = append(j.Ignored, later.Ignored...)
	j.Unknown = append(j.Unknown, later.Unknown...)
	j.Notes = append(j.Notes, later.Notes...)
	return j
}

// countJobs counts the commands that read as jobs.
func countJobs(cmds []command) int {
	n := 0
	for _, c := range cmds {
		if _, err := readCommand(c); err == nil {
			n++
		}
	}
	return n
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// commandReaders read a command by its program; each gets the command
// and its arguments after the program, and says notAJob for a subcommand
// that runs no job (vllm bench, docker compose, tune download). It is
// filled in init: a container's command is read by it in turn.
var commandReaders map[string]func(c command, args []string) (Job, error)

func init() {
	commandReaders = map[string]func(c command, args []string) (Job, error){
		"vllm":             subcommand(func(c command, a []string) (Job, error) { return readEngine(VLLM, c, a) }, "serve"),
		"sglang":           subcommand(func(c command, a []string) (Job, error) { return readEngine(SGLang, c, a) }, "serve", "launch_server"),
		"python":           readPythonCommand,
		"py":               readPythonCommand,
		"llama-server":     func(c command, a []string) (Job, error) { return readEngine(LlamaCpp, c, a) },
		"server":           ggufCommand, // llama.cpp's binaries before their llama- names
		"main":             ggufCommand,
		"ollama":           readOllamaCommand,
		"docker":           subcommand(readDockerRun, "run"),
		"tune":             subcommand(readTuneRun, "run"),
		"trl":              subcommand(func(c command, a []string) (Job, error) { return readScriptFlags(TRL, c, a, 0, "") }, "sft", "dpo", "grpo", "kto", "reward", "rloo"),
		"accelerate":       subcommand(func(c command, a []string) (Job, error) { return readLauncher(Accelerate, c, a) }, "launch"),
		"torchrun":         func(c command, a []string) (Job, error) { return readLauncher(Transformers, c, a) },
		"deepspeed":        func(c command, a []string) (Job, error) { return readLauncher(DeepSpeed, c, a) },
		"axolotl":          subcommand(configCommand(Axolotl), "train", "preprocess"),
		"llamafactory-cli": subcommand(configCommand(LlamaFactory), "train"),
		"kubectl": func(c command, _ []string) (Job, error) {
			if c.body == "" {
				return Job{}, notAJob("")
			}
			docs, err := parseYAML([]byte(c.body))
			if err != nil {
				return Job{}, err
			}
			return readTree(docs)
		},
	}
}

// programAliases are other names of the programs above.
var programAliases = map[string]string{
	"python3": "python", "llama-cli": "llama-server", "llama-mtmd-cli": "llama-server", "llama-run": "llama-server",
	"podman": "docker", "nvidia-docker": "docker", "oc": "kubectl", "lmf": "llamafactory-cli",
}

// subcommand reads a command whose first argument is one of names.
func subcommand(read func(command, []string) (Job, error), names ...string) func(command, []string) (Job, error) {
	return func(c command, args []string) (Job, error) {
		if len(args) == 0 || !slices.Contains(names, args[0]) {
			return Job{}, notAJob("")
		}
		return read(c, args[1:])
	}
}

// configCommand reads axolotl train CONFIG and llamafactory-cli train CONFIG.
func configCommand(f Format) func(command, []string) (Job, error) {
	return func(c command, args []string) (Job, error) {
		if len(args) == 0 {
			return Job{}, notAJob("")
		}
		return readConfigCommand(f, c, args[0], args[1:])
	}
}

// ggufCommand reads ./server and ./main when they load a GGUF file.
func ggufCommand(c command, args []string) (Job, error) {
	if !strings.Contains(strings.Join(args, " "), ".gguf") {
		return Job{}, notAJob("")
	}
	return readEngine(LlamaCpp, c, args)
}

// readCommand reads one command by its program; a command that runs no
// job but is given a heredoc that holds one (cat <<EOF > isvc.yaml, a
// config or a script written by the paste) is read as that text.
func readCommand(c command) (Job, error) {
	prog := programName(c.words[0])
	if a, ok := programAliases[prog]; ok {
		prog = a
	}
	err := error(notAJob(""))
	if read, ok := commandReaders[prog]; ok {
		var j Job
		if j, err = read(c, c.words[1:]); err == nil {
			return j, nil
		}
	}
	if je, ok := err.(*Error); ok && je.NotAJob && c.body != "" {
		if j, berr := readBlock(c.body); berr == nil {
			return j, nil
		}
	}
	return Job{}, err
}

// readPythonCommand reads python -m MODULE … and python SCRIPT --flags.
func readPythonCommand(c command, args []string) (Job, error) {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-m" {
		args = args[1:] // -u, -O, -X …
	}
	if len(args) == 0 {
		return Job{}, notAJob("")
	}
	if args[0] == "-m" && len(args) > 1 {
		mod, rest := args[1], args[2:]
		switch {
		case strings.HasPrefix(mod, "vllm.entrypoints"):
			return readEngine(VLLM, c, rest)
		case mod == "sglang.launch_server" || mod == "sglang_router.launch_server" || mod == "sglang.srt.server":
			return readEngine(SGLang, c, rest)
		case strings.HasPrefix(mod, "axolotl.cli.train") || mod == "axolotl.cli.preprocess":
			if len(rest) > 0 {
				return readConfigCommand(Axolotl, c, rest[0], rest[1:])
			}
		case mod == "torch.distributed.run" || mod == "torch.distributed.launch":
			return readLauncher(Transformers, c, rest)
		case mod == "accelerate.commands.launch":
			return readLauncher(Accelerate, c, rest)
		case mod == "llamafactory.cli" || mod == "llamafactory":
			if len(rest) > 1 {
				return readConfigCommand(LlamaFactory, c, rest[1], rest[2:])
			}
		case mod == "trl" || strings.HasPrefix(mod, "trl."):
			return readScriptFlags(TRL, c, rest, 0, "")
		}
		return Job{}, notAJob("")
	}
	return readScriptFlags("", c, args[1:], 0, args[0])
}
