"""scripts/docs-check.py catches what it promises: a renamed option, a missing file, a dead anchor, a block of commands
without a language, an unknown directive (each named in the output, exit 1); it runs a good page's blocks in a
temporary copy of the tree, applies `set:`/`append:`/`before:`/`instead:`, reports a failing block (exit 1), and
leaves nothing behind in its temporary folder.
Usage: docs_check_self_test.py SOURCE_DIR BUILD_DIR."""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

BAD = """# Bad page

## A section

[dead anchor](#no-such-section) and [fine](#a-section).

```sh
omnilearn sim scenarios/examples/quick.yaml --no-such-option --out runs/q
omnilearn sim scenarios/examples/no-such-file.yaml --out runs/q
```

```
omnilearn demo --level hl8
```

<!-- docs-check: frobnicate: now -->
```sh
omnilearn demo --level hl8
```

Inline: `omnilearn sweep SWEEP --no-such-sweep-option`.
"""

GOOD = """# Good page

<!-- docs-check: set: seed=99 -->
```sh
omnilearn sim scenarios/examples/quick.yaml --out runs/q
echo written > marker.txt
```

<!-- docs-check: before: echo from-before > before.txt; append: --out runs/appended -->
```sh
test "$(cat before.txt)" = from-before
omnilearn sim scenarios/examples/quick.yaml   # the folder comes from append
```

<!-- docs-check: instead: test -f "$BLOCK" && echo reduced > reduced.txt -->
```sh
omnilearn sweep scenarios/paper/sweep-bsp-levels.yaml --jobs 2 --out runs/long
```

```python
import json, pathlib
assert pathlib.Path("marker.txt").read_text() == "written\\n"   # blocks of a page share the folder
assert json.loads(pathlib.Path("runs/q/manifest.json").read_text())["seed"] == 99, "set: reached the run"
assert pathlib.Path("runs/appended/summary.json").exists(), "append: reached the command"
assert pathlib.Path("reduced.txt").exists() and not pathlib.Path("runs/long").exists(), "instead: ran instead"
```

<!-- docs-check: needs: gpu raw-traces -->
```sh
echo "run only where both exist"
```

<!-- docs-check: lint: not run, only checked -->
```sh
omnilearn demo --level hl8
```
"""

FAILING = """# Failing page

```sh
omnilearn demo --level hl8 > /dev/null
exit 3
```
"""


def run(source: str, build: str, page: pathlib.Path, tmp: pathlib.Path, *extra: str):
    env = dict(os.environ, TMPDIR=str(tmp))
    r = subprocess.run(["/usr/bin/python3", f"{source}/scripts/docs-check.py", "--root", source, "--build", build,
                        *extra, str(page)], capture_output=True, text=True, env=env, timeout=600)
    return r.returncode, r.stdout + r.stderr


def main() -> int:
    source, build = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        folder = pathlib.Path(d)
        pages, tmp = folder / "pages", folder / "tmp"
        pages.mkdir()
        tmp.mkdir()
        for name, text in (("bad.md", BAD), ("good.md", GOOD), ("failing.md", FAILING)):
            (pages / name).write_text(text)

        code, out = run(source, build, pages / "bad.md", tmp, "--lint-only")
        if code != 1:
            failures.append(f"bad.md: expected exit 1, got {code}")
        for expected in ("has no option --no-such-option", "scenarios/examples/no-such-file.yaml' does not exist",
                         "has no heading with anchor #no-such-section", "mark it ```sh",
                         "unknown docs-check directive 'frobnicate'", "has no option --no-such-sweep-option"):
            if expected not in out:
                failures.append(f"bad.md: the output does not say '{expected}'")
        if "#a-section" in out:
            failures.append("bad.md: a link to an existing heading was reported")

        code, out = run(source, build, pages / "good.md", tmp)
        if code != 0:
            failures.append(f"good.md: expected exit 0, got {code}")
        counts = re.search(r"(\d+) blocks run, (\d+) skipped, 0 failed", out)
        if "lint only: " not in out or not counts or int(counts.group(1)) + int(counts.group(2)) != 5:
            failures.append("good.md: expected 5 blocks run or skipped (one lint only), none failed")
        if counts and counts.group(2) == "1" and "skipped: " not in out:
            failures.append("good.md: a skipped block does not say why")

        code, out = run(source, build, pages / "failing.md", tmp)
        if code != 1 or "exit 3" not in out:
            failures.append(f"failing.md: expected exit 1 naming the block's exit 3, got {code}")

        left = sorted(p.name for p in tmp.iterdir())
        if left:
            failures.append(f"docs-check left {left} in its temporary folder")
        if failures:
            print(out)
    for f in failures:
        print(f"docs_check_self_test: {f}")
    print(f"docs_check_self_test: {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
