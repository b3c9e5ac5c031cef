"""R: runtime API use that compiles for ROCm but fails when it runs."""

from __future__ import annotations

from portlint.finding import Finding, Related, Severity
from portlint.fix import Edit, Fix
from portlint.project import EXTERN_C, KernelDefinition, ProjectIndex, finding_at_definition
from portlint.rocm_path import Status
from portlint.triggers import all_of, any_of, needs, only_where


def check_module_kernel_not_extern_c(index: ProjectIndex) -> list[Finding]:
    """R002: a kernel looked up by its plain name in a module while its symbol is mangled."""
    findings = []
    for name in index.used_names():
        # A name passed to *GetLoweredName is looked up by its mangled form: fine.
        if name in index.lowered_names or not index.reports_definition_of(name):
            continue  # or every finding would be at a definition in a context file
        uses = [use for use in index.uses_of(name)[1] if use.status is not Status.DEAD]
        if not uses:
            continue
        kernels = [fn for fn in index.rocm_definitions(name) if index.is_rocm_kernel(fn)]
        # One C-linkage definition (or declaration) is what the lookup finds; a qualifier
        # macro the tree does not define may be `extern "C"`: cannot tell, stay silent.
        if name in index.c_linkage or any(_has_c_linkage(index, fn) is not False for fn in kernels):
            continue
        related = tuple(Related(use.location, f"`{name}` is looked up by name here") for use in uses)
        for fn in kernels:
            findings.append(finding_at_definition(
                fn, f"Kernel `{name}` has a mangled C++ symbol, so its lookup by name fails.",
                _extern_c_fix(fn, overloaded=len(kernels) > 1), related,
            ))
    return findings


def _has_c_linkage(index: ProjectIndex, fn: KernelDefinition) -> bool | None:
    return True if fn.extern_c else index.qualifiers_expand_to(fn, EXTERN_C)


def _extern_c_fix(fn: KernelDefinition, overloaded: bool) -> Fix:
    name = fn.name
    # `extern "C"` cannot name one template instance or one overload, conflicts with
    # `static`, and inside a namespace would silently drop the namespace from the symbol.
    if fn.is_template or overloaded:
        return Fix.advice(
            f'Look up `{name}` by its mangled name from `hiprtcGetLoweredName`, or launch it from an '
            f'`extern "C" __global__` wrapper kernel'
        )
    if fn.scope:
        return Fix.advice(f'Move `{name}` out of namespace `{fn.scope}` and declare it `extern "C" __global__`')
    if "static" in fn.specifiers:
        return Fix.advice(f'Drop `static` and declare `{name}` as `extern "C" __global__ void {name}(...)`')
    qualifier = "__global__" if fn.has_global else " ".join(fn.qualifiers)
    return Fix.unsafe(
        f'Declare `{name}` as `extern "C" {qualifier} void {name}(...)`',
        Edit.insert(fn.insertion_point.start_byte, 'extern "C" '),
    )


# =========================================================================================
# R001, the source side of R003, R004, R005: runtime API calls and device queries.
# Imported here, not at the top, so that this part stays an append to the module.
import ast  # noqa: E402
import operator  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
from dataclasses import replace  # noqa: E402

from portlint import hipify, queries  # noqa: E402
from portlint.checks.cpp import (  # noqa: E402
    IntegerConstants, ancestors_of, arguments, callee_name, enclosing_function, include_path, includes, integer_value,
    INCLUDES, macro_tree, memoized, named_descendants, strip_parens, token_nodes,
)
from portlint.checks.python_build import callee_name as python_callee_name  # noqa: E402
from portlint.finding import at_node, finding  # noqa: E402
from portlint.nesting import bounded  # noqa: E402
from portlint.source import CUDA, PYTHON, SourceFile, module_nodes, module_parents  # noqa: E402

_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# Word pairs that make a name a test for a ROCm build or run: `is_hip`, `kIsRocm`, `USE_ROCM`.
_PLATFORM_WORDS = frozenset({"hip", "rocm", "amd", "amdgpu"})
_GUARD_LEADS = frozenset({"is", "use", "on", "with", "using", "running", "uses"})
_GUARD_TAILS = frozenset({"platform", "build", "enabled", "backend", "runtime", "extension"})
# hipDeviceProp_t fields that name the AMD architecture: code reading them picks ROCm paths.
_ARCH_FIELDS = frozenset({"gcnArchName", "gcnArch"})
_SHORT = 48


def _name_words(name: str) -> list[str]:
    """`kIsRocm` -> [k, is, rocm]; `IS_HIP_EXTENSION` -> [is, hip, extension]."""
    return [w.lower() for w in _NAME_WORD.findall(name)]


def _is_platform_test_name(name: str) -> bool:
    """Does a name read as "is this a ROCm build/GPU?" (`is_hip`, `isRocm`, `IS_HIP_EXTENSION`)."""
    words = _name_words(name)
    return any((a in _GUARD_LEADS and b in _PLATFORM_WORDS) or (a in _PLATFORM_WORDS and b in _GUARD_TAILS)
               for a, b in zip(words, words[1:]))


def _short(text: str, limit: int = _SHORT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _function_key(node) -> int | None:
    function = enclosing_function(node)
    return None if function is None else function.id


# ---- R001 compute-capability-check ------------------------------------------------------

# What an AMD GPU reports as its compute capability: its gfx version, on CDNA and RDNA alike.
_AMD_VERSIONS = "(they report their gfx version: 9.4 on MI300, 10.3 and 11.0 on RDNA)"
# (major, minor) as ROCm reports them: gfx908/gfx90a (MI100, MI200) 9.0, gfx942 (MI300) 9.4,
# gfx950 (MI350) 9.5, gfx1030 (RDNA2) 10.3, gfx1100 (RDNA3) 11.0, gfx1200 (RDNA4) 12.0.
_AMD_CAPABILITIES = ((9, 0), (9, 4), (9, 5), (10, 3), (11, 0), (12, 0))
# A test every AMD GPU answers as an Ampere GPU (8.0) does ("8.0 or newer", "older than
# Volta") picks the path NVIDIA's first generation with bf16, TF32 and async copies takes,
# which the AMD GPUs ROCm supports have counterparts of: a note, where a test that sends
# them to Hopper's or Blackwell's path (`major >= 9`, `== (9, 0)`), or away from Ampere's
# (`major == 8`), or apart from one another, is a warning.
_AMPERE = (8, 0)
_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
            "!=": operator.ne}


def _answers_as_ampere(kind: str, compare, constant, swapped: bool = False) -> bool:
    """Does every AMD GPU answer `capability <compare> constant` (`constant <compare>
    capability` when `swapped`) as an Ampere GPU does? `kind`: the form of the capability
    (`_MAJOR`, `_COMBINED`: major * 10 + minor, or * 100 + minor * 10 for a constant of
    200 or more, `_TUPLE`); `compare` a two-argument function; `constant` a number, a tuple,
    or a frozenset of them for `in`."""
    def answer(capability: tuple[int, int]):
        major, minor = capability
        if kind == _MAJOR:
            value = major
        elif kind == _TUPLE:
            value = capability
        else:
            scale = max(constant) if isinstance(constant, frozenset) else constant
            value = major * 100 + minor * 10 if isinstance(scale, int) and scale >= 200 else major * 10 + minor
        return compare(constant, value) if swapped else compare(value, constant)

    try:
        on_ampere = answer(_AMPERE)
        return all(answer(amd) == on_ampere for amd in _AMD_CAPABILITIES)
    except TypeError:  # a constant of another shape than the capability
        return False


def _capability_message(test: str, as_on_ampere: bool) -> str:
    if as_on_ampere:
        return (f"Compute capability test `{test}` answers on every AMD GPU as on an Ampere GPU (8.0), since they "
                "report their gfx version (9.4 on MI300, 10.3 and 11.0 on RDNA): check that what the Ampere path "
                "relies on exists there.")
    return f"Compute capability test `{test}` misreads AMD GPUs {_AMD_VERSIONS}."
R001_CPP_ADVICE = ("Branch on the AMD architecture first: compare `prop.gcnArchName` "
                   "(e.g. `gfx942`) under `#ifdef USE_ROCM`, then test `major`/`minor` for CUDA")
R001_PYTHON_ADVICE = ("Check `torch.version.hip` first and choose the ROCm path by "
                      "`torch.cuda.get_device_properties(d).gcnArchName` (e.g. `gfx942`)")
_MAJOR, _MINOR, _COMBINED, _TUPLE, _PROPS, _OTHER = "major", "minor", "combined", "tuple", "props", "other"
_NOT_CAPABILITY_TYPES = frozenset({
    "char", "signed char", "unsigned char", "wchar_t", "char8_t", "char16_t", "char32_t", "bool",
    "float", "double", "std::string", "string",
})
# Files that query the device somewhere: only there can a capability be compared, and only
# there does a bare `cc`/`sm` name read as one.
_DEVICE_QUERY_HINTS = (b"major", b"apabilit", b"APABILIT", b"DeviceProp")
_CAPABILITY_NAME_WORDS = frozenset({
    "cc", "sm", "compute", "capability", "cap", "version", "ver", "arch", "cuda", "device", "dev", "gpu",
    "current", "cur", "min", "max", "minimum", "required", "req", "target", "my", "k", "g", "m", "s",
})
_COUNT_WORDS = frozenset({
    "num", "n", "nr", "count", "cnt", "total", "per", "size", "sz", "bytes", "id", "idx", "index",
    "mask", "ptr", "mem", "len", "list", "str", "name",
})
# Architecture constants: `kSM80`, `SM_90`, `AMPERE`.
_ARCH_CONSTANT = re.compile(r"(?i)^k?_?(?:sm|cc)_?\d{2,3}$|ampere|hopper|volta|turing|blackwell|pascal|maxwell|kepler")
_RELATIONAL = '["<" "<=" ">" ">=" "==" "!="]'
# Identifiers that may be platform tests (`is_hip`, `kIsRocm`); `_is_platform_test_name` decides.
_GUARD_PATTERN = ("(?i)(is|use|uses|on|with|using|running)_?(hip|rocm|amd)"
                  "|(hip|rocm|amd|amdgpu)_?(platform|build|enabled|backend|runtime|extension)")
