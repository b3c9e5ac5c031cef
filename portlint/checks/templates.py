"""C++ templates as clang reads them: what older nvcc front ends let through.

X002 missing-typename: a dependent qualified name used as a type without `typename`
(`Traits<T>::type v = 1;` in a function template's body, `typedef T::value_type V;` in a class
template). Older nvcc releases accepted it; clang (hip-clang) never has. C++20 (P0634, clang
16) lets `typename` go in some places: members, return types, `using`, a member function's
parameters, a named cast's type. Findings there carry `Finding.open_standard`, and the project
pass drops them where the build asks for C++20 (`engine._drop_where_the_build_asks_for_cxx20`);
a block-scope declaration, a free function template's parameter and a type-only library
template's argument need `typename` in every standard.
"""

from __future__ import annotations

import re
from dataclasses import replace

from portlint import queries
from portlint.checks.cpp import ancestors_of, enclosing_function, memoized
from portlint.finding import Finding, at_node
from portlint.fix import Edit, Fix
from portlint.source import CUDA, SourceFile
from portlint.triggers import all_of, needs

_TEMPLATE_PARAMETERS = ("type_parameter_declaration", "optional_type_parameter_declaration",
                        "variadic_type_parameter_declaration", "template_template_parameter_declaration")
_CLASSES = ("class_specifier", "struct_specifier", "union_specifier")
_TYPE_SPECIFIERS = (*_CLASSES, "enum_specifier")  # what a class body declares a type with
_CLASS_DEFINITIONS = "[(class_specifier) @class (struct_specifier) @class]"
# Declarators a name alone stands in (`v`, `v = 1`, `v{1}`, `v(1)`, `v[4]`): with a pointer or a
# reference (`A<T>::x * p;`) the statement may be an expression, as a compiler would read it.
_PLAIN_DECLARATORS = ("identifier", "init_declarator", "array_declarator")


# Declarations whose type is a qualified name, wherever they are (the context decides below).
# Its own query, not a shared one: a shared walk would collect every parameter and member
# declaration of every file for the few whose type is qualified.
_QUALIFIED_DECLARATIONS = """
[(declaration type: (qualified_identifier) @type) @declaration
 (type_definition type: (qualified_identifier) @type) @declaration
 (field_declaration type: (qualified_identifier) @type) @declaration
 (function_definition type: (qualified_identifier) @type) @declaration
 (parameter_declaration type: (qualified_identifier) @type) @declaration
 (alias_declaration type: (type_descriptor type: (qualified_identifier) @type)) @declaration]
"""


# Places only a type can stand, whatever follows: the type of a named cast (P0634 lets
# `typename` go there in C++20), and an argument of a library template whose parameters are
# all types (`std::vector<T::value_type>`: a template argument is read as an expression first,
# so `typename` is needed there in every standard). Other templates' arguments may be values
# (`std::array<float, T::size>`) and are left alone.
_QUALIFIED_TYPE_ARGUMENTS = """
[(template_function name: (identifier) @template
   arguments: (template_argument_list (type_descriptor type: (qualified_identifier) @type)))
 (template_type name: (type_identifier) @template
   arguments: (template_argument_list (type_descriptor type: (qualified_identifier) @type)))]
"""
_NAMED_CASTS = frozenset({"static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"})
# Library class templates whose every parameter is a type (allocators and comparators too).
_TYPE_ONLY_TEMPLATES = {
    "std": frozenset({"vector", "list", "deque", "set", "multiset", "unordered_set", "map", "multimap",
                      "unordered_map", "pair", "tuple", "unique_ptr", "shared_ptr", "weak_ptr", "optional",
                      "complex", "numeric_limits", "is_same", "remove_const_t", "decay_t", "add_pointer_t"}),
    "thrust": frozenset({"device_vector", "host_vector", "pair", "tuple", "device_ptr"}),
}


# One walk for both (the declarations' alternatives, then the arguments').
_QUALIFIED_TYPES = _QUALIFIED_DECLARATIONS.rstrip()[:-1] + _QUALIFIED_TYPE_ARGUMENTS.strip()[1:]


