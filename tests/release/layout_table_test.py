"""README.md's Layout table matches the tree: one row per top-level folder of the repository (no row for a folder that
is gone, none missing), and every file or module the table names exists under its row's folder. A name counts as a
module when it is a file (with or without its extension) or a CMake target of that folder.
Usage: layout_table_test.py SOURCE_DIR."""
import pathlib
import re
import sys

# Top-level folders that are not part of the project: build trees, run outputs, editors' and tools' state.
NOT_PROJECT = re.compile(r"^(build.*|runs|\.git|\.venv.*|\.cache|\.idea|\.vscode|__pycache__|.*\.egg-info)$")


def layout_rows(readme: str):
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"`([^`]+)/`", cells[0]) if len(cells) == 3 else None
        if m:
            yield m.group(1), cells[1]


def names_in(text: str):
    """Backticked names that denote files or modules: with an extension, a path, or snake_case."""
    for token in re.findall(r"`([^`\s]+)`", text):
        token = token.rstrip(":,.;")
        if token.startswith(("-", "omnilearn::")) or re.search(r"[<>{}()=*]", token):
            continue
        if re.search(r"\.(h|cpp|md|cmake|sh|py|txt|toml)$", token) or "/" in token or re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", token):
            yield token


def exists(root: pathlib.Path, folder: str, name: str) -> bool:
    base = root / folder
    if (root / name).exists() or (base / name).exists():
        return True
    if "/" in name:
        return False
    for path in base.rglob("*"):
        if path.name == name or path.stem == name:
            return True
    cmake = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in base.rglob("CMakeLists.txt"))
    return re.search(rf"\b(add_library|add_executable|pybind11_add_module)\(\s*{re.escape(name)}\b", cmake) is not None


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    rows = list(layout_rows((root / "README.md").read_text(encoding="utf-8")))
    listed = [folder for folder, _ in rows]
    folders = sorted(p.name for p in root.iterdir() if p.is_dir() and not NOT_PROJECT.match(p.name)
                     and any(q.is_file() for q in p.rglob("*")))
    problems = [f"folder {f}/ has no row in README.md's Layout table" for f in folders if f not in listed]
    problems += [f"the Layout table lists {f}/, which is not in the repository" for f in listed if f not in folders]
    problems += [f"the Layout table lists {f}/ twice" for f in set(listed) if listed.count(f) > 1]
    for folder, what in rows:
        if folder not in folders:
            continue
        for name in names_in(what):
            if not exists(root, folder, name):
                problems.append(f"the Layout table's {folder}/ row names {name}, which is not under {folder}/")
    for p in problems:
        print(f"layout_table_test: {p}")
    print(f"layout_table_test: {'FAILED' if problems else 'ok'} ({len(rows)} rows, {len(problems)} problems)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
