"""Storage URLs as they may be shown: never with their password."""

from __future__ import annotations

import re

__all__ = ["hide_secret", "redact"]

# user:password@ in scheme://user:password@host (greedy up to the last '@' before the
# path: an unencoded password may hold ':' or '@', never '/')
_PASSWORD = re.compile(r"(^[a-zA-Z][\w+.-]*://[^:/@]*:)[^/]*@")


def redact(url: str) -> str:
    """``url`` with its password, if any, replaced by ``***``.

    >>> redact("postgresql+psycopg://ana:s3cret@db.example.org:5432/studies")
    'postgresql+psycopg://ana:***@db.example.org:5432/studies'
    """
    return _PASSWORD.sub(r"\1***@", url) if isinstance(url, str) else repr(url)


def hide_secret(text: str, url: str) -> str:
    """``text`` (an error message, say) with the password of ``url`` replaced by ``***``:
    a database driver may quote the connection string it was given."""
    found = _PASSWORD.match(url) if isinstance(url, str) else None
    secret = url[found.end(1) : found.end() - 1] if found else ""
    return text.replace(secret, "***") if secret else text
