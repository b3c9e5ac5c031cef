"""The cross-file index, for rules that need more than one file.

Each file contributes plain, picklable facts while it is parsed (so the per-file pass
can run in worker processes); project rules then join the facts of all files. Facts keep
the ROCm-path status of where they stand, so a rule can tell a definition on the ROCm path
from a CUDA-only one.
"""

from __future__ import annotations

import bisect
import os
import pickle
import re
import zlib
from array import array
from collections.abc import Mapping, Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from portlint import queries
from portlint.finding import Finding, Related
from portlint.fix import Fix
from portlint.rocm_path import RocmPathModel, Status
from portlint.shown_paths import loads_written_from
from portlint.source import CUDA, Location, SourceFile

if TYPE_CHECKING:
    from portlint.checks.cmake_project import CMakeFacts

# What a kernel qualifier macro may expand to.
GLOBAL = re.compile(r"(?<!\w)__global__(?!\w)")
EXTERN_C = re.compile(r'(?<!\w)extern\s*"C"')


@dataclass(unsafe_hash=True)
class KernelDefinition:
    """A function definition that could be a kernel: `__global__`, or returning `void`."""

    name: str
    location: Location  # the function's name
    file_digest: str
    has_global: bool  # `__global__` spelled out
    extern_c: bool
    qualifiers: tuple[str, ...]  # identifiers before the return type, e.g. a KERNEL macro
    specifiers: tuple[str, ...]  # keywords before the return type: `static`, `__device__`, ...
    is_template: bool
    scope: str  # enclosing namespaces, `a::b`; "" at global scope
    insertion_point: Location  # empty, where `extern "C" ` would go (after `template <...>`)
    return_type_point: Location  # empty, before `void`: where `__global__ ` goes
    status: Status
    # Does the kernel's code observe the wavefront's width (the logical-warp model of its
    # file): True, False, or the header widths that decide; None where not worked out.
    warp_observation: bool | tuple[str, ...] | None = None


@dataclass(unsafe_hash=True)
class NamedUse:
    """A kernel named at a launch, or looked up by string in a loaded module."""

    name: str
    location: Location
    api: str  # `<<<>>>`, `hipLaunchKernelGGL`, `hipModuleGetFunction`, ...
    status: Status


@dataclass(unsafe_hash=True)
class MacroDefinition:
    name: str
    location: Location
    body: str
    status: Status


@dataclass(unsafe_hash=True)
class WarpSizeDefinition:
    """A constant named as the warp size, its log2 or its lane mask (`WARP_SIZE`, `kWarpSize`)."""

    name: str
    location: Location  # the defined name
    file_digest: str
    kind: str  # "size", "log2" or "lane mask"
    value: int | None  # when it is an integer literal
    hard_wired: bool  # the value assumes 32-lane warps (32, 5, 31) and nothing overwrites it
    arch_macros: tuple[str, ...]  # `__GFX9__`, `__AMDGCN_WAVEFRONT_SIZE`, ... that choose it
    local: bool  # a local, a parameter or a template parameter: seen only by uses bound to it
    status: Status
    # A `#define`: (absolute path, offset of its line), the build model's name for it.
    macro: tuple[str, int] | None = None
    # A local's scope (the end of its block): the definitions of one name in the arms of one
    # `#if` there are one constant, per platform (`#if defined(RDNA)` 32 `#else` 64).
    scope_end: int | None = None
    # A local (also one in a source file's function the parser lost) whose name is written
    # nowhere else in its block or file (no use, no macro body that may expand to one):
    # nothing can compute with it.
    unnamed_after: bool = False
    # A class member (`static constexpr int warp_size = 32;` in `struct Mma`): the class's
    # name ("" for an unnamed one). C++ finds it unqualified only from a class's scope (its
    # own, a derived class's), else through a qualified name: a free function's `warp_size`
    # or a call `device::warp_size()` is another thing (`WarpSizeUse.may_see`).
    member_of: str | None = None


@dataclass(unsafe_hash=True)
class WarpSizeUse:
    """An identifier named as a warp-size constant, where it is used."""

    name: str
    location: Location
    file_digest: str
    context: str  # "shuffle", "mask", "arithmetic", "loop", "array size" or "other"
    host: bool  # in host code or a launch configuration
    device: bool  # in a `__device__`/`__global__` function
    definition: Location | None  # the local definition it is bound to; None: any global one
    status: Status
    # The `#define` the build sees here (the ROCm build's, else the CUDA build's), named as
    # `WarpSizeDefinition.macro`; None when the build model does not say.
    sees: tuple[str, int] | None = None
    # Host code whose verdict rests on kernels of other files (a launch's configuration, or a
    # file whose only observers are such launches): those kernels, whose own files' verdicts
    # the project pass reads (`wavefront_size._judged_by_kernels`).
    kernels: tuple[str, ...] = ()
    # A literal the host writes for the constant (`32` sizing the launch of a kernel that
    # computes with `WARP_SIZE`): the place changes with the constant, though it does not name it.
    written: str | None = None
    # How the name is written: called (`device::warp_size()` names a function, never a
    # constant), qualified (`Mma::warp_size`), inside a class's scope (its body, or a member
    # function or static member defined outside it: `float& Tile::slot()`, not `ns::f()`),
    # where a member may be meant unqualified (the class's own or a base class's).
    called: bool = False
    qualified: bool = False
    in_class: bool = False

    def may_see(self, definition: WarpSizeDefinition) -> bool:
        """Can C++ name lookup bind this use to `definition`? A call names a function (no
        constant is one); a class member is found unqualified only from a class's scope
        (`Mma::warp_size`, qualified, may name it through an alias or a template parameter)."""
        if self.called:
            return False
        return definition.member_of is None or self.qualified or self.in_class


@dataclass(unsafe_hash=True)
class MaskMacroUse:
    """A `_sync` intrinsic's mask named by a macro (`__shfl_down_sync(FULL_MASK, ...)`), on
    the ROCm path: what makes a header's 32-lane mask macro compute (W002)."""

    name: str
    file: str  # `file_key` of the file, to find what it includes
    location: Location
    intrinsic: str
    status: Status