@needs(all_of(b"template", b"::"))
def check_missing_typename(source: SourceFile) -> list[Finding]:
    findings = []
    for match in queries.matches(CUDA, _QUALIFIED_TYPES, source.tree.root_node):
        finding = _in_declaration(match, source) if "declaration" in match else _in_type_argument(match, source)
        if finding is not None:
            findings.append(finding)
    return findings


def _in_type_argument(match, source: SourceFile) -> Finding | None:
    template, written = match["template"][0], match["type"][0]
    name = source.node_text(template)
    if template.type == "identifier":
        if name not in _NAMED_CASTS:
            return None
        return _missing_typename(written, False, source)
    scope = template.parent.parent  # (template_type) in (qualified_identifier): `std::vector<...>`
    library = source.node_text(scope.child_by_field_name("scope")) \
        if scope is not None and scope.type == "qualified_identifier" \
        and scope.child_by_field_name("name") == template.parent else None
    if name not in _TYPE_ONLY_TEMPLATES.get(library, ()):
        return None
    return _missing_typename(written, True, source)


def _missing_typename(written, needed_in_cxx20: bool, source: SourceFile) -> Finding | None:
    """X002 at the qualified name `written`, where its scope is a template parameter of a
    template around it; else None."""
    if written.has_error:
        return None
    parameters, classes, current = _enclosing_templates(written, source)
    dependent_on = _dependent_scope(written, parameters, classes, current, source) if parameters else None
    if dependent_on is None:
        return None
    name = source.node_text(written)
    standard = "" if needed_in_cxx20 else " before C++20"
    return replace(at_node(
        source, written,
        f"`{name}` names a type that depends on `{dependent_on}` without `typename`: clang, and so hip-clang, "
        f"rejects it{standard} (older nvcc releases accepted it).",
        Fix.safe(f"Write `typename {name}`", Edit(written.start_byte, written.start_byte, "typename ")),
    ), open_standard=not needed_in_cxx20)


def _in_declaration(match, source: SourceFile) -> Finding | None:
    declaration, written = match["declaration"][0], match["type"][0]
    needed_in_cxx20 = _needed_in_cxx20(declaration)
    if needed_in_cxx20 is None or declaration.has_error:
        return None
    if source.data[max(0, written.start_byte - 64):written.start_byte].rstrip().endswith(b"typename"):
        return None  # (a macro before it, `GLM_FUNC_QUALIFIER static typename A<T>::type f()`, misled the tree)
    return _missing_typename(written, needed_in_cxx20, source)


def _needed_in_cxx20(declaration) -> bool | None:
    """Whether `typename` stays required in C++20 where `declaration` is; None where this
    reading leaves the declaration alone (a block-scope statement that may be an expression)."""
    parent = declaration.parent
    if parent is not None and parent.type == "compound_statement":
        if declaration.type not in ("declaration", "type_definition") or enclosing_function(declaration) is None:
            return None
        declarators = declaration.children_by_field_name("declarator")
        return True if declarators and all(_plain(d) for d in declarators) else None
    if declaration.type == "parameter_declaration":
        # A free function template's parameter (not a member's, a lambda's or an out-of-class
        # member definition's, whose declarator is qualified): P0634 leaves `typename` required;
        # a lambda's parameter needs it before C++20.
        function = parent.parent if parent is not None and parent.type == "parameter_list" else None
        if function is None or function.type not in ("function_declarator", "lambda_declarator") \
                or parent.has_error or not _names_a_parameter(declaration.child_by_field_name("declarator")):
            return None  # (a macro call read as a declaration: `PARAM(name, 50 * T::eps())`)
        if function.type == "lambda_declarator":
            return False  # (P0634 covers a lambda's parameters)
        name = function.child_by_field_name("declarator")
        return name is not None and name.type == "identifier" and not _in_class_body(function)
    return False


def _names_a_parameter(declarator) -> bool:
    """`x`, `*x`, `&x`, `x[4]`: a declarator that names its parameter."""
    while declarator is not None and declarator.type in ("pointer_declarator", "reference_declarator",
                                                         "array_declarator"):
        declarator = declarator.child_by_field_name("declarator") or (
            declarator.named_children[-1] if declarator.named_children else None)
    return declarator is not None and declarator.type == "identifier"


def _in_class_body(node) -> bool:
    for ancestor in ancestors_of(node):
        if ancestor.type == "field_declaration_list":
            return True
        if ancestor.type in ("compound_statement", "namespace_definition", "translation_unit"):
            return False
    return False


