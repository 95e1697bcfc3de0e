#!/usr/bin/env python3
"""Lists C++ functions whose bodies are longer than a limit (default 80 lines).

Usage: tools/check_function_length.py [--max N] PATH...   (files or directories)

A body's length is the number of lines strictly between the line of its
opening brace and the line of its closing one. Functions are found by a
small scanner, not a compiler: comments, string and character literals and
preprocessor lines are blanked first, then every '{' at namespace or class
scope whose header holds a parameter list opens a function (free functions,
member functions defined in a class, constructors, TEST_CASE bodies). Lambdas
and nested blocks count towards the function that holds them. Exits 1 when
any function is over the limit, 0 otherwise.
"""
import argparse
import os
import re
import sys

SOURCE_EXTS = (".cc", ".h", ".cpp", ".hpp", ".cu")


def blank(text):
    """Replaces comments, literals and preprocessor lines by spaces, keeping newlines."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line, with its continuations.
            while i < n and not (text[i] == "\n" and text[i - 1] != "\\"):
                out.append("\n" if text[i] == "\n" else " ")
                i += 1
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        m = re.match(r'R"([^(\s]*)\(', text[i:i + 20]) if c == "R" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) else None
        if m:
            close = ")" + m.group(1) + '"'
            end = text.find(close, i + m.end())
            end = n if end < 0 else end + len(close)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
            i = end
            continue
        if c in "\"'":
            # A character literal, unless it is a digit separator (1'000).
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum() and \
                    re.match(r"[0-9a-fA-FxXbB']", text[i - 1]) and not re.match(r"\w'\\?.'", text[i - 1:i + 4]):
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def classify(header):
    """What a '{' at namespace or class scope opens, from the text before it."""
    h = " ".join(header.split())
    if re.search(r"\bnamespace\b", h) or re.match(r'^extern\s*""$', h):
        return "namespace"
    if re.search(r"=\s*$", h) or h.endswith(",") or h.endswith("return"):
        return "other"
    if "(" not in h and re.search(r"\b(class|struct|union|enum)\b", h):
        return "class"
    if ")" in h:
        return "function"
    return "other"


def function_name(header):
    h = " ".join(header.split())
    depth_start = h.find("(")
    before = h[:depth_start] if depth_start >= 0 else h
    m = re.search(r"([~\w:<>]+|operator\s*\S+)\s*$", before)
    return (m.group(1) if m else before.strip()) or "?"


def functions(text):
    """Yields (name, first_line, body_lines) for each function in `text`."""
    src = blank(text)
    stack = []  # entries: [kind, header, open_line, name]
    header = []
    line = 1
    for i, c in enumerate(src):
        if c == "\n":
            line += 1
        scope = stack[-1][0] if stack else "namespace"
        in_code = scope in ("function", "block")
        if c == "{":
            if in_code:
                stack.append(["block", "", line, ""])
                continue
            h = "".join(header)
            kind = classify(h)
            # A braced member initializer (x_{...}) in a constructor's init list.
            if kind == "function" and re.search(r"\)\s*(noexcept\s*)?:", h) and re.search(r"[\w>]\s*$", h) and \
                    not re.search(r"\)\s*(const|override|final|noexcept|mutable)?\s*$", h):
                stack.append(["init", h, line, ""])
                continue
            stack.append([kind, h, line, function_name(h) if kind == "function" else ""])
            header = []
        elif c == "}":
            if not stack:
                continue
            kind, h, open_line, name = stack.pop()
            if kind == "init":
                header = list(h) + ["{}"]
                continue
            if kind == "function":
                yield name, open_line, max(0, line - open_line - 1)
            if not in_code or kind == "function":
                header = []
        elif c == ";":
            if not in_code:
                header = []
        elif not in_code:
            header.append(c)
        elif scope == "init":
            pass


def sources(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for f in sorted(files):
                    if f.endswith(SOURCE_EXTS):
                        yield os.path.join(root, f)
        else:
            yield p


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=80, help="longest body allowed, in lines")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    over = []
    for path in sources(args.paths):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name, first, body in functions(text):
            if body > args.max:
                over.append((path, first, name, body))
    for path, first, name, body in over:
        print(f"{path}:{first}: {name}: {body} lines (limit {args.max})")
    if over:
        print(f"{len(over)} function(s) over {args.max} lines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