@dataclass
class FileFacts:
    functions: list[KernelDefinition] = field(default_factory=list)
    launches: list[NamedUse] = field(default_factory=list)
    lookups: list[NamedUse] = field(default_factory=list)
    lowered_names: set[str] = field(default_factory=set)  # names given to *AddNameExpression/*GetLoweredName
    c_linkage: set[str] = field(default_factory=set)  # functions declared `extern "C"` on the ROCm path
    macros: list[MacroDefinition] = field(default_factory=list)
    # Constants and includes, for sizes read from project headers (K001, K002, M001).
    path: str = ""  # `file_key` of the file
    includes: list[str] = field(default_factory=list)  # `#include "..."`/`<...>` on the ROCm path, as written
    constants: list[ConstantDefinition] = field(default_factory=list)  # headers only
    open_sizes: list = field(default_factory=list)  # rules' facts that name such constants (`OpenLaunch`, ...)
    warp_size_definitions: list[WarpSizeDefinition] = field(default_factory=list)
    warp_size_uses: list[WarpSizeUse] = field(default_factory=list)
    mask_uses: list[MaskMacroUse] = field(default_factory=list)
    use_rocm_test: Location | None = None  # the first `#if` that tests `USE_ROCM` (B003)
    cmake: CMakeFacts | None = None  # a CMake list file's facts (portlint.checks.cmake_project)
    # Warp verdicts other files' findings may wait for (`logical_warp.judge_by_helpers`): the
    # warp-named helpers the file defines outside kernels, whether their code observes the
    # wavefront's width (None: header widths decide); and the functions of other files its
    # device code calls, whether code around a call observes it otherwise. Each at its place.
    warp_helpers: dict[str, tuple[bool | None, Location]] = field(default_factory=dict)
    helper_callers: dict[str, tuple[bool, Location]] = field(default_factory=dict)
    # Not collected: the file was not parsed (`deferred`); `ProjectIndex.defer` loads them when asked.
    deferred: bool = False
    # `functions`, `macros`, `warp_size_uses`, `launches` and `lookups` held pickled (`pack`),
    # read when a rule asks for a name.
    packed: PackedFacts | None = None


@dataclass(unsafe_hash=True)
class PackedFacts:
    """A file's facts that project rules read by name (functions, macros, warp-size uses,
    launches and lookups), pickled, with the names they are about. A context snapshot keeps
    its files' facts so: unpickling all of them was most of a one-file run's start, and the
    rules ask for a few names (a launched kernel, the macros its qualifiers name, hard-wired
    warp sizes)."""

    names: frozenset[str]
    used: tuple[str, ...]  # the names launched or looked up, in source order
    data: bytes  # pickle of (functions, macros, warp_size_uses, launches, lookups)
    written_from: str = ""  # the working directory its locations' paths are shown from


def pack(facts: FileFacts) -> FileFacts:
    """`facts` with the facts rules read by name packed (`PackedFacts`)."""
    held = (facts.functions, facts.macros, facts.warp_size_uses, facts.launches, facts.lookups)
    if facts.packed is not None or facts.deferred or not any(held):
        return facts
    names = frozenset(fact.name for facts_of_kind in held for fact in facts_of_kind)
    used = tuple(dict.fromkeys(use.name for use in (*facts.launches, *facts.lookups)))
    return replace(facts, functions=[], macros=[], warp_size_uses=[], launches=[], lookups=[],
                   packed=PackedFacts(names, used, pickle.dumps(held, pickle.HIGHEST_PROTOCOL), os.getcwd()))


