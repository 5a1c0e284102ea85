#!/usr/bin/env python3
"""Every C++ block in README.md and docs/*.md is part of a program that the build compiles.

A block is preceded by a line `<!-- compiled in examples/NAME.cpp -->`; the block's lines
(leading and trailing blanks ignored, so a fragment may sit indented inside a function there)
must appear in that file consecutively. examples/ is built with the project, so a snippet that
stops compiling fails the build, and one that drifts from its example fails this check.
    check_snippets.py SOURCE_DIR
"""
import pathlib
import re
import sys

MARKER = re.compile(r"<!--\s*compiled in (examples/[\w./-]+\.cpp)\s*-->")


def stripped(lines):
    return [line.strip() for line in lines if line.strip()]


def contains(haystack, needle):
    return any(haystack[i:i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))


def check(source, document):
    problems, blocks = [], 0
    lines = document.read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() not in ("```cpp", "```c++", "```cxx"):
            i += 1
            continue
        start = i
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            i += 1
        block = lines[start + 1:i]
        blocks += 1
        where = f"{document.relative_to(source)}:{start + 1}"
        previous = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.search(previous)
        if not marker:
            problems.append(f"{where}: C++ block without '<!-- compiled in examples/NAME.cpp -->' before it")
            continue
        example = source / marker.group(1)
        if not example.is_file():
            problems.append(f"{where}: {marker.group(1)} does not exist")
        elif not contains(stripped(example.read_text().splitlines()), stripped(block)):
            problems.append(f"{where}: the block is not in {marker.group(1)} as written")
        i += 1
    return problems, blocks


def main():
    source = pathlib.Path(sys.argv[1]).resolve()
    documents = [source / "README.md"] + sorted((source / "docs").glob("*.md"))
    problems, blocks = [], 0
    for document in documents:
        found, count = check(source, document)
        problems += found
        blocks += count
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{blocks} C++ blocks in {len(documents)} documents, {len(problems)} problems")
    return 1 if problems or blocks == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
