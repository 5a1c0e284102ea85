#!/usr/bin/env python3
"""The folders of src/ are layers (docs/design.md, "Layers"): each may include only itself,
the layers below it and the public headers. Fails, naming each include, when one reaches up."""
import pathlib
import re
import sys

# Lowest first, as docs/design.md lists them.
LAYERS = ["core", "transport", "runtime", "operations", "client", "cli"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.M)


def main(root: pathlib.Path) -> int:
    wrong = []
    for layer_index, layer in enumerate(LAYERS):
        for source in sorted((root / "src" / layer).glob("*.[ch]pp")):
            for used in INCLUDE.findall(source.read_text()):
                if used in LAYERS and LAYERS.index(used) > layer_index:
                    wrong.append(f"{source.relative_to(root)} includes {used}/ (a layer above {layer}/)")
    unknown = sorted(p.name for p in (root / "src").iterdir() if p.is_dir() and p.name not in LAYERS)
    for name in unknown:
        wrong.append(f"src/{name}/ is in no layer: add it to LAYERS here and to docs/design.md")
    for line in wrong:
        print(line)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