@dataclass
class ProjectIndex:
    lowered_names: set[str] = field(default_factory=set)
    open_sizes: list = field(default_factory=list)
    _memo: dict = field(default_factory=dict, repr=False)  # `memoized`: included files, file names, shared passes
    warp_size_definitions: list[WarpSizeDefinition] = field(default_factory=list)
    # Files (their facts' `path`) no ROCm build compiles: what they define does not exist there.
    not_built: AbstractSet[str] = frozenset()
    cmake_files: list[CMakeFacts] = field(default_factory=list)  # joined by cmake_project.CMakeBuild.of
    # Facts looked up by name or by file, as collected; rules read them through the views
    # `functions`, `macros`, `c_linkage` and `files`, which first load the deferred files
    # that may hold what is read.
    _functions: dict[str, list[KernelDefinition]] = field(default_factory=dict)
    _macros: dict[str, list[MacroDefinition]] = field(default_factory=dict)
    _c_linkage: set[str] = field(default_factory=set)
    _files: dict[str, FileFacts] = field(default_factory=dict)  # by `file_key`: includes and constants
    _mask_uses: dict[str, list[MaskMacroUse]] = field(default_factory=dict)  # by the macro's name
    # Warp-size uses, one list per file in the order files were added (`warp_size_uses_of`).
    _warp_size_uses: list[list[WarpSizeUse]] = field(default_factory=list)
    # Launches and lookups by name, each with its file's place in that order (`uses_of`);
    # every name launched or looked up, in the order first used (`used_names`).
    _launches: dict[str, list[tuple[int, NamedUse]]] = field(default_factory=dict, repr=False)
    _lookups: dict[str, list[tuple[int, NamedUse]]] = field(default_factory=dict, repr=False)
    _used_names: dict[str, None] = field(default_factory=dict, repr=False)
    # Packed facts (`PackedFacts`) by the names they are about, each as (its file's place in
    # that order, the facts); `_ranks`: a file's place by its path.
    _packed: dict[str, list] = field(default_factory=dict, repr=False)
    _unpacked: set[int] = field(default_factory=set, repr=False)
    _ranks: dict[str, int] = field(default_factory=dict, repr=False)
    # The files whose findings the run keeps (`report_only`), shown path -> `file_key`; None: all.
    _reported: dict[str, str] | None = field(default=None, repr=False)
    # Files whose facts were not collected (not parsed): by `file_key`, what collects them.
    _deferred: dict = field(default_factory=dict, repr=False)
    _words: dict | None = field(default=None, repr=False)  # identifier -> deferred file keys
    functions: Mapping[str, list[KernelDefinition]] = field(init=False, repr=False, compare=False)
    macros: Mapping[str, list[MacroDefinition]] = field(init=False, repr=False, compare=False)
    c_linkage: AbstractSet[str] = field(init=False, repr=False, compare=False)  # declared `extern "C"`
    files: Mapping[str, FileFacts] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.functions = _ByName(self, self._functions)
        self.macros = _ByName(self, self._macros)
        self.c_linkage = _NameSet(self, self._c_linkage)
        self.files = _Files(self, self._files)

    def memoized(self, key, compute):
        """`compute(self)`, run once per scan and kept for the other project rules that read it."""
        if key not in self._memo:
            self._memo[key] = compute(self)
        return self._memo[key]

    def defer(self, key: str, loader) -> None:
        """A file whose facts `loader()` collects on first need; `loader.data()` gives its bytes.

        Only facts a project rule looks up by name (functions, macros, C linkage) or by file
        (includes, constants) may wait: a file that has the trigger tokens of any other fact
        (`EAGER_FACTS`) is parsed in the per-file pass.
        """
        self._deferred[key] = loader
        self._files[key] = FileFacts(path=key, deferred=True)

    def _load(self, key: str) -> None:
        loader = self._deferred.pop(key, None)
        if loader is not None:
            facts = loader()
            facts.path = key
            self.add(facts)

    def _load_all(self) -> None:
        for name in list(self._packed):
            self._unpack(name)
        for key in list(self._deferred):
            self._load(key)

    def _unpack(self, name) -> None:
        """Unpickle the packed facts about `name`, each file's in its place among the others."""
        for rank, packed in self._packed.pop(name, ()):
            if rank in self._unpacked:
                continue  # its facts are about several names
            self._unpacked.add(rank)
            functions, macros, file_uses, launches, lookups = loads_written_from(packed.data, packed.written_from)
            self._warp_size_uses[rank].extend(file_uses)
            self._add_uses(rank, launches, lookups)
            for facts_of_kind, by_name in ((functions, self._functions), (macros, self._macros)):
                for fact in facts_of_kind:
                    self._ranks.setdefault(fact.location.path, rank)
                    by_name.setdefault(fact.name, []).append(fact)
                for fact_name in {fact.name for fact in facts_of_kind}:
                    by_name[fact_name].sort(key=lambda fact: self._ranks.get(fact.location.path, rank))

    def _demand(self, name) -> None:
        """Load the facts about `name`: packed ones, and the deferred files in which `name`
        occurs (only they can define it)."""
        self._unpack(name)
        if not self._deferred or not isinstance(name, str):
            return
        if self._words is None:
            self._words = {}
            for key, loader in self._deferred.items():
                for word in set(loader.data().translate(_WORD_BYTES).split()):
                    self._words.setdefault(word, []).append(key)
        for key in self._words.pop(name.encode(), ()):
            self._load(key)

    def add(self, facts: FileFacts) -> None:
        if facts.path:
            self._files[facts.path] = facts
        self.open_sizes.extend(facts.open_sizes)
        if facts.cmake is not None:
            self.cmake_files.append(facts.cmake)
        built = facts.path not in self.not_built
        self.warp_size_definitions.extend(facts.warp_size_definitions if built else
                                          (replace(d, status=Status.DEAD) for d in facts.warp_size_definitions))
        rank = len(self._warp_size_uses)
        self._warp_size_uses.append(list(facts.warp_size_uses) if built else
                                    [replace(u, status=Status.DEAD) for u in facts.warp_size_uses])
        for use in facts.mask_uses:
            self._mask_uses.setdefault(use.name, []).append(use)
        if facts.packed is not None:
            for name in facts.packed.names:
                self._packed.setdefault(name, []).append((rank, facts.packed))
            self._used_names.update(dict.fromkeys(facts.packed.used))
        for fact in (*facts.functions[:1], *facts.macros[:1]):
            self._ranks.setdefault(fact.location.path, rank)
        for fn in facts.functions:
            self._functions.setdefault(fn.name, []).append(fn)
        for macro in facts.macros:
            self._macros.setdefault(macro.name, []).append(macro)
        self._add_uses(rank, facts.launches, facts.lookups)
        self.lowered_names |= facts.lowered_names
        self._c_linkage |= facts.c_linkage

    def _add_uses(self, rank: int, launches: list[NamedUse], lookups: list[NamedUse]) -> None:
        for uses, by_name in ((launches, self._launches), (lookups, self._lookups)):
            for use in uses:
                by_name.setdefault(use.name, []).append((rank, use))
                self._used_names.setdefault(use.name)

    def used_names(self) -> list[str]:
        """Every name launched or looked up as a kernel (packed facts too, unread)."""
        return list(self._used_names)

    def uses_of(self, name: str) -> tuple[list[NamedUse], list[NamedUse]]:
        """The launches and the lookups of `name`, in the order of their files."""
        self._unpack(name)
        return tuple([use for _, use in sorted(by_name.get(name, ()), key=lambda entry: entry[0])]
                     for by_name in (self._launches, self._lookups))

    def report_only(self, files: dict[str, str]) -> None:
        """Findings are kept in these files only (shown path -> `file_key`): the files named
        on the command line, the others being context."""
        self._reported = files

    def reports_definition_of(self, name: str) -> bool:
        """Can a finding at a definition of `name` be kept? Not when every definition lies in a
        context file: a rule that reports at definitions need not read that name's facts."""
        if self._reported is None:
            return True
        for key in self._reported.values():
            self._load(key)  # a named file that was not parsed: parsed now, once
        return any(fn.location.path in self._reported for fn in self._functions.get(name, ()))

    def warp_size_uses_of(self, names) -> list[WarpSizeUse]:
        """The uses of these warp-size constants, in the order of their files."""
        for name in names:
            self._unpack(name)
        return [use for uses in self._warp_size_uses for use in uses if use.name in names]

    def mask_uses_of(self, name: str) -> list[MaskMacroUse]:
        """The `_sync` masks that name the macro `name`, in every file (deferred ones loaded)."""
        self._demand(name)
        return self._mask_uses.get(name, [])

    def use_rocm_tests(self) -> dict[str, Location]:
        """`file_key` -> the first `#if` testing `USE_ROCM`, for each C-family file that has
        one (deferred files loaded)."""
        self._demand("USE_ROCM")
        return {key: facts.use_rocm_test for key, facts in self._files.items() if facts.use_rocm_test is not None}

    def open_facts(self, kind: type) -> list:
        """The per-file facts of one kind whose sizes name constants of other files. Rules
        report at the fact (the launch, the shared array), so with `report_only` the other
        files' facts are left out: resolving their sizes was half of a one-file run's rules."""
        reported = self._reported
        return [fact for fact in self.open_sizes if isinstance(fact, kind)
                and (reported is None or fact.location.path in reported)]

    def resolve(self, path: str, expr) -> tuple[int | None, tuple[ConstantDefinition, ...]]:
        """The value of `expr` (an `Expr` of file `path`) with its open names read from the
        headers `path` includes, and the definitions that were read."""
        return resolve_in_headers(self, path, expr, frozenset())

    def rocm_definitions(self, name: str, load: bool = True) -> list[KernelDefinition]:
        """Definitions of `name` not dead on ROCm; with `load=False`, only those already
        collected (a rule that stops at the first kernel need not parse deferred files)."""
        if not load:
            self._unpack(name)  # packed facts were collected: only unpickled on demand
        found = self.functions.get(name, ()) if load else self._functions.get(name, ())
        return [fn for fn in found if fn.status is not Status.DEAD]

    def rocm_macros(self, name: str) -> list[MacroDefinition]:
        return [m for m in self.macros.get(name, ()) if m.status is not Status.DEAD]

    def qualifiers_expand_to(self, fn: KernelDefinition, pattern: re.Pattern) -> bool | None:
        """Does a qualifier macro of `fn` expand to `pattern` when building for ROCm?

        None when a qualifier has no definition on the ROCm path in the scanned tree: it may
        come from a system header or `-D`, so nobody can tell.
        """
        unknown = False
        for qualifier in fn.qualifiers:
            bodies = [m.body for m in self.rocm_macros(qualifier)]
            if not bodies:
                unknown = True
            elif any(pattern.search(body) for body in bodies):
                return True
        return None if unknown else False

    def is_rocm_kernel(self, fn: KernelDefinition) -> bool:
        return fn.has_global or self.qualifiers_expand_to(fn, GLOBAL) is True


