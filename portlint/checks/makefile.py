"""B, L and R in Makefiles: compilers, flags, libraries, paths and links that only a CUDA
build has, and hipcc builds that miss what ROCm needs.

What a recipe runs and what reaches it is read by `make_ast`: each `$(VAR)` word is
followed to the values the file gives VAR on the ROCm path (assignments in arms that are
dead for ROCm do not count), so `$(GPUCC) $(GPUFLAGS)` is judged by what the ROCm build
would run.
"""

from __future__ import annotations

import re

from portlint.checks import nvcc_flags
from portlint.checks.cmake import _CUDA_ROOT_NAMES, _HARD_CODED_CUDA, _ROCM_FALLBACK
from portlint.checks.libraries import (
    CUDA_LIBRARIES, CUDA_RUNTIME_LIBRARIES, CudaLibrary, is_library_search_flag, library_for_link_name, link_message,
)
from portlint.checks.make_ast import Command, Expansion, Makefile, Word, read, reference_name, references_under, set_by_its_test
from portlint.finding import Finding, Related, Severity, finding
from portlint.fix import Edit, Fix
from portlint.source import SourceFile

HIP_COMPILERS = frozenset({"hipcc", "hipcc.pl", "hipcc.bin", "amdclang++", "amdclang"})
NVCC = "nvcc"
# Host compilers and linkers that know nothing of HIP (`g++`, `x86_64-linux-gnu-g++-12`, `ld`).
_HOST_LINKER = re.compile(
    r"(?:[\w.]+-)*(?:g\+\+|c\+\+|gcc|cc|clang\+\+|clang|ld|ld\.\w+|mpicxx|mpic\+\+|icpx|icx)(?:-[\d.]+)?")
_SOURCE_SUFFIXES = (".cu", ".hip", ".cpp", ".cc", ".cxx", ".c", ".C")
_INPUT_AUTOMATICS = frozenset({"$^", "$+", "$<", "$?"})
_HIP_WORD = re.compile(r"hipcc|amdclang|offload-arch", re.IGNORECASE)
_HIP_OR_ROCM = re.compile(r"hip|rocm|amdgpu", re.IGNORECASE)
_LIB_FLAG = re.compile(r"-l(\w[\w-]*)")
_LIB_FILE = re.compile(r"(?:.*/)?lib(\w+?)(?:_static)?\.(?:so|a)(?:\.[\d.]+)?")
_PRINTERS = frozenset({"echo", "printf", "@echo", "true", ":"})


def _lower(source: SourceFile) -> bytes:
    return source.data.lower()


def _hip_commands(mk: Makefile) -> list[tuple[Command, set[str]]]:
    """Recipe commands that may run hipcc on the ROCm path, with what they may run."""
    found = []
    for command in mk.commands:
        programs = mk.command_programs(command)
        if programs & HIP_COMPILERS:
            found.append((command, programs))
    return found


def _program_flags(mk: Makefile, word: Word, compilers: frozenset[str],
                   seen: frozenset[str] = frozenset()) -> Expansion:
    """Words a program variable adds after the program (`HIPCC = hipcc --offload-arch=gfx90a`),
    from the assignments whose program is one of `compilers`."""
    result = Expansion([])
    node = word.reference
    if node is None or node.type != "variable_reference":
        return result
    name = reference_name(mk.source, node)
    if name is None or name in seen:
        return result
    for a in mk.values(name):
        if not a.words or not mk.programs(a.words[0]) & compilers:
            continue
        result.extend(mk.expand(a.words[1:]))
        result.extend(_program_flags(mk, a.words[0], compilers, seen | {name}))
    return result


def _command_words(mk: Makefile, command: Command, compilers: frozenset[str]) -> Expansion:
    """Everything after the program, variables expanded, and the program variable's own flags."""
    words = _program_flags(mk, command.program, compilers)
    words.extend(mk.expand(command.words[1:]))
    return words


def _inputs(mk: Makefile, command: Command, words: list[Word]) -> list[Word]:
    """The command's words, plus its rule's prerequisites where it reads `$^`, `$<`, ..."""
    if command.rule is not None and any(w.text in _INPUT_AUTOMATICS for w in words):
        return words + mk.expand(command.rule.prerequisites).words
    return words


