"""Expected deviations per implementation (``<implementation>-<version>.toml``), shipped as package data."""
