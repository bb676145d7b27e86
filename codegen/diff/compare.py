"""The API differ: every change between two surfaces, classified by who it breaks.

It compares two :class:`~codegen.schema.ir.ApiSurface` values (the IR, never the raw
JSON) in two layers:

* **wire**: fields, types, enums, unions, constraints, defaults, lenient
  annotations and methods, as peers on the network see them;
* **python**: class, attribute and method names and method signatures, as
  code written against the generated bindings sees them.

Types are matched by name; a type that disappears while another with the same
shape appears is a rename.  Union variants are matched by their tag value,
never by position.  Who a change breaks comes from who sends the data
(:func:`senders_by_type`) and the rule's flow, resolved in one place,
:func:`codegen.diff.rules.impact`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..api.methods import MethodSpec, method_spec
from ..errors import CodegenError
from ..schema.ir import (
    AliasType,
    AnyOf,
    ApiSurface,
    ArrayOf,
    Const,
    Constraints,
    EnumType,
    Field,
    MapOf,
    Method,
    NamedType,
    Nullable,
    ObjectType,
    Ref,
    Scalar,
    Stability,
    TypeExpr,
    UnionType,
    strip_nullable,
    to_json,
)
from ..schema.load import ReleaseFiles
from ..schema.releases import surfaces_of
from .model import Change, DiffResult, SurfaceDiff
from .renames import detect_renames, rename_refs, shape
from .rules import (
    BECAME,
    CATALOG,
    MEMBER_ADDED,
    MEMBER_REMOVED,
    SEVERITIES,
    MemberKind,
    Peer,
    RuleId,
    impact,
    openness,
    rule,
)
from .senders import callers_of, handlers_of, senders_by_type

# --- type expressions ------------------------------------------------------------


def _members(expr: TypeExpr) -> frozenset[TypeExpr]:
    if isinstance(expr, Nullable):
        return _members(expr.inner) | {Scalar("null")}
    if isinstance(expr, AnyOf):
        return frozenset(m for member in expr.members for m in _members(member))
    return frozenset({expr})


def _without_constraints(expr: TypeExpr) -> TypeExpr:
    if isinstance(expr, Scalar):
        return Scalar(expr.type)
    if isinstance(expr, ArrayOf):
        return ArrayOf(_without_constraints(expr.item))
    if isinstance(expr, MapOf):
        return MapOf(_without_constraints(expr.value))
    if isinstance(expr, Nullable):
        return Nullable(_without_constraints(expr.inner))
    if isinstance(expr, AnyOf):
        return AnyOf(tuple(_without_constraints(m) for m in expr.members))
    return expr


def _constraint_pairs(old: TypeExpr, new: TypeExpr) -> Iterator[tuple[Constraints, Constraints]]:
    """Matching constraint sets of two expressions that differ only in constraints."""
    if isinstance(old, (Scalar, ArrayOf)) and isinstance(new, type(old)):
        yield old.constraints, new.constraints
    if isinstance(old, ArrayOf) and isinstance(new, ArrayOf):
        yield from _constraint_pairs(old.item, new.item)
    elif isinstance(old, MapOf) and isinstance(new, MapOf):
        yield from _constraint_pairs(old.value, new.value)
    elif isinstance(old, Nullable) and isinstance(new, Nullable):
        yield from _constraint_pairs(old.inner, new.inner)
    elif isinstance(old, AnyOf) and isinstance(new, AnyOf):
        for a, b in zip(old.members, new.members, strict=True):
            yield from _constraint_pairs(a, b)


_LOWER_BOUNDS = ("minimum", "exclusive_minimum", "min_length", "min_items")
_UPPER_BOUNDS = ("maximum", "exclusive_maximum", "max_length", "max_items")
_WORDS = {
    "exclusive_minimum": "exclusiveMinimum",
    "exclusive_maximum": "exclusiveMaximum",
    "min_length": "minLength",
    "max_length": "maxLength",
    "min_items": "minItems",
    "max_items": "maxItems",
}


def constraint_changes(old: Constraints, new: Constraints) -> Iterator[tuple[RuleId, str]]:
    """``(rule id, detail)`` for every constraint keyword that differs."""
    for key in (*_LOWER_BOUNDS, *_UPPER_BOUNDS, "pattern", "format"):
        before, after = getattr(old, key), getattr(new, key)
        if before == after:
            continue
        word = _WORDS.get(key, key)
        detail = f"{word} {_show(before)} -> {_show(after)}"
        if before is None:
            yield RuleId.CONSTRAINT_TIGHTENED, detail
        elif after is None:
            yield RuleId.CONSTRAINT_LOOSENED, detail
        elif key in _LOWER_BOUNDS:
            yield (RuleId.CONSTRAINT_TIGHTENED if after > before else RuleId.CONSTRAINT_LOOSENED), detail
        elif key in _UPPER_BOUNDS:
            yield (RuleId.CONSTRAINT_TIGHTENED if after < before else RuleId.CONSTRAINT_LOOSENED), detail
        else:
            yield RuleId.CONSTRAINT_CHANGED, detail


def _show(value: Any) -> str:
    return "none" if value is None else repr(value)


def describe(expr: TypeExpr) -> str:
    """A type expression the way a reader of the report thinks of it."""
    if isinstance(expr, Ref):
        return expr.name
    if isinstance(expr, Scalar):
        return expr.type
    if isinstance(expr, ArrayOf):
        return f"list[{describe(expr.item)}]"
    if isinstance(expr, MapOf):
        return f"dict[str, {describe(expr.value)}]"
    if isinstance(expr, Const):
        return repr(expr.value)
    if isinstance(expr, Nullable):
        return f"{describe(expr.inner)} | null"
    return " | ".join(describe(m) for m in expr.members)


# --- the differ ------------------------------------------------------------------


class _Differ:
    def __init__(self, old: ApiSurface, new: ApiSurface) -> None:
        self.old = old
        self.new = new
        self.renames = detect_renames(old, new)
        self.renamed_from = {new_name: old_name for old_name, new_name in self.renames.items()}
        self.old_senders = senders_by_type(old)
        self.new_senders = senders_by_type(new)
        # the methods as the generated bindings have them: their Python names and parameters
        self.old_specs = {m: method_spec(old, m) for m in old.methods}
        self.new_specs = {m: method_spec(new, m) for m in new.methods}
        self.changes: list[Change] = []

    # -- recording ----------------------------------------------------------------

    def senders(self, old_name: str, new_name: str) -> frozenset[Peer]:
        return self.old_senders.get(old_name, frozenset()) | self.new_senders.get(new_name, frozenset())

    def add(
        self,
        rule_id: RuleId,
        subject: str,
        detail: str,
        senders: Iterable[Peer],
        where: NamedType | None = None,
    ) -> None:
        found = rule(rule_id)
        severity, roles = impact(found, senders)
        self.changes.append(
            Change(
                rule=found,
                stability=self.new.stability,
                subject=subject,
                detail=detail,
                severity=severity,
                roles=roles,
                file=self.new.schema_file,
                pointer=where.pointer if where is not None else "",
            )
        )

    # -- entry point ----------------------------------------------------------------

    def run(self) -> tuple[Change, ...]:
        new_names = set(self.renames.values())
        for name, old_type in self.old.types.items():
            if name in self.renames:
                new_name = self.renames[name]
                self.add(RuleId.PYTHON_CLASS_RENAMED, name, f"now {new_name}", (), self.new.types[new_name])
                self.compare_type(old_type, self.new.types[new_name])
            elif name in self.new.types:
                self.compare_type(old_type, self.new.types[name])
            else:
                self.add(RuleId.PYTHON_CLASS_REMOVED, name, "", (), old_type)
        for name, new_type in self.new.types.items():
            if name not in self.old.types and name not in new_names:
                self.add(RuleId.PYTHON_CLASS_ADDED, name, "", (), new_type)
        self.compare_methods()
        return tuple(sorted(self.changes, key=_report_order))

    # -- named types ----------------------------------------------------------------

    def compare_type(self, old: NamedType, new: NamedType) -> None:
        if old.internal and new.internal:
            return  # the JSON-RPC envelopes: their contents are reported method by method
        senders = self.senders(old.name, new.name)
        if old.kind != new.kind:
            self.add(RuleId.TYPE_CHANGED, new.name, f"{old.kind} -> {new.kind}", senders, new)
        elif isinstance(old, ObjectType) and isinstance(new, ObjectType):
            self.compare_object(old, new, senders)
        elif isinstance(old, UnionType) and isinstance(new, UnionType):
            self.compare_union(old, new, senders)
        elif isinstance(old, EnumType) and isinstance(new, EnumType):
            self.compare_enum(old, new, senders)
        elif isinstance(old, AliasType) and isinstance(new, AliasType):
            self.compare_expr(old.target, new.target, new.name, senders, new)

    def compare_object(self, old: ObjectType, new: ObjectType, senders: frozenset[Peer]) -> None:
        same_base = (self.renames.get(old.base, old.base) if old.base else None) == new.base
        old_fields = old.fields if same_base else self.old.all_fields(old.name)
        new_fields = new.fields if same_base else self.new.all_fields(new.name)
        before = {f.wire_name: f for f in old_fields}
        after = {f.wire_name: f for f in new_fields}
        for wire, f in before.items():
            subject = f"{new.name}.{wire}"
            if wire not in after:
                self.add(
                    RuleId.REQUIRED_FIELD_REMOVED if f.required else RuleId.OPTIONAL_FIELD_REMOVED,
                    subject,
                    "",
                    senders,
                    new,
                )
                self.add(RuleId.PYTHON_ATTRIBUTE_REMOVED, f"{new.name}.{f.py_name}", "", (), new)
            else:
                self.compare_field(f, after[wire], subject, senders, new)
        for wire, f in after.items():
            if wire not in before:
                rule_id = RuleId.FIELD_ADDED_REQUIRED if f.required else RuleId.FIELD_ADDED_OPTIONAL
                self.add(rule_id, f"{new.name}.{wire}", f"type {describe(f.type)}", senders, new)

    def compare_field(
        self, old: Field, new: Field, subject: str, senders: frozenset[Peer], where: NamedType
    ) -> None:
        if old.py_name != new.py_name:
            self.add(RuleId.PYTHON_ATTRIBUTE_RENAMED, subject, f"{old.py_name} -> {new.py_name}", (), where)
        flips = (
            (old.required, new.required, RuleId.FIELD_BECAME_REQUIRED, RuleId.FIELD_BECAME_OPTIONAL),
            (old.nullable, new.nullable, RuleId.FIELD_BECAME_NULLABLE, RuleId.FIELD_BECAME_NON_NULLABLE),
        )
        for before, after, became_true, became_false in flips:
            if before != after:
                self.add(became_true if after else became_false, subject, "", senders, where)
        if old.nullable and new.nullable:
            self.compare_expr(old.type, new.type, subject, senders, where)
        else:
            self.compare_expr(strip_nullable(old.type), strip_nullable(new.type), subject, senders, where)
        if repr(old.default) != repr(new.default):
            self.add(
                RuleId.DEFAULT_CHANGED,
                subject,
                f"{_show_default(old)} -> {_show_default(new)}",
                senders,
                where,
            )
        for attr, keyword in (
            ("default_on_error", "x-deserialize-default-on-error"),
            ("skip_invalid_items", "x-deserialize-skip-invalid-items"),
        ):
            if getattr(old, attr) != getattr(new, attr):
                added = getattr(new, attr)
                self.add(
                    RuleId.LENIENT_ANNOTATION_ADDED if added else RuleId.LENIENT_ANNOTATION_REMOVED,
                    subject,
                    keyword,
                    senders,
                    where,
                )

    def compare_expr(
        self, old: TypeExpr, new: TypeExpr, subject: str, senders: frozenset[Peer], where: NamedType | None
    ) -> None:
        """Report how the type of ``subject`` changed (old references are read through the renames)."""
        self._compare(rename_refs(old, self.renames), new, subject, senders, where, "")

    def _compare(
        self,
        old: TypeExpr,
        new: TypeExpr,
        subject: str,
        senders: frozenset[Peer],
        where: NamedType | None,
        context: str,
    ) -> None:
        if old == new:
            return
        if _without_constraints(old) == _without_constraints(new):
            for a, b in _constraint_pairs(old, new):
                for rule_id, detail in constraint_changes(a, b):
                    self.add(rule_id, subject, context + detail, senders, where)
            return
        if isinstance(old, ArrayOf) and isinstance(new, ArrayOf):
            for rule_id, detail in constraint_changes(old.constraints, new.constraints):
                self.add(rule_id, subject, context + detail, senders, where)
            self._compare(old.item, new.item, subject, senders, where, context + "items: ")
            return
        if isinstance(old, MapOf) and isinstance(new, MapOf):
            self._compare(old.value, new.value, subject, senders, where, context + "values: ")
            return
        if isinstance(old, Ref) and isinstance(new, Ref):
            inline = self.inline_move(old.name, new.name)
            if inline is not None:
                self.add(inline, subject, f"{context}{old.name} -> {new.name}", (), where)
                return
        before, after = _members(old), _members(new)
        if Scalar("any") in after - before or before < after:
            self.add(RuleId.TYPE_WIDENED, subject, context + _set_change(before, after), senders, where)
        elif Scalar("any") in before - after or after < before:
            self.add(RuleId.TYPE_NARROWED, subject, context + _set_change(before, after), senders, where)
        else:
            self.add(
                RuleId.TYPE_CHANGED, subject, f"{context}{describe(old)} -> {describe(new)}", senders, where
            )

    def inline_move(self, old_name: str, new_name: str) -> RuleId | None:
        """``ref-became-inline`` or ``inline-became-ref`` when two references differ only in naming."""
        old_type = self.old.types.get(self.renamed_from.get(old_name, old_name))
        new_type = self.new.types.get(new_name)
        if old_type is None or new_type is None:
            return None
        if shape(old_type, self.renames) != shape(new_type, {}):
            return None
        if old_type.schema_name is not None and new_type.schema_name is None:
            return RuleId.REF_BECAME_INLINE
        if old_type.schema_name is None and new_type.schema_name is not None:
            return RuleId.INLINE_BECAME_REF
        return None

    def compare_union(self, old: UnionType, new: UnionType, senders: frozenset[Peer]) -> None:
        name = new.name
        if old.tag_wire_name != new.tag_wire_name:
            self.add(
                RuleId.UNION_TAG_CHANGED, name, f"{old.tag_wire_name} -> {new.tag_wire_name}", senders, new
            )
            return
        if new.tagged:
            before = {f"{name}[{v.tag!r}]": v.type for v in old.variants}
            after = {f"{name}[{v.tag!r}]": v.type for v in new.variants}
            for subject in [s for s in before if s in after]:
                self.compare_expr(before[subject], after[subject], subject, senders, new)
            self.compare_members("union", old.open, new, list(before), list(after), senders)
            return
        old_members = sorted({rename_refs(v.type, self.renames) for v in old.variants}, key=describe)
        new_members = sorted({v.type for v in new.variants}, key=describe)
        labels = (
            [f"{name}[{describe(e)}]" for e in old_members if e not in new_members],
            [f"{name}[{describe(e)}]" for e in new_members if e not in old_members],
        )
        self.compare_members("union", old.open, new, *labels, senders)

    def compare_enum(self, old: EnumType, new: EnumType, senders: frozenset[Peer]) -> None:
        if old.base != new.base:
            self.add(RuleId.TYPE_CHANGED, new.name, f"{old.base} enum -> {new.base} enum", senders, new)
            return
        before = [f"{new.name}[{v.value!r}]" for v in old.values]
        after = [f"{new.name}[{v.value!r}]" for v in new.values]
        self.compare_members("enum", old.open, new, before, after, senders)

    def compare_members(
        self,
        kind: MemberKind,
        was_open: bool,
        new: UnionType | EnumType,
        before: list[str],
        after: list[str],
        senders: frozenset[Peer],
    ) -> None:
        """Open/closed flips and members (one subject each) that left or arrived, for unions and enums."""
        state = openness(new.open)
        if was_open != new.open:
            self.add(BECAME[kind, state], new.name, "", senders, new)
        for subject in before:
            if subject not in after:
                self.add(MEMBER_REMOVED[kind, state], subject, "", senders, new)
        for subject in after:
            if subject not in before:
                self.add(MEMBER_ADDED[kind, state], subject, "", senders, new)

    # -- methods --------------------------------------------------------------------

    def compare_methods(self) -> None:
        def index(surface: ApiSurface) -> dict[tuple[str, str], dict[str, Method]]:
            out: dict[tuple[str, str], dict[str, Method]] = {}
            for m in surface.methods:
                out.setdefault((m.wire_name, m.kind), {})[m.side] = m
            return out

        before, after = index(self.old), index(self.new)
        for key in sorted(before.keys() | after.keys()):
            olds, news = before.get(key, {}), after.get(key, {})
            if len(olds) == 1 and len(news) == 1 and olds.keys() != news.keys():
                (old_m,), (new_m,) = olds.values(), news.values()
                callers = set(callers_of(old_m)) | set(callers_of(new_m))
                detail = f"handled by the {old_m.side} -> by the {new_m.side}"
                self.add(RuleId.METHOD_MOVED_SIDE, self.method_subject(new_m), detail, callers, None)
                now = self.python_subjects(self.new_specs[new_m])
                for python in self.python_subjects(self.old_specs[old_m]):
                    if python not in now:
                        self.add(RuleId.PYTHON_METHOD_REMOVED, python, detail, (), None)
                self.compare_method(old_m, new_m)
                continue
            for side, old_m in olds.items():
                if side not in news:
                    self.add(RuleId.METHOD_REMOVED, self.method_subject(old_m), "", callers_of(old_m), None)
                    for python in self.python_subjects(self.old_specs[old_m]):
                        self.add(RuleId.PYTHON_METHOD_REMOVED, python, "", (), None)
                else:
                    self.compare_method(old_m, news[side])
            for side, new_m in news.items():
                if side not in olds:
                    self.add(RuleId.METHOD_ADDED, self.method_subject(new_m), "", callers_of(new_m), None)

    @staticmethod
    def method_subject(m: Method) -> str:
        return f"{m.kind} {m.wire_name} (handled by the {m.side})"

    @staticmethod
    def python_subjects(spec: MethodSpec) -> list[str]:
        """``<side>.<python name>`` for each handler class that has the method (both for the protocol's)."""
        return [f"{side}.{spec.name}" for side in handlers_of(spec.method)]

    def compare_method(self, old: Method, new: Method) -> None:
        subject = self.method_subject(new)
        callers = set(callers_of(old)) | set(callers_of(new))
        if old.unstable != new.unstable:
            self.add(
                RuleId.METHOD_BECAME_UNSTABLE if new.unstable else RuleId.METHOD_BECAME_STABLE,
                subject,
                "",
                callers,
                None,
            )
        for label, before, after in (("params", old.params, new.params), ("result", old.result, new.result)):
            if before is None or after is None:
                if before != after:
                    self.add(RuleId.TYPE_CHANGED, f"{subject} {label}", f"{before} -> {after}", callers, None)
            elif self.renames.get(before, before) != after:
                senders = callers if label == "params" else set(handlers_of(new))
                self.compare_expr(Ref(before), Ref(after), f"{subject} {label}", frozenset(senders), None)
        old_spec, new_spec = self.old_specs[old], self.new_specs[new]
        for python in self.python_subjects(new_spec):
            if old_spec.name != new_spec.name:
                self.add(
                    RuleId.PYTHON_METHOD_RENAMED, python, f"{old_spec.name} -> {new_spec.name}", (), None
                )
            self.compare_signature(old_spec, new_spec, python)

    def compare_signature(self, old: MethodSpec, new: MethodSpec, subject: str) -> None:
        before = signature(self.old, old)
        after = signature(self.new, new)
        for wire, (py, required) in before.items():
            if wire not in after:
                self.add(RuleId.PYTHON_METHOD_ARGUMENT_REMOVED, f"{subject}({py})", "", (), None)
                continue
            new_py, new_required = after[wire]
            if py != new_py:
                self.add(
                    RuleId.PYTHON_METHOD_ARGUMENT_RENAMED,
                    f"{subject}({new_py})",
                    f"{py} -> {new_py}",
                    (),
                    None,
                )
            if new_required and not required:
                self.add(RuleId.PYTHON_METHOD_ARGUMENT_REQUIRED, f"{subject}({new_py})", "", (), None)
        for wire, (py, required) in after.items():
            if wire not in before:
                rule_id = (
                    RuleId.PYTHON_METHOD_ARGUMENT_REQUIRED
                    if required
                    else RuleId.PYTHON_METHOD_ARGUMENT_ADDED
                )
                self.add(rule_id, f"{subject}({py})", "", (), None)


_SEVERITY_ORDER = {severity: i for i, severity in enumerate(SEVERITIES)}
_RULE_ORDER = {r.id: i for i, r in enumerate(CATALOG)}


def _report_order(change: Change) -> tuple[int, bool, int, str, str]:
    """Most severe first, wire before python, then the catalog's order of rules, then by subject."""
    return (
        _SEVERITY_ORDER[change.severity],
        change.layer == "python",
        _RULE_ORDER[change.rule.id],
        change.subject,
        change.detail,
    )


def _set_change(before: frozenset[TypeExpr], after: frozenset[TypeExpr]) -> str:
    parts = []
    if after - before:
        parts.append("adds " + ", ".join(sorted(describe(e) for e in after - before)))
    if before - after:
        parts.append("drops " + ", ".join(sorted(describe(e) for e in before - after)))
    return "; ".join(parts)


def _show_default(f: Field) -> str:
    return repr(to_json(f.default)) if f.has_default else "none"


def signature(surface: ApiSurface, spec: MethodSpec) -> dict[str, tuple[str, bool]]:
    """The keyword-only arguments of a method's Python binding: wire name -> (python name, required).

    They are the bindings' own (:func:`codegen.api.methods.method_spec`): the
    params' fields but ``_meta``, for a union those of all its branches; an
    argument without a default is required.
    """
    classes = surface.classes_of(Ref(spec.method.params))
    wire = {f.py_name: f.wire_name for name in classes for f in surface.all_fields(name)}
    return {wire[p.name]: (p.name, p.default is None) for p in spec.params}


def diff_surfaces(old: ApiSurface, new: ApiSurface) -> SurfaceDiff:
    """Every change from ``old`` to ``new`` (the same stability level of two releases)."""
    changes = _Differ(old, new).run()
    return SurfaceDiff(new.stability, old.release, new.release, changes)


# --- releases ------------------------------------------------------------------------


def diff_releases(old: ReleaseFiles, new: ReleaseFiles, stabilities: Iterable[Stability]) -> DiffResult:
    """Every change between two releases at the given stability levels."""
    wanted = [s for s in ("stable", "unstable") if s in set(stabilities)]
    before, after = surfaces_of(old, wanted), surfaces_of(new, wanted)
    for stability in wanted:
        a, b = before[stability], after[stability]
        if a.protocol_version != b.protocol_version:
            raise CodegenError(
                f"cannot compare protocol version {a.protocol_version} ({old.release}) "
                f"with protocol version {b.protocol_version} ({new.release})",
                file=new.folder / b.meta_file,
                pointer="/version",
            )
    surfaces = tuple(diff_surfaces(before[s], after[s]) for s in wanted)
    return DiffResult(old.release, new.release, surfaces)
