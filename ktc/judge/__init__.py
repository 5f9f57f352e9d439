"""Judging an implementation against the reference."""