# Bytes that are not part of an identifier become spaces: `split()` then gives the words.
_WORD_BYTES = bytes(c if chr(c).isascii() and (chr(c).isalnum() or c == 0x5F) else 0x20 for c in range(256))


class WordFilter:
    """The words of a file's bytes as their sorted CRC-32s, kept in its cached state: the
    project pass asks which files may name a thing (a helper, a feature flag) and reads only
    those. Never a wrong "no"; a wrong "maybe" (two words with one CRC: about 1 in 4 billion
    for each word) costs one read. Built in C (`map`, `sorted`), 4 bytes a distinct word.
    CMake's words are kept in lower case (its command names ignore case)."""

    __slots__ = ("_hashes", "lower")

    def __init__(self, data: bytes, lower: bool = False) -> None:
        words = set((data.lower() if lower else data).translate(_WORD_BYTES).split())
        self._hashes = array("I", sorted(set(map(zlib.crc32, words))))
        self.lower = lower

    def __getstate__(self):
        return self._hashes.tobytes(), self.lower

    def __setstate__(self, state) -> None:
        data, self.lower = state
        self._hashes = array("I")
        self._hashes.frombytes(data)

    def may_hold(self, word: str) -> bool:
        wanted = zlib.crc32((word.lower() if self.lower else word).encode())
        at = bisect.bisect_left(self._hashes, wanted)
        return at < len(self._hashes) and self._hashes[at] == wanted


class _ByName(Mapping):
    """Facts by name: reading a name first loads the deferred files that mention it;
    reading every name loads every deferred file."""

    def __init__(self, index: ProjectIndex, facts: dict) -> None:
        self._index, self._facts = index, facts

    def __getitem__(self, name):
        self._index._demand(name)
        return self._facts[name]

    def __iter__(self):
        self._index._load_all()
        return iter(self._facts)

    def __len__(self) -> int:
        self._index._load_all()
        return len(self._facts)


class _NameSet(AbstractSet):
    """Names (C linkage): asking for one first loads the deferred files that mention it."""

    def __init__(self, index: ProjectIndex, names: set) -> None:
        self._index, self._names = index, names

    def __contains__(self, name) -> bool:
        self._index._demand(name)
        return name in self._names

    def __iter__(self):
        self._index._load_all()
        return iter(self._names)

    def __len__(self) -> int:
        self._index._load_all()
        return len(self._names)


class _Files(Mapping):
    """Facts by `file_key`: every scanned file is a key; a deferred file's facts load when read."""

    def __init__(self, index: ProjectIndex, facts: dict) -> None:
        self._index, self._facts = index, facts

    def __getitem__(self, key):
        self._index._load(key)
        return self._facts[key]

    def __contains__(self, key) -> bool:
        return key in self._facts  # a deferred file is a key already: nothing to load

    def __iter__(self):
        return iter(self._facts)

    def __len__(self) -> int:
        return len(self._facts)


def finding_at_definition(fn: KernelDefinition, message: str, fix: Fix, related: tuple[Related, ...]) -> Finding:
    """A project rule's finding at a kernel's name; its edits insert at `fn.insertion_point`
    or, for a specifier, at `fn.return_type_point`."""
    return Finding(
        location=fn.location,
        message=message,
        fix=fix,
        related=related,
        matched=fn.name,
        file_digest=fn.file_digest,
        edit_locations=tuple(fn.return_type_point if e.start == fn.return_type_point.start_byte else fn.insertion_point
                             for e in fix.edits),
    )


MODULE_LOOKUPS = {  # function -> index of the argument naming the kernel
    "cuModuleGetFunction": 2, "hipModuleGetFunction": 2, "cuLibraryGetKernel": 2,
}
# hipRTC/NVRTC calls whose second argument names a kernel by its C++ name expression.
NAME_EXPRESSIONS = {
    "nvrtcAddNameExpression", "hiprtcAddNameExpression", "nvrtcGetLoweredName", "hiprtcGetLoweredName",
}
LAUNCH_APIS = {  # function -> index of the kernel argument
    "hipLaunchKernelGGL": 0, "cudaLaunchKernel": 0, "hipLaunchKernel": 0,
    "cudaLaunchCooperativeKernel": 0, "hipLaunchCooperativeKernel": 0, "hipExtLaunchKernelGGL": 0,
}

