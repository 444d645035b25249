"""Configuration: ``config.yaml`` validated by pydantic, upgraded once when its layout is old.

Precedence is explicit arguments, then the environment (model keys and base URLs only),
then ``config.yaml``, then the defaults in ``schema.py``.
"""

from mnemo.config.loader import config_to_yaml, load_config, save_config
from mnemo.config.schema import CONFIG_VERSION, KNOWN_PLATFORMS, MnemoConfig

__all__ = [
    "CONFIG_VERSION",
    "KNOWN_PLATFORMS",
    "MnemoConfig",
    "config_to_yaml",
    "load_config",
    "save_config",
]