_CAPABILITY_APIS = (
    "cudaGetDeviceProperties", "cudaGetDeviceProperties_v2", "hipGetDeviceProperties",
    "cudaDeviceGetAttribute", "hipDeviceGetAttribute", "cuDeviceGetAttribute", "cuDeviceComputeCapability",
)
_R001_QUERY = f"""
[(binary_expression left: (_) @left operator: {_RELATIONAL} right: (_) @right) @compare
 (init_declarator declarator: (_) @name value: (_) @value) @binding
 (assignment_expression left: (identifier) @name right: (_) @value) @binding
 (call_expression function: (identifier) @api (#any-of? @api {" ".join(f'"{a}"' for a in _CAPABILITY_APIS)})) @api_call]
"""
# Read only where a comparison was found: tests of the platform, and typed property structs.
_R001_GUARDS = f"""
[((field_identifier) @arch (#any-of? @arch "gcnArchName" "gcnArch"))
 ((identifier) @test (#match? @test "{_GUARD_PATTERN}"))]
"""
_R001_PROP_TYPES = '((type_identifier) @type (#any-of? @type "cudaDeviceProp" "hipDeviceProp_t"))'
_DECLARATOR_WRAPPERS = frozenset({
    "init_declarator", "pointer_declarator", "reference_declarator", "array_declarator",
})


def _cc_name_kind(name: str) -> str | None:
    """What a name says it holds: a capability major (`cc_major`), minor, or both (`cc`, `sm_version`)."""
    words = set(_name_words(name))
    if not words or words & _COUNT_WORDS:
        return None
    if not (words & {"cc", "sm", "capability"} or {"compute", "cap"} <= words):
        return None
    if "minor" in words:
        return _MINOR
    if "major" in words:
        return _MAJOR
    return _COMBINED if words <= _CAPABILITY_NAME_WORDS else None


def _is_capability_value(value: int | None, kind: str) -> bool:
    if value is None:
        return False
    if kind == _MAJOR:
        return 2 <= value <= 13
    return 20 <= value <= 130 or (200 <= value <= 1300 and value % 10 == 0)


def _declared_identifier(declarator):
    while declarator is not None and declarator.type in _DECLARATOR_WRAPPERS:
        declarator = declarator.child_by_field_name("declarator") or (
            declarator.named_children[0] if declarator.named_children else None)
    return declarator if declarator is not None and declarator.type in ("identifier", "field_identifier") else None


def _address_of(node, source: SourceFile) -> str | None:
    """`x` for `&x`, `(void**)&x`, `reinterpret_cast<void**>(&x)`, `&this->x`."""
    node = _strip_casts(node)
    if node is None or node.type != "pointer_expression" or node.children[0].type != "&":
        return None
    target = strip_parens(node.child_by_field_name("argument"))
    return None if target is None else " ".join(source.node_text(target).split())


def _strip_casts(node):
    """Through parentheses, C casts and one-argument `static_cast`/`reinterpret_cast`/`int(...)`."""
    while True:
        node = strip_parens(node)
        if node is None:
            return None
        if node.type == "cast_expression":
            node = node.child_by_field_name("value")
            continue
        if node.type == "call_expression":
            fn = node.child_by_field_name("function")
            args = arguments(node)
            if fn is not None and len(args) == 1 and (
                    fn.type in ("primitive_type", "sized_type_specifier")
                    or (fn.type == "template_function" and (fn.child_by_field_name("name") is not None)
                        and fn.child_by_field_name("name").text.endswith(b"_cast"))):
                node = args[0]
                continue
        return node


class _CapabilityScan:
    """R001 in one C/C++ file: comparisons of a compute capability with a constant."""

    def __init__(self, source: SourceFile):
        self.source = source
        self.prop_names: set[str] = set()  # filled by `cudaGetDeviceProperties(&name, ...)`
        self.typed_props: set[str] | None = None  # declared `cudaDeviceProp`/`hipDeviceProp_t`, read on need
        # name -> {function id or None -> kind}, for locals set from a capability. By name
        # first: most identifiers read name no such variable, and need no function found.
        self.variables: dict[str, dict[int | None, str]] = {}
        self.constants: IntegerConstants | None = None

    def run(self) -> list[Finding]:
        source = self.source
        candidates = []
        for match in queries.matches(CUDA, _R001_QUERY, source.tree.root_node):
            if "compare" in match:
                if self._capability_comparison(match["left"][0], match["right"][0]):
                    candidates.append(match["compare"][0])
            elif "binding" in match:
                self._binding(match["binding"][0], match["name"][0], match["value"][0])
            else:
                self._api_call(match["api_call"][0], source.node_text(match["api"][0]))
        findings, reported = [], set()
        if candidates and _numbers_amd_devices(source):
            return []
        guards: dict[int | None, list[int]] = {}
        in_condition: dict[int, list] = {}  # the tests of each outermost condition
        for compare in candidates:
            in_condition.setdefault(_outermost_condition(compare).id, []).append(compare)
        for compare in candidates:
            top = _outermost_condition(compare)
            function = enclosing_function(compare)
            key = None if function is None else function.id
            if key not in guards:
                guards[key] = self._guards(function if function is not None else source.tree.root_node, key)
            if top.id in reported or any(at < top.end_byte for at in guards[key]):
                continue
            reported.add(top.id)
            as_on_ampere = all(self._answered_as_on_ampere(c) for c in in_condition[top.id])
            findings.append(at_node(source, compare, _capability_message(_short(source.node_text(compare)), as_on_ampere),
                                    Fix.advice(R001_CPP_ADVICE), severity=Severity.NOTE if as_on_ampere else None))
        return findings

    def _answered_as_on_ampere(self, compare) -> bool:
        operator_node = compare.child_by_field_name("operator")
        how = _COMPARE.get(self.source.node_text(operator_node)) if operator_node is not None else None
        if how is None:
            return False
        left, right = compare.child_by_field_name("left"), compare.child_by_field_name("right")
        for subject, other, swapped in ((left, right, False), (right, left, True)):
            kind = self._kind(subject)
            if kind in (_MAJOR, _COMBINED):
                value = self._constant_value(other)
                return value is not None and _answers_as_ampere(kind, how, value, swapped)
        return False

    def _constant_value(self, node) -> int | None:
        """A number written in place or named by a constant (`constexpr int kMinMajor = 8;`)."""
        node = _strip_casts(node)
        if node is None:
            return None
        if node.type == "number_literal":
            return integer_value(node, self.source)
        if node.type != "identifier":
            return None
        if self.constants is None:
            self.constants = IntegerConstants(self.source)
        return self.constants.value(node)

    def _guards(self, scope, key: int | None) -> list[int]:
        """Where `scope` reads the AMD architecture (`gcnArchName`) or tests the platform (`is_hip`)."""
        found = []
        for _, node in queries.captures(CUDA, _R001_GUARDS, scope):
            if _function_key(node) != key:
                continue  # a nested function, or another function at file scope
            if node.type == "field_identifier" or (
                    not node.parent.type.startswith("preproc") and _is_platform_test_name(self.source.node_text(node))):
                found.append(node.start_byte)
        return found

    def _binding(self, binding, declarator, value) -> None:
        name = _declared_identifier(declarator)
        if name is None:
            return
        text = self.source.node_text(name)
        value = _strip_casts(value)
        if value is not None and value.type == "call_expression" and "DeviceProperties" in (
                callee_name(value, self.source) or ""):
            self.prop_names.add(text)  # auto* p = at::cuda::getCurrentDeviceProperties();
            return
        kind = self._kind(value)
        declaration = binding.parent if binding.type == "init_declarator" else None
        type_node = declaration.child_by_field_name("type") if declaration is not None else None
        type_text = " ".join(self.source.node_text(type_node).split()) if type_node is not None else ""
        if kind is None and type_text in _NOT_CAPABILITY_TYPES:
            kind = _OTHER  # `char cc = s[0];`: a name that only looks like a capability
        if kind is not None:
            self.variables.setdefault(text, {})[_function_key(binding)] = kind

    def _capability_comparison(self, left, right) -> bool:
        for subject, other in ((left, right), (right, left)):
            kind = self._kind(subject)
            if kind in (_MAJOR, _COMBINED) and self._is_capability_constant(other, kind):
                return True
        return False

    def _is_capability_constant(self, node, kind: str) -> bool:
        stripped = _strip_casts(node)
        if stripped is not None and stripped.type == "identifier" and _ARCH_CONSTANT.search(
                self.source.node_text(stripped)):
            return True  # `HOPPER_CC`, `kSM80`: named for an architecture, whatever its value
        return _is_capability_value(self._constant_value(node), kind)

    @bounded(None)
    def _kind(self, node) -> str | None:
        node = _strip_casts(node)
        if node is None:
            return None
        source = self.source
        if node.type == "field_expression":
            field = node.child_by_field_name("field")
            name = source.node_text(field) if field is not None else ""
            if name in (_MAJOR, _MINOR) and self._is_props(node.child_by_field_name("argument")):
                return name
            return None
        if node.type == "identifier":
            name = source.node_text(node)
            scopes = self.variables.get(name)
            kind = (scopes.get(_function_key(node)) or scopes.get(None)) if scopes else None
            if kind is None:
                kind = _cc_name_kind(name)
            return kind
        if node.type == "binary_expression" and node.child_by_field_name("operator").type in ("*", "+"):
            kinds = {self._kind(node.child_by_field_name("left")), self._kind(node.child_by_field_name("right"))}
            return _COMBINED if kinds & {_MAJOR, _COMBINED} else None
        return None

    def _is_props(self, base) -> bool:
        """Is `base` a device-properties struct (`prop`, `deviceProp`, `getDeviceProperties(d)`)?"""
        if base is None:
            return False
        text = self.source.node_text(base).lower()
        if "version" in text:
            return False
        if "prop" in text:
            return True
        inner = strip_parens(base)
        while inner is not None and inner.type in ("subscript_expression", "pointer_expression"):
            inner = inner.child_by_field_name("argument")
        if inner is None or inner.type != "identifier":
            return False
        if self.typed_props is None:
            self.typed_props = set()
            for type_node in queries.nodes(CUDA, _R001_PROP_TYPES, self.source.tree.root_node, "type"):
                self._prop_declaration(type_node)
        name = self.source.node_text(inner)
        return name in self.prop_names or name in self.typed_props

    def _api_call(self, call, api: str) -> None:
        args = arguments(call)
        if api.endswith("GetDeviceProperties") or api.endswith("GetDeviceProperties_v2"):
            name = _address_of(args[0], self.source) if args else None
            if name is not None:
                self.prop_names.add(name)
            return
        if api == "cuDeviceComputeCapability":
            for arg, kind in zip(args, (_MAJOR, _MINOR)):
                name = _address_of(arg, self.source)
                if name is not None:
                    self.variables.setdefault(name, {})[_function_key(call)] = kind
            return
        if len(args) < 2:
            return
        attribute = self.source.node_text(args[1]).replace("_", "").lower()
        if "computecapability" not in attribute:
            return
        name = _address_of(args[0], self.source)
        if name is not None:
            self.variables.setdefault(name, {})[_function_key(call)] = _MAJOR if attribute.endswith("major") else _MINOR

    def _prop_declaration(self, type_node) -> None:
        declaration = type_node.parent
        if declaration is None or declaration.type not in (
                "declaration", "parameter_declaration", "field_declaration", "optional_parameter_declaration"):
            return
        for declarator in declaration.children_by_field_name("declarator"):
            name = _declared_identifier(declarator)
            if name is not None:
                self.typed_props.add(self.source.node_text(name))