# One query per kind of fact, each run only on a file whose bytes may hold that fact: the
# tree is walked once for all of them (portlint.queries.shared), but matching a pattern
# against every call or function of a file costs more than that walk.
_APIS = (*MODULE_LOOKUPS, *NAME_EXPRESSIONS, *LAUNCH_APIS)
# The declarator's type is checked in Python: a pattern `declarator: (function_declarator)`
# costs twice as much to match.
_FUNCTIONS = "(function_definition) @function"
# Launches by `<<<>>>` and by API share a query: their facts keep source order in `launches`.
_CALLS = """
[(call_expression function: (identifier) @api (#any-of? @api %s)) @call
 (call_expression function: (_) @launched (kernel_call_syntax)) @launch]
""" % " ".join(f'"{api}"' for api in _APIS)
_MACROS = "(preproc_def name: (identifier) @macro_name) @macro"
_LINKAGES = "(linkage_specification) @linkage"
# Bytes without which a file has none of those facts (kernels return void).
_MARKERS = (b"void", b"<<<", b"#define", b"extern", *(api.encode() for api in _APIS))
# Each API's name without its vendor prefix (`cu`, `hip`, `nvrtc`, ...), those that hold
# another left out: fewer searches of the bytes than one per API.
_API_STEMS = {re.sub(r"^[a-z]+", "", api).encode() for api in _APIS}
_CALL_MARKERS = (b"<<<", *sorted(stem for stem in _API_STEMS if not any(s != stem and s in stem for s in _API_STEMS)))
# A kernel's head (the tokens before its name) spells out `__global__` or `void`.
_KERNEL_HEAD_MARKERS = (b"void", b"__global__")
_LOCAL_DECLARATIONS = "(declaration declarator: (_) @declarator)"
# Tokens tree-sitter reads as identifiers where a macro breaks the parse (`KERNEL void k()`).
_NOT_QUALIFIERS = frozenset(
    "void bool char short int long float double signed unsigned auto const volatile".split()
)
_SPECIFIERS = frozenset({"__device__", "__host__", "__forceinline__", "__noinline__", "constexpr"})


def collect_own(source: SourceFile, model: RocmPathModel, facts: FileFacts) -> FileFacts:
    """The index's own facts of a C-family file (kernels, launches, lookups, macros, C linkage,
    includes and constants), added to `facts`. `portlint.checks.facts` adds the rules' own."""
    if source.language == CUDA:
        _collect_includes_and_constants(source, model, facts)
    if source.language != CUDA or not any(marker in source.data for marker in _MARKERS):
        return facts
    data = source.data
    if any(marker in data for marker in _KERNEL_HEAD_MARKERS):
        # A head split off by a parse error (`_split_head`) needs one: most trees have none.
        parse_errors = source.tree.root_node.has_error
        for definition in queries.nodes(CUDA, _FUNCTIONS, source.tree.root_node, "function"):
            declarator = definition.child_by_field_name("declarator")
            if declarator is not None and declarator.type == "function_declarator":
                _collect_function(source, model, facts, definition, declarator, parse_errors)
    if any(marker in data for marker in _CALL_MARKERS):
        locals_ = _LocalNames(source)
        for match in queries.matches(CUDA, _CALLS, source.tree.root_node):
            if "call" in match:
                _collect_api_call(source, model, facts, match["call"][0], match["api"][0], locals_)
            else:
                _collect_launch(source, model, facts, match["launch"][0], match["launched"][0], locals_)
    if b"define" in data:  # `#define`, `# define`
        for match in queries.matches(CUDA, _MACROS, source.tree.root_node):
            _collect_macro(source, model, facts, match["macro"][0], match["macro_name"][0])
    if b"extern" in data:
        for spec in queries.nodes(CUDA, _LINKAGES, source.tree.root_node, "linkage"):
            _collect_c_linkage(source, model, facts, spec)
    return facts


def _collect_macro(source, model, facts, node, name) -> None:
    value = node.child_by_field_name("value")
    facts.macros.append(MacroDefinition(
        name=source.node_text(name),
        location=source.location(node.start_byte, name.end_byte),
        body=source.node_text(value).strip() if value is not None else "",
        status=model.status(node.start_byte),
    ))


def declared_name(declarator) -> object | None:
    inner = declarator.child_by_field_name("declarator")
    if inner is None:
        return None
    if inner.type in ("identifier", "field_identifier"):
        return inner
    if inner.type in ("qualified_identifier", "template_function"):
        names = [c for c in inner.named_children if c.type in ("identifier", "field_identifier")]
        return names[-1] if names else None
    return None


def _declared_scope(declarator, source) -> str:
    """`ns` for a definition of `ns::k`; "" for an unqualified name."""
    inner = declarator.child_by_field_name("declarator")
    scope = inner.child_by_field_name("scope") if inner is not None and inner.type == "qualified_identifier" else None
    return source.node_text(scope) if scope is not None else ""


