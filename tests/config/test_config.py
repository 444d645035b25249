"""config.yaml loading (SPEC §K): defaults, one-line errors naming the key, migration (P5)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mnemo.config import MnemoConfig, load_config, save_config
from mnemo.errors import ConfigError
from mnemo.home import Home


def write(home: Home, text: str) -> Path:
    home.config_file.write_text(text, encoding="utf-8")
    return home.config_file


def test_missing_file_means_defaults(mnemo_home: Home) -> None:
    config = load_config(mnemo_home)
    assert config == MnemoConfig()
    assert config.memory.memory_char_limit == 2200
    assert config.memory.user_char_limit == 1375
    assert config.context.threshold_percent == 0.50
    assert config.context.protect_first_n == 3
    assert config.context.protect_last_n == 20
    assert config.context_file_max_chars == 20_000
    assert config.memory.overflow == "reject"


def test_empty_file_means_defaults(mnemo_home: Home) -> None:
    write(mnemo_home, "")
    assert load_config(mnemo_home) == MnemoConfig()


def test_values_are_read(mnemo_home: Home) -> None:
    write(mnemo_home, "memory:\n  memory_char_limit: 3000\n  overflow: archive\n"
                      "context:\n  engine: lcm\nplatform: telegram\n")
    config = load_config(mnemo_home)
    assert config.memory.memory_char_limit == 3000
    assert config.memory.overflow == "archive"
    assert config.context.engine == "lcm"
    assert config.platform == "telegram"


@pytest.mark.parametrize(("text", "key", "hint"), [
    ("memory:\n  memory_char_limit: lots\n", "memory.memory_char_limit", "integer"),
    ("memory:\n  memry_enabled: true\n", "memory.memry_enabled", "memory_enabled"),
    ("modle: {}\n", "modle", "model"),
    ("memory:\n  overflow: drop\n", "memory.overflow", "'reject' or 'archive'"),
    ("context:\n  threshold_percent: 1.5\n", "context.threshold_percent", "1"),
    ("platform: pager\n", "platform", "telegram"),
    ("memory: 7\n", "memory", "dictionary"),
    ("security:\n  allow_patterns:\n    AGENTS.md: [no_such_id]\n",
     "security.allow_patterns", "prompt_injection"),
])
def test_bad_config_is_one_line_naming_file_and_key(mnemo_home: Home, text: str, key: str,
                                                    hint: str) -> None:
    path = write(mnemo_home, text)
    with pytest.raises(ConfigError) as info:
        load_config(mnemo_home)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    assert f": {key}:" in message
    assert hint in message
    assert info.value.key == key


def test_invalid_yaml_names_the_line(mnemo_home: Home) -> None:
    write(mnemo_home, "memory:\n  a: [1, 2\n")
    with pytest.raises(ConfigError, match=r"not valid YAML at line 3, column 1"):
        load_config(mnemo_home)


def test_top_level_must_be_a_mapping(mnemo_home: Home) -> None:
    write(mnemo_home, "- a\n- b\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_config(mnemo_home)


def test_bad_config_file_is_left_untouched(mnemo_home: Home) -> None:
    path = write(mnemo_home, "memory:\n  memory_char_limit: lots\n")
    with pytest.raises(ConfigError):
        load_config(mnemo_home)
    assert path.read_text(encoding="utf-8") == "memory:\n  memory_char_limit: lots\n"


def test_save_then_load_round_trips(mnemo_home: Home) -> None:
    config = MnemoConfig.model_validate({"memory": {"nudge_interval": 4},
                                         "skills": {"external_dirs": ["/opt/skills"]}})
    save_config(config, mnemo_home)
    assert load_config(mnemo_home) == config
    saved = yaml.safe_load(mnemo_home.config_file.read_text(encoding="utf-8"))
    assert saved == {"memory": {"nudge_interval": 4},
                     "skills": {"external_dirs": ["/opt/skills"]}, "version": 2}


# -- P5: migration of old layouts ----------------------------------------------------------


def test_legacy_enabled_provider_block_becomes_the_provider_once(mnemo_home: Home) -> None:
    legacy = ("memory:\n  memory_enabled: true\n"
              "honcho:\n  enabled: true\n  api_key_env: HONCHO_KEY\n")
    path = write(mnemo_home, legacy)
    config = load_config(mnemo_home)
    assert config.memory.provider == "honcho"
    assert config.memory.providers == {"honcho": {"api_key_env": "HONCHO_KEY"}}
    assert config.version == 2
    # saved, with the old file kept
    saved = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert saved["version"] == 2 and saved["memory"]["provider"] == "honcho"
    assert "honcho" not in saved
    assert (path.parent / "config.yaml.bak.v1").read_text(encoding="utf-8") == legacy
    # the second load finds nothing to do and does not rewrite the file
    mtime = path.stat().st_mtime_ns
    assert load_config(mnemo_home) == config
    assert path.stat().st_mtime_ns == mtime


def test_migration_respects_a_provider_already_chosen(mnemo_home: Home) -> None:
    write(mnemo_home, "memory:\n  provider: recall\nhoncho:\n  enabled: true\n")
    config = load_config(mnemo_home)
    assert config.memory.provider == "recall"
    assert "honcho" in config.memory.providers


def test_disabled_legacy_block_is_moved_but_not_selected(mnemo_home: Home) -> None:
    write(mnemo_home, "mem0:\n  enabled: false\n  user: me\n")
    config = load_config(mnemo_home)
    assert config.memory.provider == ""
    assert config.memory.providers == {"mem0": {"user": "me"}}


def test_version_one_file_without_legacy_blocks_is_not_rewritten(mnemo_home: Home) -> None:
    path = write(mnemo_home, "# my settings\nplatform: cli\n")
    load_config(mnemo_home)
    assert path.read_text(encoding="utf-8") == "# my settings\nplatform: cli\n"


def test_a_newer_config_version_is_refused(mnemo_home: Home) -> None:
    write(mnemo_home, "version: 99\n")
    with pytest.raises(ConfigError, match="newer than this mnemo") as info:
        load_config(mnemo_home)
    assert info.value.key == "version"


def test_a_config_that_is_not_utf8_is_one_line(mnemo_home: Home) -> None:
    mnemo_home.config_file.write_bytes(b"platform: cli\n# caf\xe9\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(mnemo_home)


# -- hostile files (issue 14, class 5) -----------------------------------------------------


def test_alias_bombs_are_measured_without_being_expanded(mnemo_home: Home) -> None:
    from mnemo.config.yaml_safe import MAX_NODES, YamlTooComplex, safe_load_bounded

    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"] + [
        f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]" for p, n in zip("abcd", "bcde", strict=True)]
    assert safe_load_bounded("\n".join(levels[:4]))  # 10^4 values: allowed
    with pytest.raises(YamlTooComplex, match=f"more than {MAX_NODES:,} values"):
        safe_load_bounded("\n".join(levels))  # 10^5 and more
    with pytest.raises(YamlTooComplex, match="nested more than"):
        safe_load_bounded("a: " + "[" * 100 + "]" * 100)
    write(mnemo_home, "\n".join(levels))
    with pytest.raises(ConfigError, match="alias bomb") as caught:
        load_config(mnemo_home)
    assert "\n" not in str(caught.value)


def test_secrets_are_recognised_and_masked() -> None:
    from mnemo.config.secrets import excerpt, looks_like_key, mask_url, mask_urls_in

    for key in ("sk-proj-abc123def456", "AKIAIOSFODNN7EXAMPLE", "ghp_16C7e42F292c6912E7710c8",
                "hf_AbCdEfGhIjKlMnOp1234", "a8f5f167f44f4964e6c998dee827110c"):
        assert looks_like_key(key) and excerpt(key).startswith("a value that looks like")
    for plain in ("gpt-4o-mini-2024-07-18", "/home/ana/projects/mnemo/config.yaml",
                  "qwen2.5-coder-0.5b-instruct", "http://localhost:8080/v1", "cli", 120):
        assert not looks_like_key(plain)
    assert mask_url("https://u:sk-abcdef123456@h.io/v1") == "https://u:***@h.io/v1"
    assert mask_url("https://h.io/v1?key=abc&model=m") == "https://h.io/v1?key=***&model=m"
    assert mask_url("https://sk-abcdef123456@h.io/v1") == "https://***@h.io/v1"
    assert mask_url("http://localhost:8080/v1") == "http://localhost:8080/v1"
    assert mask_urls_in("cannot reach https://a:b@h/x (refused)") == \
        "cannot reach https://a:***@h/x (refused)"
    assert len(excerpt("x" * 10_000)) < 80 and "10,000 chars" in excerpt("x" * 10_000)


def test_validator_messages_and_key_paths_stay_short_and_keyless(mnemo_home: Home) -> None:
    key = "sk-proj-ABCDEF1234567890abcdef"
    write(mnemo_home, f"platform: {'p' * 3000}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(mnemo_home)
    assert len(str(caught.value)) < 400 and "p" * 41 not in str(caught.value)
    write(mnemo_home, f"security:\n  allow_patterns:\n    {key}: 3\n")
    with pytest.raises(ConfigError) as caught:
        load_config(mnemo_home)
    assert key not in str(caught.value) and "allow_patterns.[hidden]" in str(caught.value)
