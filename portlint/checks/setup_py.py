"""Y, and the setup.py side of B and L: PyTorch-extension builds that break on ROCm.

On a ROCm build of PyTorch, `torch.utils.cpp_extension` compiles `.cu`/`.hip` sources with
hipcc and hands it the `nvcc` list of `extra_compile_args`; C++ sources get the `cxx` list
and GCC; `BuildExtension` adds `-DUSE_ROCM=1 -D__HIP_PLATFORM_AMD__=1` and takes the gfx
targets from `PYTORCH_ROCM_ARCH`. What reaches which argument is read by `python_build`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from portlint.checks import nvcc_flags
from portlint.checks import requirements as requirements_py
from portlint.checks.libraries import is_library_search_flag, library_for_link_name
from portlint.checks.python_build import BuildScript, StringArg, callee_name, dotted_name, string_template
from portlint.finding import Finding, Related, Severity, finding
from portlint.fix import Edit, Fix
from portlint.rocm_path import python_condition
from portlint.source import SourceFile, module_nodes

ROCM_NVCC_LIST = "['-O3', '-DUSE_ROCM', '--offload-arch=gfx90a']"


def _words(args: list[StringArg], seen: set[tuple[int, int]]):
    """(string, word, index) for each word of `args` not yet seen (lists are shared by extensions)."""
    for arg in args:
        for word, index in arg.tokens():
            if (arg.start, index) not in seen:
                seen.add((arg.start, index))
                yield arg, word, index


def _flag_finding(source: SourceFile, arg: StringArg, index: int, token: str, message: str, fix: Fix,
                  **kwargs) -> Finding:
    start, end = arg.token_range(index, token)
    return finding(source, start, end, message, fix, **kwargs)


# ---- Y001 cudaextension-nvcc-args -----------------------------------------------------------
def check_cudaextension_nvcc_args(source: SourceFile) -> list[Finding]:
    if b"nvcc" not in source.data and b"offload-arch" not in source.data:
        return []
    script = BuildScript(source)
    findings, seen_nvcc, seen_gcc = [], set(), set()
    for call in script.extension_calls():
        by_compiler = script.compile_args(call)
        for arg, token, index in _words(by_compiler.get("nvcc", []), seen_nvcc):
            flag = nvcc_flags.classify(token)
            if flag is not None:
                findings.append(_nvcc_flag_finding(source, arg, index, flag))
        # The `cxx` list, and a plain list (given to both compilers), reach GCC.
        for arg, token, index in _words(by_compiler.get("cxx", []) + by_compiler.get("all", []), seen_gcc):
            if nvcc_flags.is_offload_arch(token):
                findings.append(_flag_finding(
                    source, arg, index, token,
                    f"GCC compiles the `cxx` list and rejects `{token}`; hipcc never sees it.",
                    Fix.advice(f"Move `{token}` to the `nvcc` list, which hipcc compiles on ROCm")))
    return findings


def _nvcc_flag_finding(source: SourceFile, arg: StringArg, index: int, flag: nvcc_flags.NvccFlag) -> Finding:
    token = flag.spelling
    message = f"On ROCm the `nvcc` list goes to hipcc, {flag.effect.format(flag=f'`{token}`')}."
    branch = f"`'nvcc': {ROCM_NVCC_LIST} if torch.version.hip else [...]`"
    hip_test = _hip_test_name(source)
    if flag.replacement is not None and arg.value_start is not None and arg.value.strip() == token and hip_test:
        # A ROCm arm in place of the literal: the CUDA build keeps its flag, hipcc gets clang's.
        quote = source.data[arg.start:arg.start + 1].decode()
        arm = f"{quote}{flag.replacement}{quote} if {hip_test} else {source.data[arg.start:arg.end].decode()}"
        fix = Fix.unsafe(f"Keep `{token}` for nvcc and give hipcc `{flag.replacement}`: `{arm}`",
                         Edit(arg.start, arg.end, arm))
    else:
        fix = Fix.advice(f"Branch on `torch.version.hip` and, for hipcc, {flag.rocm}: {branch}")
    return _flag_finding(source, arg, index, token, message, fix, severity=flag.severity())


def _hip_test_name(source: SourceFile) -> str | None:
    """An expression true on a ROCm build that the script can already evaluate: its own
    `IS_HIP_EXTENSION` import, else `torch.version.hip` where `torch` is imported."""
    tree = source.python_ast
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(a.name == "IS_HIP_EXTENSION" and a.asname is None for a in node.names):
            return "IS_HIP_EXTENSION"
    for node in tree.body:
        if isinstance(node, ast.Import) and any(a.name == "torch" and a.asname is None for a in node.names):
            return "torch.version.hip"
    return None


# ---- B001 nvcc-only-flag (setup.py) ----------------------------------------------------------
# Y001 owns the `nvcc` list of `extra_compile_args`; B001 owns every other way an nvcc-only flag
# leaves a build script. A string that reaches both is reported once, as Y001.
JIT_LOADERS = frozenset({"load", "load_inline"})
NVCC_ENV_VARIABLES = frozenset({"NVCC_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS"})
CUDA_FLAG_VARIABLES = frozenset({"CMAKE_CUDA_FLAGS", "CUDA_NVCC_FLAGS"})
HIP_FLAG_VARIABLES = frozenset({"CMAKE_HIP_FLAGS", "HIP_HIPCC_FLAGS"})
# `-DCMAKE_CUDA_FLAGS=...`, `-DCMAKE_CUDA_FLAGS:STRING=...`, `-DCMAKE_CUDA_FLAGS_RELEASE=...`
_CMAKE_DEFINE = re.compile(r"-D([A-Z_]+?)(?:_(?:DEBUG|RELEASE|RELWITHDEBINFO|MINSIZEREL))?(?::[A-Z]+)?=")


def check_nvcc_only_flag(source: SourceFile) -> list[Finding]:
    data = source.data
    if not any(m in data for m in (b"extra_link_args", b"extra_ldflags", b"extra_cuda_cflags", b"_FLAGS")):
        return []
    script = BuildScript(source)
    seen = _nvcc_list_words(script)  # Y001 reports these
    findings = []

    def flags(args: list[StringArg]):
        for arg, token, index in _words(args, seen):
            flag = nvcc_flags.classify(token)
            if flag is not None:
                yield arg, index, flag

    for call in script.calls(JIT_LOADERS):
        for arg, index, flag in flags(script.strings(script.argument(call, "extra_cuda_cflags"))):
            findings.append(_flag_finding(
                source, arg, index, flag.spelling,
                f"On ROCm `extra_cuda_cflags` go to hipcc, {flag.effect.format(flag=f'`{flag.spelling}`')}.",
                Fix.advice(f"Branch on `torch.version.hip` and, for hipcc, {flag.rocm}: "
                           f"`extra_cuda_cflags={ROCM_NVCC_LIST} if torch.version.hip else [...]`"),
                severity=flag.severity(Severity.WARNING)))
    link_args = [a for call in script.calls(JIT_LOADERS) for a in script.strings(script.argument(call, "extra_ldflags"))]
    link_args += [a for call in script.extension_calls() for a in script.strings(script.argument(call, "extra_link_args"))]
    for arg, index, flag in flags(sorted(link_args, key=lambda a: a.start)):
        findings.append(_flag_finding(
            source, arg, index, flag.spelling,
            f"`{flag.spelling}` is nvcc-only; the ROCm link step (hipcc or GCC) rejects it.",
            Fix.advice(f"Link with it only when `not torch.version.hip`; for ROCm, {flag.rocm}"),
            severity=Severity.WARNING))
    findings += _cmake_flag_findings(script, seen)
    findings += _nvcc_env_findings(script, seen)
    return sorted(findings, key=lambda f: f.location.start_byte)


def _nvcc_list_words(script: BuildScript) -> set[tuple[int, int]]:
    """(string start, word index) of every word in an extension's `nvcc` list (Y001's)."""
    seen: set[tuple[int, int]] = set()
    for call in script.extension_calls():
        for _ in _words(script.compile_args(call).get("nvcc", []), seen):
            pass
    return seen


def _cmake_flag_findings(script: BuildScript, seen: set[tuple[int, int]]) -> list[Finding]:
    """nvcc-only flags in `-DCMAKE_CUDA_FLAGS=...` (and HIP) strings given to CMake."""
    strings = script.string_constants()
    defines = []
    for arg in strings:
        m = _CMAKE_DEFINE.match(arg.value)
        if m is not None and m.group(1) in CUDA_FLAG_VARIABLES | HIP_FLAG_VARIABLES:
            defines.append((arg, m))
    # With HIP flags given too, or a ROCm path in the script, the CUDA ones are the CUDA build's own.
    hip_given = any(m.group(1) in HIP_FLAG_VARIABLES for _, m in defines) or bool(rocm_path_markers(script))
    out = []
    for arg, m in defines:
        variable = m.group(1)
        if variable in CUDA_FLAG_VARIABLES and hip_given:
            continue
        for token, index in arg.tokens():
            if index == 0:
                token, index = token[m.end():], m.end()
            token_start = index + (len(token) - len(token.lstrip("'\"")))
            token = token.strip("'\"")
            flag = nvcc_flags.classify(token)
            if flag is None or (arg.start, token_start) in seen:
                continue
            seen.add((arg.start, token_start))
            if variable in HIP_FLAG_VARIABLES:
                message = f"`{variable}` goes to hipcc, {flag.effect.format(flag=f'`{token}`')}."
                advice = f"For hipcc, {flag.rocm}"
            else:
                message = f"nvcc-only `{token}` in `{variable}`; ROCm builds need `CMAKE_HIP_FLAGS`."
                advice = f"Pass `-DCMAKE_HIP_FLAGS=...` on the ROCm path; for hipcc, {flag.rocm}"
            severity = Severity.NOTE if flag.harmless else \
                Severity.ERROR if flag.picks_target and variable in HIP_FLAG_VARIABLES else Severity.WARNING
            out.append(_flag_finding(script.source, arg, token_start, token, message, Fix.advice(advice),
                                     severity=severity))
    return out


def _nvcc_env_findings(script: BuildScript, seen: set[tuple[int, int]]) -> list[Finding]:
    """nvcc-only flags put in `NVCC_APPEND_FLAGS`/`NVCC_PREPEND_FLAGS`/`NVCC_FLAGS`: hipcc never
    reads them, so on ROCm the flag's purpose (fast math, targets, line info) is lost."""
    out = []
    for variable, value in _env_assignments(script):
        for arg, token, index in _words(script.strings(value), seen):
            flag = nvcc_flags.classify(token)
            if flag is None or flag.rocm.startswith("drop it"):
                continue  # nothing to carry over to hipcc
            if flag.picks_target:
                advice = "Choose the ROCm targets with `PYTORCH_ROCM_ARCH` (e.g. `gfx90a;gfx942`) on the ROCm path"
            else:
                advice = ("Give hipcc its own flags on the ROCm path "
                          f"(`os.environ['HIPCC_COMPILE_FLAGS_APPEND']`): {flag.rocm}")
            out.append(_flag_finding(
                script.source, arg, index, token,
                f"Only nvcc reads `{variable}`; on ROCm `{token}` is silently lost.",
                Fix.advice(advice), severity=Severity.WARNING))
    return out