def _collect_function(source, model, facts, definition, declarator, parse_errors: bool) -> None:
    head = _split_head(definition) if parse_errors else None
    # Most definitions are no kernel: without `__global__` or `void` among the head's bytes,
    # no node of them need be read.
    if not any(source.data.find(marker, (head or definition).start_byte, declarator.start_byte) != -1
               for marker in _KERNEL_HEAD_MARKERS):
        return
    name, qualified_scope = declared_name(declarator), _declared_scope(declarator, source)
    if name is None:
        return
    has_global, returns_void = False, False
    qualifiers, specifiers = [], []
    void_at = (head or definition).start_byte
    for child in _head_tokens(head, definition, declarator):
        text = source.node_text(child)
        if child.type == "__global__":
            has_global = True
        elif text == "void":
            returns_void, void_at = True, child.start_byte
        elif child.type in _SPECIFIERS or child.type == "storage_class_specifier":
            specifiers.append(text)
        elif child.type in ("type_identifier", "identifier") and text not in _NOT_QUALIFIERS:
            qualifiers.append(text)
    has_global = has_global or _global_just_before(source.data, void_at)
    if not (has_global or returns_void) or (qualified_scope and not has_global):
        return  # not a kernel; a non-global `A::f` is an out-of-line method
    ancestors = list(ancestors_of(definition))  # each `Node.parent` descends from the root: read them once
    is_template = bool(ancestors) and ancestors[0].type == "template_declaration"
    around = ancestors[1:] if is_template else ancestors  # what holds the definition (or its template)
    if around and around[0].type == "field_declaration_list":
        return  # a method in its class body
    namespaces = [_namespace_name(a, source) for a in reversed(ancestors) if a.type == "namespace_definition"]
    facts.functions.append(KernelDefinition(
        name=source.node_text(name),
        location=source.location(name.start_byte, name.end_byte),
        file_digest=source.digest,
        has_global=has_global,
        extern_c=_is_extern_c(definition, ancestors),
        qualifiers=tuple(qualifiers),
        specifiers=tuple(specifiers),
        is_template=is_template,
        scope="::".join(n for n in (*namespaces, qualified_scope) if n),
        insertion_point=(insertion_point := source.location((head or definition).start_byte)),
        # Most often the head starts with `void`: one location for both.
        return_type_point=insertion_point if void_at == insertion_point.start_byte else source.location(void_at),
        status=model.status(definition.start_byte),
    ))


_HEAD_WINDOW = 256  # bytes of a definition's head read back from its return type
_COMMENTS = re.compile(r"//[^\n]*|/\*(?:[^*]|\*(?!/))*(?:\*/|$)")


def _global_just_before(data: bytes, at: int) -> bool:
    """Is `__global__` written in the same head, before `at`, where the tree did not see it?
    After an unclosed brace or a declaration missing its `;`, tree-sitter may fold the keyword
    into an ERROR node or into the declaration before: the bytes still say it."""
    if data.find(b"__global__", max(0, at - _HEAD_WINDOW), at) == -1:
        return False  # most heads: no keyword to look for
    window = _COMMENTS.sub(" ", data[max(0, at - _HEAD_WINDOW):at].decode("latin-1"))
    cut = max(window.rfind(";"), window.rfind("{"), window.rfind("}"))
    return GLOBAL.search(window, cut + 1) is not None


def _split_head(definition):
    """The declaration missing its `;` that holds the head of `definition`, or None.

    `__global__ void C10_LAUNCH_BOUNDS_1(256) k()` splits into a declaration missing its
    `;` and a bare definition: the declaration's tokens belong to the definition.
    """
    head = definition.prev_sibling
    if head is not None and head.type == "declaration" and head.children[-1].is_missing:
        return head
    return None


def _head_tokens(head, definition, declarator):
    """The tokens before the declarator: specifiers, return type, and any ERROR's contents."""
    for child in (*(head.children if head is not None else ()), *definition.children):
        if child.start_byte >= declarator.start_byte:
            return
        if child.type in ("ERROR", "init_declarator"):
            yield from child.children
        else:
            yield child


def _namespace_name(namespace, source) -> str:
    name = namespace.child_by_field_name("name")
    return source.node_text(name) if name is not None else "(anonymous)"


def _is_c_linkage(spec) -> bool:
    value = spec.child_by_field_name("value")
    return value is not None and _is_c_literal(value)


def _is_extern_c(definition, ancestors: list) -> bool:
    node = definition
    for parent in ancestors:
        if parent.type == "linkage_specification":
            return _is_c_linkage(parent)
        if parent.type == "ERROR" and _opens_c_block_before(parent, node):
            return True
        node = parent
    return False


def _opens_c_block_before(error, node) -> bool:
    """Is `node` inside an `extern "C" {` whose tokens lie loose in an ERROR?

    `#ifdef __cplusplus` / `extern "C" {` / `#endif` around definitions breaks the parse;
    the block's `}` then sits in a later `#ifdef __cplusplus` (or loose in the ERROR).
    """
    is_open = False
    children = error.children
    for i, child in enumerate(children):
        if child.start_byte >= node.start_byte:
            break
        if child.type == "{" and i >= 2 and children[i - 2].type == "extern" and _is_c_literal(children[i - 1]):
            is_open = True
        elif child.type == "}" or (child.type.startswith("preproc") and _closes_braces(child)):
            is_open = False
    return is_open


def _closes_braces(node) -> bool:
    return node.text.count(b"}") > node.text.count(b"{")


def _is_c_literal(node) -> bool:
    return node.type == "string_literal" and node.text in (b'"C"', b"'C'")


def _collect_c_linkage(source, model, facts, spec) -> None:
    """Functions declared `extern "C"` (a later definition without it keeps C linkage)."""
    if not _is_c_linkage(spec) or model.status(spec.start_byte) is Status.DEAD:
        return
    body = spec.child_by_field_name("body")
    declarations = body.named_children if body is not None and body.type == "declaration_list" else [body]
    for declaration in declarations:
        if declaration is None or declaration.type != "declaration":
            continue
        for declarator in declaration.children_by_field_name("declarator"):
            name = declared_name(declarator) if declarator.type == "function_declarator" else None
            if name is not None:
                facts.c_linkage.add(source.node_text(name))


def _collect_launch(source, model, facts, call, callee, locals_: "_LocalNames") -> None:
    name = callee.child_by_field_name("name") if callee.type == "template_function" else callee
    if name is not None and name.type == "identifier" and not locals_.declares(call, name):
        facts.launches.append(NamedUse(
            source.node_text(name), source.location(name.start_byte, name.end_byte), "<<<>>>",
            model.status(call.start_byte)))


