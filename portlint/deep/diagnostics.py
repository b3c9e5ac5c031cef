"""X001: the errors hip-clang gives on project code, as findings with clang's fix-its.

Which errors count depends on what the unit was parsed with:

- the real HIP headers (installed, see `translation_unit.real_hip_headers`), and every
  include found: every error located in a scanned project file;
- the bundled stand-ins, or a unit with a header that was not found: only errors that do
  not depend on what headers declare (`HEADER_INDEPENDENT`): a dependent type name without
  `typename`, a redefinition (of a HIP builtin the prelude defines as HIP does, or of the
  project's own), a `constexpr` function that cannot be constant. Anything else there
  (an undeclared name, a type the stand-ins lack) would be the stand-ins' fault.

Never findings: errors located in headers outside the scan (stand-ins, HIP, third-party
code), `file not found` (counted in the summary line), and names that hipify renames
(`cudaMalloc`, `cuLaunchKernel`, `CUresult`): they say the file is not hipified yet, which
is not what this rule is about.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from portlint.finding import Related, finding
from portlint.fix import Edit, Fix
from portlint.source import CUDA, SourceFile

CODE = "X001"
STAND_INS = "the bundled stand-in headers"
ERROR = 3  # clang's Diagnostic.Error; Fatal is 4
HEADER_INDEPENDENT = re.compile(
    r"^missing 'typename' prior to dependent type name"
    r"|^redefinition of '"
    r"|^constexpr function never produces a constant expression"
)
# Names from the CUDA toolkit that hipify renames: an error about one is not a hip-clang finding.
_HIPIFY_NAME = re.compile(r"'(?:cuda|cu[A-Z]|CU[A-Z_]|cublas|cusparse|cusolver|curand|cufft|cudnn|nvrtc|nvtx|__nv_)")
_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*|\S")


# Names every kernel source takes from the runtime header (a launch calls the push function).
_RUNTIME_NAMES = re.compile(r"^use of undeclared identifier '(threadIdx|blockIdx|blockDim|gridDim|__syncthreads"
                            r"|__hipPushCallConfiguration)'")


def runtime_not_included(analysis, passes) -> dict[str, object]:
    """Scanned file -> the first diagnostic saying it uses a runtime name no header declared."""
    found: dict[str, object] = {}
    for tu in passes:
        for diagnostic in tu.diagnostics:
            if diagnostic.severity >= ERROR and _RUNTIME_NAMES.match(diagnostic.spelling):
                shown = analysis._path(diagnostic.location.file)
                if shown is not None and shown not in found:
                    found[shown] = diagnostic
    return found


def report_runtime_not_included(analysis, unincluded: dict[str, object]) -> None:
    """One X001 per file that uses the runtime without including it."""
    for shown, diagnostic in unincluded.items():
        source = analysis.source(shown)
        if source is None or diagnostic.location.offset > len(source.data):
            continue
        start = diagnostic.location.offset
        token = _IDENTIFIER.match(source.data, start)
        name = diagnostic.spelling.split("'")[1]
        message = (f"hip-clang: `{name}` is undeclared: nvcc includes the CUDA runtime in every source and "
                   "hip-clang does not; this file includes no runtime header")
        fix = Fix.advice("Include the runtime for HIP (`#if defined(__HIP__)` `#include <hip/hip_runtime.h>` "
                         "`#endif` at the top; hipify adds `#include \"hip/hip_runtime.h\"` itself)")
        found = finding(source, start, token.end() if token else start, message, fix)
        analysis.result.findings.append(replace(found, code=CODE))


def missing_headers(tu) -> list[str]:
    """The `<name>` of each include clang did not find, in order."""
    names = []
    for d in tu.diagnostics:
        match = re.match(r"'([^']+)' file not found", d.spelling)
        if match and match.group(1) not in names:
            names.append(match.group(1))
    return names


def clang_errors(analysis, tu, header_independent_only: bool) -> int:
    """Report the unit's errors in scanned files as X001 findings through `analysis` (a
    `checks.UnitAnalysis`); returns how many errors were left out as not the project's."""
    left_out = 0
    for diagnostic in tu.diagnostics:
        if diagnostic.severity < ERROR:
            continue
        text = diagnostic.spelling
        location = diagnostic.location
        shown = analysis._path(location.file)
        if shown is None or "file not found" in text:
            left_out += 1
            continue
        if _HIPIFY_NAME.search(text) or (header_independent_only and not HEADER_INDEPENDENT.search(text)):
            left_out += 1
            continue
        source = analysis.source(shown)
        if source is None or location.offset > len(source.data):
            continue
        start = location.offset
        token = _IDENTIFIER.match(source.data, start)
        end = token.end() if token else start
        fix = _fix(diagnostic, location.file.name, len(source.data))
        found = finding(source, start, end, f"hip-clang: {text}", fix, related=_notes(analysis, diagnostic))
        analysis.result.findings.append(replace(found, code=CODE))
    return left_out


def _fix(diagnostic, file_name: str, size: int) -> Fix:
    """clang's fix-its as one safe fix when they all edit the diagnostic's own file."""
    edits = []
    for fixit in diagnostic.fixits:
        start, end = fixit.range.start, fixit.range.end
        if start.file is None or start.file.name != file_name or end.file is None or end.file.name != file_name:
            return _advice(diagnostic)
        if not (0 <= start.offset <= end.offset <= size):
            return _advice(diagnostic)
        edits.append(Edit(start.offset, end.offset, fixit.value))
    if not edits:
        return _advice(diagnostic)
    shown = " and ".join(f"'{e.content}'" if e.start == e.end else f"'{e.content}' for bytes {e.start}-{e.end}"
                         for e in edits)
    verb = "insert" if all(e.start == e.end for e in edits) else "replace with"
    return Fix.safe(f"clang's fix-it: {verb} {shown}", *edits)


def _advice(diagnostic) -> Fix:
    if diagnostic.spelling.startswith("redefinition of '"):
        return Fix.advice("HIP defines this already: guard the project's definition with "
                          "`#ifndef __HIP_PLATFORM_AMD__`, or remove it")
    return Fix.advice("change the code so that hip-clang accepts it (see the message)")


def _notes(analysis, diagnostic) -> tuple[Related, ...]:
    """clang's notes that point somewhere ("previous definition is here"), as related places."""
    related = []
    for note in diagnostic.children:
        if note.location.file is None or note.spelling.startswith(("in file included from", "in instantiation of")):
            continue
        place = _place(analysis, note.location)
        if place is not None:
            related.append(Related(place, note.spelling))
    return tuple(related)


def _place(analysis, location):
    shown = analysis._path(location.file)
    if shown is not None:
        source = analysis.source(shown)
    else:
        path = Path(location.file.name)
        try:
            source = SourceFile(path.as_posix(), CUDA, path.read_bytes(), path)
        except OSError:
            return None
    if source is None or location.offset > len(source.data):
        return None
    return source.location(location.offset, location.offset)
