"""Errors raised for user mistakes.

Both subclass :class:`ValueError`, so code that catches ``ValueError`` (scikit-learn
does) keeps working; the message always names the column, argument or file at fault.
"""


class InputError(ValueError):
    """Bad data or a bad argument: the message says which and what was expected."""


class ModelFileError(ValueError):
    """A model file that cannot be loaded (corrupt, truncated, or another version)."""