def _collect_api_call(source, model, facts, call, callee, locals_: "_LocalNames") -> None:
    api = source.node_text(callee)
    args = call.child_by_field_name("arguments")
    arguments = args.named_children if args is not None else []
    if api in MODULE_LOOKUPS and len(arguments) > MODULE_LOOKUPS[api]:
        literal = arguments[MODULE_LOOKUPS[api]]
        text = _string_value(literal, source)
        if text is not None:
            facts.lookups.append(NamedUse(
                text, source.location(literal.start_byte, literal.end_byte), api, model.status(call.start_byte)))
    elif api in NAME_EXPRESSIONS and len(arguments) > 1:
        text = _string_value(arguments[1], source)
        if text is not None:
            facts.lowered_names.add(_bare_name(text))
    elif api in LAUNCH_APIS and len(arguments) > LAUNCH_APIS[api]:
        name = kernel_argument(arguments[LAUNCH_APIS[api]])
        if name is not None and not locals_.declares(call, name):
            facts.launches.append(NamedUse(
                source.node_text(name), source.location(name.start_byte, name.end_byte), api,
                model.status(call.start_byte)))


def _bare_name(expression: str) -> str:
    """`scale` for the name expressions `&scale`, `ns::scale<float, 4>`, `scale`."""
    return expression.split("<", 1)[0].strip().lstrip("&").strip().rsplit("::", 1)[-1]


def _innermost_scope(node):
    """The function definition or lambda around `node`: the later starting of the nearest of
    each (found by bisection, not by a climb: a launch can be deep in an else-if chain)."""
    around = [queries.nearest_ancestor(node, kind) for kind in ("function_definition", "lambda_expression")]
    if NotImplemented in around:  # a tree without an index
        return next((a for a in ancestors_of(node) if a.type in ("function_definition", "lambda_expression")), None)
    return max((a for a in around if a is not None), key=lambda a: a.start_byte, default=None)


class _LocalNames:
    """Parameters and local variables of the function around a launch, read once per function.

    A launched name declared there is a kernel pointer, not the name of a definition.
    """

    def __init__(self, source: SourceFile) -> None:
        self._source = source
        self._parameters: dict[int, frozenset[bytes]] = {}
        self._variables: dict[int, frozenset[bytes]] = {}
        self._declarators: tuple[list[int], list] | None = None  # the file's, by start

    def declares(self, call, name) -> bool:
        function = _innermost_scope(call)
        if function is None:
            return False
        data, body = self._source.data, function.child_by_field_name("body")
        # Most launches name a kernel nowhere else in the function: the bytes tell, before
        # the parameters (in the head, before the body) or the body's declarations are read.
        head_end = body.start_byte if body is not None else function.end_byte
        if _mentions(data, function.start_byte, head_end, name.text):
            if function.id not in self._parameters:
                self._parameters[function.id] = frozenset(_parameter_names(function))
            if name.text in self._parameters[function.id]:
                return True
        if body is None or not _mentions(data, body.start_byte, call.start_byte, name.text):
            return False
        if function.id not in self._variables:
            self._variables[function.id] = frozenset(_declarator_name(d) for d in self._declarators_in(body))
        return name.text in self._variables[function.id]

    def _declarators_in(self, body) -> list:
        """The declarators of the declarations in `body`: those that start inside it (one
        query of the whole file; a query per body costs more). A declarator starting inside
        `body` lies in it, and one in it starting at its very end is empty: it names nothing."""
        if self._declarators is None:
            found = queries.nodes(CUDA, _LOCAL_DECLARATIONS, self._source.tree.root_node, "declarator")
            self._declarators = ([d.start_byte for d in found], found)
        starts, found = self._declarators
        return found[bisect.bisect_left(starts, body.start_byte):bisect.bisect_left(starts, body.end_byte)]


def _mentions(data: bytes, start: int, end: int, word: bytes) -> bool:
    """Does `word` occur as a whole identifier in data[start:end]?"""
    at = data.find(word, start, end)
    while at != -1:
        before = data[at - 1:at]
        after = data[at + len(word):at + len(word) + 1]
        if not (before.isalnum() or before == b"_") and not (after.isalnum() or after == b"_"):
            return True
        at = data.find(word, at + 1, end)
    return False


def _parameter_names(function):
    declarator = function.child_by_field_name("declarator")
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    for parameter in parameters.named_children if parameters is not None else ():
        yield _declarator_name(parameter.child_by_field_name("declarator"))


def _declarator_name(node) -> bytes | None:
    """`fn` in `fn`, `*fn`, `fn = ...`, `(*fn)(int)`, `&fn`."""
    while node is not None and node.type != "identifier":
        inner = node.child_by_field_name("declarator")
        if inner is None and node.type == "parenthesized_declarator":
            inner = node.named_children[0] if node.named_children else None
        node = inner
    return node.text if node is not None else None


def _string_value(node, source) -> str | None:
    if node.type != "string_literal":
        return None
    parts = [c for c in node.named_children if c.type == "string_content"]
    return source.node_text(parts[0]) if len(parts) == 1 else None


def kernel_argument(node):
    """The kernel's name in `k`, `(void*)k`, `reinterpret_cast<const void*>(&k)`, `HIP_KERNEL_NAME(k<T>)`."""
    while node is not None:
        if node.type == "identifier":
            return node
        if node.type == "template_function":
            return node.child_by_field_name("name")
        if node.type == "cast_expression":
            node = node.child_by_field_name("value")
        elif node.type in ("pointer_expression", "parenthesized_expression"):
            node = node.named_children[-1] if node.named_children else None
        elif node.type == "call_expression":
            args = node.child_by_field_name("arguments")
            node = args.named_children[0] if args is not None and args.named_children else None
        else:
            return None
    return None


# ---- constants of included headers (K001, K002, M001) -----------------------------------
# Imported here, not at the top, so that this section stays an append to the module.
import posixpath  # noqa: E402

from portlint.checks.cpp import ancestors_of, evaluate_expression, open_constants  # noqa: E402

# Files whose constants are recorded: those that are included. A `.cu` included by
# another (`#include "kernels.cu"`) is rare; recording every file's constants would cost
# a whole-tree query per file.
from portlint.build_model.macros import HEADER_SUFFIXES  # noqa: E402
_INCLUDE_CONTAINERS = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef", "preproc_else"})


@dataclass(unsafe_hash=True)
class ConstantDefinition:
    """An integer constant outside functions: `#define N 256`, `constexpr int kN = 256;`, an enumerator."""

    name: str
    file: str  # `file_key` of the defining file
    location: Location  # the whole definition
    text: str  # the definition on one line
    value: object  # an int, an `Expr` naming other files' constants, or None (not a constant)
    status: Status


