"""Client libraries under test, each through a driver in its own language (README.md: the driver contract)."""
