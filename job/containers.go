package job

import (
	"fmt"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
)

// A container runs a job wherever its spec is written: a Kubernetes
// manifest (a Deployment's, a StatefulSet's, a KServe InferenceService's
// containers), a Compose service, a Helm chart's values. Each is read the
// same way: the image and its command and args as a command line, its
// environment, and the GPUs it asks for (docs/jobs.md §2.5).

// container is one container spec found in a tree.
type container struct {
	image string
	words []string
	// script is the text of sh -c SCRIPT, kept with its lines.
	script string
	env    map[string]string
	gpus   string // the GPU limit or reservation
	gpu    string // a catalog GPU a node selector names
	// storage is a KServe model's storageUri on the Hub (hf://ORG/NAME).
	storage string
	where   string
}

// kubernetesDocs reports whether the documents are Kubernetes objects.
func kubernetesDocs(docs []*node) bool {
	for _, d := range docs {
		if d != nil && d.get("apiVersion") != nil && d.get("kind") != nil {
			return true
		}
	}
	return false
}

// readKubernetes reads the first container of the manifest that runs a
// job.
func readKubernetes(docs []*node) (Job, error) {
	var cs []container
	for _, d := range docs {
		if d == nil || d.get("kind") == nil {
			continue
		}
		cs = append(cs, findContainers(d, d.get("kind").str(), nil, 0)...)
	}
	return readContainers(Kubernetes, cs)
}

// readCompose reads a Compose file's services.
func readCompose(root *node) (Job, error) {
	return readContainers(Docker, findContainers(root.get("services"), "services", nil, 0))
}

// readValues reads a Helm chart's values: any container-like mapping in
// them, or the vLLM production stack's model specs.
func readValues(root *node) (Job, error) {
	cs := productionStack(root)
	cs = append(cs, findContainers(root, "values", nil, 0)...)
	return readContainers(Kubernetes, cs)
}

// findContainers walks a tree for mappings with an image or a command.
// sel is the nearest node selector's GPU above.
func findContainers(n *node, where string, sel *string, depth int) []container {
	if n == nil || depth > maxDepth {
		return nil
	}
	var out []container
	switch n.kind {
	case listNode:
		for _, it := range n.items {
			out = append(out, findContainers(it, where, sel, depth+1)...)
		}
		return out
	case scalarNode:
		return nil
	}
	if g := selectedGPU(n); g != "" {
		sel = &g
	}
	if c, ok := containerAt(n, where); ok {
		if sel != nil {
			c.gpu = *sel
		}
		out = append(out, c)
	}
	for i, k := range n.keys {
		if k == "command" || k == "args" || k == "env" || k == "environment" {
			continue
		}
		out = append(out, findContainers(n.vals[i], where+"."+k, sel, depth+1)...)
	}
	return out
}

// containerAt reads n as a container spec, if it is one.
func containerAt(n *node, where string) (container, bool) {
	img := n.get("image")
	image := img.str()
	if img != nil && img.kind == mapNode { // Helm: image: {repository, tag, command}
		image = img.get("repository").str()
		if t := img.get("tag").str(); t != "" {
			image += ":" + t
		}
	}
	cmd, args := n.get("command"), n.get("args")
	if img != nil && img.kind == mapNode && cmd == nil {
		cmd = img.get("command")
	}
	if image == "" && cmd == nil && args == nil {
		return container{}, false
	}
	if image == "" && n.get("modelFormat") == nil && cmd == nil {
		return container{}, false // args alone belong to something else
	}
	c := container{image: image, env: map[string]string{}, where: where}
	c.words = append(words(cmd), words(args)...)
	c.script = shellScript(append(cmd.strs(), args.strs()...))
	for _, e := range []*node{n.get("env"), n.get("environment")} {
		readEnv(e, c.env)
	}
	c.gpus = gpuLimit(n)
	if mf := n.get("modelFormat"); mf != nil && image == "" { // KServe's predictor.model
		c.image = mf.get("name").str()
	}
	if uri := n.get("storageUri").str(); strings.HasPrefix(uri, "hf://") {
		c.storage = uri // KServe downloads hf://ORG/NAME for the runtime
	}
	return c, true
}

