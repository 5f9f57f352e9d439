"""ktc's Spark toolkit: the one Spark session of a process (session.py), used by ``ktc audit`` and by the
``spark`` implementation alike; it imports no implementation (the layers contract of pyproject.toml)."""
