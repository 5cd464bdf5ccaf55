"""The questions analysts bring to frames already fetched, each in one call: pure polars, no request, no credit.

* :mod:`~storeframes.analysis.everyday`: who moved (:func:`movers`), what they changed before
  (:func:`changes_before`), where a category stands (:func:`category_standing`), whose app it is
  (:func:`with_names`);
* :mod:`~storeframes.analysis.voice`: each app's (or developer's) share of the top places of a set of
  keywords, day by day (:func:`share_of_voice`);
* :mod:`~storeframes.analysis.opportunities`: which keywords to work on, with a score explained by its
  columns (:func:`keyword_opportunities`);
* :mod:`~storeframes.analysis.anomalies`: the days a rank left its weekly rhythm, against a robust baseline,
  with their likely cause (:func:`rank_anomalies`);
* :mod:`~storeframes.analysis.standings`: where each tracked app stands on each keyword, with its changes over
  1, 7 and 30 days (:func:`standings`), shown as a table with sparklines by
  :mod:`~storeframes.analysis.standings_view` (:func:`standings_table`);
* :mod:`~storeframes.analysis.prices`: an app's price as a person reads it (``Free``, ``$2.99``, ``2,99 €``,
  ``price unknown``), in the currency of its store (:func:`with_prices`, :func:`price_text`);
* :mod:`~storeframes.analysis.inputs`: what they share (their inputs checked, a search frame's organic results).

>>> import storeframes as sf
>>> history = sf.search_history_frame("photo editor, collage maker", start="2026-09-01", end="2026-11-18")  # doctest: +SKIP
>>> sf.share_of_voice(history, top=10)  # doctest: +SKIP
>>> sf.keyword_opportunities(history, "3233849169", ["394079159", "1286838609"])  # doctest: +SKIP
>>> sf.rank_anomalies(sf.rank_history(history, ["3233849169", "394079159"]))  # doctest: +SKIP
"""

from __future__ import annotations

from .anomalies import ANOMALIES, CAUSE_TARGETS, MAD_SCALE, RELATIVE_SPREAD, rank_anomalies
from .everyday import CHANGES_BEFORE, MOVERS, RATES, category_standing, changes_before, movers, with_names
from .opportunities import OPPORTUNITIES, SCORE_WEIGHTS, keyword_opportunities
from .prices import FREE, STORE_CURRENCIES, UNKNOWN_PRICE, price_text, store_currency, with_prices
from .standings import CHANGE_DAYS, STANDINGS, standings
from .standings_view import (
    STANDINGS_CSS,
    StandingsTable,
    sparkline_html,
    sparkline_svg,
    sparkline_text,
    standings_table,
)
from .voice import CTR_CURVE, SHARE_OF_VOICE, ctr_weight, share_of_voice

__all__ = [
    "ANOMALIES",
    "CAUSE_TARGETS",
    "CHANGES_BEFORE",
    "CHANGE_DAYS",
    "CTR_CURVE",
    "FREE",
    "MAD_SCALE",
    "MOVERS",
    "OPPORTUNITIES",
    "RATES",
    "RELATIVE_SPREAD",
    "SCORE_WEIGHTS",
    "SHARE_OF_VOICE",
    "STANDINGS",
    "STANDINGS_CSS",
    "STORE_CURRENCIES",
    "UNKNOWN_PRICE",
    "StandingsTable",
    "category_standing",
    "changes_before",
    "ctr_weight",
    "keyword_opportunities",
    "movers",
    "price_text",
    "rank_anomalies",
    "share_of_voice",
    "sparkline_html",
    "sparkline_svg",
    "sparkline_text",
    "standings",
    "standings_table",
    "store_currency",
    "with_names",
    "with_prices",
]
