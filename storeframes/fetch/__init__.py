"""The fetcher that gathers: the steps of a call below the :class:`~storeframes.Client` facade.

- :mod:`~storeframes.fetch.settings`: the client's options, checked;
- :mod:`~storeframes.fetch.fetcher`: plan a call against the cache, send what it lacks on the client's threads,
  keep each answer, serve the parts;
- :mod:`~storeframes.fetch.pipeline`: the frame specs (``FRAMES``) and the ``FrameMaker``, which makes one tidy
  frame of a frame function's parts;
- :mod:`~storeframes.fetch.progress` (a call's progress bar), :mod:`~storeframes.fetch.forking` (refused in a
  forked child) and :mod:`~storeframes.fetch.limiter` (a sliding window of one process).

The package itself imports nothing, so its small parts (the fork guard, which the credits use) are reached
without loading the fetcher.
"""