def _compiles(mk: Makefile, command: Command, words: list[Word]) -> bool:
    texts = {w.text for w in words}
    if texts & {"-M", "-MM", "-E"} and "-c" not in texts:
        return False  # dependency generation, preprocessing
    return "-c" in texts or "--genco" in texts or any(
        w.text.endswith(_SOURCE_SUFFIXES) for w in _inputs(mk, command, words))


def _suspicious_unset(mk: Makefile, expansion: Expansion, pattern: re.Pattern) -> bool:
    """Could a value this file does not show hold what is missing?"""
    if expansion.opaque:
        return True
    if mk.includes:
        return bool(expansion.unset)
    return any(pattern.search(name) for name in expansion.unset)


def _site(word: Word) -> tuple[int, int]:
    return word.start, word.end


# ---- B005 nvcc-only-makefile ----------------------------------------------------------------
_ROCM_ROOT_LINE = "ROCM_PATH ?= /opt/rocm"
_HIPCC_TEST = "ifneq ($(wildcard $(ROCM_PATH)/bin/hipcc),)"


def check_nvcc_only_makefile(source: SourceFile) -> list[Finding]:
    if b"nvcc" not in _lower(source):
        return []
    mk = read(source)
    if has_hip_path(mk):
        return []
    findings = []
    sets_root = mk.is_set("ROCM_PATH")
    given: set[str] = set()  # variables whose recipes a finding shows already
    for a in mk.assignments:
        if not a.live or not a.words or not _names_nvcc(mk, a.words[0]):
            continue
        word = a.words[0]
        # The recipes that run it (`$(NVCC) -c $<`): the same root cause, where make runs nvcc.
        runs = [c.program for c in mk.commands if c.program.reference is not None
                and reference_name(source, c.program.reference) == a.name] if a.name not in given else []
        given.add(a.name)
        findings.append(finding(
            source, *_site(word),
            f"`{word.text}` is the only GPU compiler here; ROCm builds need a `hipcc` path.",
            _nvcc_assignment_fix(source, a, add_root=not sets_root and not findings),
            related=tuple(Related(source.location(*_site(w)), f"`{w.text}` runs nvcc here") for w in runs)))
    if findings:
        return findings
    for command in mk.commands:
        if _names_nvcc(mk, command.program):
            return [finding(
                source, *_site(command.program),
                f"`{command.program.text}` is the only GPU compiler here; ROCm builds need a `hipcc` path.",
                Fix.advice("Set `HIPCC ?= $(ROCM_PATH)/bin/hipcc` and run `$(HIPCC)` here when "
                           "`ifneq ($(wildcard $(ROCM_PATH)/bin/hipcc),)`, keeping `nvcc` in the `else` arm"))]
    return []


def has_hip_path(mk: Makefile) -> bool:
    """Does the Makefile name hipcc or a HIP compile anywhere, in any branch?"""
    if any(_HIP_WORD.search(text) for text in mk.code_texts()):
        return True
    if any(_HIP_OR_ROCM.search(w.text) for w in mk.includes):
        return True  # `include hip.mk`: the HIP path lives there
    for words in [a.words for a in mk.assignments] + [c.words for c in mk.commands]:
        for first, second in zip(words, words[1:]):
            if first.text == "-x" and second.text == "hip":
                return True
    return any(w.text == "-xhip" for w in mk.code_words())


def _names_nvcc(mk: Makefile, word: Word) -> bool:
    """`nvcc`, `$(CUDA_PATH)/bin/nvcc`, `$(shell which nvcc)`; not `$(NVCC)` (set elsewhere)."""
    node = word.reference
    if node is not None and node.type != "shell_function":
        return False
    return mk.programs(word) == {NVCC}


