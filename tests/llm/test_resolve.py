"""Model selection (A2): which model each role gets, from config and environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mnemo.config import MnemoConfig
from mnemo.errors import ModelUnavailableError
from mnemo.home import Home
from mnemo.llm import OpenAIChatClient, resolve_chat_client, resolve_model_choice
from mnemo.llm import resolve as resolve_module
from mnemo.llm.credentials import effective_base_url, find_api_key, key_candidates
from mnemo.llm.local_client import LocalChatClient


def config(**sections: Any) -> MnemoConfig:
    return MnemoConfig.model_validate(sections)


@pytest.fixture
def no_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resolve_module, "local_runtime_installed", lambda: False)
    monkeypatch.setattr(resolve_module, "local_weights_installed", lambda: False)


@pytest.fixture
def with_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resolve_module, "local_runtime_installed", lambda: True)
    monkeypatch.setattr(resolve_module, "local_weights_installed", lambda: True)


# -- keys and base URLs ------------------------------------------------------------------
def test_key_search_order() -> None:
    env = {"MY_KEY": "a", "MNEMO_API_KEY": "b", "OPENAI_API_KEY": "c"}
    assert find_api_key(api_key_env="MY_KEY", environ=env).source == "MY_KEY"  # type: ignore[union-attr]
    assert find_api_key(environ=env).source == "MNEMO_API_KEY"  # type: ignore[union-attr]
    assert find_api_key(environ={"OPENAI_API_KEY": "c"}).value == "c"  # type: ignore[union-attr]
    assert find_api_key(environ={}) is None


def test_provider_keys_go_only_to_their_provider() -> None:
    env = {"OPENAI_API_KEY": "openai-key"}
    assert find_api_key(base_url="https://openrouter.ai/api/v1", environ=env) is None
    assert find_api_key(api="anthropic", environ=env) is None
    routed = find_api_key(base_url="https://openrouter.ai/api/v1",
                          environ={"OPENROUTER_API_KEY": "or"})
    assert routed is not None and routed.source == "OPENROUTER_API_KEY"
    assert key_candidates(api="anthropic") == ["MNEMO_API_KEY", "ANTHROPIC_API_KEY"]


def test_provider_keys_never_go_to_other_endpoints() -> None:
    env = {"OPENAI_API_KEY": "o", "OPENROUTER_API_KEY": "r", "ANTHROPIC_API_KEY": "a"}
    for url in ("http://evil.example/v1", "https://api.together.xyz/v1",
                "https://openrouter.ai.evil.example/v1", "http://127.0.0.1:8080/v1"):
        assert find_api_key(base_url=url, environ=env) is None, url
        assert find_api_key(base_url=url, api="anthropic", environ=env) is None, url
    assert find_api_key(base_url="https://api.openai.com/v1", environ=env).source == \
        "OPENAI_API_KEY"  # type: ignore[union-attr]
    # Keys the user pointed at an endpoint do go there.
    pointed = {"MNEMO_API_KEY": "m", "MY_KEY": "k", **env}
    assert find_api_key(base_url="http://evil.example/v1", environ=pointed).source == \
        "MNEMO_API_KEY"  # type: ignore[union-attr]
    assert find_api_key(base_url="http://x/v1", api_key_env="MY_KEY", environ=pointed).value \
        == "k"  # type: ignore[union-attr]


def test_key_repr_hides_the_value() -> None:
    key = find_api_key(environ={"MNEMO_API_KEY": "sk-secret"})
    assert "sk-secret" not in repr(key)


def test_mnemo_base_url_overrides_config() -> None:
    assert effective_base_url("http://a/v1", {"MNEMO_BASE_URL": "http://b/v1"}) == "http://b/v1"
    assert effective_base_url("http://a/v1", {}) == "http://a/v1"


# -- the main model ----------------------------------------------------------------------
def test_base_url_wins_even_without_a_key(with_local: None, mnemo_home: Home) -> None:
    cfg = config(model={"base_url": "http://127.0.0.1:9/v1", "name": "llama", "path": "/x.gguf"})
    choice = resolve_model_choice(cfg, home=mnemo_home, environ={})
    assert (choice.kind, choice.base_url, choice.model, choice.problem) == (
        "endpoint", "http://127.0.0.1:9/v1", "llama", "")
    client = resolve_chat_client(cfg, home=mnemo_home, environ={})
    assert isinstance(client, OpenAIChatClient)
    assert client.base_url == "http://127.0.0.1:9/v1"


def test_env_base_url_configures_an_endpoint(no_local: None, mnemo_home: Home) -> None:
    choice = resolve_model_choice(config(), home=mnemo_home,
                                  environ={"MNEMO_BASE_URL": "http://127.0.0.1:8/v1"})
    assert choice.kind == "endpoint" and "MNEMO_BASE_URL" in choice.reason


def test_name_with_a_key_uses_the_provider_default(with_local: None, mnemo_home: Home) -> None:
    choice = resolve_model_choice(config(model={"name": "gpt-4o-mini"}), home=mnemo_home,
                                  environ={"OPENAI_API_KEY": "k"})
    assert (choice.kind, choice.key_source, choice.base_url) == ("endpoint", "OPENAI_API_KEY", "")
    assert "api.openai.com" in choice.endpoint


def test_name_without_a_key_is_a_clear_problem(with_local: None, mnemo_home: Home) -> None:
    cfg = config(model={"name": "gpt-4o-mini", "api_key_env": "WORK_KEY"})
    choice = resolve_model_choice(cfg, home=mnemo_home, environ={})
    assert "$WORK_KEY" in choice.problem and "$OPENAI_API_KEY" in choice.problem
    with pytest.raises(ModelUnavailableError, match="no API key"):
        resolve_chat_client(cfg, home=mnemo_home, environ={})


def test_nothing_configured_uses_the_local_model(with_local: None, mnemo_home: Home) -> None:
    cfg = config(local={"context_length": 4096, "threads": 2})
    choice = resolve_model_choice(cfg, home=mnemo_home, environ={"OPENAI_API_KEY": "k"})
    assert choice.kind == "local" and choice.default_model
    assert choice.model_path == mnemo_home.models_dir / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    assert choice.context_length == 4096 and not choice.ready
    client = resolve_chat_client(cfg, home=mnemo_home, environ={})
    assert isinstance(client, LocalChatClient)
    assert client.context_length == 4096
    assert not mnemo_home.models_dir.exists()  # nothing assembled or started yet


def test_model_path_selects_that_gguf(with_local: None, mnemo_home: Home, tmp_path: Path) -> None:
    gguf = tmp_path / "tiny-chat.gguf"
    gguf.write_bytes(b"GGUF....")
    choice = resolve_model_choice(config(model={"path": str(gguf)}), home=mnemo_home, environ={})
    assert (choice.kind, choice.model_path, choice.model, choice.default_model) == (
        "local", gguf, "tiny-chat", False)


def test_missing_model_path_is_reported(with_local: None, mnemo_home: Home) -> None:
    choice = resolve_model_choice(config(model={"path": "/nope/m.gguf"}), home=mnemo_home,
                                  environ={})
    assert "does not exist" in choice.problem


def test_nothing_at_all_names_both_ways(no_local: None, mnemo_home: Home) -> None:
    with pytest.raises(ModelUnavailableError) as caught:
        resolve_chat_client(config(), home=mnemo_home, environ={"OPENAI_API_KEY": "k"})
    message = str(caught.value)
    assert "model.base_url" in message and 'pip install "mnemo[local]"' in message
    assert "\n" not in message


def test_anthropic_api_needs_its_own_key(with_local: None, mnemo_home: Home) -> None:
    cfg = config(model={"name": "claude-x", "api": "anthropic"})
    assert resolve_model_choice(cfg, home=mnemo_home,
                                environ={"OPENAI_API_KEY": "k"}).problem
    ok = resolve_model_choice(cfg, home=mnemo_home, environ={"ANTHROPIC_API_KEY": "k"})
    assert ok.api == "anthropic" and ok.key_source == "ANTHROPIC_API_KEY"


# -- the auxiliary model -----------------------------------------------------------------
def test_auxiliary_falls_back_to_main(with_local: None, mnemo_home: Home) -> None:
    cfg = config(model={"base_url": "http://127.0.0.1:9/v1", "name": "big"},
                 auxiliary={"timeout": 30})
    aux = resolve_model_choice(cfg, home=mnemo_home, role="auxiliary", environ={})
    assert (aux.role, aux.model, aux.base_url, aux.timeout) == (
        "auxiliary", "big", "http://127.0.0.1:9/v1", 30)
    assert "same as the main model" in aux.reason


def test_auxiliary_name_runs_on_the_main_endpoint(with_local: None, mnemo_home: Home) -> None:
    cfg = config(model={"base_url": "http://127.0.0.1:9/v1", "name": "big"},
                 auxiliary={"name": "small"})
    aux = resolve_model_choice(cfg, home=mnemo_home, role="auxiliary", environ={})
    assert (aux.model, aux.base_url) == ("small", "http://127.0.0.1:9/v1")


def test_summary_model_override_wins(with_local: None, mnemo_home: Home) -> None:
    cfg = config(model={"base_url": "http://127.0.0.1:9/v1", "name": "big"},
                 auxiliary={"name": "small"}, context={"summary_model_override": "tiny"})
    aux = resolve_model_choice(cfg, home=mnemo_home, role="auxiliary", environ={})
    assert aux.model == "tiny" and "summary_model_override" in aux.reason


def test_auxiliary_own_endpoint(with_local: None, mnemo_home: Home) -> None:
    cfg = config(auxiliary={"base_url": "http://127.0.0.1:7/v1", "name": "sum",
                            "api_key_env": "SUM_KEY", "context_length": 16000})
    aux = resolve_model_choice(cfg, home=mnemo_home, role="auxiliary",
                               environ={"SUM_KEY": "s"})
    assert (aux.kind, aux.base_url, aux.key_source, aux.context_length) == (
        "endpoint", "http://127.0.0.1:7/v1", "SUM_KEY", 16000)


def test_auxiliary_with_local_main_shares_the_local_model(with_local: None,
                                                          mnemo_home: Home) -> None:
    aux = resolve_model_choice(config(), home=mnemo_home, role="auxiliary", environ={})
    main = resolve_model_choice(config(), home=mnemo_home, environ={})
    assert aux.kind == main.kind == "local" and aux.model_path == main.model_path


def test_unknown_role_is_refused(mnemo_home: Home) -> None:
    with pytest.raises(ValueError, match="unknown model role"):
        resolve_model_choice(config(), home=mnemo_home, role="judge")  # type: ignore[arg-type]
