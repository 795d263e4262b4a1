"""Loaded by a benchmarked kraftwire process when ``KRAFTWIRE_ALLOC_COUNT`` names a directory (the bench puts this
folder and the compiled ``_alloc_count`` on PYTHONPATH): counts the bytes the process allocates from here on, and on
SIGUSR2 writes the count so far to ``$KRAFTWIRE_ALLOC_COUNT/<pid>``."""

import os

_out = os.environ.get("KRAFTWIRE_ALLOC_COUNT")
if _out:
    import signal

    import _alloc_count

    _alloc_count.install()

    def _dump(signum, frame) -> None:
        path = os.path.join(_out, str(os.getpid()))
        with open(path + ".tmp", "w") as f:
            f.write(str(_alloc_count.allocated()))
        os.replace(path + ".tmp", path)

    signal.signal(signal.SIGUSR2, _dump)