def _nvcc_assignment_fix(source: SourceFile, a, add_root: bool) -> Fix:
    title = (f"Pick hipcc when ROCm is installed: `{_HIPCC_TEST}` / `{a.name} {a.operator} "
             f"$(ROCM_PATH)/bin/hipcc` / `else` / the `nvcc` line / `endif`")
    if not a.top_level:
        return Fix.advice(title)
    start, end = a.node.start_byte, a.node.end_byte
    line_start = source.line_start(source.line_of(start))
    indent = source.data[line_start:start].decode("utf-8", errors="replace")
    if indent.strip():
        return Fix.advice(title)
    original = source.data[start:end].decode("utf-8", errors="replace").rstrip("\n")
    end = min(start + len(original.encode()) + 1, len(source.data))  # keep blank lines after it
    if original.endswith("\\"):  # a continuation into nothing: copied, it would swallow `endif`
        original = original[:-1].rstrip()
    lines = [_ROCM_ROOT_LINE] if add_root else []
    lines += [_HIPCC_TEST, f"{a.name} {a.operator} $(ROCM_PATH)/bin/hipcc", "else", original, "endif"]
    return Fix.unsafe(title, Edit(line_start, end, "".join(f"{indent}{line}\n" for line in lines)))


# ---- B001 nvcc-only-flag (Makefiles) --------------------------------------------------------
_HIP_FLAG_VARIABLE = re.compile(r"HIP(?:CC)?_?(?:COMPILE_)?FLAGS", re.IGNORECASE)


def check_nvcc_only_flag(source: SourceFile) -> list[Finding]:
    """nvcc flags that reach hipcc; in a Makefile with no HIP path at all, the nvcc flags of
    its nvcc commands, which the hipcc build it needs would reject or ignore."""
    lowered = _lower(source)
    if b"hipcc" not in lowered and b"amdclang" not in lowered:
        return _nvcc_flags_without_hip_path(source) if b"nvcc" in lowered else []
    mk = read(source)
    if not has_hip_path(mk):  # `hipcc` only in comments
        return _nvcc_flags_without_hip_path(source)
    reaching: dict[int, Word] = {}
    for command, _ in _hip_commands(mk):
        for word in _command_words(mk, command, HIP_COMPILERS).words:
            reaching.setdefault(word.start, word)
    for a in mk.assignments:
        if _HIP_FLAG_VARIABLE.fullmatch(a.name):
            for word in mk.expand(a.words).words:
                reaching.setdefault(word.start, word)
    findings = []
    for word, flag in _nvcc_only_words(reaching):
        token = flag.spelling
        if flag.replacement is not None:
            title = f"Replace `{token}` with `{flag.replacement}` for hipcc; keep `{token}` only where nvcc compiles"
        else:
            title = f"For hipcc, {flag.rocm}; keep `{token}` only where nvcc compiles"
        findings.append(finding(
            source, word.start, word.end,
            f"`{token}` reaches hipcc, {flag.effect.format(flag='it')}.",
            Fix.advice(title), severity=flag.severity()))
    return findings


def _nvcc_only_words(reaching: dict[int, Word]):
    """(word, flag) for each word (by offset, in file order) that is an nvcc-only flag."""
    for start in sorted(reaching):
        word = reaching[start]
        flag = nvcc_flags.classify(word.text.strip("\"'"))
        if flag is not None:
            yield word, flag


def _nvcc_flags_without_hip_path(source: SourceFile) -> list[Finding]:
    mk = read(source)
    if has_hip_path(mk):
        return []
    reaching: dict[int, Word] = {}
    for command in mk.commands:
        if NVCC in mk.command_programs(command):
            for word in _command_words(mk, command, frozenset({NVCC})).words:
                reaching.setdefault(word.start, word)
    findings = []
    for word, flag in _nvcc_only_words(reaching):
        token = flag.spelling
        title = (f"Add a hipcc arm whose flags use `{flag.replacement}` for `{token}`" if flag.replacement
                 else f"Add a hipcc arm; there, {flag.rocm}")
        findings.append(finding(
            source, word.start, word.end,
            f"`{token}` is an nvcc-only flag and this Makefile has no hipcc path: hipcc, "
            f"{flag.effect.format(flag='it')}.", Fix.advice(title)))
    return findings


