"""One file per implementation family, each holding its ``PLUGIN`` (implementations/__init__.py finds them)."""
