"""The generators of the docs site's reference pages (``python docs/build.py`` runs them).

Each module writes one kind of page from the package itself (its docstrings, schemas, catalog, argument parser,
declared lists), so that the reference never says what the code does not.
"""