// shellScript is the script of sh -c SCRIPT (bash -ec, -eucx…), "" when
// the command is no shell's.
func shellScript(w []string) string {
	if len(w) < 2 {
		return ""
	}
	switch programName(w[0]) {
	case "sh", "bash", "zsh", "dash", "ash":
	default:
		return ""
	}
	for i := 1; i+1 < len(w); i++ {
		if strings.HasPrefix(w[i], "-") && !strings.HasPrefix(w[i], "--") && strings.Contains(w[i], "c") {
			return strings.Join(w[i+1:], " ")
		}
	}
	return ""
}

// words is a command or args value: a list of words, or one line.
func words(n *node) []string {
	switch {
	case n == nil:
		return nil
	case n.kind == listNode:
		var out []string
		for _, w := range n.strs() {
			// sh -c "vllm serve …" holds a whole line in one word.
			if strings.ContainsAny(w, " \n") {
				out = append(out, shellWords(strings.Join(strings.Fields(strings.ReplaceAll(w, "\\\n", " ")), " "))...)
				continue
			}
			out = append(out, w)
		}
		return out
	case n.kind == scalarNode:
		return shellWords(strings.Join(strings.Fields(strings.ReplaceAll(n.str(), "\\\n", " ")), " "))
	}
	return nil
}

// readEnv reads a Kubernetes env list ({name, value}), a Compose list
// ("K=V") or mapping. Values from secrets have none.
func readEnv(n *node, env map[string]string) {
	if n == nil {
		return
	}
	if n.kind == mapNode {
		for i, k := range n.keys {
			env[k] = n.vals[i].str()
		}
		return
	}
	for _, it := range n.list() {
		if it.kind == mapNode {
			if name := it.get("name").str(); name != "" {
				env[name] = it.get("value").str()
			}
			continue
		}
		if k, v, ok := strings.Cut(it.str(), "="); ok {
			env[k] = v
		}
	}
}

// gpuLimit is the GPUs a container asks for: Kubernetes' nvidia.com/gpu
// limit (or request), Compose's device reservation count.
func gpuLimit(n *node) string {
	res := n.get("resources")
	for _, part := range []string{"limits", "requests"} {
		if g := res.path(part, "nvidia.com/gpu").str(); g != "" {
			return g
		}
		if g := res.path(part, "amd.com/gpu").str(); g != "" {
			return g
		}
	}
	for _, d := range n.path("deploy", "resources", "reservations", "devices").list() {
		if c := d.get("count").str(); c != "" {
			return c
		}
		if ids := d.get("device_ids").strs(); len(ids) > 0 {
			return fmt.Sprint(len(ids))
		}
	}
	return ""
}

// gpuLabels are the node labels that name a GPU model (NVIDIA's GPU
// feature discovery, GKE).
var gpuLabels = []string{"nvidia.com/gpu.product", "cloud.google.com/gke-accelerator", "gpu.nvidia.com/class", "node.kubernetes.io/instance-type"}

// selectedGPU is the catalog GPU a node selector or affinity in n names.
func selectedGPU(n *node) string {
	for _, label := range gpuLabels {
		if g := gpuName(n.path("nodeSelector", label).str()); g != "" {
			return g
		}
	}
	var found string
	walk(n.get("affinity"), 0, func(m *node) {
		if found != "" || m.kind != mapNode {
			return
		}
		for _, label := range gpuLabels {
			if m.get("key").str() == label {
				for _, v := range m.get("values").strs() {
					if g := gpuName(v); g != "" && found == "" {
						found = g
					}
				}
			}
		}
	})
	return found
}

// walk calls f on every node under n.
func walk(n *node, depth int, f func(*node)) {
	if n == nil || depth > maxDepth {
		return
	}
	f(n)
	for _, v := range n.vals {
		walk(v, depth+1, f)
	}
	for _, it := range n.items {
		walk(it, depth+1, f)
	}
}

// gpuName is the catalog's alias for a node label's GPU
// ("NVIDIA-A100-SXM4-80GB", "nvidia-l4").
func gpuName(label string) string {
	l := strings.ToLower(strings.TrimSpace(label))
	for _, p := range []string{"nvidia-", "tesla-", "geforce-"} {
		l = strings.TrimPrefix(l, p)
		l = strings.TrimPrefix(l, p)
	}
	l = strings.ReplaceAll(l, "-", " ")
	if g, ok := catalog.LookupGPU(l); ok && len(g.Aliases) > 0 {
		return g.Aliases[0]
	} else if ok {
		return strings.ToLower(g.Key)
	}
	return ""
}