# Words of a name that mark AMD devices: `GGML_CUDA_CC_OFFSET_AMD`, `CC_IS_CDNA`, `CC_RDNA2`.
# Not `hip`: the HIP API's own names (`hipDeviceAttributeComputeCapabilityMajor`) number nothing.
_AMD_DEVICE_WORDS = frozenset({"amd", "amdgpu", "rocm", "gcn", "cdna", "rdna"})
_CAPABILITY_WORDS = frozenset({"cc", "capability"})


def _numbers_amd_devices(source: SourceFile) -> bool:
    """Does the file name a compute capability of AMD devices (`#define X_CC_OFFSET_AMD
    0x1000000`, `X_CC_IS_CDNA(cc)`)? Then the project numbers AMD GPUs on the scale of its
    capability tests, above every NVIDIA value, and those tests read AMD devices as meant:
    `cc >= X_CC_VOLTA` is true there on purpose."""
    lowered, root = source.data.lower(), source.tree.root_node
    for word in _AMD_DEVICE_WORDS:
        token = word.encode()
        at = lowered.find(token)
        while at != -1:
            node = root.descendant_for_byte_range(at, at + len(token))
            if node is not None and node.type == "identifier":
                words = set(_name_words(source.node_text(node)))
                if words & _AMD_DEVICE_WORDS and words & _CAPABILITY_WORDS:
                    return True
            at = lowered.find(token, at + len(token))
    return False


def _outermost_condition(node):
    """The largest `&&`/`||`/`!`/parenthesised expression around a comparison."""
    for parent in ancestors_of(node):  # not `Node.parent`, which descends from the root each time
        if parent.type == "parenthesized_expression":
            node = parent
        elif parent.type == "unary_expression" and parent.child_by_field_name("operator").type == "!":
            node = parent
        elif parent.type == "binary_expression" and parent.child_by_field_name("operator").type in ("&&", "||"):
            node = parent
        else:
            break
    return node


@needs(*_DEVICE_QUERY_HINTS, b"get_device_capability", b"get_device_properties")
def check_compute_capability_check(source: SourceFile) -> list[Finding]:
    """R001: `prop.major >= 7`, `cc >= 80`, `major * 10 + minor >= 80` in C/C++;
    `torch.cuda.get_device_capability() >= (8, 0)`, `[0] >= 9`, `major >= 8` in Python."""
    if source.language == PYTHON:
        if b"get_device_capability" not in source.data and b"get_device_properties" not in source.data:
            return []
        found = _PythonCapabilityScan(source).run()
        return _one_per_function(source, found, _python_function_of(source)) if len(found) > 1 else found
    if not any(hint in source.data for hint in _DEVICE_QUERY_HINTS):
        return []
    root = source.tree.root_node
    return _one_per_function(source, _CapabilityScan(source).run(),
                             lambda f: _function_key(root.descendant_for_byte_range(f.location.start_byte,
                                                                                    f.location.start_byte)))


def _one_per_function(source: SourceFile, findings: list[Finding], function_of) -> list[Finding]:
    """One finding per function where ROCm runs it: its capability tests (`major == 8` for one
    path, `major == 9` for the next) read an AMD GPU's version as NVIDIA's in one decision,
    and its AMD branch goes in once. The worst test leads, the others are its related places.
    Tests at file scope, or where the ROCm path is not sure, stay as they are."""
    if len(findings) < 2:
        return findings
    groups: dict[int, list[Finding]] = {}
    out: list[Finding | int] = []
    for f in findings:
        live = source.rocm_path is None or source.rocm_path.status(f.location.start_byte) is Status.LIVE
        key = function_of(f) if live else None
        if key is None:
            out.append(f)
        elif key in groups:
            groups[key].append(f)
        else:
            groups[key] = [f]
            out.append(key)
    result = []
    for item in out:
        if isinstance(item, Finding):
            result.append(item)
            continue
        members = groups[item]
        lead = max(members, key=lambda f: (f.severity or Severity.WARNING).rank)  # the first of the worst
        result.append(replace(lead, related=lead.related + tuple(
            Related(f.location, f"`{_short(f.matched)}` tests it too") for f in members if f is not lead)))
    return result


def _python_function_of(source: SourceFile):
    """A finding's innermost `def` (its node's id), or None at module level."""
    spans = sorted(((node.lineno, node.end_lineno or node.lineno, id(node)) for node in module_nodes(source.python_ast)
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))), key=lambda span: span[1] - span[0])

    def function_of(f: Finding) -> int | None:
        line = f.location.start_line
        return next((key for start, end, key in spans if start <= line <= end), None)
    return function_of


def _is_test_module(path: str) -> bool:
    """A module pytest collects tests from (`test_*.py`, `*_test.py`) or its `conftest.py`, or
    a benchmark script (`benchmark_*.py`, `bench_*.py`, a module under `benchmarks/`): its
    gates decide what runs and is measured, not what the ported code computes."""
    name = os.path.basename(path)
    if not name.endswith(".py"):
        return False
    folders = set(path.replace("\\", "/").split("/")[:-1])
    return (name == "conftest.py" or name.startswith(("test_", "benchmark_", "bench_")) or name.endswith("_test.py")
            or bool(folders & {"benchmarks", "benchmark"}))


# R001 in Python: torch.cuda.get_device_capability() and get_device_properties().major.
_PYTHON_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)
_ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
_PYTHON_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
                   ast.Eq: operator.eq, ast.NotEq: operator.ne}


