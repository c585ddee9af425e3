"""cdclake's entry point for spark-submit (the primary Python file); arguments as for ``cdclake``.

It sits alone in its folder because spark-submit puts that folder first on ``sys.path``.
"""

from cdclake.cli import main

if __name__ == "__main__":
    main()
