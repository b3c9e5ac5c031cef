"""The one table from rule code to check functions, by language. Sorted by code.

A value maps a language (`cuda`, `cmake`, `python`) to a function `check(source)`, or
`PROJECT` to a function `check(index)` that runs once on the cross-file index. Rule
metadata lives in `rules/<CODE>.md`, never here.
"""

from portlint.checks import wavefront
from portlint.source import CUDA

PROJECT = "project"

REGISTRY = {
    "W002": {CUDA: wavefront.check_narrow_full_mask},
}