def _env_assignments(script: BuildScript):
    """(variable, value) for `os.environ["NVCC_APPEND_FLAGS"] = v` (`+=`), `.setdefault(K, v)`,
    `.update(K=v)`, `os.putenv(K, v)` and `{"NVCC_APPEND_FLAGS": v}` dicts (an `env=` mapping),
    outside CUDA-only code."""
    for node in module_nodes(script.tree):
        if not isinstance(node, (ast.Assign, ast.AugAssign, ast.Call, ast.Dict)) or script.is_dead(node):
            continue
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript) and _env_key(target.slice) is not None:
                    yield _env_key(target.slice), node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method = node.func.attr
            if method in ("setdefault", "putenv") and len(node.args) == 2 and _env_key(node.args[0]) is not None:
                yield _env_key(node.args[0]), node.args[1]
            elif method == "update":
                for kw in node.keywords:
                    if kw.arg in NVCC_ENV_VARIABLES:
                        yield kw.arg, kw.value
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if key is not None and _env_key(key) is not None and not script.is_dead(value):
                    yield _env_key(key), value


def _env_key(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and node.value in NVCC_ENV_VARIABLES else None


# ---- Y002 cuda-toolkit-probe ----------------------------------------------------------------
NVCC_NAMES = frozenset({"nvcc", "nvcc.exe"})
SUBPROCESS_RUNS = frozenset({
    "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
    "subprocess.Popen", "subprocess.getoutput", "subprocess.getstatusoutput", "os.popen",
})
PATH_JOINS = frozenset({"join", "joinpath", "_join_cuda_home"})
CUDA_VERSION = "torch.version.cuda"
# Calls that fail on None: `int(torch.version.cuda[0])`, `LooseVersion(torch.version.cuda)`.
VERSION_READERS = frozenset({"int", "float", "len", "tuple", "list", "LooseVersion", "StrictVersion", "Version",
                             "parse", "parse_version", "TorchVersion"})
# Handlers that keep a failed probe from stopping setup (unless they raise again).
PROBE_ERRORS = frozenset({"Exception", "BaseException", "OSError", "EnvironmentError", "IOError",
                          "FileNotFoundError", "CalledProcessError", "SubprocessError", "TypeError", "AttributeError"})
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_ROCM_PROBE = ("Branch on `torch.version.hip` and ask ROCm there: "
               "`subprocess.check_output([os.path.join(ROCM_HOME, 'bin', 'hipconfig'), '--version'])`")
_ROCM_VERSION = ("Branch on `torch.version.hip` first; on ROCm read `torch.version.hip` instead, "
                 "e.g. `tuple(int(v) for v in torch.version.hip.split('.')[:2])`")


def check_cuda_toolkit_probe(source: SourceFile) -> list[Finding]:
    if b"nvcc" not in source.data and b"version.cuda" not in source.data and b"bare_metal" not in source.data:
        return []
    script = BuildScript(source)
    probes = _ToolkitProbes(script)
    findings, seen = [], set()
    by_list: dict[int, int] = {}  # a list or tuple of probes (nvcc's usual places) -> its finding
    for node, roots, message, advice in probes.candidates():
        start, end = script.range(node)
        if start in seen or not script.model.is_live(start) or probes.guarded(node, roots) or not probes.reached(node):
            continue
        seen.add(start)
        holder = script.parent(node)
        if isinstance(holder, (ast.List, ast.Tuple)) and id(holder) in by_list:
            # One root cause: the places the script looks for nvcc, the first one reported.
            first = findings[by_list[id(holder)]]
            findings[by_list[id(holder)]] = replace(first, related=(
                *first.related, Related(source.location(start, end), "another place it looks for nvcc")))
            continue
        if isinstance(holder, (ast.List, ast.Tuple)):
            by_list[id(holder)] = len(findings)
        findings.append(finding(source, start, end, message, Fix.advice(advice)))
    return findings


def nvcc_paths(script: BuildScript) -> list[ast.expr]:
    """Expressions that spell a path to nvcc: `os.path.join(CUDA_HOME, "bin", "nvcc")`,
    `CUDA_HOME + "/bin/nvcc"`, `f"{cuda_home}/bin/nvcc -V"`, `Path(root) / "bin" / "nvcc"`,
    `"/usr/local/cuda/bin/nvcc"` (a string whose first word is the path; prose that mentions
    one is not). Y002 reports them; B004 leaves the CUDA roots inside them alone."""
    out = []
    for node in module_nodes(script.tree):
        parent = script.parent(node)
        if isinstance(node, ast.Call) and callee_name(node) in PATH_JOINS and node.args:
            last = string_template(node.args[-1])
            if last is not None and _last_component(last) in NVCC_NAMES:
                out.append(node)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            right = string_template(node.right)
            if (right is not None and _last_component(right) in NVCC_NAMES
                    and not (isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div))):
                out.append(node)
        elif string_template(node) is not None and not _inside_string(script, node):
            # The string is a path or a command (`{}/bin/nvcc -V`, `CUDACXX={}/bin/nvcc`), not prose.
            words = string_template(node).split()
            if words and _is_nvcc_path(words[0]):
                out.append(node)
    return out


