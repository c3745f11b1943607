"""The transformers backend on CUDA, with a randomly initialised model of a real shape.

Why: a machine with a GPU is lent for minutes at a time, with PyTorch and transformers but no
llama.cpp, no vLLM and no model weights. This runs the real ``TransformersBackend`` (its prompt
rendering, KV cache per agent, decoding loop, grammar or validated retry, scoring) on CUDA with a
model of Llama-3.1-8B's configuration whose weights are random (initialised on the GPU, so no
16 GB of weights travel), the bundled SmolLM2 tokenizer and chat template carried along, through
a short scripted debate: two debaters and a judge taking turns on a growing transcript. It prints
tokens/s, GPU memory and the backend's own checks, and exits 1 if a check fails. Replies are
gibberish: the figures are speed figures.

The only thing not as in a real run is where the weights come from: ``from_pretrained`` is
replaced, for the model only, by ``from_config`` on the device (the tokenizer is read as usual).
The vocabulary rows past the tokenizer's are zeroed in the output layer so that greedy replies
are made of tokens the tokenizer can write back.

    python benchmarks/gpu_check.py --tokenizer DIR              # on the GPU machine (cuda)
    python benchmarks/gpu_check.py --tokenizer DIR --dry-run    # tiny config, CPU: the same code path

``benchmarks/gpu_check.sh`` prepares DIR (and the wheels a bare machine lacks) and runs this.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the checkout's packages first, when run as a plain script

#: Llama-3.1-8B's configuration (Hugging Face ``config.json``), the shape measured.
LLAMA31_8B: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
    "vocab_size": 128256, "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "tie_word_embeddings": False, "hidden_act": "silu", "attention_bias": False, "mlp_bias": False,
    "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "bfloat16",
}
#: The same code path on a CPU in seconds: Llama-3.1-8B's layout, shrunk.
TINY = LLAMA31_8B | {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "head_dim": 16}

CASE = "A 54-year-old with three days of fever, chills and a productive cough; crackles at the right base."


def prepare_folder(folder: Path, config: dict[str, Any], tokenizer: Path) -> Path:
    """A model folder as ``from_pretrained`` expects it: the config, and the carried tokenizer's files."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    for item in tokenizer.iterdir():
        if item.is_file():
            (folder / item.name).write_bytes(item.read_bytes())
    return folder


def random_weights(device: str, real_tokens: int) -> None:
    """Make ``AutoModelForCausalLM.from_pretrained`` build the model from its config, on
    ``device``, with random weights (std 0.02), instead of reading weights that are not there."""
    import torch
    import transformers

    def from_pretrained(folder: str, *args: Any, dtype: Any = None, **kwargs: Any) -> Any:
        config = transformers.AutoConfig.from_pretrained(folder, local_files_only=True)
        torch.manual_seed(0)
        with torch.device(device):
            model = transformers.AutoModelForCausalLM.from_config(config, dtype=dtype or torch.float32)
        with torch.no_grad():
            for name, param in model.named_parameters():
                if param.dim() >= 2:
                    param.normal_(0.0, 0.02)
            model.get_output_embeddings().weight[real_tokens:] = 0  # never above a real token's logit
        return model

    transformers.AutoModelForCausalLM.from_pretrained = from_pretrained  # type: ignore[method-assign,assignment]


async def debate(backend: Any, turns: int, tokens: int) -> dict[str, Any]:
    """Two debaters and a judge on one model, each with its own session (KV cache): the
    transcript grows every turn; the judge gives a structured verdict and scores two labels."""
    from pydantic import BaseModel

    from backends.base import Message, SamplingOptions

    class Verdict(BaseModel):
        winner: str
        confidence: int

    greedy = SamplingOptions(max_tokens=tokens, temperature=0.0)
    transcript: list[str] = []
    calls: list[dict[str, Any]] = []
    started = time.perf_counter()
    for turn in range(turns):
        role = ("agent-a", "agent-b")[turn % 2]
        stance = "for" if role == "agent-a" else "against"
        messages = [Message("system", f"You argue {stance} a diagnosis of pneumonia. Be brief."),
                    Message("user", CASE + "\n\n" + "\n".join(transcript) + "\n\nYour turn.")]
        done = await backend.session(role).complete(messages, greedy)
        transcript.append(f"{role}: {done.text.strip()[:400]}")
        calls.append({"role": role, "prompt": done.usage.prompt_tokens, "evaluated": done.usage.prompt_tokens_evaluated,
                      "generated": done.usage.completion_tokens, "decode_tps": done.decode_tokens_per_s,
                      "prompt_s": done.timing.prompt_s, "finish": done.finish_reason})
    judge = backend.session("judge")
    verdict_messages = [Message("system", "You judge debates. Answer in JSON."),
                        Message("user", CASE + "\n\n" + "\n".join(transcript) + "\n\nWho argued better?")]
    verdict = await judge.complete(verdict_messages, SamplingOptions(max_tokens=48, temperature=0.0), schema=Verdict)
    scored = await judge.score(verdict_messages, ["agent-a", "agent-b"])
    again = await backend.session("agent-a-again").complete(
        [Message("system", "You argue for a diagnosis of pneumonia. Be brief."), Message("user", CASE + "\n\n\n\nYour turn.")],
        greedy)
    return {"seconds": time.perf_counter() - started, "calls": calls, "verdict": verdict, "scored": scored,
            "first_reply_again": again.text, "first_reply": transcript[0].split(": ", 1)[1] if transcript else ""}


