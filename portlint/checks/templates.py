"""C++ templates as clang reads them: what older nvcc front ends let through.

X002 missing-typename: a dependent qualified name used as a type in a block-scope
declaration without `typename` (`Traits<T>::type v = 1;`, `typedef T::value_type V;` in a
function template's body). Older nvcc releases accepted it; clang (hip-clang) never has, and
C++20's relaxation (P0634) does not cover block-scope declarations. Declarations where C++20
lets `typename` go (members, parameters, return types, `using`) are left alone: whether they
compile depends on the language standard and the clang release, which a file does not say.
"""

from __future__ import annotations

from portlint import queries
from portlint.checks.cpp import enclosing_function
from portlint.finding import Finding, at_node
from portlint.fix import Edit, Fix
from portlint.source import CUDA, SourceFile
from portlint.triggers import all_of, needs

_TEMPLATE_PARAMETERS = ("type_parameter_declaration", "optional_type_parameter_declaration",
                        "variadic_type_parameter_declaration", "template_template_parameter_declaration")
_CLASSES = ("class_specifier", "struct_specifier", "union_specifier")
# Declarators a name alone stands in (`v`, `v = 1`, `v{1}`, `v(1)`, `v[4]`): with a pointer or a
# reference (`A<T>::x * p;`) the statement may be an expression, as a compiler would read it.
_PLAIN_DECLARATORS = ("identifier", "init_declarator", "array_declarator")


# Block-scope declarations and typedefs whose type is a qualified name (C++20 keeps
# `typename` required there).
_QUALIFIED_DECLARATIONS = """
[(declaration type: (qualified_identifier) @type) @declaration
 (type_definition type: (qualified_identifier) @type) @declaration]
"""


@needs(all_of(b"template", b"::"))
def check_missing_typename(source: SourceFile) -> list[Finding]:
    findings = []
    for match in queries.matches(CUDA, _QUALIFIED_DECLARATIONS, source.tree.root_node):
        declaration = match["declaration"][0]
        if not _in_block(declaration):
            continue
        parameters, classes = _enclosing_templates(declaration, source)
        if parameters:
            finding = _missing_typename(declaration, parameters, classes, source)
            if finding is not None:
                findings.append(finding)
    return findings


def _enclosing_templates(node, source: SourceFile) -> tuple[frozenset[str], frozenset[str]]:
    """The parameters of the templates around `node`, and the names of the classes it is in."""
    parameters: set[str] = set()
    classes: set[str] = set()
    parent = node.parent
    while parent is not None:
        if parent.type == "ERROR":
            return frozenset(), frozenset()  # (a stretch the tree could not read: no guess)
        if parent.type == "template_declaration":
            parameters |= _parameter_names(parent.child_by_field_name("parameters"), source)
        elif parent.type in _CLASSES and (name := parent.child_by_field_name("name")) is not None:
            classes.add(source.node_text(name))
        parent = parent.parent
    return frozenset(parameters), frozenset(classes)


def _parameter_names(listed, source: SourceFile) -> frozenset[str]:
    if listed is None:
        return frozenset()
    names = set()
    for parameter in listed.named_children:
        if parameter.type in _TEMPLATE_PARAMETERS:
            names.update(source.node_text(c) for c in parameter.named_children if c.type == "type_identifier")
    return frozenset(names)


def _in_block(node) -> bool:
    """A declaration inside a function body (block scope), not a member or a namespace one."""
    parent = node.parent
    return parent is not None and parent.type == "compound_statement" and enclosing_function(node) is not None


def _missing_typename(declaration, parameters: frozenset[str], classes: frozenset[str],
                      source: SourceFile) -> Finding | None:
    written = declaration.child_by_field_name("type")
    if written is None or written.type != "qualified_identifier" or declaration.has_error:
        return None
    declarators = declaration.children_by_field_name("declarator")
    if not declarators or not all(_plain(d) for d in declarators):
        return None
    dependent_on = _dependent_scope(written, parameters, classes, source)
    if dependent_on is None:
        return None
    name = source.node_text(written)
    return at_node(
        source, written,
        f"`{name}` names a type that depends on `{dependent_on}` without `typename`: clang, and so hip-clang, "
        "rejects it (older nvcc releases accepted it).",
        Fix.safe(f"Write `typename {name}`", Edit(written.start_byte, written.start_byte, "typename ")),
    )


def _plain(declarator) -> bool:
    if declarator.type == "type_identifier":  # a typedef's new name
        return True
    if declarator.type not in _PLAIN_DECLARATORS:
        return False
    inner = declarator.child_by_field_name("declarator")
    return inner is None or inner.type == "identifier" or (inner.type == "array_declarator" and _plain(inner))


def _dependent_scope(qualified, parameters: frozenset[str], classes: frozenset[str], source: SourceFile) -> str | None:
    """The template parameter the scopes of `A<T>::B::type` (or `T::type`) name, or None where
    no scope depends on one, a scope is the class being defined (its own members need no
    `typename`), or the last name is no plain type name (`A<T>::template B<U>`)."""
    found = None
    node = qualified
    while node.type == "qualified_identifier":
        scope = node.child_by_field_name("scope")
        if scope is None:
            return None
        if scope.type == "namespace_identifier":
            text = source.node_text(scope)
            if text in classes:
                return None
            if text in parameters:
                found = found or text
        elif scope.type == "template_type":
            template_name = scope.child_by_field_name("name")
            if template_name is None or source.node_text(template_name) in classes:
                return None
            arguments = scope.child_by_field_name("arguments")
            found = found or (_first_parameter_in(arguments, parameters, source) if arguments is not None else None)
        else:
            return None
        node = node.child_by_field_name("name")
        if node is None:
            return None
    return found if node.type == "type_identifier" else None


def _first_parameter_in(node, parameters: frozenset[str], source: SourceFile) -> str | None:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in ("type_identifier", "identifier") and source.node_text(current) in parameters:
            return source.node_text(current)
        stack.extend(reversed(current.named_children))
    return None


# Answered from one combined query run per file (portlint.queries.shared).
queries.shared(CUDA, _QUALIFIED_DECLARATIONS)
