"""Only what pyproject.toml cannot express: the Cython extension list."""

from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = [
    Extension(
        "kraftwire_ext._records",
        ["kraftwire_ext/_records.pyx"],
        extra_compile_args=["-O3"],
    ),
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": "3",
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    ),
)
