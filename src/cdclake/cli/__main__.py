"""``python -m cdclake.cli``: the ``cdclake`` command."""

from cdclake.cli import main

main()
