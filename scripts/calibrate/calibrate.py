#!/usr/bin/env python3
"""Measure GPU memory of real training and inference steps, for the estimator.

Builds models from config.json files with random weights (no download:
transformers' AutoConfig -> AutoModelForCausalLM.from_config when transformers
is installed, else the small Llama-style module below built from the same
config.json), runs a grid of methods, micro-batches, sequence lengths and
checkpointing, and records torch.cuda.max_memory_allocated, the reserved peak
and the CUDA context. It writes JSON Lines in the accuracy harness's case
format (advisor/memory/accuracy: the fields of cases.jsonl, one line per run
and measure), so a measured table can replace published figures:

    python3 scripts/calibrate/calibrate.py --out calibration.jsonl
    go run ./advisor/memory/cmd/accuracy -training calibration.jsonl

One command, bounded by --budget seconds (default 540): runs that do not fit
the budget are left out, and a run that runs out of memory is recorded as a
lower bound. On a machine without CUDA (--device cpu, the repository's test)
it measures what it can on the CPU (parameters, gradients, optimizer states
and the tensors autograd saves) and marks the lines kind "dry-run", which the
harness does not judge.
"""

import argparse
import datetime
import gc
import importlib
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

try:  # optional: the real modelling code when it is installed
    import transformers  # noqa: F401
    from transformers import AutoConfig, AutoModelForCausalLM
except Exception:  # pragma: no cover - depends on the machine
    transformers = None

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CATALOG = os.path.join(ROOT, "advisor", "catalog", "models")

# Default configs for a GPU run: small and mid-size dense models of the
# catalog (advisor/catalog/models), real config.json files.
DEFAULT_CONFIGS = [
    "Qwen__Qwen3-0.6B.json",
    "meta-llama__Llama-3.2-1B-Instruct.json",
    "meta-llama__Llama-3.2-3B-Instruct.json",
    "meta-llama__Meta-Llama-3.1-8B.json",
]

# A config small enough for a CPU test (the shape of a Llama block).
TINY_CONFIG = {
    "_name_or_path": "tiny-llama-for-tests",
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 256,
    "max_position_embeddings": 512,
    "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
}

GiB = 1 << 30

# The optimizers a run may use, by the /vram grammar's optim= value: what
# each keeps per trainable parameter is docs/memory-model.md §1.1 and §6.11
# (torchao's low-bit AdamW with its block scales, bitsandbytes' paged 8-bit).
OPTIMIZERS = {
    "adamw": ("torch.optim", "AdamW"),
    "adamw-8bit": ("torchao.optim", "AdamW8bit"),
    "adamw-4bit": ("torchao.optim", "AdamW4bit"),
    "adamw-fp8": ("torchao.optim", "AdamWFp8"),
    "paged-adamw-8bit": ("bitsandbytes.optim", "PagedAdamW8bit"),
}


def make_optimizer(name, params):
    """The optimizer named by its grammar value, or a clear exit when the
    library that provides it is not installed."""
    module, cls = OPTIMIZERS[name]
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        raise SystemExit("calibrate: --optim {} needs {} ({})".format(name, module.split(".")[0], e))
    return getattr(mod, cls)(params, lr=1e-5)


# ---- a self-contained Llama-style model built from a config.json ----------


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        # As HF Llama: normalise in fp32, scale in the input dtype.
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rope(x, theta):
    # x: (b, heads, s, d); rotate half, as HF's rotate_half.
    s, d = x.shape[-2], x.shape[-1]
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d))
    t = torch.arange(s, device=x.device, dtype=torch.float32)
    freqs = torch.outer(t, inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


def attention(q, k, v):
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    # torch < 2.0 (Debian's 1.13): the eager form.
    s = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    mask = torch.ones(s, s, device=q.device, dtype=torch.bool).tril()
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores.float(), dim=-1).to(q.dtype) @ v


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, heads = c["hidden_size"], c["num_attention_heads"]
        kv = c.get("num_key_value_heads", heads)
        hd = c.get("head_dim") or h // heads
        self.heads, self.kv, self.hd, self.theta = heads, kv, hd, c.get("rope_theta", 10000.0)
        self.q_proj = nn.Linear(h, heads * hd, bias=False)
        self.k_proj = nn.Linear(h, kv * hd, bias=False)
        self.v_proj = nn.Linear(h, kv * hd, bias=False)
        self.o_proj = nn.Linear(heads * hd, h, bias=False)
        i = c["intermediate_size"]
        self.gate_proj = nn.Linear(h, i, bias=False)
        self.up_proj = nn.Linear(h, i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)
        eps = c.get("rms_norm_eps", 1e-6)
        self.input_layernorm = RMSNorm(h, eps)
        self.post_attention_layernorm = RMSNorm(h, eps)

    def forward(self, x):
        b, s, _ = x.shape
        y = self.input_layernorm(x)
        q = self.q_proj(y).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(y).view(b, s, self.kv, self.hd).transpose(1, 2)
        v = self.v_proj(y).view(b, s, self.kv, self.hd).transpose(1, 2)
        q, k = rope(q, self.theta), rope(k, self.theta)
        if self.kv != self.heads:
            rep = self.heads // self.kv
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        a = attention(q, k, v).transpose(1, 2).reshape(b, s, self.heads * self.hd)
        x = x + self.o_proj(a)
        y = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(y)) * self.up_proj(y))