def _last_component(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def _is_nvcc_path(word: str) -> bool:
    """`/usr/local/cuda/bin/nvcc`, `{}/bin/nvcc`, `-DCMAKE_CUDA_COMPILER={}/bin/nvcc`."""
    value = word.rsplit("=", 1)[-1]
    return ("/" in value or "\\" in value) and _last_component(value) in NVCC_NAMES


def _inside_string(script: BuildScript, node: ast.AST) -> bool:
    """Part of a larger string expression (an f-string piece, a `+` operand, a `.format` receiver)."""
    parent = script.parent(node)
    if isinstance(parent, ast.JoinedStr) or (isinstance(parent, ast.FormattedValue)):
        return True
    if isinstance(parent, ast.BinOp) and string_template(parent) is not None:
        return True
    if isinstance(parent, ast.Attribute) and isinstance(script.parent(parent), ast.Call):
        return string_template(script.parent(parent)) is not None
    return False


def _identifiers(node: ast.AST) -> set[str]:
    """Names, attribute names, dotted names and nvcc strings a test or expression mentions."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
            dotted = dotted_name(n)
            if dotted is not None:
                out.add(dotted)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and _last_component(n.value) in NVCC_NAMES:
            out.add("nvcc")
    return out


def _mentions_nvcc(identifiers: set[str]) -> bool:
    return any("nvcc" in re.split(r"[^a-z0-9]+", i.lower()) for i in identifiers)


# Calls that look a program up on PATH (`shutil.which("nvcc")`).
_PROGRAM_LOOKUPS = frozenset({"shutil.which", "distutils.spawn.find_executable", "find_executable"})


class _ToolkitProbes:
    """Where a build script asks the CUDA toolkit something, and whether ROCm builds get there."""

    def __init__(self, script: BuildScript):
        self.script = script
        self.imports = _import_names(script.tree)
        self._reached: dict[int, bool] = {}

    # ---- what is a probe ------------------------------------------------------------------
    def candidates(self):
        """(node, names that guard it, message, fix advice), in file order."""
        script = self.script
        out = []
        paths = nvcc_paths(script)
        path_ids = {id(p) for p in paths}
        for node in paths:
            out.append((node, _names_of(_path_root_node(node)) | {"nvcc"}, self._path_message(node), _ROCM_PROBE))
        for call in script.all_calls():
            name = self._canonical(call.func)
            if name in SUBPROCESS_RUNS:
                probe = self._nvcc_program(call, path_ids)
                if probe is not None:
                    program, words = probe
                    out.append((program, _names_of(program) | {"nvcc"},
                                f"`{words}` runs nvcc, absent on ROCm; setup fails.", _ROCM_PROBE))
            elif name in _PROGRAM_LOOKUPS and call.args and string_template(call.args[0]) in NVCC_NAMES \
                    and _lookup_decides_build(script, call):
                out.append((call, {"nvcc"},
                            f"`{name.rsplit('.', 1)[-1]}(\"nvcc\")` decides the build on finding nvcc, absent on "
                            "ROCm: setup fails there, or builds no GPU code.", _ROCM_PROBE))
            elif name is not None and _is_version_helper(callee_name(call)) and not script.functions(callee_name(call)):
                out.append((call, {"nvcc"},
                            f"`{callee_name(call)}()` runs nvcc, absent on ROCm; setup fails.",
                            "Call it only when `not torch.version.hip`; on ROCm read `torch.version.hip` "
                            "or `hipconfig --version`"))
        out.extend(self._cuda_version_reads())
        return sorted(out, key=lambda c: script.range(c[0])[0])

    def _path_message(self, node: ast.expr) -> str:
        text = " ".join(self.script.source.data[slice(*self.script.range(node))].decode("utf-8", "replace").split())
        if len(text) > 40:
            root = dotted_name(_path_root_node(node))
            text = f"{root.rsplit('.', 1)[-1]}/…/nvcc" if root else "…/nvcc"
        return f"`{text}` probes nvcc, absent on ROCm; setup fails."

    def _nvcc_program(self, call: ast.Call, path_ids: set[int]) -> tuple[ast.expr, str] | None:
        """(the program expression, `nvcc -V`) when `call` runs a bare `nvcc`."""
        command = call.args[0] if call.args else next(
            (kw.value for kw in call.keywords if kw.arg in ("args", "cmd", "command")), None)
        if isinstance(command, ast.Call) and self._canonical(command.func) == "shlex.split" and command.args:
            command = command.args[0]
        if command is None:
            return None
        leaves = self.script.values(command)
        if not leaves:
            return None
        program = leaves[0]
        resolved = self.script.assigned(program) if isinstance(program, ast.Name) else [program]
        for value in resolved:
            if id(value) in path_ids:
                return None  # reported as an nvcc path
            template = string_template(value)
            words = template.split() if template is not None else []
            if words and _last_component(words[0]) in NVCC_NAMES and not _is_nvcc_path(words[0]):
                more = words[1:2] if len(words) > 1 else [
                    w for leaf in leaves[1:2] for w in (string_template(leaf) or "").split()[:1]]
                return program, " ".join(["nvcc", *more])
        return None

    def _cuda_version_reads(self):
        """Reads of `torch.version.cuda` (or a name assigned it) as a string."""
        script = self.script
        alias_ids = {t.id for n in module_nodes(script.tree) if isinstance(n, ast.Assign) and dotted_name(n.value) == CUDA_VERSION
                     for t in n.targets if isinstance(t, ast.Name)}
        out = []
        for node in script.names():
            if isinstance(node, ast.Attribute) and dotted_name(node) == CUDA_VERSION:
                name = CUDA_VERSION
            elif (isinstance(node, ast.Name) and node.id in alias_ids
                  and any(dotted_name(v) == CUDA_VERSION for v in script.assigned(node))):
                name = node.id
            else:
                continue
            reader = self._version_reader(node)
            if reader is None:
                continue
            text = script.source.data[slice(*script.range(reader))].decode("utf-8", "replace")
            if name != CUDA_VERSION:
                message = f"`{name}` holds `torch.version.cuda`, None on ROCm; parsing it raises."
            elif len(text) <= 32:
                message = f"`{text}` raises on ROCm: `torch.version.cuda` is None."
            else:
                message = "Parsing `torch.version.cuda` raises on ROCm, where it is None."
            out.append((reader, {CUDA_VERSION, name}, message, _ROCM_VERSION))
        return out

    def _version_reader(self, node: ast.expr) -> ast.expr | None:
        """The expression that reads `node` (the CUDA version) as a string, or None."""
        parent = self.script.parent(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            grand = self.script.parent(parent)
            return grand if isinstance(grand, ast.Call) and grand.func is parent else parent
        if isinstance(parent, ast.Subscript) and parent.value is node:
            return parent
        if isinstance(parent, ast.Call) and node in parent.args and callee_name(parent) in VERSION_READERS:
            return parent
        if isinstance(parent, ast.Compare):
            operands = [parent.left, *parent.comparators]
            i = next(k for k, o in enumerate(operands) if o is node)
            ops = ([parent.ops[i - 1]] if i > 0 else []) + ([parent.ops[i]] if i < len(parent.ops) else [])
            if any(isinstance(op, _ORDERING) for op in ops) or (i > 0 and isinstance(parent.ops[i - 1], (ast.In, ast.NotIn))):
                return parent
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add):
            return parent
        return None

    # ---- does a ROCm build get there ------------------------------------------------------
    def guarded(self, node: ast.AST, roots: set[str]) -> bool:
        """Inside a test of what the probe needs (`if CUDA_HOME is not None:`, `shutil.which("nvcc")
        and ...`), after a ROCm-false operand (`not IS_HIP_EXTENSION and ...`), or in a `try`
        whose handler swallows the failure."""
        script = self.script
        child, current = node, script.parent(node)
        while current is not None:
            if isinstance(current, (ast.If, ast.IfExp, ast.While)) and child is not current.test:
                if self._tests(current.test, roots):
                    return True
                # An arm a ROCm build never takes, decided through the file's own helpers
                # (`elif _is_cuda():` where `_is_cuda()` returns `torch.version.cuda is not None`).
                body = current.body if isinstance(current.body, list) else [current.body]
                in_body = any(child is s for s in body)
                if rocm_truth(script, current.test) is (not in_body):
                    return True
            elif isinstance(current, ast.BoolOp):
                index = next(i for i, v in enumerate(current.values) if v is child)
                for earlier in current.values[:index]:
                    if self._tests(earlier, roots):
                        return True
                    if rocm_truth(script, earlier) is isinstance(current.op, ast.Or):
                        return True  # the probe is never evaluated on ROCm
            elif isinstance(current, ast.Try) and any(child is s for s in current.body):
                if any(_swallows(h) for h in current.handlers):
                    return True
            child, current = current, script.parent(current)
        return False

    def _tests(self, test: ast.expr, roots: set[str]) -> bool:
        mentioned = _identifiers(test)
        if mentioned & (roots - {"nvcc", "cuda"}):
            return True
        return "nvcc" in roots and _mentions_nvcc(mentioned)

    def reached(self, node: ast.AST) -> bool:
        """Module-level code, or a function that a ROCm build may call (any live call of it,
        from reached code, or no call in this file at all)."""
        function = self.script.function_of(node)
        if function is None or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return True
        key = id(function)
        if key in self._reached:
            return self._reached[key]
        self._reached[key] = False  # a recursive call does not reach it by itself
        script = self.script
        calls = [c for c in script.all_calls() if callee_name(c) == function.name]
        referenced = any(isinstance(n, ast.Name) and n.id == function.name and isinstance(n.ctx, ast.Load)
                         and not (isinstance(script.parent(n), ast.Call) and script.parent(n).func is n)
                         for n in module_nodes(script.tree))
        # A call under a test of what it passes (`if CUDA_HOME is not None: probe(CUDA_HOME)`) is guarded.
        result = referenced or not calls or any(
            not script.is_dead(c) and not self.guarded(c, _argument_names(c)) and self.reached(c) for c in calls)
        self._reached[key] = result
        return result

    def _canonical(self, func: ast.expr) -> str | None:
        """`subprocess.check_output` for `sp.check_output` or an imported `check_output`."""
        dotted = dotted_name(func)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        head = self.imports.get(head, head)
        return f"{head}.{rest}" if rest else head


def _path_root_node(node: ast.expr) -> ast.expr | None:
    """The toolkit root an nvcc path starts from: `CUDA_HOME` in `os.path.join(CUDA_HOME, ...)`,
    `cuda_dir + "/bin/nvcc"`, `f"{root}/bin/nvcc"`, `Path(root) / "bin" / "nvcc"`."""
    first = (node.args[0] if isinstance(node, ast.Call) and node.args
             else node.left if isinstance(node, ast.BinOp)
             else next((v.value for v in node.values if isinstance(v, ast.FormattedValue)), None)
             if isinstance(node, ast.JoinedStr) else None)
    while isinstance(first, (ast.BinOp, ast.Call)):
        first = first.left if isinstance(first, ast.BinOp) else first.args[0] if first.args else None
    return first


def _names_of(node: ast.AST | None) -> set[str]:
    """`{"CUDA_HOME"}` for a name, `{"torch.utils.cpp_extension.CUDA_HOME", "CUDA_HOME"}` for an
    attribute; nothing for other expressions."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute) and dotted_name(node) is not None:
        return {dotted_name(node), node.attr}
    return set()


def rocm_truth(script: BuildScript, test: ast.expr, depth: int = 0) -> bool | None:
    """The value of a Python test in a ROCm build, or None if undecidable. Like the ROCm-path
    model's reading of `if` tests, and also through the file's own helpers: a call of a
    function without arguments whose every `return` agrees (`_is_cuda()`), and a name assigned
    one value (`has_cuda = torch.version.cuda is not None`)."""
    if depth > 6:
        return None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        value = rocm_truth(script, test.operand, depth + 1)
        return None if value is None else not value
    if isinstance(test, ast.BoolOp):
        values = [rocm_truth(script, v, depth + 1) for v in test.values]
        decisive = isinstance(test.op, ast.Or)  # True decides `or`, False decides `and`
        if decisive in values:
            return decisive
        return (not decisive) if all(v is not None for v in values) else None
    rocm, _ = python_condition(test)
    if rocm is not None:
        return bool(rocm)
    if isinstance(test, ast.Call) and not test.args and not test.keywords and isinstance(test.func, ast.Name):
        functions = script.functions(test.func.id)
        if len(functions) == 1:
            returns = [r.value for r in ast.walk(functions[0]) if isinstance(r, ast.Return) and r.value is not None
                       and script.function_of(r) is functions[0]]
            values = {rocm_truth(script, r, depth + 1) for r in returns}
            return values.pop() if len(values) == 1 else None
    if isinstance(test, ast.Name):
        values = script.assigned(test)
        if len(values) == 1:
            return rocm_truth(script, values[0], depth + 1)
    return None


def _argument_names(call: ast.Call) -> set[str]:
    return {name for arg in [*call.args, *(kw.value for kw in call.keywords)] for name in _names_of(arg)}


def _import_names(tree: ast.AST) -> dict[str, str]:
    """Local name -> what it imports (`sp` -> `subprocess`, `check_output` -> `subprocess.check_output`)."""
    out = {}
    for node in module_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    out[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return out


def _is_version_helper(name: str | None) -> bool:
    """`get_nvcc_version`, `get_cuda_bare_metal_version`, `nvcc_version`: helpers that run nvcc."""
    words = set(re.split(r"_+", (name or "").lower()))
    return "version" in words and ("nvcc" in words or {"bare", "metal"} <= words)


def _swallows(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    names = ([] if caught is None else [caught] if not isinstance(caught, ast.Tuple) else caught.elts)
    if caught is not None and not any((dotted_name(n) or "").rsplit(".", 1)[-1] in PROBE_ERRORS for n in names):
        return False
    last = handler.body[-1]
    exits = isinstance(last, ast.Raise) or (
        isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
        and (dotted_name(last.value.func) or "") in ("sys.exit", "exit", "quit"))
    return not exits


# ---- does a ROCm build of the script get to its extensions? -----------------------------------
def stops_on_rocm(script: BuildScript) -> ast.AST | None:
    """Where a ROCm build of this script surely fails before it builds any extension: a
    toolkit probe (Y002's: nvcc run or its path joined to a CUDA root that is None there,
    `torch.version.cuda` parsed), or a `raise`, on every path to every extension, on arms a
    ROCm build surely takes (a raise only a CUDA-only arm reaches does not count). None when
    some extension may be built, or the script builds none."""
    calls = script.extension_calls()
    if not calls:
        return None
    run = _RocmRun(script)
    first = None
    for call in calls:
        failure = run.fails_before(call)
        if failure is None:
            return None
        if first is None or script.range(failure)[0] < script.range(first)[0]:
            first = failure
    return first


def fails_before_on_rocm(script: BuildScript, node: ast.AST) -> ast.AST | None:
    """Where a ROCm run of `script` surely fails before it reaches `node` (`_RocmRun`)."""
    return _RocmRun(script).fails_before(node)


class _RocmRun:
    """Statements a ROCm build surely runs, and whether one of them surely fails there."""

    MAX_DEPTH = 8  # functions calling functions

    def __init__(self, script: BuildScript):
        self.script = script
        probes = _ToolkitProbes(script)
        self._probes = {id(node) for node, _, _, _ in probes.candidates() if self._raises(probes, node)}
        self._functions: dict[int, ast.AST | None] = {}

    def _raises(self, probes: _ToolkitProbes, node: ast.AST) -> bool:
        """A probe that raises where it is evaluated: a path joined to a root that is None on
        ROCm, a version read, a helper that runs nvcc; a string only when a subprocess runs it."""
        if not isinstance(node, (ast.Constant, ast.JoinedStr)):
            return True
        current = self.script.parent(node)
        while current is not None and not isinstance(current, ast.stmt):
            if isinstance(current, ast.Call) and probes._canonical(current.func) in SUBPROCESS_RUNS:
                return True
            current = self.script.parent(current)
        return False

    def fails_before(self, node: ast.AST, depth: int = 0) -> ast.AST | None:
        """A failure every ROCm path to `node` meets first (in the statements before it, in
        its own arguments, or before each call of the function holding it)."""
        script = self.script
        if depth > self.MAX_DEPTH:
            return None
        if isinstance(node, ast.Call):
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                failure = self._expression(argument, depth)
                if failure is not None:
                    return failure
        child, current = node, script.parent(node)
        while current is not None:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
                calls = [c for c in script.all_calls() if callee_name(c) == current.name and not script.is_dead(c)]
                failures = [self.fails_before(c, depth + 1) for c in calls]
                if not failures or any(f is None for f in failures):
                    return None
                return min(failures, key=lambda f: script.range(f)[0])
            if isinstance(current, (ast.ClassDef, ast.Lambda)):
                return None
            swallowed = isinstance(current, ast.Try) and any(_swallows(h) for h in current.handlers)
            for _, block in ast.iter_fields(current):
                if not isinstance(block, list) or swallowed and block is current.body:
                    continue
                index = next((i for i, s in enumerate(block) if s is child), None)
                if index is not None:
                    failure = self._block(block[:index], depth)
                    if failure is not None:
                        return failure
            child, current = current, script.parent(current)
        return None

    def _block(self, statements: list[ast.stmt], depth: int) -> ast.AST | None:
        for statement in statements:
            failure = self._statement(statement, depth)
            if failure is not None:
                return failure
            if self._may_leave(statement):
                return None
        return None

    def _statement(self, statement: ast.stmt, depth: int) -> ast.AST | None:
        script = self.script
        if script.is_dead(statement):
            return None
        if isinstance(statement, ast.Raise):
            return statement
        if isinstance(statement, ast.If):
            failure = self._expression(statement.test, depth)
            if failure is not None:
                return failure
            taken = rocm_truth(script, statement.test)
            return None if taken is None else self._block(statement.body if taken else statement.orelse, depth)
        if isinstance(statement, ast.Try):
            return None if any(_swallows(h) for h in statement.handlers) else self._block(statement.body, depth)
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            return self._block(statement.body, depth)
        if isinstance(statement, (ast.For, ast.AsyncFor)):
            return self._expression(statement.iter, depth)  # the body may run no time
        if isinstance(statement, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)):
            return self._expression(statement.value, depth) if statement.value is not None else None
        return None

    def _expression(self, expr: ast.AST, depth: int) -> ast.AST | None:
        """A probe or a failing call of the file's own function that evaluating `expr` surely meets."""
        script = self.script
        stack = [expr]
        while stack:
            node = stack.pop()
            if id(node) in self._probes and not script.is_dead(node):
                return node
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                functions = script.functions(node.func.id)
                if len(functions) == 1 and not isinstance(script.parent(functions[0]), ast.ClassDef):
                    failure = self._function(functions[0], depth + 1)
                    if failure is not None:
                        return failure
            if isinstance(node, ast.Lambda):
                continue
            if isinstance(node, ast.IfExp):
                stack.append(node.test)
                continue
            if isinstance(node, ast.BoolOp):
                stack.append(node.values[0])  # the others may not be evaluated
                continue
            stack.extend(reversed(list(ast.iter_child_nodes(node))))
        return None

    def _function(self, function: ast.AST, depth: int) -> ast.AST | None:
        key = id(function)
        if key not in self._functions:
            self._functions[key] = None  # a recursive call fails no more than the function
            if depth <= self.MAX_DEPTH:
                self._functions[key] = self._block(function.body, depth)
        return self._functions[key]

    def _may_leave(self, statement: ast.stmt) -> bool:
        """Might the block stop at `statement` without failing (a return, break or exit that
        a ROCm build may take)? A definition leaves nothing: its body runs when called."""
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False
        stack = [statement]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Return, ast.Break, ast.Continue, ast.Raise)) and not self.script.is_dead(node):
                return True
            if isinstance(node, ast.Call) and (dotted_name(node.func) or "") in ("sys.exit", "exit", "quit", "os._exit"):
                return True
            stack.extend(c for c in ast.iter_child_nodes(node)
                         if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)))
        return False


