"""The fetcher that gathers: the steps of a call below the :class:`~storeframes.Client` facade.

- :mod:`~storeframes.fetch.settings`: the client's options checked, and the frozen ``Settings`` they make
  (refresh, offline, progress, the endpoints' prices ...), which the fetcher reads on every call;
- :mod:`~storeframes.fetch.fetcher`: the ``Fetcher``, built from the client's parts and settings, plans a call
  against the cache, sends what it lacks, keeps each answer and serves the parts (``answers`` for
  ``client.get``, ``gather`` for frames); :mod:`~storeframes.fetch.workers` are the client's threads;
- :mod:`~storeframes.fetch.pipeline`: the frame specs (``FRAMES``) and the ``FrameMaker``, which asks the
  fetcher to gather the parts of a frame function's call and makes one tidy frame of them;
- :mod:`~storeframes.fetch.progress` (a call's progress bar) and :mod:`~storeframes.fetch.limiter` (a sliding
  window of one process).

Nothing here imports or calls back into the client. The package itself imports nothing, so its small parts are
reached without loading the fetcher.
"""