class LlamaLike(nn.Module):
    """A decoder-only Llama-style model from a config.json's shape keys."""

    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.embed_tokens = nn.Embedding(c["vocab_size"], h)
        self.layers = nn.ModuleList(Block(c) for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(h, c.get("rms_norm_eps", 1e-6))
        self.lm_head = nn.Linear(h, c["vocab_size"], bias=False)
        if c.get("tie_word_embeddings"):
            self.lm_head.weight = self.embed_tokens.weight
        self.checkpointing = False

    def forward(self, ids):
        x = self.embed_tokens(ids)
        for blk in self.layers:
            if self.checkpointing and self.training:
                x = torch.utils.checkpoint.checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return self.lm_head(self.norm(x))


# ---- LoRA: PEFT's form (A, B, dropout on the adapter input) ---------------


class LoRALinear(nn.Module):
    def __init__(self, base, rank, alpha, dropout):
        super().__init__()
        self.base = base
        for p in base.parameters():
            p.requires_grad_(False)
        self.lora_A = nn.Linear(base.in_features, rank, bias=False, device=base.weight.device, dtype=base.weight.dtype)
        self.lora_B = nn.Linear(rank, base.out_features, bias=False, device=base.weight.device, dtype=base.weight.dtype)
        nn.init.zeros_(self.lora_B.weight)
        self.drop = nn.Dropout(dropout)
        self.scale = alpha / rank

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(self.drop(x))) * self.scale


TARGETS = {"qv": ("q_proj", "v_proj"),
           "attn": ("q_proj", "k_proj", "v_proj", "o_proj"),
           "all": ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")}


def add_lora(model, rank, targets, dropout=0.05):
    for p in model.parameters():
        p.requires_grad_(False)
    names = TARGETS[targets]
    for mod in list(model.modules()):
        for name, child in list(mod.named_children()):
            if name in names and isinstance(child, nn.Linear):
                setattr(mod, name, LoRALinear(child, rank, 2 * rank, dropout))


# ---- measuring -------------------------------------------------------------


class SavedTensors:
    """Counts the bytes autograd saves for backward (unique storages)."""

    def __init__(self):
        self.seen, self.bytes = set(), 0

    def pack(self, t):
        try:
            key = (t.untyped_storage().data_ptr(), t.device)
            size = t.untyped_storage().nbytes()
        except AttributeError:  # torch < 2.0
            key = (t.storage().data_ptr(), t.device)
            size = t.storage().nbytes() if hasattr(t.storage(), "nbytes") else t.storage().size() * t.element_size()
        if key not in self.seen:
            self.seen.add(key)
            self.bytes += size
        return t

    @staticmethod
    def unpack(t):
        return t


def tensor_bytes(tensors):
    seen, n = set(), 0
    for t in tensors:
        if t is None:
            continue
        key = (t.data_ptr(), t.device)
        if key not in seen:
            seen.add(key)
            n += t.numel() * t.element_size()
    return n


def load_config(path):
    if path == "tiny":
        return dict(TINY_CONFIG)
    with open(path) as f:
        c = json.load(f)
    if "text_config" in c and "hidden_size" not in c:
        c = {**c, **c["text_config"]}
    return c


def build(config, dtype, device):
    if transformers is not None and config.get("model_type"):
        try:
            cfg = AutoConfig.for_model(config["model_type"], **{k: v for k, v in config.items() if k != "model_type"})
            model = AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype)
            return model.to(device), "transformers " + transformers.__version__
        except Exception as e:  # fall back to the module above, but say so
            print(f"calibrate: transformers cannot build {config.get('model_type')}: {e}; using the Llama-style module", file=sys.stderr)
    model = LlamaLike(config).to(device=device, dtype=dtype)
    return model, "scripts/calibrate Llama-style module"