# ---- B007 nvidia-smi-query ------------------------------------------------------------------
# `nvidia-smi --query-gpu=compute_cap ...`, `nvidia-smi -L`: a query, not a test for the tool.
_NVIDIA_SMI_QUERY = re.compile(rb"nvidia-smi(?:\.exe)?[ \t]+-")
# Any of these in the file is a ROCm query next to it.
_ROCM_QUERY = re.compile(r"rocminfo|rocm-smi|amd-smi|rocm_agent_enumerator|amdgpu-arch|offload-arch=native")


def check_nvidia_smi_query(source: SourceFile) -> list[Finding]:
    if b"nvidia-smi" not in source.data:
        return []
    mk = read(source)
    if any(_ROCM_QUERY.search(text) for text in mk.code_texts()):
        return []
    findings = []
    for m in _NVIDIA_SMI_QUERY.finditer(source.data):
        line_start = source.line_start(source.line_of(m.start()))
        before = source.data[line_start:m.start()]
        if b"#" in before or re.search(rb"\$\((?:info|warning|error)\b|\becho\b", before):
            continue  # a comment, or a message that names the tool
        findings.append(finding(
            source, m.start(), m.start() + len(b"nvidia-smi"),
            "`nvidia-smi` queries NVIDIA GPUs only; on an AMD host it is missing and the value is empty.",
            Fix.advice("On ROCm, query `rocminfo` (`rocminfo | grep -m1 -o 'gfx[0-9a-f]*'`) or "
                       "`amd-smi`, or take the targets from `PYTORCH_ROCM_ARCH`/`--offload-arch`")))
    return findings


# ---- L001 cuda-library (Makefiles) ----------------------------------------------------------
_LINK_NAME_BYTES = tuple(
    name.lower().encode() for lib in CUDA_LIBRARIES + CUDA_RUNTIME_LIBRARIES for name in lib.link_names)
# Link names the library table does not give as `hip_library`/`hip_package`.
_ROCM_LINK_NAME = {"the CUDA runtime": "amdhip64", "NVRTC": "hiprtc"}


def check_cuda_library(source: SourceFile) -> list[Finding]:
    """`-lcublas` and `libcublas.so` in compile and link lines, and search paths into a CUDA
    library's tree (`-I.../cudnn-frontend/include`)."""
    lowered = _lower(source)
    if not any(name in lowered for name in _LINK_NAME_BYTES + (b"cutlass",)):
        return []
    mk = read(source)
    dirs = _library_dir_findings(source, mk)
    words = [(w, id(a)) for a in mk.assignments if a.live for w in a.words]
    for command in mk.commands:  # compile and link commands, not `cp` or `echo`
        programs = mk.command_programs(command)
        if programs & (HIP_COMPILERS | {NVCC, ""}) or any(_HOST_LINKER.fullmatch(p) for p in programs):
            words.extend((w, id(command)) for w in command.words)
    # Link flags made from a list (`$(LIBRARIES:%=-l%)`, `$(addprefix -l,$(LIBS))`): the
    # names where the list is written, as the flags they become.
    words.extend((made, owner) for word, owner in list(words) if word.reference is not None
                 for made in mk.expand([word]).words if made.start != word.start)
    # One root cause per assignment or command (`LIBS = -lcudart -lcublas -lcusparse`): the
    # libraries it links, one finding at the first, the others related.
    by_owner: dict[int, list] = {}
    seen = set()
    for word, owner in sorted(words, key=lambda w: w[0].start):
        text = word.text.strip("\"'")
        if (word.start, text) in seen:
            continue
        seen.add((word.start, text))
        m = _LIB_FLAG.fullmatch(text) or _LIB_FILE.fullmatch(text)
        lib = library_for_link_name(m.group(1)) if m else None
        if lib is not None:
            by_owner.setdefault(owner, []).append((word, text, lib))
    findings = [_libraries_finding(source, linked) for linked in by_owner.values()]
    return sorted(findings + dirs, key=lambda f: f.location.start_byte)


