"""What the cache keeps, read back: tables of every answer, the days kept of current-only tables, and changes."""
