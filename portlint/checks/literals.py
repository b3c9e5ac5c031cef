"""X003 literal-macro-suffix: a string or character literal written against a name, with no
space between them (`"%"PRId64`, `"%"FSYM`).

C++11 reads such a pair as one token, a user-defined literal whose suffix is the name. GCC,
and so nvcc's host pass, warns and reads the name as the macro it is (`-Wliteral-suffix`);
clang makes it an error (`-Wreserved-user-defined-literal`), where it is lexed: in code and
in a `#define`'s body alike, used or not. hip-clang compiles the CUDA sources (`.cu`, `.cuh`,
`.hip`) as C++, so the ROCm build stops at each one. Other C-family files are left out: a
`.c` file is C for both compilers, and a `.cpp` or `.h` file may go to the host compiler.
"""

from __future__ import annotations

from portlint import queries
from portlint.checks.cpp import macro_tree
from portlint.discover import suffix_of
from portlint.finding import Finding, Related, finding
from portlint.fix import Edit, Fix
from portlint.rocm_path import Status
from portlint.source import CUDA, SourceFile
from portlint.triggers import leading, needs

# The suffixes of the files hip-clang surely compiles as HIP C++.
HIP_CLANG_SUFFIXES = frozenset({".cu", ".cuh", ".hip"})
# The standard library's string suffixes (`"text"s`, `"text"sv`): real literal operators. And
# the encoding prefixes, which a space would turn from a suffix into the next literal's
# prefix (`"a"L"b"`): left alone.
STANDARD_SUFFIXES = frozenset({"s", "sv", "L", "u", "U", "u8", "R", "LR", "uR", "UR", "u8R"})
_LITERALS = frozenset({"string_literal", "raw_string_literal", "char_literal"})

_UDL = "(user_defined_literal (literal_suffix) @suffix) @literal"
# A literal closed and followed at once by a name: the file's trigger (the trees decide). A
# character literal must not follow a digit or a letter (`1'000'000`: digit separators); a
# name starts with a letter (`_x` is a user-defined suffix of the project's own). A string is
# read up to 256 characters: the bound keeps the search linear (a file of escaped quotes
# would make each quote's search run to the end); a longer literal glued to a name is left
# to the compiler.
_WRITTEN_AGAINST = leading(
    b"\"'", rb"(?:\"(?:[^\"\\\n]|\\.){0,256}\"|(?<![\w'])'(?:[^'\\\n]|\\.){1,8}')([A-Za-z]\w*)")


@needs(_WRITTEN_AGAINST)
def check_literal_macro_suffix(source: SourceFile) -> list[Finding]:
    if suffix_of(source.path).lower() not in HIP_CLANG_SUFFIXES:
        return []
    model = source.rocm_path
    sites: list[tuple[int, int, str, str]] = []  # (literal start, suffix start, literal, suffix)
    for root in (source.tree.root_node, macro_tree(source)):  # code, and `#define` bodies
        if root is None:
            continue
        for match in queries.matches(CUDA, _UDL, root):
            literal, suffix = match["literal"][0], match["suffix"][0]
            glued = literal.named_children[0]
            if glued.type == "concatenated_string":  # `FMT ": %"NAME`: the last piece is glued
                glued = glued.named_children[-1]
            name = source.node_text(suffix)
            if literal.has_error or not name.isidentifier():
                continue  # a stretch the tree could not read (an unclosed quote): no edit there
            if glued.type not in _LITERALS or name.startswith("_") or name in STANDARD_SUFFIXES:
                continue  # a number (`10ms`), or a literal operator of the project's or the library's
            written = source.data[glued.start_byte:suffix.end_byte].decode("utf-8", "replace")
            sites.append((glued.start_byte, suffix.start_byte, written, name))
    sites = sorted(s for s in sites if model is None or model.status(s[0]) is not Status.DEAD)
    if not sites:
        return []
    # One root cause per file: its literals are written against names; the first is where
    # hip-clang stops, the others are the same edit.
    (start, at, written, name), *others = sites
    more = f" The file does so on {len(others)} more line{'s' if len(others) > 1 else ''} (related locations)." \
        if others else ""
    return [finding(
        source, start, at + len(name.encode()),
        f"`{written}` is one user-defined literal in C++11: nvcc only warns, hip-clang rejects it.{more}",
        Fix.safe(f"Put a space between the literal and `{name}`" + (", and at the other places" if others else ""),
                 *(Edit.insert(offset, " ") for _, offset, _, _ in sites)),
        related=tuple(Related(source.location(s, a + len(n.encode())), f"`{w}` is written the same way")
                      for s, a, w, n in others))]