class _PythonCapabilityScan:
    """R001 in one Python file. Names and function results are followed within the file:
    each name (per function, then module) and function gets the set of capability forms
    any assignment or `return` gives it."""

    def __init__(self, source: SourceFile):
        self.source = source
        self.tree = source.python_ast
        self._parents = module_parents(self.tree)
        self.bindings: dict[ast.AST, dict[str, set[str]]] = {}
        self.constants: dict[str, ast.expr] = {}  # module-level NAME = value
        self.returns: dict[str, set[str]] = {}  # function name -> forms of what it returns

    def scope_of(self, node: ast.AST) -> ast.AST:
        node = self._parents.get(id(node))
        while node is not None and not isinstance(node, _PYTHON_SCOPES):
            node = self._parents.get(id(node))
        return node if node is not None else self.tree

    def run(self) -> list[Finding]:
        assignments, returns, compares, guards = [], [], [], []
        for node in module_nodes(self.tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                assignments.append(node)
            elif isinstance(node, ast.Return) and node.value is not None:
                returns.append(node)
            elif isinstance(node, ast.Compare):
                compares.append(node)
            if _is_python_guard(node):
                guards.append(node)
        if not compares:
            return []
        for node in assignments:
            if isinstance(node, ast.Assign) and self.scope_of(node) is self.tree:
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.constants[target.id] = node.value
        assignments.sort(key=lambda n: (n.lineno, n.col_offset))
        for _ in range(2):  # a second round sees functions defined after their callers
            self.bindings = {}
            for node in assignments:
                self._bind(node)
            for node in returns:
                function = self.scope_of(node)
                if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.returns.setdefault(function.name, set()).update(self.kinds(node.value, function))
        guard_spots = [(self.scope_of(g), self.source.python_range(g)[0]) for g in guards]
        findings, reported = [], set()
        tests = [c for c in sorted(compares, key=lambda c: (c.lineno, c.col_offset))
                 if self._is_capability_test(c, self.scope_of(c))]
        in_condition: dict[int, list[ast.Compare]] = {}  # the tests of each outermost expression
        for compare in tests:
            in_condition.setdefault(id(self._top_expression(compare)), []).append(compare)
        for compare in tests:
            scope = self.scope_of(compare)
            top = self._top_expression(compare)
            limit = self.source.python_range(top)[1]
            if id(top) in reported or any(s is scope and at < limit for s, at in guard_spots):
                continue
            reported.add(id(top))
            start, end = self.source.python_range(compare)
            text = self.source.data[start:end].decode("utf-8", errors="replace")
            message = _capability_message(_short(text), False)
            severity = None
            if all(self._answered_as_on_ampere(c, scope) for c in in_condition[id(top)]):
                message, severity = _capability_message(_short(text), True), Severity.NOTE
            elif _is_test_module(self.source.path):
                # A test's gate decides which tests run (and with what tolerance) on AMD, not
                # what the ported code computes.
                message = message[:-1] + "; in a test or benchmark module it decides what runs there."
                severity = Severity.NOTE
            elif self._only_tunes(top, scope):
                message, severity = message[:-1] + _TUNING_ONLY, Severity.NOTE
            findings.append(finding(self.source, start, end, message, Fix.advice(R001_PYTHON_ADVICE),
                                    severity=severity))
        return findings

    def _only_tunes(self, top: ast.AST, scope: ast.AST) -> bool:
        """Does the test's answer only pick numbers (a block size, a workspace size)? Its
        condition's arms, or every test of the name it is stored in, only assign or return
        arithmetic of constants and names: AMD then runs with another generation's tuning,
        a performance matter, where a feature gate (`return False`, a kernel's name, a call)
        decides what runs."""
        parent = self._parents.get(id(top))
        if isinstance(parent, (ast.If, ast.IfExp)) and parent.test is top:
            return self._chooses_numbers(parent, scope)
        if isinstance(parent, ast.Assign) and parent.value is top and len(parent.targets) == 1 \
                and isinstance(parent.targets[0], ast.Name):
            name = parent.targets[0].id
            uses = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name
                    and isinstance(n.ctx, ast.Load)]
            return all(self._chooses_numbers(self._test_of(use), scope) for use in uses)  # (none: decides nothing)
        return False

    def _test_of(self, node: ast.AST) -> ast.AST | None:
        """The `if` or conditional expression whose test `node` is (through `and`, `or`, `not`)."""
        parent = self._parents.get(id(node))
        while isinstance(parent, (ast.BoolOp, ast.UnaryOp)):
            node, parent = parent, self._parents.get(id(parent))
        return parent if isinstance(parent, (ast.If, ast.IfExp)) and parent.test is node else None

    def _chooses_numbers(self, choice: ast.AST | None, scope: ast.AST) -> bool:
        numbers = _Numbers(scope, self.constants)
        if isinstance(choice, ast.IfExp):
            arms = [choice.body, choice.orelse]
            return all(numbers.numeric(arm) for arm in arms) and not _flags(arms)
        if not isinstance(choice, ast.If):
            return False
        arms = [*choice.body, *choice.orelse]
        if not choice.orelse:
            # `if test: return 128` then `return 64`: what follows in the block is the other arm.
            parent = self._parents.get(id(choice))
            block = next((getattr(parent, field) for field in ("body", "orelse", "finalbody")
                          if choice in getattr(parent, field, ())), [choice])
            arms += block[block.index(choice) + 1:]
        return numbers.assigns_numbers(arms) and not _flags(arms)

    def _top_expression(self, node: ast.AST) -> ast.AST:
        parent = self._parents.get(id(node))
        while isinstance(parent, ast.expr):
            node, parent = parent, self._parents.get(id(parent))
        return node

    def _bind(self, node) -> None:
        scope = self.scope_of(node)
        names = self.bindings.setdefault(scope, {})
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        kinds = self.kinds(node.value, scope)
        for target in targets:
            if isinstance(target, ast.Name):
                names.setdefault(target.id, set()).update(kinds)
            elif isinstance(target, (ast.Tuple, ast.List)) and _TUPLE in kinds:
                for element, kind in zip(target.elts, (_MAJOR, _MINOR)):
                    if isinstance(element, ast.Name):
                        names.setdefault(element.id, set()).add(kind)

    def _lookup(self, name: str, scope: ast.AST) -> set[str]:
        for where in (scope, self.tree):
            names = self.bindings.get(where, {})
            if name in names:
                return names[name]
        return set()

    @bounded(set)
    def kinds(self, node: ast.AST, scope: ast.AST) -> set[str]:
        """The capability forms `node` may hold: the tuple, major, minor, major*10+minor, the properties."""
        if isinstance(node, ast.Call):
            name = python_callee_name(node)
            if name == "get_device_capability":
                return {_TUPLE}
            if name == "get_device_properties":
                return {_PROPS}
            if name in ("int", "tuple", "list") and len(node.args) == 1:
                return self.kinds(node.args[0], scope)
            if name == "to_int" and isinstance(node.func, ast.Attribute):  # vLLM's DeviceCapability
                return {_COMBINED} if _TUPLE in self.kinds(node.func.value, scope) else set()
            return set(self.returns.get(name, ())) if name is not None else set()
        if isinstance(node, ast.Attribute):
            # `props.major`, and `.major` of a named tuple such as vLLM's DeviceCapability
            if node.attr in (_MAJOR, _MINOR) and self.kinds(node.value, scope) & {_PROPS, _TUPLE}:
                return {node.attr}
            return set()
        if isinstance(node, ast.Subscript):
            index = node.slice
            if (isinstance(index, ast.Constant) and index.value in (0, 1) and not isinstance(index.value, bool)
                    and _TUPLE in self.kinds(node.value, scope)):
                return {(_MAJOR, _MINOR)[index.value]}
            return set()
        if isinstance(node, ast.Name):
            return self._lookup(node.id, scope)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
            parts = self.kinds(node.left, scope) | self.kinds(node.right, scope)
            return {_COMBINED} if parts & {_MAJOR, _COMBINED} else set()
        if isinstance(node, ast.JoinedStr):  # int(f"{major}{minor}")
            values = [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
            return {_COMBINED} if any(_MAJOR in self.kinds(v, scope) for v in values) else set()
        if isinstance(node, (ast.Tuple, ast.List)) and node.elts:
            return {_TUPLE} if _MAJOR in self.kinds(node.elts[0], scope) else set()
        return set()

    def _is_capability_test(self, compare: ast.Compare, scope: ast.AST) -> bool:
        operands = [compare.left, *compare.comparators]
        for (left, right), op in zip(zip(operands, operands[1:]), compare.ops):
            for subject, other, swapped in ((left, right, False), (right, left, True)):
                for kind in self.kinds(subject, scope) & {_TUPLE, _MAJOR, _COMBINED}:
                    if isinstance(op, _ORDERINGS) and self._is_constant(other, kind):
                        return True
                    if isinstance(op, (ast.In, ast.NotIn)) and not swapped and self._is_constant_set(other, kind):
                        return True
        return False

    def _answered_as_on_ampere(self, compare: ast.Compare, scope: ast.AST) -> bool:
        if len(compare.ops) != 1:
            return False
        op = compare.ops[0]
        for subject, other, swapped in ((compare.left, compare.comparators[0], False),
                                        (compare.comparators[0], compare.left, True)):
            kinds = self.kinds(subject, scope) & {_TUPLE, _MAJOR, _COMBINED}
            if len(kinds) != 1:
                continue
            kind = kinds.pop()
            if isinstance(op, (ast.In, ast.NotIn)) and not swapped:
                node = self._resolve(other)
                values = frozenset(self._constant_of(e) for e in getattr(node, "elts", ()))
                if not values or None in values:
                    return False
                # (`not in` flips the answer on AMD and on Ampere alike: the same verdict)
                return _answers_as_ampere(kind, lambda v, c: v in c, values)
            how = _PYTHON_COMPARE.get(type(op))
            value = self._constant_of(other)
            return how is not None and value is not None and _answers_as_ampere(kind, how, value, swapped)
        return False

    def _constant_of(self, node: ast.AST):
        """An int, or a tuple of ints, written in place or named at module level."""
        node = self._resolve(node)
        if isinstance(node, (ast.Tuple, ast.List)):
            values = tuple(_int_constant(e) for e in node.elts)
            return values if values and None not in values else None
        return _int_constant(node)

    def _resolve(self, node: ast.AST) -> ast.AST:
        if isinstance(node, ast.Name) and node.id in self.constants:
            return self.constants[node.id]
        return node

    def _is_constant(self, node: ast.AST, kind: str) -> bool:
        node = self._resolve(node)
        if kind == _TUPLE:
            return (isinstance(node, (ast.Tuple, ast.List)) and 1 <= len(node.elts) <= 3
                    and all(_int_constant(e) is not None for e in node.elts)
                    and _is_capability_value(_int_constant(node.elts[0]), _MAJOR))
        return _is_capability_value(_int_constant(node), kind)

    def _is_constant_set(self, node: ast.AST, kind: str) -> bool:
        node = self._resolve(node)
        return (isinstance(node, (ast.Tuple, ast.List, ast.Set)) and bool(node.elts)
                and all(self._is_constant(e, kind) for e in node.elts))


# A capability test that only picks numbers (`_PythonCapabilityScan._only_tunes`).
_TUNING_ONLY = ("; here it only picks a tuning number, so AMD runs with another generation's choice: "
                "a performance matter, not a wrong path.")
class _Numbers:
    """What holds a number in one function (`scope`) or at module level (`constants`)."""

    def __init__(self, scope: ast.AST, constants: dict[str, ast.expr]):
        self.scope, self.constants = scope, constants
        self._values: dict[str, list[ast.expr]] | None = None
        self._checking: set[str] = set()

    @bounded(False)  # too deep to tell: not a tuning number
    def numeric(self, node: ast.AST) -> bool:
        """Arithmetic of numbers (`128`, `64 if dropout else 128`: whatever picks between them)
        and of names that only ever hold such (`kBlockM_sm90`): no call, attribute
        (`torch.bfloat16`) or name of something else (a kernel, a parameter), and no constant
        that is not a number (`False`, `"wgmma"`, `None` are choices of what runs)."""
        if isinstance(node, ast.IfExp):
            return self.numeric(node.body) and self.numeric(node.orelse)
        if isinstance(node, ast.BinOp):
            return self.numeric(node.left) and self.numeric(node.right)
        if isinstance(node, ast.UnaryOp):
            return self.numeric(node.operand)
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        return isinstance(node, ast.Name) and self._holds_numbers(node.id)

    def _holds_numbers(self, name: str) -> bool:
        if name in self._checking:
            return False  # a value made from itself
        values = self._assigned().get(name) or ([self.constants[name]] if name in self.constants else [])
        self._checking.add(name)
        try:
            return bool(values) and all(self.numeric(v) for v in values)
        finally:
            self._checking.discard(name)

    def _assigned(self) -> dict[str, list[ast.expr]]:
        if self._values is None:
            self._values = {}
            for node in ast.walk(self.scope):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    self._values.setdefault(node.targets[0].id, []).append(node.value)
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
                    if node.value is not None:
                        self._values.setdefault(node.target.id, []).append(node.value)
        return self._values

    def assigns_numbers(self, statements: list[ast.stmt]) -> bool:
        """Statements that only assign or return numbers, nested `if`s of them included."""
        for statement in statements:
            if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)):
                if statement.value is None or not self.numeric(statement.value):
                    return False
            elif isinstance(statement, ast.If):
                if not self.assigns_numbers(statement.body) or not self.assigns_numbers(statement.orelse):
                    return False
            elif not isinstance(statement, ast.Pass):
                return False
        return True


