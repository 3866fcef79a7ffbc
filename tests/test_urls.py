"""Storage URLs shown without their password (medspt.core.urls)."""

import pytest

from medspt.core.urls import hide_secret, redact


@pytest.mark.parametrize(
    "url, shown",
    [
        ("postgresql://ana:s3cret@db:5432/x", "postgresql://ana:***@db:5432/x"),
        (
            "postgresql+psycopg://ana:a:b@c@db/x?host=/tmp/s",
            "postgresql+psycopg://ana:***@db/x?host=/tmp/s",
        ),
        ("mysql+pymysql://root:pw@127.0.0.1/db", "mysql+pymysql://root:***@127.0.0.1/db"),
        ("postgresql://ana:@db/x", "postgresql://ana:***@db/x"),  # empty: still marked
        ("postgresql://ana@db/x", "postgresql://ana@db/x"),  # no password
        ("postgresql://db:5432/x", "postgresql://db:5432/x"),  # a port, not a password
        ("postgresql://db:5432/x?user=a@b", "postgresql://db:5432/x?user=a@b"),
        ("sqlite:///results/medspt.db", "sqlite:///results/medspt.db"),
        ("journal:/shared/a:b@c.log", "journal:/shared/a:b@c.log"),
        ("medspt.db", "medspt.db"),
    ],
)
def test_redact_hides_exactly_the_password(url, shown):
    assert redact(url) == shown


def test_redact_of_a_non_string_is_its_repr():
    assert redact(None) == "None"
    assert redact(5) == "5"


def test_hide_secret_replaces_every_copy_of_the_password_in_a_message():
    url = "postgresql://ana:pw9@db/x"
    msg = 'connection to "db" failed for password pw9 (dsn user=ana password=pw9)'
    assert (
        hide_secret(msg, url)
        == 'connection to "db" failed for password *** (dsn user=ana password=***)'
    )
    assert hide_secret(msg, "postgresql://ana@db/x") == msg  # no password: unchanged
    assert hide_secret("pw9", "postgresql://ana:@db/x") == "pw9"  # empty password: nothing
    assert hide_secret("pw9", None) == "pw9"
    assert hide_secret("XXXX ***", "postgresql://ana@db/x") == "XXXX ***"
