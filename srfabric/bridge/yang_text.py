"""YANG source as a tree of statements, and back to text: enough to rewrite a published module for a server that
cannot read one of its constructs (``yang_inline``). Each argument keeps its source text (quotes, escapes and
``+`` joins as written), so what is not rewritten prints as it was.

Examples
--------
>>> module = parse('module m { prefix "m"; leaf a { type uint8; } // why\\n }')
>>> [child.keyword for child in module.children or []]
['prefix', 'leaf']
>>> module.find("leaf").find("type").value
'uint8'
>>> print(to_text(module), end="")
module m {
  prefix "m";
  leaf a {
    type uint8;
  }
}
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field

from srfabric.errors import ModelError


@dataclass
class Statement:
    """``keyword argument;`` or ``keyword argument { children }``; ``argument`` as written, quotes and all."""

    keyword: str
    argument: str | None = None
    children: list[Statement] | None = None
    column: int = field(default=0, compare=False)  # where the argument began in its source line

    @property
    def value(self) -> str:
        """The argument without its quotes when it is one string (a name or path); strings joined with ``+`` stay
    as written, and so do escapes."""
        raw = self.argument or ""
        if raw[:1] in ("'", '"') and _string_end(raw, 0) == len(raw):
            return raw[1:-1]
        return raw

    def find(self, keyword: str) -> Statement:
        """The first child with ``keyword``; ``ModelError`` when there is none."""
        for child in self.children or []:
            if child.keyword == keyword:
                return child
        raise ModelError(f"yang {self.keyword} {self.value}", f"has no {keyword}")

    def all(self, keyword: str) -> list[Statement]:
        return [child for child in self.children or [] if child.keyword == keyword]

    def walk(self) -> Iterator[Statement]:
        """This statement and every statement under it, parents first."""
        yield self
        for child in self.children or []:
            yield from child.walk()

    def copied(self) -> Statement:
        return copy.deepcopy(self)


def tokens(text: str) -> Iterator[tuple[str, int]]:
    """(token, offset): ``{``, ``}``, ``;``, ``+`` after a quoted string, a quoted string as written, or a bare word;
    comments skipped. ``ModelError`` naming the offset of a comment not closed, or of a comment sequence inside an
    unquoted argument (RFC 7950 6.1.3 allows none there)."""
    at, size, quoted = 0, len(text), False
    while at < size:
        char = text[at]
        if char.isspace():
            at += 1
            continue
        if text.startswith(("//", "/*"), at):
            at = _after(text, "\n" if text[at + 1] == "/" else "*/", at)
            continue
        if char in "{};" or (char == "+" and quoted):
            yield char, at
            at, quoted = at + 1, False
            continue
        end = _string_end(text, at) if char in "\"'" else _word_end(text, at)
        yield text[at:end], at
        at, quoted = end, char in "\"'"


def _word_end(text: str, at: int) -> int:
    end = at
    while end < len(text) and not text[end].isspace() and text[end] not in "{};":
        end += 1
    if "//" in text[at:end] or "/*" in text[at:end]:
        raise ModelError("yang", f"an unquoted argument at offset {at} holds a comment sequence (quote it)")
    return end


def _after(text: str, closing: str, at: int) -> int:
    found = text.find(closing, at + 2)
    if found < 0 and closing == "*/":
        raise ModelError("yang", f"a comment opened at offset {at} is not closed")
    return len(text) if found < 0 else found + len(closing)


def _string_end(text: str, at: int) -> int:
    quote, end = text[at], at + 1
    while end < len(text) and text[end] != quote:
        end += 2 if quote == '"' and text[end] == "\\" else 1
    if end >= len(text):
        raise ModelError("yang", f"a string opened at offset {at} is not closed")
    return end + 1


def parse(text: str) -> Statement:
    """The module (or submodule) statement ``text`` holds; ``ModelError`` naming the offset where it is not
    YANG as this reads it."""
    stream = list(tokens(text))
    statement, at = _statement(text, stream, 0)
    if at != len(stream):
        raise ModelError("yang", f"text after the module's closing brace, at offset {stream[at][1]}")
    return statement


def _statement(text: str, stream: list[tuple[str, int]], at: int) -> tuple[Statement, int]:
    if at >= len(stream) or stream[at][0] in "{};+":
        raise ModelError("yang", f"a statement's keyword expected at offset {_offset(stream, at, text)}")
    keyword, at = stream[at][0], at + 1
    parts: list[str] = []
    while at < len(stream) and stream[at][0] not in "{};":
        parts.append(stream[at][0])
        at += 1
    if not _one_argument(parts):
        raise ModelError("yang", f"{keyword} at offset {stream[at - len(parts) - 1][1]} has more than one argument "
                                 "(strings are joined with +)")
    argument, column = None, 0
    if parts:  # the argument as written, joins and line breaks kept, and the column it starts at
        first, last = stream[at - len(parts)][1], stream[at - 1][1] + len(parts[-1])
        line_start = text.rfind("\n", 0, first) + 1
        argument, column = text[first:last], first - line_start
        if "\n" in argument and "\t" in text[line_start:first]:  # YANG counts a tab as 8 columns: not moved
            raise ModelError("yang", f"a multi-line argument at offset {first} follows a tab: not rewritten")
    if at >= len(stream):
        raise ModelError("yang", f"{keyword} is not ended by ; or a block")
    if stream[at][0] == ";":
        return Statement(keyword, argument, None, column), at + 1
    if stream[at][0] == "}":
        raise ModelError("yang", f"{keyword} is not ended by ; or a block (offset {stream[at][1]})")
    children: list[Statement] = []
    at += 1
    while at < len(stream) and stream[at][0] != "}":
        child, at = _statement(text, stream, at)
        children.append(child)
    if at >= len(stream):
        raise ModelError("yang", f"the block of {keyword} {argument or ''} is not closed")
    return Statement(keyword, argument, children, column), at + 1


def _one_argument(parts: list[str]) -> bool:
    """No argument, one bare word, or quoted strings joined by ``+``."""
    if len(parts) <= 1:
        return True
    return all((part == "+") == (index % 2 == 1) for index, part in enumerate(parts)) and len(parts) % 2 == 1 \
        and all(part[0] in "\"'" for part in parts[::2])


def _offset(stream: list[tuple[str, int]], at: int, text: str) -> int:
    return stream[at][1] if at < len(stream) else len(text)


def to_text(statement: Statement, indent: int = 0) -> str:
    """``statement`` as YANG source, two spaces a level; an argument over several lines moved with its first line,
    so that a double-quoted string keeps its text (its lines' indent is stripped up to its opening quote's
    column, RFC 7950 6.1.3)."""
    head = " " * indent + statement.keyword
    if statement.argument is not None:
        head += " " + _moved(statement.argument, len(head) + 1 - statement.column)
    if statement.children is None:
        return head + ";\n"
    inner = "".join(to_text(child, indent + 2) for child in statement.children)
    return f"{head} {{\n{inner}{' ' * indent}}}\n"


def _moved(argument: str, by: int) -> str:
    """Every line of ``argument`` after its first indented ``by`` more columns (fewer when negative), but for a line
    inside a single-quoted string, which YANG keeps as written; ``ModelError`` when a line cannot move so."""
    lines = argument.split("\n")
    if by == 0 or len(lines) == 1:
        return argument
    for index, in_single in enumerate(_breaks_in_single_quotes(argument), start=1):
        line = lines[index]
        indent = len(line) - len(line.lstrip(" \t"))
        if in_single or not line.strip():
            continue
        if "\t" in line[:indent] or indent + by < 0:
            raise ModelError(f"yang {argument[:40]!r}", f"a line of it cannot move {by} columns (a tab, or too "
                                                        "little indent): not rewritten")
        lines[index] = " " * (indent + by) + line[indent:]
    return "\n".join(lines)


def _breaks_in_single_quotes(argument: str) -> list[bool]:
    """For each line break of ``argument``, whether it lies inside a single-quoted string."""
    quote, escaped, breaks = "", False, []
    for char in argument:
        if char == "\n":
            breaks.append(quote == "'")
        if escaped:
            escaped = False
        elif quote == '"' and char == "\\":
            escaped = True
        elif quote and char == quote:
            quote = ""
        elif not quote and char in "\"'":
            quote = char
    return breaks