def _enclosing_templates(node, source: SourceFile) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The parameters of the templates around `node`, the names of the classes it is in, and
    the scopes that name the current instantiation where it is (`_current_instantiation`)."""
    parameters: set[str] = set()
    classes: set[str] = set()
    current: set[str] = set()
    for ancestor in ancestors_of(node):
        if ancestor.type == "ERROR":
            return frozenset(), frozenset(), frozenset()  # (a stretch the tree could not read: no guess)
        if ancestor.type == "template_declaration":
            parameters |= _parameter_names(ancestor.child_by_field_name("parameters"), source)
        elif ancestor.type in _CLASSES and (name := ancestor.child_by_field_name("name")) is not None:
            classes.add(source.node_text(name))
        elif ancestor.type == "function_definition":
            current |= _current_instantiation(ancestor, node, source)
    return frozenset(parameters), frozenset(classes), frozenset(current)


def _current_instantiation(function, node, source: SourceFile) -> frozenset[str]:
    """The scopes of the declarator-id `X<T, A>::inner::f`, without spaces (`X<T,A>`,
    `X<T,A>::inner`), where `function` defines a member of class template X out of line under
    `template <typename T, typename A>` and `node` follows that declarator-id (parameters,
    initializers, body): names there are looked up in the class, so `X<T, A>::member` is the
    current instantiation's and needs no `typename`. Else empty. The return type comes before
    the declarator-id; `X<U, A>` and `X<T*, A>` name other classes."""
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type in ("pointer_declarator", "reference_declarator"):
        declarator = declarator.child_by_field_name("declarator") or (
            declarator.named_children[-1] if declarator.named_children else None)
    if declarator is None or declarator.type != "function_declarator":
        return frozenset()
    name = declarator.child_by_field_name("declarator")
    if name is None or name.type != "qualified_identifier" or node.start_byte < name.end_byte:
        return frozenset()
    header = function.parent
    if header is None or header.type != "template_declaration":
        return frozenset()
    while header.parent is not None and header.parent.type == "template_declaration":
        header = header.parent  # (`template <T> template <U> X<T>::f`: the class's parameters come first)
    arguments = _header_as_arguments(header.child_by_field_name("parameters"), source)
    if arguments is None:
        return frozenset()
    text = source.node_text(name)
    if name.has_error:
        # (A macro before the return type, `inline MACRO typename X<T>::r X<T>::f`, makes the
        # tree glue the return type into the declarator-id: its last word is the name.)
        text = _words_outside_brackets("::".join(part.strip() for part in text.split("::")))[-1]
    parts = _outside_brackets(_without_spaces(text), "::")
    first = next((i for i, part in enumerate(parts[:-1]) if part.endswith(arguments)
                  and part[:-len(arguments)].isidentifier()), None)
    if first is None:
        return frozenset()
    return frozenset("::".join(parts[first:end]) for end in range(first + 1, len(parts)))


def _words_outside_brackets(text: str) -> list[str]:
    """`text` split at the blanks outside `<...>`."""
    return [w for w in _outside_brackets(re.sub(r"\s+", " ", text.strip()), " ") if w]


def _outside_brackets(text: str, separator: str) -> list[str]:
    """`text` split at each `separator` outside `<...>`."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        if text[i] == "<":
            depth += 1
        elif text[i] == ">":
            depth = max(0, depth - 1)
        elif depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            start = i = i + len(separator)
            continue
        i += 1
    parts.append(text[start:])
    return parts


def _header_as_arguments(listed, source: SourceFile) -> str | None:
    """`<T,A,Ts...>` for `template <typename T, class A, typename... Ts>`: the arguments that
    name the primary template from inside; None where a parameter has no name."""
    if listed is None:
        return None
    names = []
    for parameter in listed.named_children:
        if parameter.type == "comment":
            continue
        if parameter.type == "template_template_parameter_declaration":  # (`template <typename> class C`)
            parameter = parameter.named_children[-1]
        found = parameter.child_by_field_name("name") or parameter.child_by_field_name("declarator") or next(
            (c for c in parameter.named_children if c.type == "type_identifier"), None)
        if found is None:
            return None
        variadic = parameter.type.startswith("variadic_") or found.type == "variadic_declarator"
        names.append(_without_spaces(source.node_text(found)).lstrip(".") + ("..." if variadic else ""))
    return "<" + ",".join(names) + ">"