def set_checkpointing(model, on):
    if hasattr(model, "gradient_checkpointing_enable"):
        if on:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        return
    model.checkpointing = on


def param_count(model):
    return sum(p.numel() for p in model.parameters())


def run_point(config, point, device, steps=2, optim="adamw"):
    """One grid point: build, train (or generate) `steps` steps, measure."""
    cuda = device.startswith("cuda")
    dtype = torch.bfloat16 if cuda else torch.float32
    if cuda:
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    model, builder = build(config, dtype, device)
    params = param_count(model)
    method = point["method"]
    lora_rank, targets = point.get("rank", 8), point.get("targets", "qv")
    if method == "lora":
        add_lora(model, lora_rank, targets)
    vocab = config["vocab_size"]
    b, s = point["batch"], point["seq"]
    ids = torch.randint(0, vocab, (b, s), device=device)
    saved = SavedTensors()
    if method == "inference":
        model.eval()
        with torch.no_grad():
            for _ in range(steps):
                model(ids)
        opt = None
    else:
        model.train()
        set_checkpointing(model, point["gc"])
        trainable = [p for p in model.parameters() if p.requires_grad]
        opt = make_optimizer(optim, trainable)
        for step in range(steps):
            hooks = torch.autograd.graph.saved_tensors_hooks(saved.pack, saved.unpack) if step == steps - 1 and not cuda else None
            if hooks:
                hooks.__enter__()
            out = model(ids)
            logits = out.logits if hasattr(out, "logits") else out
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, vocab).float(), ids[:, 1:].reshape(-1))
            if hooks:
                hooks.__exit__(None, None, None)
            del logits, out
            loss.backward()
            opt.step()
            if step < steps - 1:  # the last step's gradients are measured
                opt.zero_grad(set_to_none=False)
    result = {"params": params, "builder": builder}
    if cuda:
        torch.cuda.synchronize()
        result["allocated"] = torch.cuda.max_memory_allocated()
        result["reserved"] = torch.cuda.max_memory_reserved()
    else:
        states = []
        if opt is not None:
            for st in opt.state.values():
                states.extend(v for v in st.values() if torch.is_tensor(v))
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        result["allocated"] = tensor_bytes(list(model.parameters())) + tensor_bytes(grads) + tensor_bytes(states) + saved.bytes
        result["reserved"] = result["allocated"]
    del model, opt
    gc.collect()
    return result


def cuda_context_bytes():
    """What the process holds beyond PyTorch's reserve: context, kernels."""
    torch.cuda.init()
    x = torch.ones(1, device="cuda")  # loads the context and a kernel
    free, total = torch.cuda.mem_get_info()
    ctx = (total - free) - torch.cuda.memory_reserved()
    del x
    return max(0, ctx), total


def grid(kind):
    if kind == "tiny":
        for method in ("full", "lora", "inference"):
            for batch in (1, 2):
                for gc_on in ((False, True) if method != "inference" else (False,)):
                    yield {"method": method, "batch": batch, "seq": 32, "gc": gc_on}
        return
    for method in ("inference", "lora", "full"):
        for seq in (512, 2048):
            for batch in (1, 4):
                for gc_on in ((False, True) if method != "inference" else (False,)):
                    yield {"method": method, "batch": batch, "seq": seq, "gc": gc_on}


def gb(n):
    """Bytes as the cases' decimal GB, to the byte (tiny CPU runs are KB)."""
    return n / 1e9