def _flags(arms: list[ast.AST]) -> bool:
    """Do the arms choose only between 0 and 1 (a feature flag, not a tuning number)?"""
    nodes = [n for arm in arms for n in ast.walk(arm)]
    return not any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) for n in nodes) and \
        {n.value for n in nodes if isinstance(n, ast.Constant)} <= {0, 1}


def _int_constant(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _is_python_guard(node: ast.AST) -> bool:
    """`torch.version.hip`, `torch.version.cuda` (None on ROCm), `gcnArchName`, `is_hip()`, `IS_ROCM`,
    `platform.is_cuda()`."""
    if isinstance(node, ast.Attribute):
        return (node.attr in ("hip", "cuda") and isinstance(node.value, ast.Attribute) and node.value.attr == "version"
                ) or node.attr in _ARCH_FIELDS or _is_platform_test_name(node.attr)
    if isinstance(node, ast.Name):
        return _is_platform_test_name(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in _ARCH_FIELDS  # getattr(props, "gcnArchName", "")
    # vLLM's `current_platform.is_cuda()` is False on ROCm (unlike a tensor's `.is_cuda`).
    return isinstance(node, ast.Call) and python_callee_name(node) == "is_cuda" and not node.args



# ---- Strings a path or an image argument is built from (R003, R004) ------------------------

_STRING_NODES = ("string_literal", "raw_string_literal")
_DEFINITIONS = """
[(init_declarator declarator: (_) @name value: (_) @value)
 (assignment_expression left: (identifier) @name right: (_) @value)
 (preproc_def name: (identifier) @name value: (preproc_arg) @value)] @definition
"""
# The string literals in one macro body. A `"` right after a backslash opens none (outside a
# literal C has no backslash but a line continuation): from each `\"` it was quadratic.
_QUOTED = re.compile(r'(?<!\\)"((?:[^"\\\n]|\\.)*)"')
_RESOLVE_DEPTH = 3


def _literal_text(node, source: SourceFile) -> str:
    """The characters of a string literal as written between its quotes (escapes kept)."""
    parts = [c for c in node.named_children if c.type in ("string_content", "escape_sequence", "raw_string_content")]
    return "".join(source.node_text(c) for c in parts)


class _StringSources:
    """The string literals an expression is built from, through local names and macros.

    `"dir/k.ptx"`, `dir + "/k.ptx"`, `(dir + "/k.ptx").c_str()`, `path` with
    `std::string path = ...;` earlier in the function (or at file scope), `KERNEL_FILE` with
    `#define KERNEL_FILE "k.ptx"`, `files[i]` with `const char* files[] = {...}`. Definitions
    in code dead on ROCm are not followed. Definitions are read once, on first need.
    """

    def __init__(self, source: SourceFile):
        self.source = source
        self._definitions: dict[str, list[tuple[object, object]]] | None = None

    def strings(self, node) -> list[tuple[str, object]]:
        """(text, node) for each literal; `node` is the literal, or the `#define` it is in."""
        found: list[tuple[str, object]] = []
        self._collect(node, node, found, set(), 0)
        return found

    def _collect(self, node, use, found, seen: set[int], depth: int) -> None:
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in _STRING_NODES:
                found.append((_literal_text(current, self.source), current))
            elif current.type == "identifier":
                parent = current.parent
                if not (parent is not None and parent.type == "call_expression"
                        and parent.child_by_field_name("function") == current):
                    self._follow(self.source.node_text(current), use, found, seen, depth)
            elif current.type not in ("comment", "field_identifier"):
                stack.extend(reversed(current.named_children))

    def _follow(self, name: str, use, found, seen: set[int], depth: int) -> None:
        if depth >= _RESOLVE_DEPTH:
            return
        for definition, value in self._visible(name, use):
            if definition.id in seen:
                continue
            seen.add(definition.id)
            if definition.type == "preproc_def":
                body = self.source.node_text(value)
                found.extend((m.group(1), definition) for m in _QUOTED.finditer(body))
            else:
                self._collect(value, use, found, seen, depth + 1)

    def _visible(self, name: str, use) -> list[tuple[object, object]]:
        """Definitions of `name` that `use` may see: earlier in its function, else file scope and macros."""
        candidates = self._all().get(name, [])
        function = enclosing_function(use)
        local = [(d, v) for d, v in candidates if function is not None and enclosing_function(d) == function
                 and d.start_byte < use.start_byte]
        if local:
            return local
        return [(d, v) for d, v in candidates if d.type == "preproc_def" or enclosing_function(d) is None]

    def _all(self) -> dict[str, list[tuple[object, object]]]:
        if self._definitions is None:
            self._definitions = {}
            model = self.source.rocm_path
            for match in queries.matches(CUDA, _DEFINITIONS, self.source.tree.root_node):
                definition, name = match["definition"][0], match["name"][0]
                if model is not None and model.status(definition.start_byte) is Status.DEAD:
                    continue
                if definition.type == "init_declarator":
                    name = _declared_identifier(name)
                    if name is None:
                        continue
                    definition = definition.parent if definition.parent.type == "declaration" else definition
                self._definitions.setdefault(self.source.node_text(name), []).append(
                    (definition, match["value"][0]))
        return self._definitions


# ---- R003 missing-offload-arch (C/C++ sources) ---------------------------------------------

_GFX000 = b"gfx000"
_GFX_TARGET = re.compile(r"gfx[0-9]{2,4}[a-z]?(?![0-9a-z])")
_HIP_MODULE_LOADS = {"hipModuleLoad": 1, "hipModuleLoadData": 1, "hipModuleLoadDataEx": 1}
_CODE_OBJECT_SUFFIXES = (".hsaco", ".co", ".code", ".hipfb")
# A literal compared with, searched for, or printed: code that recognises `gfx000`, not uses it.
_STRING_TESTS = frozenset({
    "strcmp", "strncmp", "strcasecmp", "strstr", "compare", "find", "rfind", "starts_with", "ends_with",
    "contains", "equal", "count",
})
_MESSAGE_WORDS = ("print", "puts", "log", "warn", "error", "message", "assert", "throw", "fail")
_R003_LOADS = "(call_expression function: (identifier) @api (#match? @api \"^hipModuleLoad(Data|DataEx)?$\")) @call"
R003_GFX000_ADVICE = "Replace `gfx000` with the real targets, e.g. `gfx90a;gfx942` (`--offload-arch=gfx90a`)"
R003_SINGLE_TARGET_ADVICE = ("Build the code object for every target (`--offload-arch=gfx90a --offload-arch=gfx942`), "
                             "or pick the file by `prop.gcnArchName`")


def _is_test_or_message(literal) -> bool:
    """Is a string literal compared, searched for, printed or thrown rather than used?"""
    parent = literal.parent
    while parent is not None and parent.type in ("parenthesized_expression", "concatenated_string", "argument_list"):
        if parent.type == "argument_list":
            call = parent.parent
            fn = call.child_by_field_name("function") if call is not None else None
            if fn is not None and fn.type == "field_expression":
                fn = fn.child_by_field_name("field")
            name = (fn.text.decode(errors="replace") if fn is not None else "").rsplit("::", 1)[-1]
            return name in _STRING_TESTS or any(word in name.lower() for word in _MESSAGE_WORDS)
        parent = parent.parent
    return parent is not None and parent.type == "binary_expression" and parent.child_by_field_name(
        "operator").type in ("==", "!=", "<<")


def _uses_gfx000(source: SourceFile, at: int) -> bool:
    """Is the `gfx000` at byte `at` used as a target (a string or a macro value), not a remark?"""
    node = source.tree.root_node.descendant_for_byte_range(at, at + len(_GFX000))
    while node is not None and node.type not in (*_STRING_NODES, "preproc_arg", "comment", "char_literal"):
        node = node.parent
    if node is None or node.type in ("comment", "char_literal"):
        return False
    if node.type == "preproc_arg":  # `#define ARCH gfx000`, not `#error no GPU (gfx000)`
        return node.parent is not None and node.parent.type in ("preproc_def", "preproc_function_def")
    return not _is_test_or_message(node)


def _gfx000_findings(source: SourceFile) -> list[Finding]:
    findings = []
    at = source.data.find(_GFX000)
    while at != -1:
        if _uses_gfx000(source, at):
            findings.append(finding(
                source, at, at + len(_GFX000),
                "`gfx000` names no GPU: `rocm_agent_enumerator` prints it when it sees none.",
                Fix.advice(R003_GFX000_ADVICE)))
        at = source.data.find(_GFX000, at + len(_GFX000))
    return findings


def _single_target_loads(source: SourceFile) -> list[Finding]:
    findings = []
    strings = _StringSources(source)
    functions_reading_arch: dict[int | None, bool] = {}
    for match in queries.matches(CUDA, _R003_LOADS, source.tree.root_node):
        call, api = match["call"][0], source.node_text(match["api"][0])
        args = arguments(call)
        if len(args) <= _HIP_MODULE_LOADS[api]:
            continue
        argument = args[_HIP_MODULE_LOADS[api]]
        paths = [(text, node) for text, node in strings.strings(argument)]
        if api != "hipModuleLoad" and not paths:
            # An image read from a file: the code object path is elsewhere in the function.
            function = enclosing_function(call)
            paths = [] if function is None else [
                (text, node) for text, node in strings.strings(function)
                if text.endswith(_CODE_OBJECT_SUFFIXES)]
        targets = {t for text, _ in paths for t in _GFX_TARGET.findall(text)}
        if len(targets) != 1:
            continue  # no fixed target, or a table of several (chosen at run time)
        key = _function_key(call)
        if key not in functions_reading_arch:
            function = enclosing_function(call)
            functions_reading_arch[key] = function is not None and any(
                field.encode() in function.text for field in _ARCH_FIELDS)
        if functions_reading_arch[key]:
            continue  # the file is chosen by `gcnArchName`
        target = targets.pop()
        text, where = next((t, n) for t, n in paths if target in t)
        related = ()
        if source.line_of(where.start_byte) != source.line_of(argument.start_byte):
            related = (Related(source.location(where.start_byte, where.end_byte), f"`{_short(text)}` is named here"),)
        findings.append(at_node(
            source, argument,
            f"Code object `{_short(text)}` is built for `{target}` only; other GPUs cannot load it.",
            Fix.advice(R003_SINGLE_TARGET_ADVICE), related=related))
    return findings


@needs(_GFX000, all_of(b"hipModuleLoad", b"gfx"))
def check_missing_offload_arch(source: SourceFile) -> list[Finding]:
    """R003 (C/C++ sources): `gfx000` in strings; `hipModuleLoad` of a code object for one gfx target."""
    data = source.data
    findings = _gfx000_findings(source) if _GFX000 in data else []
    if b"hipModuleLoad" in data and b"gfx" in data:
        findings.extend(_single_target_loads(source))
    return findings


# ---- R004 ptx-module-load -----------------------------------------------------------------

# Module and library loads -> index of the file name or image argument.
_MODULE_LOADS = {
    "cuModuleLoad": 1, "cuModuleLoadData": 1, "cuModuleLoadDataEx": 1, "cuModuleLoadFatBinary": 1,
    "hipModuleLoad": 1, "hipModuleLoadData": 1, "hipModuleLoadDataEx": 1,
    "cuLibraryLoadFromFile": 1, "cuLibraryLoadData": 1,
}
# NVRTC calls that produce or need PTX -> their hipRTC counterpart.
_NVRTC_CALLS = {
    "nvrtcCreateProgram": "hiprtcCreateProgram",
    "nvrtcCompileProgram": "hiprtcCompileProgram",
    "nvrtcGetPTX": "hiprtcGetCode", "nvrtcGetPTXSize": "hiprtcGetCodeSize",
    "nvrtcGetCUBIN": "hiprtcGetCode", "nvrtcGetCUBINSize": "hiprtcGetCodeSize",
}
_R004_QUERY = """
[(call_expression function: (identifier) @api
    (#match? @api "^(cuModuleLoad|hipModuleLoad|cuLibraryLoad|nvrtc(CreateProgram|CompileProgram|GetPTX|GetCUBIN))"))
    @call
 (preproc_include path: (_) @path) @include]
"""
_PTX_TEXT = re.compile(r"^\s*(?://[^\n]*\n\s*)*\.version\s|\.target\s+sm_\d|\.entry\s")
R004_LOAD_ADVICE = ("Load a code object built by hipcc instead: `hipcc --genco --offload-arch=gfx90a "
                    "-o kernels.hsaco`, then `hipModuleLoad(&module, \"kernels.hsaco\")`")
R004_INCLUDE_ADVICE = "Include `<hip/hiprtc.h>` and compile with hipRTC (`hiprtcCreateProgram`, `hiprtcCompileProgram`)"


def _nvidia_code(text: str) -> str | None:
    """What NVIDIA code a literal names or holds: "PTX file `k.ptx`", "PTX source", ..."""
    stripped = text.strip().lower()
    if stripped.endswith(".ptx"):
        return f"PTX file `{_short(text.strip())}`"
    if stripped.endswith(".cubin"):
        return f"NVIDIA cubin `{_short(text.strip())}`"
    if _PTX_TEXT.search(text.replace("\\n", "\n")):
        return "PTX source"
    return None


@needs(b"nvrtc", all_of(any_of(b"ModuleLoad", b"LibraryLoad"), any_of(b".ptx", b".cubin", b".target", b".version")))
def check_ptx_module_load(source: SourceFile) -> list[Finding]:
    """R004: PTX/cubin module loads, NVRTC calls and `#include <nvrtc.h>`."""
    data = source.data
    has_nvrtc = b"nvrtc" in data
    has_loads = (b"ModuleLoad" in data or b"LibraryLoad" in data) and (
        b".ptx" in data or b".cubin" in data or b".target" in data or b".version" in data)
    if not has_nvrtc and not has_loads:
        return []
    findings = []
    strings = _StringSources(source)
    for match in queries.matches(CUDA, _R004_QUERY, source.tree.root_node):
        if "include" in match:
            path = include_path(match["path"][0], source)
            if has_nvrtc and path.rsplit("/", 1)[-1] == "nvrtc.h" and source.hipified_header(path) is None:
                # (hipify writes hipRTC's header: it compiles for the GPU it runs on)
                findings.append(at_node(
                    source, match["path"][0],
                    "`nvrtc.h` is NVIDIA's runtime compiler; it emits PTX, which AMD GPUs cannot run.",
                    Fix.advice(R004_INCLUDE_ADVICE)))
            continue
        call, callee = match["call"][0], match["api"][0]
        api = source.node_text(callee)
        if api in _NVRTC_CALLS:
            if source.hipified_name(api) is not None:
                continue  # hipify makes it the hipRTC call
            hiprtc = _NVRTC_CALLS[api]
            advice = (f"Port to hipRTC: `{hiprtc}`, with `--offload-arch=gfx90a` in place of `-arch=compute_XX`"
                      if api == "nvrtcCompileProgram" else f"Port to hipRTC: call `{hiprtc}` instead")
            findings.append(at_node(
                source, callee, f"`{api}` is NVRTC, which compiles to PTX; AMD GPUs cannot run PTX.",
                Fix.advice(advice)))
            continue
        index = _MODULE_LOADS.get(api)
        args = arguments(call)
        if index is None or len(args) <= index or not has_loads:
            continue
        for text, node in strings.strings(args[index]):
            what = _nvidia_code(text)
            if what is None:
                continue
            related = ()
            if source.line_of(node.start_byte) != source.line_of(args[index].start_byte):
                related = (Related(source.location(node.start_byte, node.end_byte), "the code is named here"),)
            findings.append(at_node(
                source, args[index], f"`{api}` loads {what}, which AMD GPUs cannot run.",
                Fix.advice(R004_LOAD_ADVICE), related=related))
            break
    return findings


# ---- R005 hip7-runtime-semantics ----------------------------------------------------------

# Deprecated context calls -> the device or stream API that replaces them.
_CONTEXT_REPLACEMENTS = {
    "Synchronize": "hipDeviceSynchronize()",
    "GetDevice": "hipGetDevice(&device)",
    "SetCurrent": "hipSetDevice(device)", "PushCurrent": "hipSetDevice(device)",
    "PopCurrent": "hipSetDevice(previous)", "Create": "hipSetDevice(device)",
    "GetCurrent": "hipGetDevice(&device)", "Destroy": "hipDeviceReset()",
    "GetCacheConfig": "hipDeviceGetCacheConfig(&config)", "SetCacheConfig": "hipDeviceSetCacheConfig(config)",
    "GetSharedMemConfig": "hipDeviceGetSharedMemConfig(&config)",
    "SetSharedMemConfig": "hipDeviceSetSharedMemConfig(config)",
    "EnablePeerAccess": "hipDeviceEnablePeerAccess(peer, 0)", "DisablePeerAccess": "hipDeviceDisablePeerAccess(peer)",
    "GetFlags": "hipGetDeviceFlags(&flags)", "GetApiVersion": "hipRuntimeGetVersion(&version)",
    "GetLimit": "hipDeviceGetLimit(&value, limit)", "SetLimit": "hipDeviceSetLimit(limit, value)",
    "GetStreamPriorityRange": "hipDeviceGetStreamPriorityRange(&least, &greatest)",
}
_LAST_ERROR_READS = frozenset({"hipGetLastError"})
_CLEARS_LAST_ERROR = frozenset({"hipGetLastError", "hipExtGetLastError"})
# Calls whose "error" results are states, not errors (`hipErrorNotReady`), or that read the last error.
_NOT_SETTING_LAST_ERROR = frozenset({
    "hipGetLastError", "hipPeekAtLastError", "hipExtGetLastError", "hipStreamQuery", "hipEventQuery",
    "hipGetErrorString", "hipGetErrorName",
})
_NOT_ERRORS = frozenset({"hipSuccess", "hipErrorNotReady"})
_LAST_ERROR_WORDS = (b"GetLastError", b"PeekAtLastError", b"LAUNCH_CHECK")
_STREAM_ORDERED_ALLOCATIONS = frozenset({"hipMallocAsync", "hipMallocFromPoolAsync"})
_SYNCHRONIZATIONS = frozenset({"hipStreamSynchronize", "hipDeviceSynchronize", "hipEventSynchronize"})
_EXITS = "[(return_statement) (throw_statement) (goto_statement) (break_statement) (continue_statement)] @exit"
_EXIT_CALLS = frozenset({"exit", "abort", "_exit", "quick_exit", "terminate", "__builtin_trap", "std::exit"})
_R005_CALLS = ("^(cu|hip)Ctx[A-Z]|^hip(PointerGetAttributes|Free|MallocAsync|MallocFromPoolAsync"
               "|StreamSynchronize|DeviceSynchronize|EventSynchronize)$")
_R005_QUERY = f"""
[(call_expression function: (identifier) @api (#match? @api "{_R005_CALLS}")) @call
 (binary_expression left: (_) @other operator: ["==" "!="] right: (identifier) @error (#match? @error "^hipError[A-Z]"))
    @compare
 (binary_expression left: (identifier) @error operator: ["==" "!="] right: (_) @other (#match? @error "^hipError[A-Z]"))
    @compare
 (init_declarator declarator: (identifier) @name value: (call_expression function: (identifier) @from
    (#match? @from "^hip[A-Z]"))) @binding
 (assignment_expression left: (identifier) @name right: (call_expression function: (identifier) @from
    (#match? @from "^hip[A-Z]"))) @binding]
"""
# Bytes without which a file has none of R005's shapes (a handled error is `== hipErrorX`).
_R005_HINTS = (b"Ctx", b"hipPointerGetAttributes", b"hipMallocAsync", b"hipMallocFromPoolAsync",
               b"= hipError", b"=hipError")
R005_POINTER_ADVICE = ("Test the pointer for null before calling `hipPointerGetAttributes`; "
                       "do not expect `hipErrorInvalidValue` for it")
R005_NOT_READY_ADVICE = "Compare the query's own result: `hipStreamQuery(stream) == hipErrorNotReady`"
R005_FREE_ADVICE = "Free it on its stream: `hipFreeAsync(ptr, stream)`, or `hipStreamSynchronize(stream)` first"


def _is_null(node, source: SourceFile) -> bool:
    node = _strip_casts(node)
    return node is not None and (node.type == "null" or integer_value(node, source) == 0)


def _condition_of_if(compare):
    """The `if` statement whose condition is `compare` (through parentheses and `||`), else None."""
    node = compare.parent
    while node is not None and (node.type == "parenthesized_expression" or (
            node.type == "binary_expression" and node.child_by_field_name("operator").type == "||")):
        node = node.parent
    if node is None or node.type != "condition_clause":
        return None
    statement = node.parent
    return statement if statement is not None and statement.type == "if_statement" else None


class _Hip7Scan:
    def __init__(self, source: SourceFile):
        self.source = source
        self.findings: list[Finding] = []
        # (function id, variable) -> [(offset, API whose result it holds)]
        self.results: dict[tuple[int | None, str], list[tuple[int, str]]] = {}
        self.allocations: list[tuple[int | None, str, object]] = []
        self.synchronizations: list[tuple[int | None, int]] = []
        self.frees: list[object] = []
        # A stale error only matters where the last error is read (or a launch-check macro does).
        self.reads_last_error = any(word in source.data for word in _LAST_ERROR_WORDS)

    def run(self) -> list[Finding]:
        source = self.source
        for match in queries.matches(CUDA, _R005_QUERY, source.tree.root_node):
            if "call" in match:
                self._call(match["call"][0], source.node_text(match["api"][0]))
            elif "compare" in match:
                self._compare(match["compare"][0], match["other"][0], source.node_text(match["error"][0]))
            else:
                key = (_function_key(match["binding"][0]), source.node_text(match["name"][0]))
                self.results.setdefault(key, []).append((match["binding"][0].start_byte,
                                                         source.node_text(match["from"][0])))
        self._stream_ordered_frees()
        return self.findings

    def report(self, node, message: str, advice: str) -> None:
        self.findings.append(at_node(self.source, node, message, Fix.advice(advice)))

    # ---- calls --------------------------------------------------------------------------
    def _call(self, call, api: str) -> None:
        callee = call.child_by_field_name("function")
        args = arguments(call)
        if "Ctx" in api:
            operation = api.split("Ctx", 1)[1]
            replacement = _CONTEXT_REPLACEMENTS.get(operation, "hipSetDevice(device)")
            self.report(callee, f"`{api}` is a context API, deprecated on HIP, where contexts are devices.",
                        f"Use the device API: `{replacement}`")
        elif api == "hipPointerGetAttributes":
            if any(_is_null(a, self.source) for a in args[:2]):
                self.report(call, "Since HIP 7, `hipPointerGetAttributes` of a null pointer returns `hipSuccess`.",
                            R005_POINTER_ADVICE)
        elif api in _STREAM_ORDERED_ALLOCATIONS:
            target = _address_of(args[0], self.source) if args else None
            if target is not None:
                self.allocations.append((_function_key(call), target, call))
        elif api in _SYNCHRONIZATIONS:
            self.synchronizations.append((_function_key(call), call.start_byte))
        elif api == "hipFree":
            self.frees.append(call)

    def _stream_ordered_frees(self) -> None:
        source = self.source
        for call in self.frees:
            args = arguments(call)
            target = _strip_casts(args[0]) if args else None
            if target is None:
                continue
            text = " ".join(source.node_text(target).split())
            key = _function_key(call)
            # A member (`this->buf`, `buf_`) may be allocated in another method of the class.
            member = target.type == "field_expression" or text.endswith("_")
            here = [a for f, t, a in self.allocations if t == text and f == key and a.start_byte < call.start_byte]
            elsewhere = [a for f, t, a in self.allocations if t == text and f != key] if member else []
            if not here and not elsewhere:
                continue
            # A synchronisation after the allocation (or, for a member, earlier in this function).
            since = max(a.end_byte for a in here) if here else -1
            if any(f == key and since <= at < call.start_byte for f, at in self.synchronizations):
                continue
            allocated = here or elsewhere
            api = source.node_text(allocated[0].child_by_field_name("function"))
            self.report(call, f"Since HIP 7, `hipFree` does not wait for the stream of a `{api}` block.",
                        R005_FREE_ADVICE)

    # ---- error codes --------------------------------------------------------------------
    def _result_of(self, node) -> str | None:
        """The HIP API whose result `node` is: a call, or a local assigned one earlier."""
        node = strip_parens(node)
        if node is None:
            return None
        if node.type == "call_expression":
            name = callee_name(node, self.source)
            return name if name is not None and name.startswith("hip") else None
        if node.type != "identifier":
            return None
        assigned = self.results.get((_function_key(node), self.source.node_text(node)), [])
        earlier = [api for at, api in assigned if at < node.start_byte]
        return earlier[-1] if earlier else None

    def _compare(self, compare, other, error: str) -> None:
        api = self._result_of(other)
        if api is None:
            return
        if error == "hipErrorNotReady":
            if api in _LAST_ERROR_READS:
                self.report(compare, f"Since HIP 7, `{api}` never returns `hipErrorNotReady`.", R005_NOT_READY_ADVICE)
            return
        if error in _NOT_ERRORS or api in _NOT_SETTING_LAST_ERROR:
            return
        if compare.child_by_field_name("operator").type != "==" or not self.reads_last_error:
            return
        statement = _condition_of_if(compare)
        if statement is None or self._exits_or_clears(statement):
            return
        self.report(compare,
                    f"Since HIP 7, a handled `{error}` stays the last error; `hipGetLastError` reports it later.",
                    "Clear it where it is handled: `(void)hipGetLastError();` in this branch")

    def _exits_or_clears(self, statement) -> bool:
        """Does the `if` branch leave (return, throw, exit) or read the last error (clearing it)?"""
        branch = statement.child_by_field_name("consequence")
        if branch is None:
            return True
        if queries.nodes(CUDA, _EXITS, branch, "exit"):
            return True
        for call in queries.nodes(CUDA, "(call_expression) @call", branch, "call"):
            name = callee_name(call, self.source)
            if name in _CLEARS_LAST_ERROR or name in _EXIT_CALLS:
                return True
        following = statement.next_named_sibling
        while following is not None and following.type == "comment":
            following = following.next_named_sibling
        return following is not None and following.type == "expression_statement" and any(
            name.encode() in following.text for name in _CLEARS_LAST_ERROR)


@needs(*_R005_HINTS)
def check_hip7_runtime_semantics(source: SourceFile) -> list[Finding]:
    """R005: context APIs, and code that relies on HIP runtime behaviour changed in HIP 7."""
    if not any(hint in source.data for hint in _R005_HINTS):
        return []
    return _Hip7Scan(source).run()


# ---- R006 positional-graph-params-init ------------------------------------------------------
# Graph node parameter structs whose HIP twins (what hipify renames them to) list the same
# fields in another order (HIP 5.2's and ROCm 7's `hip_runtime_api.h`): positional braces
# written for CUDA's order fill other fields on ROCm.
_REORDERED_STRUCTS = {
    "cudaKernelNodeParams": (("func", "gridDim", "blockDim", "sharedMemBytes", "kernelParams", "extra"),
                             ("blockDim", "extra", "func", "gridDim", "kernelParams", "sharedMemBytes")),
    "cudaMemsetParams": (("dst", "pitch", "value", "elementSize", "width", "height"),
                         ("dst", "elementSize", "height", "pitch", "value", "width")),
}
_R006_QUERY = """
[(declaration type: (type_identifier) @type declarator: (init_declarator value: (initializer_list) @init))
 (compound_literal_expression type: (type_identifier) @type value: (initializer_list) @init)]
"""


@needs(*(name.encode() for name in _REORDERED_STRUCTS))
def check_positional_graph_params_init(source: SourceFile) -> list[Finding]:
    findings = []
    for match in queries.matches(CUDA, _R006_QUERY, source.tree.root_node):
        name = source.node_text(match["type"][0])
        if name not in _REORDERED_STRUCTS:
            continue
        values = [e for e in match["init"][0].named_children if e.type != "comment"]
        if not values or any(e.type == "initializer_pair" for e in values):
            continue  # `{}` zeroes and designated members name their fields: the same on HIP
        cuda_order, hip_order = _REORDERED_STRUCTS[name]
        moved = [f"`{field}`'s value fills `{hip_order[i]}`" for i, field in enumerate(cuda_order[:len(values)])
                 if hip_order[i] != field]
        findings.append(at_node(
            source, match["init"][0],
            f"HIP orders `{name}`'s fields differently: {', '.join(moved)}.",
            Fix.advice("Set the fields by name (`params.func = ...; params.gridDim = ...;`), which both "
                       "orders read the same")))
    return findings


# ---- R007 -----------------------------------------------------------------------------------


@needs(*(name.encode() for name in hipify.TOOLKIT_HEADERS))
@only_where(lambda source: _as_written(source.build) is not None)
def check_cuda_toolkit_header(source: SourceFile) -> list[Finding]:
    """R007: a CUDA toolkit header in a file the project's ROCm build compiles as written
    (an error), or in a project with no ROCm build yet that does not hipify it (a note: the
    port decides whether hipify or a compatibility header takes it)."""
    sites = _toolkit_includes(source)
    if not sites:
        return []
    # One root cause per file: the ROCm build compiles it without hipify. The first include
    # is where it stops; the others are the rest of the same change.
    (first, written), *others = sites
    hip = hipify.TOOLKIT_HEADERS[written]
    instead = f"`<{hip}>`" if hip else "the HIP headers"
    related = tuple(Related(source.location(node.start_byte, node.end_byte), f"`{name}` is included here too")
                    for node, name in others)
    surely = _as_written(source.build)
    return [at_node(
        source, first,
        f"`{written}` is a CUDA toolkit header, which ROCm does not ship; "
        + ("the ROCm build compiles this file as written (no hipify step), so it stops here." if surely else
           "the project has no ROCm build yet, and one that compiles this file as written (HIP language, "
           "hipcc) stops here."),
        Fix.advice(f"Include {instead} under `#if defined(__HIP_PLATFORM_AMD__)` with aliases for the CUDA "
                   "names the file uses (a compatibility header), or hipify the file in the ROCm build"),
        severity=None if surely else Severity.NOTE, related=related)]


def _as_written(build) -> bool | None:
    """True: a described ROCm build surely compiles the file without hipify. False: the
    project has no ROCm port yet (`_before_the_port`) and nothing hipifies the file (a
    PyTorch extension's builder would), so the port may compile it as written. None: neither."""
    if build is not None and build.rocm_build:
        return True if build.compiled_as_written else None
    return False if _before_the_port(build) and not (build is not None and build.hipified) else None


def _before_the_port(build) -> bool:
    """Does the project have no ROCm port yet? Its build files describe no ROCm build, and
    none of its files includes HIP's runtime header (`hip_code`: HIP code of its own is a
    port, whose build the build files did not show)."""
    return build is None or not (build.rocm_build or build.hip_code)


def _toolkit_includes(source: SourceFile) -> list[tuple[object, str]]:
    """(path node, header) of the live CUDA toolkit includes of a file a ROCm build compiles,
    or may compile, as written (`_as_written`), where no project header stands in for them."""
    build = source.build
    if _as_written(build) is None:
        return []  # no ROCm build surely compiles it, or hipify rewrites its includes
    stand_ins = build.project_headers if build is not None else frozenset()
    sites = []
    for _, path_node in includes(source):
        written = include_path(path_node, source)
        if written in hipify.TOOLKIT_HEADERS and written not in stand_ins \
                and (source.rocm_path is None or source.rocm_path.is_live(path_node.start_byte)):
            sites.append((path_node, written))
    return sites


# ---- R008 cuda-api-without-hip ----------------------------------------------------------------
# Words that may name a CUDA runtime (`cudaStreamLegacy`) or driver (`cuCtxGetDevice`,
# `CU_CTX_SCHED_AUTO`) API: a byte search finds them, the table and the tree decide.
_API_WORD = re.compile(rb"\b(?:cuda|CUDA_|cu[A-Z]|CU[A-Z])\w*")
_MAX_RELATED_NAMES = 20


@needs(*(name.encode() for name in sorted(hipify.names_without_hip())))
def check_cuda_api_without_hip(source: SourceFile) -> list[Finding]:
    """R008: a CUDA runtime or driver API name HIP has no counterpart for, in code the ROCm
    build compiles: hipify leaves it as it is and hip-clang stops at it. One root cause per
    file (the port's choice of what to do without it): the first use, the others related."""
    if _as_written(source.build) and _toolkit_includes(source):
        return []  # R007's root cause: the file as written is no HIP file at all
    build = source.build
    if build is not None and build.rocm_build and not (build.compiled_as_written or source.hipified):
        return []  # a described ROCm build that may not compile it (a CUDA backend's file)
    if build is not None and not build.rocm_build and not _before_the_port(build):
        return []  # a HIP backend whose build is not described: which files it compiles is not known
    tools = build.hipified if build is not None and source.hipified else frozenset()
    root, model = source.tree.root_node, source.rocm_path
    sites, seen = [], set()
    for match in _API_WORD.finditer(source.data):
        name = match.group().decode()
        if not hipify.without_hip(name, tools):
            continue
        node = root.descendant_for_byte_range(match.start(), match.end())
        if node is not None and node.type == "preproc_arg" and not _expanded_here(node.parent, source):
            continue  # a macro's body compiles where the macro is used: none here
        if node is None or (node.type not in ("identifier", "type_identifier", "preproc_arg")) \
                or (node.type != "preproc_arg" and (node.start_byte, node.end_byte) != match.span()) \
                or _declares(node):
            continue  # a comment, a string, a member, the project's own definition of the name
        if model is not None and model.status(match.start()) is Status.DEAD:
            continue
        if source.shim(name, match.start()) is not None or source.rocm_defines_function(name, match.start()):
            continue  # the ROCm build's own definition of the name
        sites.append((match.start(), match.end(), name))
        seen.add(name)
    if not sites:
        return []
    (start, end, name), *others = sites
    more = f" The file names {len(seen) - 1} more such name{'s' if len(seen) > 2 else ''} (related locations)." \
        if len(seen) > 1 else ""
    return [finding(
        source, start, end,
        f"`{name}` has no HIP counterpart (HIPIFY leaves it as it is); hip-clang stops here.{more}",
        Fix.advice("Keep it for CUDA only (`#if !defined(__HIP_PLATFORM_AMD__)`) and give the ROCm build its own "
                   "path: what HIP offers instead, or nothing where the feature is CUDA's alone"),
        related=tuple(Related(source.location(s, e), f"`{other}` has no HIP counterpart either")
                      for s, e, other in others[:_MAX_RELATED_NAMES]))]


def _expanded_here(definition, source: SourceFile) -> bool:
    """Is the macro `definition` (a `#define`) used in this file's code the ROCm build compiles?
    (Asked once per definition: a header may name several such APIs in one body.)"""
    if definition is None:
        return False
    answers = source.memo.setdefault("runtime.expanded_here", {})
    if definition.id not in answers:
        answers[definition.id] = _expanded(definition, source)
    return answers[definition.id]


def _expanded(definition, source: SourceFile) -> bool:
    name_node = definition.child_by_field_name("name")
    if name_node is None:
        return False
    model = source.rocm_path
    name = source.node_text(name_node)
    if any(node.start_byte != name_node.start_byte and node.type == "identifier" and source.node_text(node) == name
           and node.parent.type not in ("preproc_def", "preproc_function_def")
           and (model is None or model.status(node.start_byte) is not Status.DEAD)
           for node in token_nodes(source, name.encode())):
        return True
    # Or in another macro's body (`#define CHECK(fn) if (!(fn)) err = FAILURE;`), which a
    # parse of the bodies reads as code (`cpp.macro_tree`, one parse for the file).
    return name in _names_in_macro_bodies(source)


def _names_in_macro_bodies(source: SourceFile) -> frozenset[str]:
    """The identifiers the file's macro bodies write where the ROCm build compiles them."""
    def find(source) -> frozenset[str]:
        bodies = macro_tree(source)
        model = source.rocm_path
        return frozenset(source.node_text(node) for node in named_descendants(bodies) if node.type == "identifier"
                         and (model is None or model.status(node.start_byte) is not Status.DEAD)) \
            if bodies is not None else frozenset()
    return memoized(source, "runtime.names_in_macro_bodies", find)


# A declaration's field that holds the name it declares.
_DECLARED_NAME_FIELD = {"function_declarator": "declarator", "init_declarator": "declarator", "enumerator": "name",
                        "preproc_def": "name", "preproc_function_def": "name"}


def _declares(node) -> bool:
    """Is `node` the name a declaration declares (a project's own `cudaFoo`), not a use?"""
    parent = node.parent
    field = _DECLARED_NAME_FIELD.get(parent.type) if parent is not None else None
    return field is not None and parent.child_by_field_name(field) == node


# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(
    CUDA,
    _R001_QUERY,
    _R001_PROP_TYPES,
    _DEFINITIONS,
    _R003_LOADS,
    _R004_QUERY,
    _R005_QUERY,
    _R006_QUERY,
    INCLUDES,
    "(call_expression) @call",
)
