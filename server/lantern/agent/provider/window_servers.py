"""What each model server says about its context window, asked over HTTP.

One reader per server, each reading the fields that server's own source or docs
define (docs/endpoints.md#context-window names them):

- Ollama: `POST /api/show` (`model_info["<arch>.context_length"]`, the model's
  trained length; a `num_ctx` line in `parameters`) and `GET /api/ps`
  (`models[].context_length`, the window a loaded model runs with);
- llama.cpp's server: `GET /props` (`default_generation_settings.n_ctx`, one
  slot's window) and `GET /v1/models` (`data[].meta.n_ctx_train`);
- vLLM: `GET /v1/models` (`data[].max_model_len`);
- LM Studio: `GET /api/v1/models` (`loaded_instances[].config.context_length`,
  `max_context_length`), else `GET /api/v0/models` (`loaded_context_length`,
  `max_context_length`);
- OpenRouter: `GET /api/v1/models` (`data[].context_length`);
- any other server: its `GET …/models`, read for vLLM's or llama.cpp's fields
  (a vLLM or llama.cpp behind a proxy, on another port) or a `context_length`.

Requests go through `Prober`: the endpoint's own origin, the model client's
headers, no redirect followed, a short timeout; any failure reads as None.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from lantern.agent.provider.diagnose import Prober, with_path

Server = Literal["ollama", "llama.cpp", "vllm", "lmstudio", "openrouter", "hosted", "other"]

#: What Ollama gives a model no `num_ctx` sets (ollama docs/context-length.mdx: 4k under
#: 24 GiB of VRAM, more above; 2,048 before v0.6.7). Its server's environment
#: (`OLLAMA_CONTEXT_LENGTH`) is not visible from here.
OLLAMA_DEFAULT = 4096
#: OpenRouter's list holds every model it routes to, descriptions and all.
_LARGE_LIST = 16 << 20
_NUM_CTX = re.compile(r"(?m)^num_ctx\s+([0-9.e+]+)\s*$")


@dataclass(frozen=True)
class Found:
    """What a server said. `tokens` None: it gave no window and `source` says why (empty:
    nothing to say). `trained`: the model's own length when the server said it.
    `settled`: the answer holds for the process (False: ask again next time, as after no
    answer or for a model not loaded yet). `default`: `tokens` is the server's documented
    default, not a number it reported."""

    tokens: int | None
    source: str
    trained: int | None = None
    settled: bool = True
    default: bool = False

    @classmethod
    def nothing(cls, why: str, *, trained: int | None = None, settled: bool = False) -> Found:
        return cls(None, why, trained, settled)


def _count(value: Any) -> int | None:
    """A positive whole number of tokens, else None (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if value >= 1 and float(value).is_integer() else None


def _items(data: Any, key: str) -> list[Mapping[str, Any]]:
    items = data.get(key) if isinstance(data, Mapping) else None
    return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []


def server_root(base_url: str) -> str:
    """Where a server's own routes live: the base URL without its `/v1` (and query)."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    path = path[: -len("/v1")] if path.endswith("/v1") else path
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


async def ask_server(server: Server, base_url: str, model: str, prober: Prober) -> Found:
    """What `server` at `base_url` says about `model`'s window (never raises)."""
    readers = {
        "ollama": _ollama,
        "llama.cpp": _llamacpp,
        "vllm": _vllm,
        "lmstudio": _lmstudio,
        "openrouter": _openrouter,
        "other": _other,
    }
    reader = readers.get(server)
    if reader is None:  # a hosted API whose model list says nothing of windows
        return Found.nothing("", settled=True)
    return await reader(base_url, model, prober)


# --------------------------------------------------------------------------- Ollama


def _ollama_name(name: str) -> str:
    """A model name as Ollama lists it: no default registry or namespace, a tag."""
    for prefix in ("registry.ollama.ai/", "library/"):
        name = name.removeprefix(prefix)
    return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"


async def _ollama(base_url: str, model: str, prober: Prober) -> Found:
    root = server_root(base_url)
    shown, ps = await asyncio.gather(
        prober.json(root + "/api/show", {"model": model}), prober.json(root + "/api/ps")
    )
    trained = None
    if isinstance(shown, Mapping) and isinstance(shown.get("model_info"), Mapping):
        info = shown["model_info"]
        trained = next(
            (_count(v) for k, v in info.items() if k.endswith(".context_length") and _count(v)),
            None,
        )
    wanted = _ollama_name(model)
    for loaded in _items(ps, "models"):
        names = {_ollama_name(str(loaded.get(k, ""))) for k in ("name", "model")}
        tokens = _count(loaded.get("context_length"))  # Ollama 0.9.7 and later
        if wanted in names and tokens:
            return Found(tokens, "Ollama /api/ps: the loaded model", trained)
    if shown is None and ps is None:
        return Found.nothing("Ollama /api/show and /api/ps did not answer")
    params = shown.get("parameters") if isinstance(shown, Mapping) else None
    set_to = _NUM_CTX.search(params) if isinstance(params, str) else None
    num_ctx = _count(float(set_to[1])) if set_to else None
    if num_ctx:  # Ollama never runs a model past its trained length
        tokens = min(num_ctx, trained) if trained else num_ctx
        return Found(tokens, "Ollama /api/show: the model's num_ctx", trained)
    tokens = min(OLLAMA_DEFAULT, trained) if trained else OLLAMA_DEFAULT
    return Found(
        tokens,
        "Ollama's own for a model not loaded yet, raised by OLLAMA_CONTEXT_LENGTH or by "
        "24 GiB of VRAM",
        trained,
        settled=False,
        default=True,
    )


# --------------------------------------------------------------------------- llama.cpp


def _trained_in(models: Any, model: str) -> int | None:
    """`n_ctx_train` from llama.cpp's `/v1/models` (its one model, or the one named)."""
    entries = _items(models, "data")
    named = [e for e in entries if e.get("id") == model] or entries
    for entry in named:
        meta = entry.get("meta")
        if isinstance(meta, Mapping) and _count(meta.get("n_ctx_train")):
            return _count(meta["n_ctx_train"])
    return None


async def _llamacpp(base_url: str, model: str, prober: Prober, models: Any = None) -> Found:
    if models is None:
        props, models = await asyncio.gather(
            prober.json(server_root(base_url) + "/props"),
            prober.json(with_path(base_url, "/models")),
        )
    else:
        props = await prober.json(server_root(base_url) + "/props")
    settings = props.get("default_generation_settings") if isinstance(props, Mapping) else None
    tokens = _count(settings.get("n_ctx")) if isinstance(settings, Mapping) else None
    if tokens is None:
        return Found.nothing("llama.cpp /props did not answer")
    return Found(tokens, "llama.cpp /props: the slot's n_ctx", _trained_in(models, model))


# --------------------------------------------------------------------------- vLLM


def _vllm_window(models: Any, model: str) -> int | None:
    """`max_model_len` of the model, else of the engine (a LoRA adapter's card has none:
    it runs on the base model's engine, whose card has it)."""
    entries = _items(models, "data")
    named = [e for e in entries if e.get("id") == model]
    for entry in [*named, *entries]:
        if _count(entry.get("max_model_len")):
            return _count(entry["max_model_len"])
    return None


async def _vllm(base_url: str, model: str, prober: Prober) -> Found:
    tokens = _vllm_window(await prober.json(with_path(base_url, "/models")), model)
    if tokens is None:
        return Found.nothing("vLLM /v1/models did not answer")
    return Found(tokens, "vLLM /v1/models: max_model_len")


# --------------------------------------------------------------------------- LM Studio


def _lmstudio_v1(data: Any, model: str) -> Found | None:
    """LM Studio 0.4's list: a model by `key` (or a loaded instance by `id`)."""
    for entry in _items(data, "models"):
        instances = _items(entry, "loaded_instances")
        names = {entry.get("key"), entry.get("selected_variant"), *(i.get("id") for i in instances)}
        variants = entry.get("variants")
        if model not in names and not (isinstance(variants, list) and model in variants):
            continue
        trained = _count(entry.get("max_context_length"))
        for instance in sorted(instances, key=lambda i: i.get("id") != model):
            config = instance.get("config")
            tokens = _count(config.get("context_length")) if isinstance(config, Mapping) else None
            if tokens:
                return Found(tokens, "LM Studio: the loaded length", trained)
        return _lmstudio_unloaded(trained)
    return None


def _lmstudio_v0(data: Any, model: str) -> Found | None:
    """LM Studio 0.3's list: `state` and, once loaded, `loaded_context_length`."""
    for entry in _items(data, "data"):
        if entry.get("id") != model:
            continue
        trained = _count(entry.get("max_context_length"))
        loaded = _count(entry.get("loaded_context_length"))
        if entry.get("state") == "loaded" and loaded:
            return Found(loaded, "LM Studio: the loaded length", trained)
        return _lmstudio_unloaded(trained)
    return None


def _lmstudio_unloaded(trained: int | None) -> Found:
    return Found.nothing("LM Studio has not loaded the model yet", trained=trained)


async def _lmstudio(base_url: str, model: str, prober: Prober) -> Found:
    root = server_root(base_url)
    v1, v0 = await asyncio.gather(
        prober.json(root + "/api/v1/models"), prober.json(root + "/api/v0/models")
    )
    found = _lmstudio_v1(v1, model) or _lmstudio_v0(v0, model)
    if found is not None:
        return found
    if v1 is None and v0 is None:
        return Found.nothing("LM Studio /api/v1/models and /api/v0/models did not answer")
    return Found.nothing(f"LM Studio does not list {model!r}")


# --------------------------------------------------------------------------- OpenRouter


def _listed_length(models: Any, names: Iterable[str]) -> int | None:
    entries = {e.get("id"): e for e in _items(models, "data")}
    for name in names:
        if name in entries and _count(entries[name].get("context_length")):
            return _count(entries[name]["context_length"])
    return None


async def _openrouter(base_url: str, model: str, prober: Prober) -> Found:
    models = await prober.json(with_path(base_url, "/models"), limit=_LARGE_LIST)
    # `:nitro`, `:floor`, `:online` pick a route, not a model; `:free` is listed as its own.
    tokens = _listed_length(models, (model, model.split(":", 1)[0]))
    if tokens is None:
        why = "did not answer" if models is None else f"does not list {model!r}"
        return Found.nothing(f"OpenRouter /api/v1/models {why}", settled=models is not None)
    return Found(tokens, "OpenRouter: context_length")


# --------------------------------------------------------------------------- others


async def _other(base_url: str, model: str, prober: Prober) -> Found:
    """An address Lantern cannot place: its model list says what serves it. Asked only of
    an OpenAI-compatible root (a path ending in `/v1`), whose `/models` is a model list."""
    if not urlsplit(base_url).path.rstrip("/").endswith("/v1"):
        return Found.nothing("", settled=True)
    models = await prober.json(with_path(base_url, "/models"))
    entries = _items(models, "data")
    if any("max_model_len" in e or e.get("owned_by") == "vllm" for e in entries):
        tokens = _vllm_window(models, model)
        if tokens:
            return Found(tokens, "vLLM /v1/models: max_model_len")
    if any(e.get("owned_by") == "llamacpp" for e in entries):
        return await _llamacpp(base_url, model, prober, models)
    tokens = _listed_length(models, (model,))
    if tokens:
        return Found(tokens, "the endpoint's /models: context_length")
    if models is None:
        return Found.nothing("the endpoint's /models did not answer")
    return Found.nothing("", settled=True)  # an answer without a window: asked once