# ---- Y003 unpinned-triton -------------------------------------------------------------------
def check_unpinned_triton(source: SourceFile) -> list[Finding]:
    if b"triton" not in source.data.lower():
        return []
    script = BuildScript(source)
    findings, seen = [], set()
    for call in script.calls({"setup"}):
        requirements = script.strings(script.argument(call, "install_requires") + script.argument(call, "setup_requires"))
        for extra, strings in script.dict_strings(script.argument(call, "extras_require")).items():
            if not requirements_py.is_cuda_only_name(extra):  # `extras_require={"cuda": [...]}`
                requirements.extend(strings)
        for arg in requirements:
            if arg.start in seen or not requirements_py.is_unpinned_triton(arg.value):
                continue
            seen.add(arg.start)
            findings.append(finding(
                source, arg.start, arg.end, requirements_py.triton_message(arg.value.strip()),
                Fix.advice("Pin the triton your torch release was built with, e.g. "
                           "`'pytorch-triton-rocm==3.1.0' if torch.version.hip else 'triton==3.1.0'` for torch 2.5")))
    return findings


# ---- Y004 rocm-arch-unset -------------------------------------------------------------------
CUDA_ARCH_VARIABLE = "TORCH_CUDA_ARCH_LIST"
# Any of these shows the build chooses its gfx targets.
ROCM_ARCH_MENTIONS = ("PYTORCH_ROCM_ARCH", "offload-arch", "amdgpu-target", "AMDGPU_TARGETS", "GPU_TARGETS",
                      "HIP_ARCHITECTURES", "GPU_ARCHS")