def file_key(source: SourceFile) -> str:
    """How the project index names a file: its absolute path."""
    return source.absolute_path.as_posix() if source.absolute_path is not None else source.path


def index_key(shown: str) -> str:
    """The index's name of a file (`file_key`: its absolute path) from the path a finding
    shows (relative to the working directory)."""
    return posixpath.normpath(posixpath.join(os.getcwd().replace(os.sep, "/"), shown)) \
        if not posixpath.isabs(shown) else posixpath.normpath(shown)


def _collect_includes_and_constants(source: SourceFile, model: RocmPathModel, facts: FileFacts) -> None:
    """Includes and constants, for the sizes the rules' facts (`facts.open_sizes`, set
    before) read from other files, and the warp-size constants and mask macros its uses see
    (W001, W002)."""
    facts.path = file_key(source)
    is_header = posixpath.splitext(facts.path)[1].lower() in HEADER_SUFFIXES
    if (is_header or facts.open_sizes or facts.warp_size_uses or facts.mask_uses or facts.helper_callers) \
            and b"#include" in source.data:
        facts.includes = _included_paths(source, model)
    if is_header and any(marker in source.data for marker in (b"#define", b"const", b"enum")):
        facts.constants = _file_constants(source, model, facts.path)


def _included_paths(source: SourceFile, model: RocmPathModel) -> list[str]:
    """`#include "..."` and `<...>` paths at file level and in `#if` arms (a walk of those
    nodes only). `<...>` may name a project header too (`-I include`); only scanned files count."""
    found = []
    pending = list(source.tree.root_node.children)
    while pending:
        node = pending.pop()
        if node.type in _INCLUDE_CONTAINERS:
            pending.extend(node.children)
        elif node.type == "preproc_include" and model.status(node.start_byte) is not Status.DEAD:
            path = node.child_by_field_name("path")
            if path is not None and path.type in ("string_literal", "system_lib_string"):
                found.append(source.node_text(path).strip('"<>'))
    return found[::-1]


def _file_constants(source: SourceFile, model: RocmPathModel, key: str) -> list[ConstantDefinition]:
    found = []
    for name, definition, value in open_constants(source).file_constants():
        text = source.node_text(definition).rstrip()
        found.append(ConstantDefinition(
            name=name, file=key, location=source.location(definition.start_byte, definition.start_byte + len(
                text.encode())), text=" ".join(text.replace("\\\n", " ").split()), value=value,
            status=model.status(definition.start_byte),
        ))
    return found


def resolve_in_headers(index: ProjectIndex, path: str, expr, resolving: frozenset) -> tuple:
    used: list[ConstantDefinition] = []

    def lookup(name: str) -> int | None:
        value, definitions = _header_constant(index, path, name, resolving)
        used.extend(definitions)
        return value

    value = evaluate_expression(expr, lookup)
    return value, tuple(dict.fromkeys(used)) if value is not None else ()


def _header_constant(index: ProjectIndex, path: str, name: str, resolving: frozenset) -> tuple:
    """The value of `name` in the headers `path` includes: one value, or None."""
    if (path, name) in resolving:
        return None, ()  # `#define A B` in one header, `#define B A` in another
    definitions = [c for header in included_files(index, path) for c in index.files[header].constants
                   if c.name == name]
    values, used = set(), list(definitions)
    for definition in definitions:
        if definition.value is None or isinstance(definition.value, int):
            values.add(definition.value)
        else:
            value, read = resolve_in_headers(index, definition.file, definition.value, resolving | {(path, name)})
            values.add(value)
            used.extend(read)
    if len(values) != 1 or None in values:
        return None, ()
    return values.pop(), tuple(used)


def included_files(index: ProjectIndex, path: str) -> list[str]:
    """The scanned files `path` includes, directly or not, nearest first."""
    def walk(index: ProjectIndex) -> list[str]:
        seen, order, pending = {path}, [], [path]
        while pending:
            current = pending.pop(0)
            for include in index.files[current].includes if current in index.files else ():
                for target in _include_targets(index, current, include):
                    if target not in seen:
                        seen.add(target)
                        order.append(target)
                        pending.append(target)
        return order
    return index.memoized(("includes", path), walk)


def first_included(index: ProjectIndex, path: str, wanted, memo: dict, includes_of) -> str | None:
    """The first scanned file `path` includes, directly or not, for which `wanted(key)` holds
    (depth first, in include order), or None. `includes_of(key)`: what a file includes, as
    written (the caller's facts or bytes: no file is parsed for it). `memo` (one per
    question) keeps each file's answer, so a scan that asks for many files walks each
    include once."""
    if path in memo:
        return memo[path]
    memo[path] = None  # (an include cycle answers no where it closes)
    found = None
    for include in includes_of(path):
        for target in _include_targets(index, path, include):
            found = target if wanted(target) else first_included(index, target, wanted, memo, includes_of)
            if found is not None:
                break
        if found is not None:
            break
    memo[path] = found
    return found


def _include_targets(index: ProjectIndex, including: str, include: str) -> list[str]:
    basenames = index.memoized("basenames", lambda index: by_basename(index.files))
    return include_targets(including, include, index.files, basenames)


def by_basename(paths) -> dict[str, list[str]]:
    """Absolute posix paths by their file name (for `include_targets`)."""
    names: dict[str, list[str]] = {}
    for known in paths:
        names.setdefault(posixpath.basename(known), []).append(known)
    return names


def include_targets(including: str, include: str, known, named: Mapping[str, list[str]]) -> list[str]:
    """Where `#include "include"` in file `including` leads among the files `known`
    (absolute posix paths; `named`: them by file name, `by_basename`): beside the including
    file, else any whose path ends with it (the scan root, `-I` directories)."""
    beside = posixpath.normpath(posixpath.join(posixpath.dirname(including), include))
    if beside in known:
        return [beside]
    wanted = posixpath.normpath(include)
    if wanted.startswith(".."):
        return []
    return [path for path in named.get(posixpath.basename(wanted), ()) if path.endswith("/" + wanted)]


# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(
    CUDA,
    _FUNCTIONS,
    _CALLS,
    _MACROS,
    _LINKAGES,
    _LOCAL_DECLARATIONS,
)