def _libraries_finding(source: SourceFile, linked: list) -> Finding:
    (word, text, lib), others = linked[0], linked[1:]
    message = link_message([(t, library) for _, t, library in linked])
    if not others:
        return finding(source, word.start, word.end, message, _library_fix(text, lib), severity=lib.severity)
    severity = max((library.severity for _, _, library in linked), key=lambda s: s.rank)
    related = tuple(Related(source.location(w.start, w.end), f"`{t}` is linked here too") for w, t, _ in others)
    return finding(source, word.start, word.end, message,
                   Fix.advice("; ".join(_library_fix(t, library).title for _, t, library in linked)),
                   severity=severity, related=related)


# `-I.../cudnn-frontend/include`, `-L"C:\Program Files\NVIDIA\CUDNN\v9.1\lib"`, `-I$(NCCL_HOME)/include`:
# a search path into a CUDA library's install or source tree (names as the library spells its dirs).
_LIBRARY_DIR = re.compile(r"-(?:I|L|isystem)\s*(\"[^\"]*\"|'[^']*'|\S+)")
_LIBRARY_DIR_NAMES = (("cudnn-frontend", "cuDNN frontend"), ("cudnn_frontend", "cuDNN frontend"),
                      ("cudnn", "cuDNN"), ("nccl", "NCCL"), ("cutlass", "CUTLASS"), ("nvtx", "NVTX"))
_LIBRARIES_BY_NAME = {lib.name: lib for lib in CUDA_LIBRARIES}


def _library_dir_findings(source: SourceFile, mk: Makefile) -> list[Finding]:
    spans = [(a.words[0].start, a.words[-1].end) for a in mk.assignments if a.live and a.words]
    spans += [(c.words[0].start, c.words[-1].end) for c in mk.commands if c.program.text not in _PRINTERS]
    texts = [source.data[start:end].decode("utf-8", errors="replace") for start, end in sorted(set(spans))]
    words = {w.lower().removeprefix("-l") for text in texts for w in text.split()}
    findings = []
    for (start, _), text in zip(sorted(set(spans)), texts):
        for m in _LIBRARY_DIR.finditer(text):
            path = m.group(1).lower()
            name = next((lib for key, lib in _LIBRARY_DIR_NAMES if key in path), None)
            if name is None:
                continue
            lib = _LIBRARIES_BY_NAME[name]
            if (lib.drop_in_header or lib.same_headers) and _rocm_link_name(lib) in words:
                continue  # `NCCL_HOME` in a build that links RCCL: where that drop-in port is installed
            at = start + len(text[:m.start()].encode())
            shown = m.group()
            findings.append(finding(
                source, at, at + len(shown.encode()),
                f"`{shown}` searches {lib.name}'s directory; ROCm builds have no {lib.name}"
                + (f" ({lib.counterpart} is installed under `$(ROCM_PATH)`)." if lib.counterpart else "."),
                Fix.advice(f"On the ROCm path use `-I$(ROCM_PATH)/include` / `-L$(ROCM_PATH)/lib`: {lib.port}"),
                severity=lib.severity))
    return findings


def _rocm_link_name(lib: CudaLibrary) -> str | None:
    return _ROCM_LINK_NAME.get(lib.name) or lib.hip_library or lib.hip_package


def _library_fix(text: str, lib: CudaLibrary) -> Fix:
    rocm = _rocm_link_name(lib)
    if rocm is None:
        return Fix.advice(f"Link {lib.counterpart or 'the ROCm port'} instead of `{text}` on the ROCm path")
    return Fix.advice(f"Link {lib.counterpart}'s `-L$(ROCM_PATH)/lib -l{rocm}` instead of `{text}` "
                      "on the ROCm path")


# ---- B004 cuda-toolkit-path (Makefiles) -----------------------------------------------------
_CUDA_ROOTS = _CUDA_ROOT_NAMES | {"CUDA_DIR", "CUDA_INSTALL_PATH", "CUDA_TOOLKIT_PATH"}
_CUDA_PATH_BYTES = (b"/usr/local/cuda",) + tuple(n.encode() for n in _CUDA_ROOTS)
_TOOLKIT_PATH_FIX = ("Set `ROCM_PATH ?= /opt/rocm` and use `$(ROCM_PATH)` on the ROCm path; "
                     "`unset CUDA_HOME` in ROCm builds")