def check_rocm_arch_unset(source: SourceFile) -> list[Finding]:
    if CUDA_ARCH_VARIABLE.encode() not in source.data:
        return []
    script = BuildScript(source)
    strings = script.string_constants()
    if any(m in arg.value for arg in strings for m in ROCM_ARCH_MENTIONS):
        return []
    first = next((a for a in strings if a.value == CUDA_ARCH_VARIABLE and script.model.is_live(a.start)), None)
    if first is None:
        return []
    advice = Fix.advice("Choose the gfx targets on the ROCm path: "
                        "`os.environ.setdefault('PYTORCH_ROCM_ARCH', 'gfx90a;gfx942')` when `torch.version.hip`")
    if _builds_with_torch(script):
        # torch's builder then compiles for the gfx targets torch itself was built for: every
        # GPU that torch runs on gets code, at the cost of a longer build (a note).
        return [finding(
            source, first.start, first.end,
            f"Archs come from `{CUDA_ARCH_VARIABLE}` only; on ROCm, torch's builder compiles for every gfx "
            "target torch was built for (a long build).", advice, severity=Severity.NOTE)]
    return [finding(
        source, first.start, first.end,
        f"Archs come from `{CUDA_ARCH_VARIABLE}` only; ROCm gfx targets are left to the build host.", advice)]


