"""The cross-file index, for rules that need more than one file.

Each file contributes plain, picklable facts while it is parsed (so the per-file pass
can run in worker processes); project rules then join the facts of all files. Facts keep
the ROCm-path status of where they stand, so a rule can tell a definition on the ROCm path
from a CUDA-only one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from portlint import queries
from portlint.rocm_path import RocmPathModel, Status
from portlint.source import CUDA, Location, SourceFile


@dataclass(frozen=True)
class KernelDefinition:
    name: str
    location: Location  # the function's name
    file_digest: str
    has_global: bool  # `__global__` spelled out
    extern_c: bool
    qualifiers: tuple[str, ...]  # identifiers before the return type, e.g. a KERNEL macro
    declaration_start: int  # where `extern "C" ` or `__global__ ` would be inserted
    status: Status


@dataclass(frozen=True)
class NamedUse:
    """A kernel named at a launch, or looked up by string in a loaded module."""

    name: str
    location: Location
    api: str  # `<<<>>>`, `hipLaunchKernelGGL`, `hipModuleGetFunction`, ...
    status: Status


@dataclass(frozen=True)
class MacroDefinition:
    name: str
    location: Location
    body: str
    status: Status


@dataclass
class FileFacts:
    functions: list[KernelDefinition] = field(default_factory=list)
    launches: list[NamedUse] = field(default_factory=list)
    lookups: list[NamedUse] = field(default_factory=list)
    lowered_names: set[str] = field(default_factory=set)  # names given to *AddNameExpression
    macros: list[MacroDefinition] = field(default_factory=list)


@dataclass
class ProjectIndex:
    functions: dict[str, list[KernelDefinition]] = field(default_factory=dict)
    launches: list[NamedUse] = field(default_factory=list)
    lookups: list[NamedUse] = field(default_factory=list)
    lowered_names: set[str] = field(default_factory=set)
    macros: dict[str, list[MacroDefinition]] = field(default_factory=dict)

    def add(self, facts: FileFacts) -> None:
        for fn in facts.functions:
            self.functions.setdefault(fn.name, []).append(fn)
        for macro in facts.macros:
            self.macros.setdefault(macro.name, []).append(macro)
        self.launches.extend(facts.launches)
        self.lookups.extend(facts.lookups)
        self.lowered_names |= facts.lowered_names


MODULE_LOOKUPS = {  # function -> index of the argument naming the kernel
    "cuModuleGetFunction": 2, "hipModuleGetFunction": 2, "cuLibraryGetKernel": 2,
}
NAME_EXPRESSIONS = {"nvrtcAddNameExpression", "hiprtcAddNameExpression"}
LAUNCH_APIS = {  # function -> index of the kernel argument
    "hipLaunchKernelGGL": 0, "cudaLaunchKernel": 0, "hipLaunchKernel": 0,
    "cudaLaunchCooperativeKernel": 0, "hipLaunchCooperativeKernel": 0, "hipExtLaunchKernelGGL": 0,
}

_FUNCTIONS = "(function_definition declarator: (function_declarator) @decl) @def"
_CALLS = "(call_expression function: (_) @callee) @call"
_MACROS = "(preproc_def name: (identifier) @name) @def"


def collect(source: SourceFile, model: RocmPathModel) -> FileFacts:
    facts = FileFacts()
    if source.language != CUDA:
        return facts
    root = source.tree.root_node
    data = source.data
    if b"__global__" in data or b"<<<" in data or b"Launch" in data:
        _collect_functions(source, model, facts, root)
    for match in queries.matches(CUDA, _CALLS, root):
        _collect_call(source, model, facts, match["call"][0], match["callee"][0])
    if b"#define" in data:
        for match in queries.matches(CUDA, _MACROS, root):
            node, name = match["def"][0], match["name"][0]
            value = node.child_by_field_name("value")
            facts.macros.append(MacroDefinition(
                name=source.node_text(name),
                location=source.location(node.start_byte, name.end_byte),
                body=source.node_text(value).strip() if value is not None else "",
                status=model.status(node.start_byte),
            ))
    return facts


def _declared_name(declarator) -> object | None:
    inner = declarator.child_by_field_name("declarator")
    if inner is None:
        return None
    if inner.type in ("identifier", "field_identifier"):
        return inner
    if inner.type in ("qualified_identifier", "template_function"):
        names = [c for c in inner.named_children if c.type in ("identifier", "field_identifier")]
        return names[-1] if names else None
    return None


def _collect_functions(source, model, facts, root) -> None:
    for match in queries.matches(CUDA, _FUNCTIONS, root):
        definition, declarator = match["def"][0], match["decl"][0]
        name = _declared_name(declarator)
        if name is None:
            continue
        has_global = False
        qualifiers = []
        for child in definition.children:
            if child.start_byte >= declarator.start_byte:
                break
            if child.type == "__global__":
                has_global = True
            elif child.type in ("type_identifier", "identifier"):
                qualifiers.append(source.node_text(child))
            elif child.type == "ERROR":
                qualifiers.extend(
                    source.node_text(c) for c in child.children if c.type in ("identifier", "type_identifier")
                )
        start = definition
        if definition.parent is not None and definition.parent.type == "template_declaration":
            start = definition.parent
        facts.functions.append(KernelDefinition(
            name=source.node_text(name),
            location=source.location(name.start_byte, name.end_byte),
            file_digest=source.digest,
            has_global=has_global,
            extern_c=_is_extern_c(definition),
            qualifiers=tuple(qualifiers),
            declaration_start=start.start_byte,
            status=model.status(definition.start_byte),
        ))


def _is_extern_c(definition) -> bool:
    parent = definition.parent
    if parent is not None and parent.type == "declaration_list":
        parent = parent.parent
    if parent is None or parent.type != "linkage_specification":
        return False
    value = parent.child_by_field_name("value")
    return value is not None and value.text in (b'"C"', b"'C'")


def _collect_call(source, model, facts, call, callee) -> None:
    status = model.status(call.start_byte)
    kernel_syntax = next((c for c in call.children if c.type == "kernel_call_syntax"), None)
    if kernel_syntax is not None:
        name = callee.child_by_field_name("name") if callee.type == "template_function" else callee
        if name is not None and name.type == "identifier":
            facts.launches.append(NamedUse(
                source.node_text(name), source.location(name.start_byte, name.end_byte), "<<<>>>", status))
        return
    if callee.type != "identifier":
        return
    api = source.node_text(callee)
    args = call.child_by_field_name("arguments")
    if args is None:
        return
    arguments = args.named_children
    if api in MODULE_LOOKUPS and len(arguments) > MODULE_LOOKUPS[api]:
        literal = arguments[MODULE_LOOKUPS[api]]
        text = _string_value(literal, source)
        if text is not None:
            facts.lookups.append(NamedUse(text, source.location(literal.start_byte, literal.end_byte), api, status))
    elif api in NAME_EXPRESSIONS and len(arguments) > 1:
        text = _string_value(arguments[1], source)
        if text is not None:
            facts.lowered_names.add(text)
    elif api in LAUNCH_APIS and len(arguments) > LAUNCH_APIS[api]:
        name = _kernel_argument(arguments[LAUNCH_APIS[api]])
        if name is not None:
            facts.launches.append(NamedUse(
                source.node_text(name), source.location(name.start_byte, name.end_byte), api, status))


def _string_value(node, source) -> str | None:
    if node.type != "string_literal":
        return None
    parts = [c for c in node.named_children if c.type == "string_content"]
    return source.node_text(parts[0]) if len(parts) == 1 else None


def _kernel_argument(node):
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
