"""A refusal of the caller's input is raised at the caller's line, not under the library's frames.

The public functions (the frame functions, ``sf.configure`` and the package functions, the
analysis functions, the charts) are :func:`user_facing`: when one of them refuses what it was
given, the error's traceback is cut to that function's own frame, so
the caller sees their line, one frame of storeframes and the message (the parameter, the value
and what is allowed), not the eight or ten frames of validation it went through.

Only the refusals of :data:`USER_ERRORS` are cut: storeframes decided them itself, on the
caller's arguments or settings, and the message says all there is to act on. An error of the
service, the network, the cache or the coordination, and any other exception (a bug), keeps its
whole traceback: where it arose is what finding its cause needs. Nothing else of an error
changes: its type, message, attributes, ``partial``, ``__cause__`` and ``__context__`` are
kept. ``STOREFRAMES_FULL_TRACEBACK=1`` in the environment keeps every frame of the refusals too.
Whatever is raised, the wrapper's frame keeps no local of the arguments: a token given to
``Client(...)`` is in no frame a traceback shows (``pytest -l``, an error tracker).

The wrapper's own frame sets ``__tracebackhide__``, which IPython (7.16 and later, in its
default traceback mode) and pytest honour: they leave it out of the tracebacks of the errors
that are not cut (it is kept where it is the frame that raised).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar, cast

from .errors import BudgetExceededError, ConfigurationError, InvalidParameterError, NotCachedError

__all__ = ["ENV_FULL_TRACEBACK", "USER_ERRORS", "user_facing"]

USER_ERRORS: tuple[type[Exception], ...] = (
    InvalidParameterError,
    ConfigurationError,
    BudgetExceededError,
    NotCachedError,
)
"""The refusals of the caller's input or settings, raised at the caller's line: a bad argument, a client
not set up (or closed, or in a forked process), a budget that would be passed, a cache that lacks an
answer when nothing may be fetched."""

ENV_FULL_TRACEBACK = "STOREFRAMES_FULL_TRACEBACK"
"""Set (to anything but empty or ``0``), every refusal keeps its whole traceback, for finding where it was decided."""

F = TypeVar("F", bound=Callable[..., Any])


def _full() -> bool:
    return os.environ.get(ENV_FULL_TRACEBACK, "") not in ("", "0")


def user_facing(function: F) -> F:
    """``function``, whose refusals (:data:`USER_ERRORS`) are raised with one frame of storeframes.

    The same function for everything else: its signature, docstring and name (``functools.wraps``),
    its return value, and every other exception with its whole traceback. Called inside another
    user-facing function, the outermost one's frame is the one kept.

    >>> @user_facing
    ... def top(n: int) -> int:
    ...     return _checked(n)
    >>> top(0)  # doctest: +SKIP
    Traceback (most recent call last):
      File "<stdin>", line 1, in <module>
      File ".../storeframes/_tracebacks.py", line ..., in call
        raise refused.with_traceback(None)  # storeframes refused the call's input: the message says why
    storeframes.errors.InvalidParameterError: invalid n=0: a whole number >= 1
    """

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # IPython and pytest leave this frame out when it is not the one that raised
        try:
            return function(*args, **kwargs)
        except USER_ERRORS as error:
            del args, kwargs  # a token given as an argument is no local of a frame the traceback keeps
            if _full():
                raise
            refused = error  # raised below, outside the handler: its own __cause__ and __context__ stay as they are
        except BaseException:
            del args, kwargs
            raise
        raise refused.with_traceback(None)  # storeframes refused the call's input: the message says why

    return cast(F, call)
