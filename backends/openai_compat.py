"""Any OpenAI-compatible server on this machine: ``vllm serve``, llama.cpp's ``llama-server``,
``python -m llama_cpp.server`` (``symposium serve llamacpp``), Ollama.

Plain HTTP through httpx (already a dependency) rather than a client library, because every
server speaks its own dialect beyond the common core and we need to see exactly what is sent:

* Sessions keep no context of their own: each call sends the whole transcript and the server's
  prefix cache (vLLM, llama-server) spares re-reading it. Cached tokens the server reports
  become ``Usage.prompt_tokens_evaluated``; servers that report no usage while streaming get an
  estimate, and ``describe()`` says so.
* Requests from all sessions of one backend run side by side, up to the entry's
  ``max_concurrency``, so judges and jurors do not queue behind each other on servers that
  batch (vLLM, llama-server with ``--parallel``).
* Structured output: the first structured call probes the server's dialects with a tiny schema
  that no model writes unasked, keeps the first one the reply obeys, and otherwise falls back to
  asking in the prompt and validating (one retry). ``describe()`` names the dialect in use.
* Scoring: ``/completions`` with ``echo`` and ``logprobs`` returns the log-probability of every
  prompt token; a candidate's score is the sum over its own tokens and the end-of-turn marker.
  That needs the entry's ``chat_format`` (to render the prompt as the server does) and a server
  that returns prompt log-probabilities; otherwise :class:`NotSupported` says which is missing.
* A loopback server is reached directly, whatever the environment says: httpx would otherwise
  send every request (the case with it) to the proxy that ``HTTP_PROXY``/``ALL_PROXY`` name,
  as hospital networks set them, off the machine. Only a remote server the entry allows
  (``allow_remote``) goes the way the environment asks.
* Before anything is sent, a loopback port another account listens on is refused (it may have
  taken the port first), and a server ``symposium serve`` started gets the key of its start
  (:mod:`backends.served`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel

from . import served, structured
from .base import (
    Backend,
    BackendError,
    BackendUnavailable,
    ChatStream,
    Completion,
    ContextOverflow,
    Emit,
    FinishReason,
    Generation,
    Message,
    NotSupported,
    SamplingOptions,
    ScoreResult,
    Session,
    Timing,
    Usage,
    context_overflow,
)
from .chat_format import ChatFormat, get_format
from .loopback import account_name, check_server_url, is_loopback_host, listener_uids, url_host
from .markers import defang
from .registry import ModelEntry, ServerSource

log = logging.getLogger(__name__)

#: Structured-output dialects, tried in this order. Values build the extra request fields.
DIALECTS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    # OpenAI's own: vLLM, llama-server, Ollama (0.5+), LM Studio.
    "response_format=json_schema": lambda s: {
        "response_format": {"type": "json_schema", "json_schema": {"name": "reply", "schema": s, "strict": True}}},
    # llama-cpp-python's server.
    "response_format=json_object+schema": lambda s: {"response_format": {"type": "json_object", "schema": s}},
    # vLLM's own fields: current, then before 0.12.
    "structured_outputs.json": lambda s: {"structured_outputs": {"json": s}},
    "guided_json": lambda s: {"guided_json": s},
}
FALLBACK = "validated-retry"
PROBE_SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {"symposium_probe": {"type": "integer", "enum": [42]}},
    "required": ["symposium_probe"], "additionalProperties": False,
}
TIMEOUT = httpx.Timeout(connect=5.0, read=600.0, write=30.0, pool=None)


@dataclass
class _LoopState:
    """The HTTP client and limits of one event loop (asyncio objects cannot cross loops)."""

    loop: asyncio.AbstractEventLoop
    client: httpx.AsyncClient
    slots: asyncio.Semaphore
    probe_lock: asyncio.Lock


class OpenAIBackend(Backend):
    """One model on one OpenAI-compatible server."""

    kind = "openai"
    entry: ModelEntry

    def __init__(self, entry: ModelEntry) -> None:
        super().__init__()
        src = entry.source
        if not isinstance(src, ServerSource):
            raise BackendError(f"model {entry.id!r}: the openai backend needs source = {{ kind = \"server\", base_url = ... }}")
        try:
            check_server_url(src.base_url, allow_remote=src.allow_remote)
        except ValueError as exc:
            raise BackendError(f"model {entry.id!r}: {exc}") from None
        self.entry = entry
        self.model_id = entry.id
        self.base_url = src.base_url.rstrip("/")
        self.context_length = entry.context_length
        self.remote = not is_loopback_host(url_host(self.base_url))
        self.format: ChatFormat | None = get_format(entry.chat_format) if entry.chat_format else None
        if not self.remote:
            self._check_listener(src)
        self.headers = self._auth(src)
        self.served_model = self._check_server(src.model)
        self.dialect: str | None = None
        self.reports_usage: bool | None = None
        self.scoring_problem: str | None = None
        self.scoring_works = False
        self._state: _LoopState | None = None

    # -- set-up -----------------------------------------------------------------------------

    def _check_listener(self, src: ServerSource) -> None:
        """Refuse a loopback port another account listens on (unless the entry names it in
        ``account``), before anything is sent: any account can bind a free loopback port, and
        one that took the server's port first would receive the debate. Checked where the
        system says who listens (Linux); elsewhere :func:`backends.loopback.listener_uids`
        cannot tell, and the server's key (:mod:`backends.served`) is the only protection."""
        parts = urlsplit(self.base_url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        uids = listener_uids(url_host(self.base_url), port)
        others = sorted(account_name(uid) for uid in uids or () if uid != os.getuid())
        strangers = [name for name in others if name != src.account]
        if strangers:
            raise BackendUnavailable(
                f"model {self.model_id!r}: the server at {self.base_url} is run by the account {', '.join(strangers)}, "
                "not by you: another account may have taken its port first, and every message of the debate would go "
                "to it. Stop that server, or start yours on another port; if it is a service you trust (Ollama's runs "
                f"as the account ollama), add account = \"{strangers[0]}\" to this model's source in models.toml")

    def _auth(self, src: ServerSource) -> dict[str, str]:
        if not src.api_key_env:
            key = served.key_for(self.base_url)  # a server `symposium serve` started: its key of this start
            return {"Authorization": f"Bearer {key}"} if key else {}
        key = os.environ.get(src.api_key_env)
        if not key:
            raise BackendError(f"model {self.model_id!r}: set the environment variable {src.api_key_env} "
                               "(api_key_env in models.toml) to the server's API key")
        return {"Authorization": f"Bearer {key}"}

    def _check_server(self, wanted: str | None) -> str:
        """Ask the server which models it serves (it must answer now) and pick ours."""
        try:
            reply = httpx.get(f"{self.base_url}/models", headers=self.headers, timeout=10.0, trust_env=self.remote)
        except httpx.TransportError as exc:
            raise BackendUnavailable(self.down(exc)) from None
        if reply.status_code != 200:
            raise self.refused(reply.status_code, reply.content, "/models")
        served = [m.get("id", "") for m in self.parse(reply.content, "/models").get("data", [])]
        if wanted and (not served or wanted in served):
            return wanted
        if wanted:
            raise BackendError(f"model {self.model_id!r}: the server at {self.base_url} serves {', '.join(served)}, "
                               f"not {wanted!r}; fix source.model in models.toml")
        if len(served) != 1:
            raise BackendError(f"model {self.model_id!r}: the server at {self.base_url} serves {', '.join(served) or 'nothing'}; "
                               "name one as source.model in models.toml")
        return served[0]

    def state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        if self._state is None or self._state.loop is not loop:
            limit = self.entry.max_concurrency
            client = httpx.AsyncClient(timeout=TIMEOUT, headers=self.headers, trust_env=self.remote,
                                       limits=httpx.Limits(max_connections=limit + 2, max_keepalive_connections=limit))
            self._state = _LoopState(loop, client, asyncio.Semaphore(limit), asyncio.Lock())
        return self._state

    # -- messages for the user ---------------------------------------------------------------

    def down(self, exc: Exception) -> str:
        return (f"model {self.model_id!r}: no OpenAI-compatible server answers at {self.base_url} ({_why(exc)}). "
                "Start it (for a GGUF model: `symposium serve llamacpp MODEL_ID --port N`) or fix source.base_url in models.toml")

    def broken(self, exc: Exception, pieces: int) -> str:
        return (f"model {self.model_id!r}: the server at {self.base_url} stopped answering in the middle of a reply "
                f"(after {pieces} pieces; {_why(exc)}). Check that it is still running and restart it; "
                "every finished turn is kept in the journal")

    def refused(self, status: int, content: bytes, path: str) -> BackendError:
        detail = _error_detail(content)
        overflow = context_overflow(self.model_id, detail) if status in (400, 413, 422) else None
        if overflow is not None:
            return overflow
        hint = {401: "set the API key (api_key_env in models.toml)", 403: "set the API key (api_key_env in models.toml)",
                404: "check base_url (it should end in /v1) and source.model in models.toml"}.get(status, "see the server's log")
        return BackendError(f"model {self.model_id!r}: the server at {self.base_url} refused {path} (HTTP {status}: {detail}); {hint}")

    @property
    def privacy_warning(self) -> str | None:
        if not self.remote:
            return None
        return (f"model {self.model_id!r} runs on {url_host(self.base_url)}, not on this machine: "
                "every message of the debate is sent there (allow_remote = true in models.toml)")

    # -- requests ------------------------------------------------------------------------------

    def chat_body(self, messages: Sequence[Message], opts: SamplingOptions, *, stream: bool,
                  extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """A chat request. Non-standard sampling fields are sent under each server's name;
        servers ignore the names they do not know."""
        body: dict[str, Any] = {
            "model": self.served_model,
            "messages": [{"role": m.role, "content": defang(m.content)} for m in messages],
            "max_tokens": opts.max_tokens, "temperature": opts.temperature, "top_p": opts.top_p,
            "top_k": opts.top_k, "min_p": opts.min_p,
            "repeat_penalty": opts.repeat_penalty, "repetition_penalty": opts.repeat_penalty,
            "stream": stream,
        }
        if stream:
            body["stream_options"] = {"include_usage": True}
        if opts.seed is not None:
            body["seed"] = opts.seed
        if opts.stop:
            body["stop"] = list(opts.stop)
        return body | (extra or {})

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """One non-streamed request; transport and HTTP errors become clear BackendErrors."""
        st = self.state()
        async with st.slots:
            try:
                reply = await st.client.post(f"{self.base_url}{path}", json=body)
            except httpx.ConnectError as exc:
                raise BackendUnavailable(self.down(exc)) from None
            except httpx.TransportError as exc:
                raise BackendError(self.broken(exc, 0)) from None
        if reply.status_code >= 400:
            raise self.refused(reply.status_code, reply.content, path)
        return self.parse(reply.content, path)

    def parse(self, content: bytes | str, path: str) -> dict[str, Any]:
        """A JSON object from the server, or a BackendError saying it sent something else."""
        try:
            value = json.loads(content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            value = None
        if not isinstance(value, dict):
            raise BackendError(f"model {self.model_id!r}: {self.base_url}{path} did not answer with JSON; "
                               "is base_url an OpenAI-compatible server's /v1 address?")
        return value

    async def structured_dialect(self) -> str:
        """The structured-output dialect this server obeys (probed once, then remembered)."""
        if self.dialect is not None:
            return self.dialect
        async with self.state().probe_lock:
            if self.dialect is None:
                self.dialect = await self._probe()
                log.info("model %s at %s: structured output via %s", self.model_id, self.base_url, self.dialect)
        return self.dialect

    async def _probe(self) -> str:
        opts = SamplingOptions(max_tokens=32, temperature=0.0, repeat_penalty=1.0)
        for name, fields in DIALECTS.items():
            body = self.chat_body([Message("user", "Say hello.")], opts, stream=False, extra=fields(PROBE_SCHEMA))
            try:
                reply = await self.post("/chat/completions", body)
            except BackendUnavailable:
                raise
            except BackendError as exc:
                log.debug("dialect %s refused: %s", name, exc)
                continue
            text = _message_text(reply)
            if structured.problem(text, PROBE_SCHEMA) is None:
                return name
        return FALLBACK

    async def completions(self, prompt: str, *, logprobs: bool) -> dict[str, Any]:
        """``/completions`` for one token, with the prompt's log-probabilities if asked."""
        body: dict[str, Any] = {"model": self.served_model, "prompt": prompt, "max_tokens": 1, "temperature": 0.0}
        if logprobs:
            body |= {"echo": True, "logprobs": 0}
        return await self.post("/completions", body)

    def _new_session(self, name: str) -> OpenAISession:
        return OpenAISession(self, name)

    async def aclose(self) -> None:
        state, self._state = self._state, None
        if state is not None and not state.loop.is_closed():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is state.loop:
                await state.client.aclose()
        await super().aclose()

    def describe(self) -> dict[str, Any]:
        usage = {None: "not known yet", True: "reported by the server", False: "estimated (the server reports none)"}
        return {
            "model_id": self.model_id,
            "backend": self.kind,
            "base_url": self.base_url,
            "served_model": self.served_model,
            "structured_output": self.dialect or "probed on first use",
            "usage": usage[self.reports_usage],
            "max_concurrency": self.entry.max_concurrency,
            "remote": self.remote,
        }


class _Reader:
    """Reads one server-sent-event stream, handing each text piece on as it comes."""

    def __init__(self, backend: OpenAIBackend, body: dict[str, Any], gen: Generation, emit: Emit) -> None:
        self.backend = backend
        self.body = body
        self.gen = gen
        self.emit = emit
        self.pieces: list[str] = []
        self.usage: dict[str, Any] | None = None
        #: llama-server's own account of the call (``timings``: cached, prompt and decode times).
        self.timings: dict[str, Any] | None = None
        self.finish: str | None = None

    async def run(self) -> None:
        be = self.backend
        st = be.state()
        self.gen.queued()
        try:
            async with st.slots:  # one of the entry's max_concurrency requests: waiting for it is waiting for the model
                self.gen.began()
                async with st.client.stream("POST", f"{be.base_url}/chat/completions", json=self.body) as reply:
                    if reply.status_code >= 400:
                        raise be.refused(reply.status_code, await reply.aread(), "/chat/completions")
                    async for line in reply.aiter_lines():
                        if not line.startswith("data:"):
                            continue  # blank separators, comments (pings), event names
                        data = line[5:].strip()
                        if data == "[DONE]":
                            break
                        self._take(be.parse(data, "/chat/completions"))
        except httpx.ConnectError as exc:
            raise BackendUnavailable(be.down(exc)) from None
        except httpx.TransportError as exc:
            raise BackendError(be.broken(exc, len(self.pieces))) from None

    def _take(self, chunk: dict[str, Any]) -> None:
        if chunk.get("error"):
            raise BackendError(f"model {self.backend.model_id!r}: the server at {self.backend.base_url} reported an error "
                               f"mid-reply: {_error_detail(json.dumps(chunk).encode())}")
        self.usage = chunk.get("usage") or self.usage
        self.timings = chunk.get("timings") if isinstance(chunk.get("timings"), dict) else self.timings
        for choice in chunk.get("choices") or []:
            piece = (choice.get("delta") or {}).get("content")
            if piece:
                self.gen.token()
                self.pieces.append(piece)
                self.emit(piece)
            self.finish = choice.get("finish_reason") or self.finish


class OpenAISession(Session):
    """One agent's calls to the server. The server, not the session, holds any cache."""

    backend: OpenAIBackend

    def _generate(self, stream: ChatStream, gen: Generation, messages: list[Message],
                  schema: type[BaseModel] | dict[str, Any] | None) -> AsyncIterator[str]:
        return gen.in_task(stream, lambda emit: self._run(messages, gen, schema, emit))

    async def _run(self, messages: list[Message], gen: Generation, schema: type[BaseModel] | dict[str, Any] | None,
                   emit: Emit) -> Completion:
        be = self.backend
        extra = None
        if schema is not None:
            assert gen.schema is not None
            dialect = await be.structured_dialect()
            if dialect == FALLBACK:
                done = await self._validated(messages, gen, schema, gen.schema)
                if done.text:
                    emit(done.text)
                return done
            extra = DIALECTS[dialect](structured.closed(structured.bounded_ints_as_enums(gen.schema)))
        reader = _Reader(be, be.chat_body(messages, gen.options, stream=True, extra=extra), gen, emit)
        task = asyncio.ensure_future(reader.run())
        gen.on_cancel(lambda: None if task.get_loop().call_soon_threadsafe(task.cancel) else None)  # close the HTTP stream at once
        await asyncio.wait([task])
        error = None if task.cancelled() else task.exception()
        if error is not None and not gen.cancelled:
            raise error
        if not gen.cancelled:
            be.reports_usage = reader.usage is not None
        usage = self._usage(reader.usage, messages, len(reader.pieces), reader.timings)
        server_timings(gen.timing, reader.timings)
        if not gen.cancelled and not "".join(reader.pieces) and usage.prompt_tokens >= be.context_length:
            # Some servers (llama-cpp-python's) answer an overlong prompt with an empty reply
            # instead of an error: say what happened rather than return a blank turn.
            raise ContextOverflow(f"model {be.model_id!r}: the server was sent a prompt of about {usage.prompt_tokens} tokens, "
                                  f"past its context of {be.context_length}, and answered nothing; "
                                  "raise context_length in models.toml (and the server's own context size) "
                                  "or shorten the transcript")
        return gen.finish("".join(reader.pieces), usage, "cancelled" if gen.cancelled else _finish(reader.finish))

    async def _validated(self, messages: list[Message], gen: Generation, schema: type[BaseModel] | dict[str, Any],
                         json_schema: dict[str, Any]) -> Completion:
        """Ask for JSON in the prompt, check it, and ask once more with the problem named."""
        be = self.backend
        asked = structured.with_instruction(messages, json_schema)
        usage = Usage()
        text = ""
        finish: FinishReason = "stop"
        for attempt in range(2):
            reply = await be.post("/chat/completions", be.chat_body(asked, gen.options, stream=False))
            text = _message_text(reply)
            finish = _finish((reply.get("choices") or [{}])[0].get("finish_reason"))
            got = self._usage(reply.get("usage"), asked, max(1, len(text) // 4), reply.get("timings"))
            cached = (got.cached_tokens if attempt == 0 else
                      None if usage.cached_tokens is None or got.cached_tokens is None else usage.cached_tokens + got.cached_tokens)
            usage = Usage(usage.prompt_tokens + got.prompt_tokens, usage.prompt_tokens_evaluated + got.prompt_tokens_evaluated,
                          usage.completion_tokens + got.completion_tokens, cached)
            gen.token()
            problem = structured.problem(text, schema)
            if problem is None or attempt == 1:
                break
            asked = structured.retry_messages(asked, text, problem)
        return gen.finish(text, usage, finish)

    def _usage(self, reported: dict[str, Any] | None, messages: Sequence[Message], pieces: int,
               timings: Any = None) -> Usage:
        """The call's usage as the server reports it; an estimate where it reports none. Cached
        tokens: OpenAI's ``prompt_tokens_details.cached_tokens`` (vLLM with prompt-token details
        on), else llama-server's ``timings.cache_n``, else not known (``None``)."""
        if not reported:
            estimate = self.count_tokens(messages)
            return Usage(estimate, estimate, pieces)
        prompt = int(reported.get("prompt_tokens") or 0)
        cached = cached_of(reported, timings)
        return Usage(prompt, max(0, prompt - (cached or 0)), int(reported.get("completion_tokens") or pieces),
                     None if cached is None else min(cached, prompt))

    async def score(self, messages: Sequence[Message], candidates: Sequence[str], *, prefix: str = "") -> ScoreResult:
        if not candidates:
            raise ValueError("score() needs at least one candidate")
        if any(not c for c in candidates):
            raise ValueError("score() candidates must be non-empty strings")
        be = self.backend
        if be.format is None:
            raise NotSupported(f"model {be.model_id!r}: scoring over HTTP renders the prompt itself; set chat_format "
                               "on its entry in models.toml to the format the server uses")
        if be.scoring_problem:
            raise NotSupported(be.scoring_problem)
        timing = Timing()
        started = time.perf_counter()
        shared = be.format.render([Message(m.role, defang(m.content)) for m in messages], prefix)
        try:
            base = await be.completions(shared, logprobs=False)
            replies = await asyncio.gather(*(be.completions(shared + c + be.format.end_of_turn, logprobs=True) for c in candidates))
        except BackendUnavailable:
            raise
        except BackendError as exc:
            if be.scoring_works:
                raise
            be.scoring_problem = self._unsupported(str(exc))
            raise NotSupported(be.scoring_problem) from None
        n_shared = int(base["usage"]["prompt_tokens"])
        logprobs, counts = [], []
        for reply in replies:
            total, count = self._candidate_logprob(reply, n_shared)
            logprobs.append(total)
            counts.append(count)
        be.scoring_works = True
        timing.total_s = timing.prompt_s = time.perf_counter() - started
        return ScoreResult.of(candidates, logprobs, counts, Usage(n_shared, n_shared + sum(counts), 0), timing, be.model_id)

    def _candidate_logprob(self, reply: dict[str, Any], n_shared: int) -> tuple[float, int]:
        """Sum of the log-probabilities of the prompt tokens after the shared prompt."""
        be = self.backend
        choice = (reply.get("choices") or [{}])[0]
        token_lps = (choice.get("logprobs") or {}).get("token_logprobs")
        usage = reply.get("usage") or {}
        if not token_lps or "prompt_tokens" not in usage:
            be.scoring_problem = self._unsupported("it returned no prompt log-probabilities")
            raise NotSupported(be.scoring_problem)
        count = int(usage["prompt_tokens"]) - n_shared
        generated = int(usage.get("completion_tokens") or 0)
        prompt_lps = token_lps[: len(token_lps) - generated] if generated else token_lps
        own = prompt_lps[-count:] if count > 0 else []
        if count <= 0 or len(own) < count or any(v is None for v in own):
            raise BackendError(f"model {be.model_id!r}: the server at {be.base_url} returned log-probabilities that do not "
                               "line up with the candidate's tokens; scoring cannot be trusted on this server")
        return float(sum(own)), count

    def _unsupported(self, why: str) -> str:
        be = self.backend
        return (f"model {be.model_id!r}: log-likelihood scoring is not supported by this server ({be.base_url}): {why}. "
                "It needs prompt log-probabilities from /completions (echo + logprobs), as vLLM and "
                "`symposium serve llamacpp` give; use verbalized scoring with this model")


def _message_text(reply: dict[str, Any]) -> str:
    choices = reply.get("choices") or [{}]
    return ((choices[0].get("message") or {}).get("content")) or ""


def _finish(reason: str | None) -> FinishReason:
    return "length" if reason == "length" else "stop"


def _why(exc: Exception) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _error_detail(content: bytes) -> str:
    """The server's own words from an error body (OpenAI, FastAPI and plain-text shapes)."""
    try:
        body = json.loads(content)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return content.decode("utf-8", "replace").strip()[:300] or "no details"
    if isinstance(body, dict):
        err = body.get("error") if body.get("error") is not None else body.get("detail", body.get("message", body))
        if isinstance(err, dict):
            err = err.get("message", err)
        return str(err)[:300]
    return str(body)[:300]


def count_of(value: Any) -> int | None:
    """A token count a server reported, or ``None`` when it is not a count (missing, negative,
    not a whole number): the server's text is not trusted to be one."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def cached_of(reported: dict[str, Any], timings: Any) -> int | None:
    """The prompt tokens a server says it took from its cache: OpenAI's
    ``usage.prompt_tokens_details.cached_tokens``, else llama-server's ``timings.cache_n``;
    ``None`` when it says neither (then nobody knows, and nothing is shown as reused)."""
    details = reported.get("prompt_tokens_details")
    cached = count_of(details.get("cached_tokens")) if isinstance(details, dict) else None
    if cached is None and isinstance(timings, dict):
        cached = count_of(timings.get("cache_n"))
    return cached


def seconds_of(ms: Any) -> float | None:
    """Milliseconds a server reported, as seconds; ``None`` unless a finite, non-negative number."""
    if isinstance(ms, bool) or not isinstance(ms, int | float) or not math.isfinite(ms) or ms < 0:
        return None
    return ms / 1000


def server_timings(timing: Timing, timings: Any) -> None:
    """The prompt's and the reply's times as llama-server measured them (``timings.prompt_ms``,
    ``predicted_ms``), where it reports them: the server's own clock, which sees no network and
    no queue. Other servers say nothing of them, and the times stay unknown."""
    if isinstance(timings, dict):
        timing.prefill_s = seconds_of(timings.get("prompt_ms"))
        timing.decode_s = seconds_of(timings.get("predicted_ms"))
