"""Team tables: SQL over the cache (:func:`sql`)."""

from .sql import sql

__all__ = ["sql"]
