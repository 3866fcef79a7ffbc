"""The command line: ``medspt demo | fit | predict | evaluate | diagnose | datasets | study``.

- :mod:`medspt.cli.commands`: the commands and ``main`` (the console script);
- :mod:`medspt.cli.args`: options shared by ``fit``, ``evaluate`` and ``study run``;
- :mod:`medspt.cli.messages`: library messages in command-line words (loads nothing heavy).

Nothing in the library imports this package.
"""

from medspt.cli.commands import COMMANDS, build_parser, main

__all__ = ["COMMANDS", "build_parser", "main"]
