"""Reading a GGUF file's metadata header: the model's name, architecture, context length and
chat template, for ``symposium models add`` and ``scan``; the tensors' names, shapes and types,
for the memory a model needs before it is loaded (``backends.kv_memory``).

Only the key/value header is read; large arrays (the vocabulary, merges) are skipped by
seeking, so a 5 GB model is described in milliseconds. The ``gguf`` package's ``GGUFReader``
would also do, but it decodes every token and tensor record (16 s for the bundled 270M model on
a busy laptop) and is only installed with the ``[transformers]`` extra; a test checks this
reader against it. Files are untrusted input: every length is checked against the file's size
and a damaged header is a :class:`GGUFError` naming the file and the offset.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9
#: Arrays longer than this are recorded by length only (they are vocabularies, not settings).
SMALL_ARRAY = 64


class GGUFError(ValueError):
    """Not a GGUF file, or a damaged one. ``str()`` names the file and what is wrong."""


@dataclass(frozen=True)
class SkippedArray:
    """A long array left unread: its element count only."""

    count: int


@dataclass(frozen=True)
class TensorInfo:
    """One tensor record of the header: its name, shape (GGUF order: the row length first) and
    ggml type."""

    name: str
    shape: tuple[int, ...]
    kind: int

    @property
    def type_name(self) -> str:
        from gguf.constants import GGMLQuantizationType

        try:
            return GGMLQuantizationType(self.kind).name
        except ValueError:
            return f"type {self.kind}"

    @property
    def nbytes(self) -> int:
        """Bytes of its data, from its type's block size (ggml's table, as the ``gguf`` package
        keeps it); a type unknown to it is a :class:`GGUFError`."""
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

        try:
            per_block, size = GGML_QUANT_SIZES[GGMLQuantizationType(self.kind)]
        except ValueError:
            raise GGUFError(f"tensor {self.name!r} has ggml type {self.kind}, unknown to this version of gguf") from None
        elements = 1
        for dim in self.shape:
            elements *= dim
        return elements // per_block * size


@dataclass(frozen=True)
class GGUFInfo:
    """What a registry entry needs to know about a GGUF file."""

    path: Path
    metadata: dict[str, Any]
    size_bytes: int
    #: The tensor records, when they were asked for (``read_gguf(..., tensors=True)``).
    tensors: tuple[TensorInfo, ...] = ()

    @property
    def weights_bytes(self) -> int:
        """The tensors' data as the header describes it (what loading maps or copies)."""
        return sum(t.nbytes for t in self.tensors)

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", "unknown"))

    @property
    def name(self) -> str | None:
        value = self.metadata.get("general.name")
        return str(value) if value else None

    @property
    def context_length(self) -> int | None:
        value = self.metadata.get(f"{self.architecture}.context_length")
        return int(value) if isinstance(value, int) else None

    @property
    def chat_template(self) -> str | None:
        value = self.metadata.get("tokenizer.chat_template")
        return value if isinstance(value, str) and value.strip() else None

    @property
    def size_gb(self) -> float:
        return round(self.size_bytes / 1e9, 2)


class _Reader:
    """The header's fields, read from the file mapped into memory: a vocabulary is skipped by
    walking its strings' lengths in place (262,144 of them for Gemma 3), where a seek per string
    on a buffered file costs a system call each (seconds before every debate's memory check)."""

    def __init__(self, data: mmap.mmap | bytes, path: Path) -> None:
        self.data, self.path, self.size, self.pos = data, path, len(data), 0

    def fail(self, what: str) -> GGUFError:
        return GGUFError(f"{self.path}: damaged GGUF header at byte {self.pos}: {what}; "
                         "re-download the file or pick another")

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.size:
            raise self.fail(f"a field of {n} bytes runs past the end of the file")
        data = self.data[self.pos:self.pos + n]
        self.pos += n
        return bytes(data)

    def scalar(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        if self.pos + size > self.size:
            raise self.fail(f"a field of {size} bytes runs past the end of the file")
        value = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += size
        return value

    def string(self) -> str:
        return self.take(self.scalar("<Q")).decode("utf-8", errors="replace")

    def skip(self, n: int) -> None:
        if n < 0 or self.pos + n > self.size:
            raise self.fail(f"an array of {n} bytes runs past the end of the file")
        self.pos += n

    def value(self, kind: int, *, whole: bool = False) -> Any:
        if kind in _SCALARS:
            return self.scalar(_SCALARS[kind])
        if kind == STRING:
            return self.string()
        if kind == ARRAY:
            item, count = self.scalar("<I"), self.scalar("<Q")
            if count > self.size:
                raise self.fail(f"an array claims {count} items")
            if whole or count <= SMALL_ARRAY:
                return [self.value(item) for _ in range(count)]
            if item in _SCALARS:
                self.skip(count * struct.calcsize(_SCALARS[item]))
            elif item == STRING:
                for _ in range(count):
                    self.skip(self.scalar("<Q"))
            else:
                raise self.fail(f"an array of type {item} cannot be skipped")
            return SkippedArray(count)
        raise self.fail(f"unknown value type {kind}")


def read_gguf(path: str | Path, *, arrays: Collection[str] = (), tensors: bool = False) -> GGUFInfo:
    """The metadata header of the GGUF file at ``path``; the keys named in ``arrays`` are read
    whole however long (a vocabulary, to copy it), and with ``tensors`` the tensor records too."""
    file_path = Path(path).expanduser()
    try:
        size = file_path.stat().st_size
        with file_path.open("rb") as file:
            head = file.read(4)
            if size < 24 or head != b"GGUF":
                raise GGUFError(f"{file_path}: not a GGUF file (it does not start with 'GGUF'); "
                                "Symposium's llama.cpp backend reads GGUF models only")
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
                metadata, records = _header(_Reader(data, file_path), arrays, tensors)
    except OSError as exc:
        raise GGUFError(f"{file_path}: cannot read it ({exc.strerror or exc})") from None
    return GGUFInfo(path=file_path, metadata=metadata, size_bytes=size, tensors=tuple(records))


def _header(reader: _Reader, arrays: Collection[str], tensors: bool) -> tuple[dict[str, Any], list[TensorInfo]]:
    """The key/value header (and with ``tensors`` the tensor records) after the magic."""
    reader.pos = 4
    version = reader.scalar("<I")
    if version not in (2, 3):
        raise GGUFError(f"{reader.path}: GGUF version {version} is not supported "
                        "(only little-endian versions 2 and 3); convert it with a recent llama.cpp")
    tensor_count = reader.scalar("<Q")
    kv_count = reader.scalar("<Q")
    metadata: dict[str, Any] = {}
    for _ in range(kv_count):
        key = reader.string()
        metadata[key] = reader.value(reader.scalar("<I"), whole=key in arrays)
    records: list[TensorInfo] = []
    if tensors:
        if tensor_count > reader.size:
            raise reader.fail(f"the header claims {tensor_count} tensors")
        for _ in range(tensor_count):
            name = reader.string()
            dims = reader.scalar("<I")
            if dims > 8:
                raise reader.fail(f"tensor {name!r} claims {dims} dimensions")
            shape = tuple(reader.scalar("<Q") for _ in range(dims))
            kind = reader.scalar("<I")
            reader.scalar("<Q")  # offset in the data section
            records.append(TensorInfo(name, shape, kind))
    return metadata, records
