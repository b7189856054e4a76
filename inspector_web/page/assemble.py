#!/usr/bin/env python3
"""Assembles the inspector's single self-contained index.html (//inspector_web:page).

Usage: assemble.py --template index.html --style style.css --wasm coil_inspector.js
                   --out index.html JS...

The template's <!-- coil:style --> becomes an inline <style>, <!-- coil:scripts --> the wasm
module's loader (with the module inlined as base64 by emcc -sSINGLE_FILE=1) followed by the
page's scripts, in the order given. Inline scripts must not contain "</script" or "<!--"
(either would end or confuse the <script> element); both are rewritten in JavaScript-neutral
ways ("<\\/script", "<\\!--"), which only ever occur inside strings, regular expressions or
comments, where the escaped forms mean the same.
"""
import argparse
import re
import sys


# Strings `coil inspect --export` searches the page for; they must occur only where the
# template puts them, never inside inlined code.
RESERVED = ('id="coil-embedded"', "</body>")


def inline_script(source: str, name: str) -> str:
    for reserved in RESERVED:
        if reserved in source:
            raise ValueError("%s contains %r, which only the template may contain" % (name, reserved))
    source = re.sub(r"</(script)", r"<\\/\1", source, flags=re.IGNORECASE)
    source = source.replace("<!--", "<\\!--")
    return "<script>/* %s */\n%s\n</script>" % (name, source)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--template", required=True)
    parser.add_argument("--style", required=True)
    parser.add_argument("--wasm", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("scripts", nargs="+")
    args = parser.parse_args()

    with open(args.template, encoding="utf-8") as f:
        html = f.read()
    for marker in ("<!-- coil:style -->", "<!-- coil:scripts -->"):
        if html.count(marker) != 1:
            print("assemble.py: %s must contain %s exactly once" % (args.template, marker),
                  file=sys.stderr)
            return 1
    with open(args.style, encoding="utf-8") as f:
        style = f.read()
    if "</style" in style.lower():
        print("assemble.py: %s contains </style" % args.style, file=sys.stderr)
        return 1
    scripts = []
    try:
        with open(args.wasm, encoding="utf-8") as f:
            scripts.append(inline_script(f.read(), "wasm core (emscripten, SINGLE_FILE)"))
        for path in args.scripts:
            with open(path, encoding="utf-8") as f:
                scripts.append(inline_script(f.read(), path.rsplit("/", 1)[-1]))
    except ValueError as e:
        print("assemble.py: %s" % e, file=sys.stderr)
        return 1
    html = html.replace("<!-- coil:style -->", "<style>\n" + style + "</style>")
    html = html.replace("<!-- coil:scripts -->", "\n".join(scripts))
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(html)
    return 0


if __name__ == "__main__":
    sys.exit(main())
