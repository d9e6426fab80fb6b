"""``python -m dpreg.cli``: the ``dpreg`` command line."""

from dpreg.cli import main

if __name__ == "__main__":  # pragma: no cover
    main()
