package job

import (
	"path"
	"regexp"
	"strconv"
	"strings"
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
	heredoc    = regexp.MustCompile(`<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)
)

// stripPrompt takes a shell prompt off a pasted line.
func stripPrompt(line string) string {
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
		// Continuations.
		for i+1 < len(lines) && continued(line) {
			line = strings.TrimRight(line[:len(line)-1], " \t") + " "
			i++
			next := strings.TrimSpace(lines[i])
			if strings.HasPrefix(next, "#") {
				continue
			}
			line += next
		}
		var body string
		if m := heredoc.FindStringSubmatch(line); m != nil {
			var b []string
			for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != m[1] {
				i++
				b = append(b, lines[i])
			}
			i++
			body = strings.Join(b, "\n")
		}
		for _, part := range splitCommands(line) {
			words := shellWords(part)
			c := command{env: map[string]string{}, body: body}
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
		case c == ';' || c == '|' || c == '&' && i+1 < len(line) && line[i+1] == '&':
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
			if more := countJobs(cmds[i+1:]); more > 0 {
				j.Notes = append(j.Notes, plural(more, "more command", "more commands")+" in the file: the first job is read")
			}
			return j, nil
		}
		if je, ok := err.(*Error); first == nil && ok && !je.NotAJob {
			first = err
		}
	}
	if first != nil {
		return Job{}, first
	}
	return Job{}, notAJob("")
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

// readCommand reads one command by its program.
func readCommand(c command) (Job, error) {
	w := c.words
	prog := programName(w[0])
	args := w[1:]
	switch prog {
	case "vllm":
		if len(args) > 0 && args[0] == "serve" {
			return readEngine(VLLM, c, args[1:])
		}
	case "sglang":
		if len(args) > 0 && (args[0] == "serve" || args[0] == "launch_server") {
			return readEngine(SGLang, c, args[1:])
		}
	case "python", "python3", "py":
		return readPythonCommand(c, args)
	case "llama-server", "llama-cli", "llama-mtmd-cli", "llama-run", "server", "main":
		if prog == "server" || prog == "main" {
			if !strings.Contains(strings.Join(args, " "), ".gguf") {
				break
			}
		}
		return readEngine(LlamaCpp, c, args)
	case "ollama":
		return readOllamaCommand(c, args)
	case "docker", "podman", "nvidia-docker":
		if len(args) > 0 && args[0] == "run" {
			return readDockerRun(c, args[1:])
		}
	case "kubectl", "oc":
		if c.body != "" {
			docs, err := parseYAML([]byte(c.body))
			if err != nil {
				return Job{}, err
			}
			return readTree(docs)
		}
	case "tune":
		if len(args) > 0 && args[0] == "run" {
			return readTuneRun(c, args[1:])
		}
	case "trl":
		if len(args) > 0 {
			return readScriptFlags(TRL, c, args[1:], 0, "")
		}
	case "accelerate":
		if len(args) > 0 && args[0] == "launch" {
			return readLauncher(Accelerate, c, args[1:])
		}
	case "torchrun":
		return readLauncher(Transformers, c, args)
	case "deepspeed":
		return readLauncher(DeepSpeed, c, args)
	case "axolotl":
		if len(args) > 1 && (args[0] == "train" || args[0] == "preprocess") {
			return readConfigCommand(Axolotl, c, args[1], args[2:])
		}
	case "llamafactory-cli", "lmf":
		if len(args) > 1 && args[0] == "train" {
			return readConfigCommand(LlamaFactory, c, args[1], args[2:])
		}
	}
	return Job{}, notAJob("")
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
