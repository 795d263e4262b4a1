"""Compile ``_alloc_count`` (the benchmarks' counting allocator) into a directory; used by the benchmarks that
report bytes allocated per byte produced."""

from __future__ import annotations

import os


def build(out: str) -> str:
    """Build the extension into ``out`` (a directory); returns ``out``."""
    from setuptools import Extension
    from setuptools.dist import Distribution

    here = os.path.dirname(os.path.abspath(__file__))
    dist = Distribution({"name": "_alloc_count", "ext_modules": [
        Extension("_alloc_count", [os.path.join(here, "_alloc_count.c")])]})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib, cmd.build_temp = out, os.path.join(out, "tmp")
    cmd.ensure_finalized()
    cmd.run()
    return out