def _without_spaces(text: str) -> str:
    return "".join(text.split())


def _parameter_names(listed, source: SourceFile) -> frozenset[str]:
    if listed is None:
        return frozenset()
    names = set()
    for parameter in listed.named_children:
        if parameter.type in _TEMPLATE_PARAMETERS:
            names.update(source.node_text(c) for c in parameter.named_children if c.type == "type_identifier")
    return frozenset(names)


def _plain(declarator) -> bool:
    if declarator.type == "type_identifier":  # a typedef's new name
        return True
    if declarator.type not in _PLAIN_DECLARATORS:
        return False
    inner = declarator.child_by_field_name("declarator")
    return inner is None or inner.type == "identifier" or (inner.type == "array_declarator" and _plain(inner))


def _dependent_scope(qualified, parameters: frozenset[str], classes: frozenset[str], current: frozenset[str],
                     source: SourceFile) -> str | None:
    """The template parameter the scopes of `A<T>::B::type` (or `T::type`) name, or None where
    no scope depends on one, a scope is the class being defined (its own members need no
    `typename`), the whole scope is the current instantiation (`current`), or the last name is
    no plain type name (`A<T>::template B<U>`)."""
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
    if node.type != "type_identifier":
        return None
    # Only the declarator's own scopes: `X<T, A>::other::type` may be a typedef's member.
    if found is not None and current and _without_spaces(
            source.data[qualified.start_byte:node.start_byte].decode("utf-8", "replace")).removesuffix("::") in current \
            and not _inherited_type(qualified, source.node_text(node), source):
        return None
    return found


def _inherited_type(qualified, member: str, source: SourceFile) -> bool:
    """Is `X<T>::member` a type X's definition in this file does not declare, X having base
    classes: one it inherits from a dependent base, which is no member of the current
    instantiation, so it needs `typename` (clang rejects it without)."""
    scope = qualified.child_by_field_name("scope")
    name = scope.child_by_field_name("name") if scope is not None and scope.type == "template_type" else None
    if name is None:
        return False
    for body, bases in _class_bodies(source).get(source.node_text(name), ()):
        if bases and member not in _declared_types(body, source):
            return True
    return False


def _class_bodies(source: SourceFile) -> dict[str, list]:
    """Class and struct definitions of the file by name: (body, has base classes)."""
    def collect(s: SourceFile) -> dict[str, list]:
        found: dict[str, list] = {}
        for node in queries.nodes(CUDA, _CLASS_DEFINITIONS, s.tree.root_node, "class"):
            name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
            if name is not None and body is not None:
                bases = any(c.type == "base_class_clause" for c in node.children)
                found.setdefault(s.node_text(name), []).append((body, bases))
        return found
    return memoized(source, "class_bodies", collect)


def _declared_types(body, source: SourceFile) -> set[str]:
    """The type names a class body declares: typedefs, aliases, nested classes and enums, and
    `using Base::name;`."""
    names = set()
    stack = list(body.named_children)
    while stack:
        child = stack.pop()
        if child.type == "template_declaration":
            stack.extend(child.named_children)
        elif child.type == "type_definition":
            names.update(source.node_text(d) for d in child.children_by_field_name("declarator")
                         if d.type == "type_identifier")
        elif child.type == "alias_declaration" and (n := child.child_by_field_name("name")) is not None:
            names.add(source.node_text(n))
        elif child.type in _TYPE_SPECIFIERS and (n := child.child_by_field_name("name")) is not None:
            names.add(source.node_text(n).rsplit("::", 1)[-1])
        elif child.type == "field_declaration":
            stack.extend(c for c in child.named_children if c.type in _TYPE_SPECIFIERS)
        elif child.type == "using_declaration":
            names.add(source.node_text(child).rstrip(";").rsplit("::", 1)[-1].strip())
    return names


def _first_parameter_in(node, parameters: frozenset[str], source: SourceFile) -> str | None:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in ("type_identifier", "identifier") and source.node_text(current) in parameters:
            return source.node_text(current)
        stack.extend(reversed(current.named_children))
    return None