def checks(result: dict[str, Any], backend: Any, device: str) -> list[tuple[str, bool, str]]:
    """The backend's own promises, checked on what the debate did (before the backend closes)."""
    calls = result["calls"]
    verdict = result["verdict"]
    guided = backend.guidance() is not None
    try:
        json.loads(verdict.text)
        parsed = True
    except ValueError:
        parsed = False
    # With a grammar the reply is JSON from its first character, cut off only by max_tokens.
    structured_ok = verdict.text.lstrip().startswith("{") and (parsed or verdict.finish_reason == "length") if guided else True
    later = calls[2:]  # each debater's second turn on: its own transcript is cached
    out = [
        ("every turn generated tokens", all(c["generated"] > 0 for c in calls), f"{[c['generated'] for c in calls]}"),
        ("a growing transcript is evaluated once (later turns evaluate fewer tokens than their prompt)",
         bool(later) and all(c["evaluated"] < c["prompt"] for c in later),
         ", ".join(f"{c['evaluated']}/{c['prompt']}" for c in calls)),
        ("greedy decoding is reproducible (the first turn, asked again by a fresh session)",
         result["first_reply_again"].strip()[:400] == result["first_reply"].strip(), ""),
        ("a structured reply follows its JSON schema's grammar" if guided else
         "a structured reply without llguidance takes the validated retry (not checked further)",
         structured_ok, f"finish {verdict.finish_reason}, {verdict.text[:60]!r}"),
        ("scoring gives finite log-probabilities", all(-1e6 < lp < 0 for lp in result["scored"].logprobs),
         f"{[round(lp, 2) for lp in result['scored'].logprobs]}"),
        ("the model's weights are on the device asked for", next(backend.model.parameters()).device.type == device,
         str(next(backend.model.parameters()).device)),
    ]
    return out


async def main_async(args: argparse.Namespace) -> int:
    import torch

    from backends.hf_transformers import TransformersBackend
    from backends.registry import LocalSource, ModelEntry

    device = "cpu" if args.dry_run else "cuda"
    if device == "cuda" and not torch.cuda.is_available():
        print("no CUDA device here; use --dry-run for the CPU rehearsal", file=sys.stderr)
        return 2
    config = TINY if args.dry_run else LLAMA31_8B
    from transformers import AutoTokenizer

    real_tokens = len(AutoTokenizer.from_pretrained(str(args.tokenizer), local_files_only=True))
    folder = prepare_folder(args.work / "model", config, args.tokenizer)
    random_weights(device, real_tokens)
    entry = ModelEntry(id="random-llama31-8b" if not args.dry_run else "random-tiny", name="random weights",
                       family="llama", backend="transformers", source=LocalSource(kind="local", path=str(folder)),
                       context_length=4096, device=device)
    started = time.perf_counter()
    backend = TransformersBackend(entry, folder)
    load_s = time.perf_counter() - started
    try:
        result = await debate(backend, args.turns, args.tokens)
        results = checks(result, backend, device)
    finally:
        await backend.aclose()
    generated = sum(c["generated"] for c in result["calls"])
    decode = [c["decode_tps"] for c in result["calls"] if c["decode_tps"]]
    print(f"device {device}" + (f" ({torch.cuda.get_device_name(0)})" if device == "cuda" else "") +
          f", torch {torch.__version__}, config {'tiny' if args.dry_run else 'Llama-3.1-8B'}, random weights, "
          f"tokenizer {args.tokenizer.name} ({real_tokens} tokens)")
    print(f"load {load_s:.1f} s; debate {result['seconds']:.1f} s: {len(result['calls'])} turns, {generated} tokens, "
          f"decode {min(decode):.1f}–{max(decode):.1f} tok/s (median {sorted(decode)[len(decode) // 2]:.1f})")
    for c in result["calls"]:
        rate = f"{c['evaluated'] / c['prompt_s']:.0f}" if c["prompt_s"] else "—"
        print(f"  {c['role']}: prompt {c['prompt']} ({c['evaluated']} evaluated, {rate} tok/s), "
              f"{c['generated']} generated at {c['decode_tps'] or 0:.1f} tok/s, {c['finish']}")
    if device == "cuda":
        print(f"GPU memory: peak allocated {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB, "
              f"reserved {torch.cuda.max_memory_reserved() / 2**30:.2f} GiB")
    failed = 0
    for name, ok, detail in results:
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'}  {name}" + (f"  [{detail}]" if detail else ""))
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokenizer", type=Path, required=True, help="the carried tokenizer folder (gpu_check.sh --prepare makes it)")
    p.add_argument("--dry-run", action="store_true", help="a tiny config on the CPU: the same code path in seconds")
    p.add_argument("--turns", type=int, default=6)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--work", type=Path, default=Path("/tmp/symposium-gpu-check"))
    return asyncio.run(main_async(p.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