def _builds_with_torch(script: BuildScript) -> bool:
    """Does the script build with `torch.utils.cpp_extension` (`BuildExtension`, `CUDAExtension`,
    `load`), whose ROCm path takes torch's own gfx targets when `PYTORCH_ROCM_ARCH` is unset?"""
    for node in module_nodes(script.tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("cpp_extension"):
            return True
        if isinstance(node, ast.Attribute) and node.attr == "cpp_extension":
            return True
    return _mentions_build_extension(script)


# ---- B002 lto-mixed-compilers (setup.py) ------------------------------------------------------
def check_lto_mixed_compilers(source: SourceFile) -> list[Finding]:
    if b"-flto" not in source.data:
        return []
    script = BuildScript(source)
    findings, seen = [], set()
    for call in script.extension_calls():
        by_compiler = script.compile_args(call)
        if not _builds_device_code(call, by_compiler):
            continue
        for arg, token, index in _words([a for args in by_compiler.values() for a in args], seen):
            if nvcc_flags.is_lto(token):
                findings.append(_flag_finding(
                    source, arg, index, token,
                    f"`{token}` mixes GCC and hipcc's clang LTO objects; the `.so` can lose `PyInit_*`.",
                    Fix.advice(f"Drop `{token}` when `torch.version.hip`: "
                               f"`'cxx': ['-O3'] if torch.version.hip else ['-O3', '{token}']`")))
    return findings


def _builds_device_code(call: ast.Call, by_compiler: dict) -> bool:
    """A CUDAExtension, or an extension given an `nvcc` list: hipcc compiles part of it."""
    return callee_name(call) == "CUDAExtension" or "nvcc" in by_compiler


# ---- B003 missing-use-rocm (setup.py) ---------------------------------------------------------
ROCM_DEFINES = frozenset({"USE_ROCM", "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__"})
ROCM_PATH_NAMES = frozenset({"IS_HIP_EXTENSION", "ROCM_HOME", "version.hip"})  # last parts of a dotted name
ROCM_PATH_STRINGS = frozenset({"ROCM_HOME", "ROCM_PATH", "hipcc"})


def check_missing_use_rocm(source: SourceFile) -> list[Finding]:
    data = source.data
    if not any(m.encode() in data for m in ("IS_HIP_EXTENSION", "ROCM_HOME", "ROCM_PATH", "version.hip", "hipcc")):
        return []
    script = BuildScript(source)
    extensions = script.extension_calls()
    # torch's BuildExtension defines USE_ROCM and __HIP_PLATFORM_AMD__ itself on ROCm. A file
    # that makes extensions but calls no `setup()` (a builder class's module) hands them to
    # the script that does, whose `cmdclass` (or torch's `load`) builds them.
    if not extensions or _mentions_build_extension(script) or _defines_rocm_macro(script) \
            or not script.calls(frozenset({"setup"})):
        return []
    markers = rocm_path_markers(script)
    if not markers:
        return []
    live = [n for n in markers + extensions if script.model.is_live(script.range(n)[0])]
    if not live:
        return []
    where = min(live, key=lambda n: script.range(n)[0])
    start, end = script.range(where)
    return [finding(
        source, start, end,
        "This ROCm build never defines `USE_ROCM`; `#ifdef USE_ROCM` code takes its CUDA branch.",
        Fix.advice("Define it on the ROCm path: `define_macros=[('USE_ROCM', '1'), ('__HIP_PLATFORM_AMD__', '1')]` "
                   "in the extension, or build with `cmdclass={'build_ext': BuildExtension}`"))]


def rocm_path_markers(script: BuildScript) -> list[ast.AST]:
    """What shows the script has a ROCm build path: `IS_HIP_EXTENSION`, `torch.version.hip`,
    `ROCM_HOME`, and the strings `"ROCM_PATH"`, `"hipcc"` (CUDA-only code left out)."""
    markers = [n for n in script.names() if _ends_with_any(dotted_name(n), ROCM_PATH_NAMES)]
    return markers + [a.node for a in script.string_constants() if a.value in ROCM_PATH_STRINGS]


def _ends_with_any(dotted: str | None, names: frozenset[str]) -> bool:
    return dotted is not None and any(dotted == n or dotted.endswith("." + n) for n in names)


def _mentions_build_extension(script: BuildScript) -> bool:
    for node in module_nodes(script.tree):
        if isinstance(node, ast.Name) and node.id == "BuildExtension":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "BuildExtension":
            return True
        if isinstance(node, ast.alias) and node.name == "BuildExtension":
            return True
    return False


def _defines_rocm_macro(script: BuildScript) -> bool:
    """`-DUSE_ROCM...` in any string, or a `('USE_ROCM', ...)` macro tuple, outside CUDA-only code."""
    for arg in script.string_constants():
        for token, _ in arg.tokens():
            if token.startswith("-D") and re.split(r"[=\s]", token[2:], 1)[0] in ROCM_DEFINES:
                return True
    for node in module_nodes(script.tree):
        if (isinstance(node, (ast.Tuple, ast.List)) and 1 <= len(node.elts) <= 2
                and isinstance(node.elts[0], ast.Constant) and node.elts[0].value in ROCM_DEFINES
                and not script.is_dead(node)):
            return True
    return False


# ---- B004 cuda-toolkit-path (setup.py) --------------------------------------------------------
CUDA_ROOT_NAMES = frozenset({"CUDA_HOME", "CUDA_PATH"})
# torch.utils.cpp_extension's own helpers that return (a path below) the CUDA root.
CUDA_ROOT_HELPERS = frozenset({"_join_cuda_home", "_find_cuda_home"})
ROCM_ROOT_MENTIONS = ("ROCM_PATH", "ROCM_HOME", "ROCM_ROOT", "HIP_PATH", "/opt/rocm")
# `/usr/local/cuda` inside a compiler or linker flag: `-I/usr/local/cuda/include`, `-L...`,
# `-Wl,-rpath,...`, `-DCUDA_TOOLKIT_ROOT_DIR=...`.
_CUDA_ROOT_IN_FLAG = re.compile(r"(?:^|\s)(?:-[IL]|-isystem|-Wl,-rpath,|-D\w+=)(/usr/local/cuda\b)")


def check_cuda_toolkit_path(source: SourceFile) -> list[Finding]:
    data = source.data
    if not any(m.encode() in data for m in (*CUDA_ROOT_NAMES, *CUDA_ROOT_HELPERS, "/usr/local/cuda")):
        return []
    if any(m.encode() in data for m in ROCM_ROOT_MENTIONS) and _mentions_rocm_root(source):
        return []
    script = BuildScript(source)
    uses = []  # (node, culprit)
    for node in script.names():
        name = node.id if isinstance(node, ast.Name) else node.attr
        if name in CUDA_ROOT_NAMES or name in CUDA_ROOT_HELPERS:
            uses.append((node, name))
    for arg in script.string_constants():
        if arg.value in CUDA_ROOT_NAMES or arg.value.startswith("/usr/local/cuda"):
            uses.append((arg.node, arg.value))
        elif _CUDA_ROOT_IN_FLAG.search(arg.value):
            uses.append((arg.node, "/usr/local/cuda"))
    # A root used to spell nvcc's path is a toolkit probe: Y002 reports it, once.
    probes = [script.range(p) for p in nvcc_paths(script)]
    findings, statements = [], set()
    for node, culprit in sorted(uses, key=lambda u: script.range(u[0])[0]):
        statement = script.statement_of(node)
        start = script.range(node)[0]
        if (id(statement) in statements or not script.model.is_live(start) or any(s <= start < e for s, e in probes)
                or _decided_without(script, node) or _one_of_several_places(script, node)
                or _only_a_library_search_path(script, node)):
            continue
        test = _presence_test(script, node)
        if test == "guard":
            continue
        statements.add(id(statement))
        start, end = script.range(node)
        if culprit.startswith("/"):
            message = f"Hard-coded `{culprit}` has no ROCm fallback; ROCm installs to `/opt/rocm`."
        elif test == "gates the GPU build":
            message = (f"`{culprit}` decides whether the GPU extension is built; it is None on ROCm, so the ROCm "
                       "build quietly makes no GPU code.")
        else:
            message = f"`{culprit}` has no ROCm fallback; on ROCm it is unset or names a stray CUDA."
        findings.append(finding(source, start, end, message, Fix.advice(
            "Take the ROCm root on the ROCm path: `ROCM_HOME if torch.version.hip else CUDA_HOME` "
            "(`os.environ.get('ROCM_PATH', '/opt/rocm')`), and leave `CUDA_HOME` unset in ROCm builds")))
    return findings


def _presence_test(script: BuildScript, node: ast.AST) -> str | None:
    """`if CUDA_HOME is not None:`, `if not CUDA_HOME:`, `CUDA_HOME and ...` as an `if` test:
    "guard", a test that asks whether the toolkit is there, not a use of its path; but
    "gates the GPU build" where the arm it needs the toolkit for is where the GPU extension is
    chosen (`extension = CUDAExtension`, `sources += glob("*.cu")`): on ROCm, where
    `CUDA_HOME` is None, the build then quietly makes no GPU code. None for any other use,
    and where the arm a ROCm build takes (no toolkit there) fails the build
    (`if CUDA_HOME is None: raise ...`)."""
    tested = _tested_by(script, node)
    if tested is None:
        return None
    current, present = tested
    if isinstance(current, ast.If):
        rocm = rocm_truth(script, current.test)
        taken = current.body if rocm else current.orelse if rocm is False else []
        if taken and (isinstance(taken[-1], ast.Raise) or _exits(taken[-1])):
            return None
        if _chooses_gpu_build(current.body if present else current.orelse):
            return "gates the GPU build"
    return "guard"


def _tested_by(script: BuildScript, node: ast.AST):
    """(the `if`/`while`/conditional expression whose test asks whether `node` is there,
    whether that test is true where it is) for `if x:`, `if x is None:`, `not x and ...`;
    None for any other use of `node`."""
    child, current = node, script.parent(node)
    present = True
    while (isinstance(current, (ast.BoolOp, ast.UnaryOp))
           or (isinstance(current, ast.Compare) and len(current.ops) == 1 and current.left is child
               and isinstance(current.ops[0], (ast.Is, ast.IsNot))
               and isinstance(current.comparators[0], ast.Constant) and current.comparators[0].value is None)):
        if isinstance(current, ast.UnaryOp) and not isinstance(current.op, ast.Not):
            return None
        if isinstance(current, ast.UnaryOp) or (isinstance(current, ast.Compare) and isinstance(current.ops[0], ast.Is)):
            present = not present
        child, current = current, script.parent(current)
    if not (isinstance(current, (ast.If, ast.IfExp, ast.While)) and current.test is child):
        return None
    return current, present


def _lookup_decides_build(script: BuildScript, call: ast.Call) -> bool:
    """Does a look-up of nvcc on PATH decide the build: its absence (ROCm's case) raises or
    exits (`if shutil.which("nvcc") is None: raise ...`), or its presence chooses the GPU
    extension (`if shutil.which("nvcc"): ext = CUDAExtension(...)`)? A test that only guards
    running nvcc (`if shutil.which("nvcc"): subprocess.run(["nvcc", ...])`) does not."""
    tested = _tested_by(script, call)
    if tested is None or not isinstance(tested[0], ast.If):
        return False
    statement, present = tested
    absent = statement.orelse if present else statement.body
    if absent and (isinstance(absent[-1], ast.Raise) or _exits(absent[-1])):
        return True
    return _chooses_gpu_build(statement.body if present else statement.orelse)


def _chooses_gpu_build(statements: list[ast.stmt]) -> bool:
    """Do the statements choose the GPU extension (`CUDAExtension`) or add CUDA sources (a
    `.cu` name or pattern)?"""
    for statement in statements:
        for node in ast.walk(statement):
            if (isinstance(node, ast.Name) and node.id == "CUDAExtension") or (
                    isinstance(node, ast.Attribute) and node.attr == "CUDAExtension"):
                return True
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(".cu"):
                return True
    return False


def _exits(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and (dotted_name(statement.value.func) or "") in ("sys.exit", "exit", "quit"))


def _decided_without(script: BuildScript, node: ast.AST) -> bool:
    """In a condition whose value on ROCm another operand fixes: `CUDA_HOME is None and not
    IS_HIP_EXTENSION`, `IS_HIP_EXTENSION or CUDA_HOME is not None`."""
    child, current = node, script.parent(node)
    while current is not None and not isinstance(current, ast.stmt):
        if isinstance(current, ast.BoolOp):
            for other in current.values:
                if other is not child and rocm_truth(script, other) is isinstance(current.op, ast.Or):
                    return True
        child, current = current, script.parent(current)
    return False


_ENVIRONMENT_NAME = re.compile(r"[A-Z][A-Z0-9_]*\Z")


_LIBRARY_SEARCH_KEYWORDS = frozenset({"library_dirs", "runtime_library_dirs"})


def _only_a_library_search_path(script: BuildScript, node: ast.AST) -> bool:
    """A CUDA root given only as a place to look for libraries (`library_dirs=[...]`,
    `is_library_search_flag`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and is_library_search_flag(node.value):
        return True
    current = node
    while current is not None and not isinstance(current, ast.stmt):
        parent = script.parent(current)
        if isinstance(parent, ast.keyword):
            return parent.arg in _LIBRARY_SEARCH_KEYWORDS
        current = parent
    return False


def _one_of_several_places(script: BuildScript, node: ast.AST) -> bool:
    """`"CUDA_HOME"` as one of the environment variables a search tries in turn, beside one
    that is not CUDA's (`env_paths("CUTLASS_ROOT", "CONDA_PREFIX", "CUDA_HOME")`,
    `for var in ("CUTLASS_HOME", "CUDA_PATH"):`): where it is unset (ROCm) the search goes on
    to the others; the build does not depend on it."""
    parent = script.parent(node)
    siblings = parent.args if isinstance(parent, ast.Call) and node in parent.args else \
        parent.elts if isinstance(parent, (ast.List, ast.Tuple, ast.Set)) else []
    names = [s.value for s in siblings
             if isinstance(s, ast.Constant) and isinstance(s.value, str) and _ENVIRONMENT_NAME.match(s.value)]
    return len(names) == len(siblings) >= 2 and any(
        name not in CUDA_ROOT_NAMES and not name.startswith("CUDA") for name in names)


def _mentions_rocm_root(source: SourceFile) -> bool:
    """A ROCm root named in code (a name or a string), not only in a comment."""
    for node in module_nodes(source.python_ast):
        text = (node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute)
                else node.value if isinstance(node, ast.Constant) and isinstance(node.value, str)
                else node.name if isinstance(node, ast.alias) else None)
        if text is not None and any(m in text for m in ROCM_ROOT_MENTIONS):
            return True
    return False


# ---- L001 cuda-library (setup.py) -------------------------------------------------------------
def check_cuda_library(source: SourceFile) -> list[Finding]:
    if b"libraries" not in source.data and b"-l" not in source.data:
        return []
    script = BuildScript(source)
    findings, seen = [], set()
    for call in script.extension_calls():
        for arg, word, index in _words(script.strings(script.argument(call, "libraries")), seen):
            findings.append(_library_finding(source, arg, index, word, word))
        for arg, word, index in _words(script.strings(script.argument(call, "extra_link_args")), seen):
            if word.startswith("-l") and len(word) > 2:
                findings.append(_library_finding(source, arg, index, word, word[2:]))
    return [f for f in findings if f is not None]


def _library_finding(source: SourceFile, arg: StringArg, index: int, written: str, name: str) -> Finding | None:
    """For `written` (`cublas` in `libraries`, `-lcublas` in link args) naming library `name`."""
    lib = library_for_link_name(name)
    if lib is None or lib.counterpart is None:
        return None
    rocm_name = lib.hip_library or ROCM_LINK_NAMES.get(lib.counterpart)
    if rocm_name is None:
        fix = Fix.advice(f"{lib.port} on the ROCm path")
    else:
        rocm_written = written.replace(name, rocm_name)
        fix = Fix.advice(f"Link {lib.counterpart} on the ROCm path: "
                         f"`'{rocm_written}' if torch.version.hip else '{written}'`")
    return _flag_finding(
        source, arg, index, written,
        f"`{written}` links {lib.name}, which ROCm lacks; the link fails (`-l{name}` not found).",
        fix, severity=lib.severity)


# The name to link for each ROCm counterpart in the shared table (`-l<name>`), where the
# table gives none itself.
ROCM_LINK_NAMES = {
    "hipBLAS": "hipblas", "hipBLASLt": "hipblaslt", "hipFFT": "hipfft", "hipSPARSE": "hipsparse",
    "hipSOLVER": "hipsolver", "hipRAND": "hiprand", "MIOpen": "MIOpen", "RCCL": "rccl",
    "HIP": "amdhip64", "hipRTC": "hiprtc",
}
