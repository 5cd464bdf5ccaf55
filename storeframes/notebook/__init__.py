"""What a person looks at: charts, notebook widgets, app cards and the demo.

- :mod:`storeframes.notebook.plots`: charts of the tidy frames, with matplotlib.
- :mod:`storeframes.notebook.widgets`: the credit meter and the rank and benchmark explorers (ipywidgets).
- :mod:`storeframes.notebook.cards`: one app's store listing at a glance, as plain HTML.
- :mod:`storeframes.notebook.device_names`: readable names of the device keys (``iphone_6_5``).
- :mod:`storeframes.notebook.demo`: ``storeframes demo``, an analysis written to a folder.

They stand above the rest of the package and nothing below imports them. The charts and the
widgets need the ``notebook`` extra (``pip install "storeframes[notebook]"``); importing this
package loads neither matplotlib nor ipywidgets, so the cards and the demo work without them.
``storeframes.plots``, ``storeframes.widgets``, ``storeframes.cards`` and ``storeframes.demo``
are the same modules' names from before, and keep working.
"""