def case_lines(config, point, res, meta):
    name = config.get("_name_or_path") or meta["config_name"]
    optim = meta.get("optim", "adamw")
    base_id = "calib-{}-{}-bs{}-s{}{}{}".format(
        os.path.basename(name).lower(), point["method"], point["batch"], point["seq"],
        "" if point["method"] == "inference" else ("-gc" if point["gc"] else "-nogc"),
        "" if point["method"] == "inference" or optim == "adamw" else "-" + optim)
    cuda = meta["device"].startswith("cuda")
    common = {
        "source": "scripts/calibrate/calibrate.py ({}, torch {}, {}, {})".format(
            meta["gpu"], torch.__version__, res["builder"], meta["date"]),
        "model": name,
        "params_b": round(res["params"] / 1e9, 4),
        "method": point["method"],
        "precision": "bf16" if cuda else "fp32",
        "optimizer": "none" if point["method"] == "inference" else optim,
        "batch": point["batch"],
        "seq_len": point["seq"],
        "grad_checkpointing": point["gc"] if point["method"] != "inference" else None,
        "zero_stage": None,
        "num_gpus": 1,
        "kind": "measured" if cuda else "dry-run",
        "gpu": meta["gpu"],
        "loss": "standard" if point["method"] != "inference" else None,
        "attention": "flash" if hasattr(F, "scaled_dot_product_attention") else "eager",
    }
    if point["method"] == "lora":
        common.update(lora_rank=point.get("rank", 8), lora_targets=point.get("targets", "qv"))
    common = {k: v for k, v in common.items() if v is not None or k in ("grad_checkpointing", "zero_stage")}
    if res.get("oom"):
        return [dict(common, id=base_id, reported_gb=round(meta["capacity"] / 1e9, 3), bound="lower",
                     measure="out of memory on the device", notes="the run did not fit; reported_gb is the capacity")]
    lines = [dict(common, id=base_id + "-alloc", reported_gb=gb(res["allocated"]),
                  measure="torch.cuda.max_memory_allocated" if cuda else "cpu: parameters, gradients, optimizer states and saved activations",
                  notes="random weights built from the config; {} steps; peak after the last".format(meta["steps"]))]
    if cuda:
        total = res["reserved"] + meta["context"]
        lines.append(dict(common, id=base_id + "-total", reported_gb=gb(total),
                          measure="nvidia-smi equivalent: max_memory_reserved + CUDA context",
                          notes="reserved {:.3f} GiB + context {:.3f} GiB (measured with cudaMemGetInfo)".format(
                              res["reserved"] / GiB, meta["context"] / GiB)))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", nargs="*", default=None, help="config.json files ('tiny' for the test model); default: a few catalog configs")
    ap.add_argument("--grid", choices=("default", "tiny"), default=None, help="the runs to make (default: tiny on CPU)")
    ap.add_argument("--device", default=None, help="cuda or cpu (default: cuda when available)")
    ap.add_argument("--out", default="calibration.jsonl", help="JSON Lines output, the accuracy harness's case format")
    ap.add_argument("--budget", type=float, default=540, help="stop starting runs after this many seconds")
    ap.add_argument("--steps", type=int, default=2, help="training steps per run")
    ap.add_argument("--optim", choices=sorted(OPTIMIZERS), default="adamw",
                    help="the training runs' optimizer, by its optim= value (torchao or bitsandbytes for the low-bit ones)")
    args = ap.parse_args(argv)

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        ap.error("--device cuda, but CUDA is not available")
    kind = args.grid or ("default" if device.startswith("cuda") else "tiny")
    configs = args.configs or ([os.path.join(CATALOG, c) for c in DEFAULT_CONFIGS] if kind == "default" else ["tiny"])
    meta = {"device": device, "steps": args.steps, "date": datetime.date.today().isoformat(), "context": 0, "capacity": 0,
            "optim": args.optim}
    if device.startswith("cuda"):
        meta["context"], meta["capacity"] = cuda_context_bytes()
        meta["gpu"] = torch.cuda.get_device_name()
    else:
        meta["gpu"] = "cpu"

    start = time.monotonic()
    written = 0
    with open(args.out, "w") as out:
        for path in configs:
            config = load_config(path)
            meta["config_name"] = os.path.splitext(os.path.basename(path))[0].replace("__", "/")
            for point in grid(kind):
                if time.monotonic() - start > args.budget:
                    print("calibrate: time budget reached; the rest of the grid is left out", file=sys.stderr)
                    break
                try:
                    res = run_point(config, point, device, args.steps, args.optim)
                except RuntimeError as e:  # torch.cuda.OutOfMemoryError is a RuntimeError
                    if "out of memory" not in str(e).lower():
                        raise
                    res = {"oom": True, "params": 0, "builder": ""}
                    gc.collect()
                    if device.startswith("cuda"):
                        torch.cuda.empty_cache()
                for line in case_lines(config, point, res, meta):
                    out.write(json.dumps(line) + "\n")
                    written += 1
                out.flush()
    print(f"calibrate: {written} lines in {args.out} ({time.monotonic() - start:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