def check_cuda_toolkit_path(source: SourceFile) -> list[Finding]:
    data = source.data
    if not any(b in data for b in _CUDA_PATH_BYTES):
        return []
    mk = read(source)
    if any(_ROCM_FALLBACK.search(text) for text in mk.code_texts()):
        return []
    sites = [a.words for a in mk.assignments]
    sites += [c.words for c in mk.commands if c.program.text not in _PRINTERS]
    findings = []
    for words in sites:
        culprit = next((c for w in words if not is_library_search_flag(w.text)
                        for c in _toolkit_path_culprits(source, w, mk.by_name.keys())), None)
        if culprit is not None:
            start, end, message = culprit
            findings.append(finding(source, start, end, message, Fix.advice(_TOOLKIT_PATH_FIX)))
    return sorted(findings, key=lambda f: f.location.start_byte)


def _toolkit_path_culprits(source: SourceFile, word: Word, assigned=frozenset()):
    found = []
    for node, name in references_under(source, word):
        # (a test of a variable the file gives a value itself, `CUDA_PATH ?= ...`, always holds)
        if name in _CUDA_ROOTS and (name in assigned or not set_by_its_test(source, node, name)):
            text = source.node_text(node)
            found.append((node.start_byte, node.end_byte,
                          f"`{text}` without a `ROCM_PATH` fallback finds no toolkit on ROCm."))
    for m in _HARD_CODED_CUDA.finditer(word.text):
        start = word.start + len(word.text[:m.start()].encode())
        found.append((start, start + len(m.group().encode()),
                      f"Hard-coded `{m.group()}` has no `ROCM_PATH` fallback; ROCm is in `/opt/rocm`."))
    return sorted(found)


# ---- B006 hip-runtime-not-linked ------------------------------------------------------------
_HIP_RUNTIME = re.compile(r"-lamdhip64|-lhip_hcc|-lgalaxyhip|-l:libamdhip64\S*|\S*libamdhip64\.(?:so|a)\S*|"
                          r"--hip-link|hip::host")
_RUNTIME_VARIABLE = re.compile(r"HIP|ROCM|AMD", re.IGNORECASE)


def check_hip_runtime_not_linked(source: SourceFile) -> list[Finding]:
    lowered = _lower(source)
    if (b"hipcc" not in lowered and b"amdclang" not in lowered) or b"-c" not in lowered:
        return []
    mk = read(source)
    exact, patterns = _hip_objects(mk)
    if not exact and not patterns:
        return []
    root = "ROCM_PATH" if mk.is_set("ROCM_PATH") or not mk.is_set("HIP_PATH") else "HIP_PATH"
    link_flags = f"-L$({root})/lib -lamdhip64"
    findings = []
    for command in mk.commands:
        programs = mk.command_programs(command)
        if not programs or not all(_HOST_LINKER.fullmatch(p) for p in programs):
            continue
        expansion = _command_words(mk, command, frozenset(programs))
        words = expansion.words
        texts = {w.text for w in words}
        if texts & {"-c", "-E", "-S", "-M", "-MM"}:
            continue
        hip_inputs = [w for w in _inputs(mk, command, words) if _is_hip_object(w.text, exact, patterns)]
        if not hip_inputs:
            continue
        if any(_HIP_RUNTIME.fullmatch(w.text.strip("\"'")) for w in words):
            continue
        if _suspicious_unset(mk, expansion, _RUNTIME_VARIABLE):
            continue
        program = command.program
        findings.append(finding(
            source, *_site(program),
            f"`{program.text}` links `hipcc -c` objects without `-lamdhip64`; HIP symbols stay undefined.",
            Fix.unsafe(f"Link with hipcc, or add `{link_flags}` to this link command",
                       Edit.insert(command.words[-1].end, f" {link_flags}"))))
    return findings