// productionStack reads the vLLM production stack's model specs
// (servingEngineSpec.modelSpec[], helm/templates/deployment-vllm-multi.yaml
// at a6c01db0): each is a vllm serve line the chart writes.
func productionStack(root *node) []container {
	var out []container
	for _, m := range root.path("servingEngineSpec", "modelSpec").list() {
		if m.kind != mapNode || m.get("modelURL") == nil {
			continue
		}
		w := []string{"vllm", "serve", m.get("modelURL").str()}
		cfg := m.get("vllmConfig")
		for _, f := range []struct{ key, flag string }{
			{"maxModelLen", "--max-model-len"}, {"dtype", "--dtype"}, {"tensorParallelSize", "--tensor-parallel-size"},
			{"maxNumSeqs", "--max-num-seqs"}, {"gpuMemoryUtilization", "--gpu-memory-utilization"},
		} {
			if v := cfg.get(f.key).str(); v != "" {
				w = append(w, f.flag, v)
			}
		}
		w = append(w, cfg.get("extraArgs").strs()...)
		env := map[string]string{}
		if cfg.get("v0").str() == "1" {
			env["VLLM_USE_V1"] = "0"
		}
		out = append(out, container{image: m.get("repository").str(), words: w, env: env, gpus: m.get("requestGPU").str(), where: "servingEngineSpec.modelSpec"})
	}
	return out
}

// readContainers reads the first container that runs a job.
func readContainers(f Format, cs []container) (Job, error) {
	var first error
	for i, c := range cs {
		j, err := readContainer(f, c)
		if err != nil {
			if je, ok := err.(*Error); ok && !je.NotAJob && first == nil {
				first = err
			}
			continue
		}
		if n := len(cs) - i - 1; n > 0 {
			more := 0
			for _, o := range cs[i+1:] {
				if _, err := readContainer(f, o); err == nil {
					more++
				}
			}
			if more > 0 {
				j.Notes = append(j.Notes, plural(more, "more container", "more containers")+" that run a job: the first is read")
			}
		}
		return j, nil
	}
	if first != nil {
		return Job{}, first
	}
	return Job{}, notAJob("no container in it runs a training or serving job I read")
}

// readContainer reads one container: its command when it names a
// program, else its image's engine with the args as its flags.
func readContainer(f Format, c container) (Job, error) {
	r := newReading(f)
	var inner Job
	var err error
	cmd := command{env: c.env, words: c.words}
	switch {
	case c.script != "":
		inner, err = readShellEnv(c.script, c.env)
	case len(c.words) > 0 && !strings.HasPrefix(c.words[0], "-") && (programs[programName(c.words[0])] || strings.HasPrefix(programName(c.words[0]), "llama-")):
		inner, err = readCommand(cmd)
	default:
		e, ok := engineImage(c.image)
		if strings.EqualFold(c.image, "huggingface") || strings.Contains(strings.ToLower(c.image), "kserve/huggingfaceserver") { // KServe's Hugging Face runtime serves with vLLM
			e, ok = VLLM, true
		}
		if !ok {
			return Job{}, notAJob("")
		}
		if e == Ollama {
			rr := newReading(Ollama)
			rr.environment(c.env)
			rr.j.Settings = append(rr.j.Settings, kv("engine", "ollama"))
			rr.j.Method, rr.found = "inference", true
			inner, err = rr.job()
			break
		}
		rr := newReading(e)
		rr.engine(e, cmd, c.words)
		inner, err = rr.job()
	}
	if err != nil {
		return Job{}, err
	}
	if c.image != "" {
		r.item("image", c.image, "", "")
	}
	r.merge(inner)
	if r.j.Model == "" && c.storage != "" {
		r.model("storageUri", strings.TrimPrefix(c.storage, "hf://"))
	}
	r.gpuCount(c.gpus)
	if c.gpu != "" {
		r.j.GPU = c.gpu
		r.item("nodeSelector", c.gpu, c.gpu, "the GPU the pod is scheduled on")
	}
	return r.job()
}

// gpuCount reads a container's GPU limit: a training job uses them all,
// a serving engine tp × pp of them.
func (r *reading) gpuCount(g string) {
	n := positive(strings.Trim(g, `"'`))
	switch {
	case g == "":
	case r.j.Method == "inference":
		r.item("nvidia.com/gpu", g, "", plural(n, "GPU", "GPUs")+" for the container: the engine uses tp × pp of them")
	case n > 1 && r.j.Setting("gpus") == "":
		r.setAs("nvidia.com/gpu", g, "gpus", fmt.Sprint(n))
	default:
		r.item("nvidia.com/gpu", g, "", "")
	}
}
