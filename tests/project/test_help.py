"""``help(storeframes)`` opens with a short guide, and ``dir(sf)`` lists the API without the errors.

The errors and warnings stay importable from the package (``sf.BudgetExceededError``) but are
listed in the ``__all__`` of their modules (``storeframes.errors``), so that help() does not print
every exception's inherited methods (5,695 lines before, about 2,970 now) and tab completion shows
the frame functions rather than thirty error classes.
"""

from __future__ import annotations

import inspect
import pydoc

import storeframes as sf
import storeframes.cache
import storeframes.errors
import storeframes.flatteners

FRAME_FUNCTIONS = sorted(name for name in sf.__all__ if name.endswith("_frame"))
ERRORS_AND_WARNINGS = sorted(
    name
    for module in (storeframes.errors, storeframes.cache, storeframes.flatteners)
    for name in module.__all__
    if inspect.isclass(getattr(module, name))
    and issubclass(getattr(module, name), (sf.errors.StoreframesError, Warning))
)


def _help() -> list[str]:
    """The lines ``help(storeframes)`` shows, as plain text."""
    return pydoc.render_doc(sf, renderer=pydoc.plaintext).splitlines()


def test_the_first_screen_of_help_names_the_frame_functions_the_entry_points_and_the_docs():
    first = " ".join(_help()[:40])
    assert len(FRAME_FUNCTIONS) == 15
    missing = [n for n in [*FRAME_FUNCTIONS, "configure", "plan", "Cache", "scan", "sql", "Tracker"] if n not in first]
    assert missing == []
    for where in ("storeframes.plots", "storeframes.widgets", "storeframes.errors", "docs site", "Reference"):
        assert where in first


def test_help_is_bounded():
    # 5,695 lines when every error and warning was listed in the package's __all__; 3,250 with the analysis'
    # share_of_voice, keyword_opportunities and rank_anomalies
    assert len(_help()) < 3_400


def test_the_errors_and_warnings_stay_importable_from_the_package_but_out_of_its_listing():
    assert len(ERRORS_AND_WARNINGS) >= 30
    for name in ERRORS_AND_WARNINGS:
        assert name not in sf.__all__ and name not in dir(sf)
        assert getattr(sf, name) is next(
            getattr(m, name)
            for m in (storeframes.errors, storeframes.cache, storeframes.flatteners)
            if hasattr(m, name)
        )
    from storeframes import BudgetExceededError, CacheWarning, StoreframesError  # as before

    assert issubclass(BudgetExceededError, StoreframesError) and issubclass(CacheWarning, Warning)


def test_a_star_import_brings_the_api_and_the_errors_module():
    names: dict[str, object] = {}
    exec("from storeframes import *", names)
    assert set(FRAME_FUNCTIONS) <= names.keys() and names["errors"] is storeframes.errors
    assert "StoreframesError" not in names and names["errors"].StoreframesError is sf.StoreframesError