def _hip_objects(mk: Makefile) -> tuple[set[str], list[str]]:
    """Object files that hipcc compiles: exact names and `%` patterns (`%.o`, `obj/%.o`)."""
    exact: set[str] = set()
    patterns: list[str] = []
    for command, _ in _hip_commands(mk):
        words = _command_words(mk, command, HIP_COMPILERS).words
        texts = [w.text for w in words]
        if "-c" not in texts:
            continue
        if "-o" in texts and texts.index("-o") + 1 < len(texts):
            output = texts[texts.index("-o") + 1]
            if output != "$@":
                exact.add(output)
        elif "-o" not in texts:
            for text in texts:
                if text.endswith(_SOURCE_SUFFIXES) and not text.startswith("-"):
                    exact.add(text.rsplit("/", 1)[-1].rsplit(".", 1)[0] + ".o")
        rule = command.rule
        if rule is not None:
            for word in mk.expand(rule.targets).words + rule.target_patterns:
                if "%" in word.text:
                    patterns.append(word.text)
                else:
                    exact.add(word.text)
    return exact, patterns


def _is_hip_object(text: str, exact: set[str], patterns: list[str]) -> bool:
    if text in exact:
        return True
    for pattern in patterns:
        head, _, tail = pattern.partition("%")
        if text.endswith(tail) and len(text) > len(tail) and ("$" in head or text.startswith(head)):
            return True
    return False


# ---- R003 missing-offload-arch (Makefiles) --------------------------------------------------
# Environment knobs hipcc reads its targets from.
_ARCH_ENVIRONMENT = frozenset({"HCC_AMDGPU_TARGET", "HIPCC_COMPILE_FLAGS_APPEND", "HIP_OFFLOAD_ARCH"})
_ARCH_VARIABLE = re.compile(r"HIP|ROCM|AMD|ARCH|TARGET|GPU|OFFLOAD", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"gfx000")
_ARCH_FIX = ("Add `--offload-arch=gfx90a --offload-arch=gfx942` (the GPUs you ship for) to this hipcc "
             "command, e.g. through `HIPFLAGS`")


def check_missing_offload_arch(source: SourceFile) -> list[Finding]:
    lowered = _lower(source)
    has_hip = b"hipcc" in lowered or b"amdclang" in lowered
    if not has_hip and b"gfx000" not in lowered:
        return []
    mk = read(source)
    findings = []
    if has_hip and not any(mk.by_name.get(name) for name in _ARCH_ENVIRONMENT):
        for command, _ in _hip_commands(mk):
            expansion = _command_words(mk, command, HIP_COMPILERS)
            words = expansion.words
            if not _compiles(mk, command, words):
                continue
            if any(_names_target(w) for w in words + expansion.opaque):
                continue
            if _suspicious_unset(mk, expansion, _ARCH_VARIABLE):
                continue
            program = command.program
            findings.append(finding(  # the builder's choice (`HIPFLAGS=...`), as in CMake: a note
                source, *_site(program),
                f"`{program.text}` compiles with no `--offload-arch`, so whoever builds must pass the targets; "
                "without them, code runs only on the build host's GPU.",
                Fix.advice(_ARCH_FIX), severity=Severity.NOTE))
    for word in _target_words(mk):
        for m in _PLACEHOLDER.finditer(word.text):
            start = word.start + len(word.text[:m.start()].encode())
            findings.append(finding(
                source, start, start + 6,
                "`gfx000` is the target of a GPU-less host; no AMD GPU can load this code.",
                Fix.advice("Replace `gfx000` with real targets, e.g. `--offload-arch=gfx90a --offload-arch=gfx942`")))
    return sorted(findings, key=lambda f: f.location.start_byte)


def _names_target(word: Word) -> bool:
    """`--offload-arch=gfx90a`, `--amdgpu-target=...`, also inside `$(foreach ...)`."""
    text = word.text.strip("\"'")
    return nvcc_flags.is_offload_arch(text) or "offload-arch" in text or "amdgpu-target" in text


def _target_words(mk: Makefile) -> list[Word]:
    """Words that may name a GPU target: values, flags, and hipcc's arguments; not the
    arguments of other programs (`grep gfx000`) or of `$(shell ...)`."""
    words = [w for a in mk.assignments if a.live for w in a.words]
    hip = {id(c) for c, _ in _hip_commands(mk)}
    for command in mk.commands:
        words.extend(w for w in command.words[1:] if id(command) in hip or w.text.startswith("-"))
    unique = {w.start: w for w in words if w.reference is None}
    return [unique[k] for k in sorted(unique)]
