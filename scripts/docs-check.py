#!/usr/bin/python3
"""Runs the commands of README.md and docs/*.md against the build, so that the documentation cannot rot.

Every fenced block marked sh/bash or python is run in a fresh temporary copy of the source tree (build/ linked in,
`omnilearn` on the PATH), each page's blocks in order; an HTML comment `<!-- docs-check: ... -->` on the line before
a block changes how it runs (needs, set, append, instead, before, lint). Every `omnilearn` command, in blocks and in
the prose's inline code, is linted against the subcommand's --help; paths and links (with anchors) must resolve.
The convention is documented in docs/README.md, "Runnable documentation".

Usage: scripts/docs-check.py [--build DIR] [--lint-only] [--keep] [FILE.md ...]   (default: README.md docs/*.md)
Exit status: 0 when every block ran (or was skipped with its reason) and the lint found nothing, 1 otherwise.
"""
from __future__ import annotations

import argparse
import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

RUN_LANGUAGES = {"sh": "bash", "bash": "bash", "python": "python"}
DIRECTIVES = {"needs", "set", "append", "instead", "before", "lint"}
NEEDS = {"cgroup", "torch", "python-ext", "fashion-mnist", "mpi", "smpi", "gpu", "raw-traces"}
# Folders of the repository: a command's argument under one of them must exist.
TOP = ("base/", "controller/", "traces/", "scenarios/", "sim/", "emulator/", "cli/", "fuzz/", "analysis/", "python/",
       "tests/", "bench/", "scripts/", "cmake/", "docs/", "run/")
# Copied into the temporary tree: everything but these.
NOT_COPIED = {".git", "runs", "__pycache__", ".venv"}
BLOCK_TIMEOUT_S = 600
# Words before the program that a command line may start with.
PREFIX_WORDS = {"if", "then", "else", "elif", "do", "while", "until", "!", "time", "exec", "{", "("}
SHELL_BUILTINS = {"for", "done", "fi", "cd", "export", "test", "[", "echo", "printf", "cat", "grep", "cmp", "diff",
                  "mv", "cp", "rm", "mkdir", "sed", "seq", "exit", "true", "false", "}", ")", "R", "set", "ls"}


@dataclass
class Block:
    path: Path          # the Markdown file
    line: int           # line of the opening fence (1-based)
    language: str       # "bash" or "python"
    text: str           # the block, dedented
    directives: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class Page:
    path: Path
    blocks: list[Block]
    prose: str                       # the text outside fenced blocks
    errors: list[str]


def parse_directives(comment: str, where: str, errors: list[str]) -> dict[str, str]:
    """`needs: a b; set: k=v; lint: reason` -> {"needs": "a b", ...}."""
    out: dict[str, str] = {}
    for part in (p.strip() for p in comment.split(";")):
        if not part:
            continue
        key, _, value = part.partition(":")
        key = key.strip()
        if key not in DIRECTIVES:
            errors.append(f"{where}: unknown docs-check directive '{key}' (expected one of {', '.join(sorted(DIRECTIVES))})")
            continue
        out[key] = value.strip()
    if "needs" in out:
        for need in out["needs"].split():
            if need not in NEEDS:
                errors.append(f"{where}: unknown need '{need}' (expected one of {', '.join(sorted(NEEDS))})")
    if "lint" in out and not out["lint"]:
        errors.append(f"{where}: 'lint' needs a reason (why the block is not run)")
    return out


def parse_page(path: Path, display: Path) -> Page:
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks: list[Block] = []
    prose: list[str] = []
    errors: list[str] = []
    i = 0
    pending: tuple[int, str] | None = None  # (line, directive text) of a docs-check comment awaiting its block
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        m = re.match(r"<!--\s*docs-check:(.*?)-->\s*$", stripped)
        if m:
            pending = (i + 1, m.group(1))
            i += 1
            continue
        fence = re.match(r"^(\s*)(```+|~~~+)\s*([\w+-]*)\s*$", line)
        if fence:
            indent, marker, info = fence.group(1), fence.group(2), fence.group(3).lower()
            start = i
            body: list[str] = []
            i += 1
            while i < len(lines) and not re.match(rf"^\s*{re.escape(marker)}\s*$", lines[i]):
                body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
                i += 1
            i += 1  # the closing fence
            text = "\n".join(body) + "\n"
            where = f"{display}:{start + 1}"
            directives = {}
            if pending is not None:
                if pending[0] != start:  # the comment must sit right before the fence
                    errors.append(f"{display}:{pending[0]}: a docs-check comment must be on the line before a block")
                directives = parse_directives(pending[1], where, errors)
                pending = None
            if info in RUN_LANGUAGES:
                blocks.append(Block(display, start + 1, RUN_LANGUAGES[info], text, directives))
            elif directives:
                errors.append(f"{where}: a docs-check comment before a '{info or 'plain'}' block (only sh, bash and "
                              "python blocks run)")
            elif any(re.match(r"^\s*(omnilearn|bash scripts/|sh bench/)\b", b) for b in body):
                errors.append(f"{where}: a block of commands without a language: mark it ```sh")
            continue
        if pending is not None and stripped:
            errors.append(f"{display}:{pending[0]}: a docs-check comment must be on the line before a block")
            pending = None
        prose.append(line)
        i += 1
    return Page(display, blocks, "\n".join(prose), errors)


# --- the lint ---------------------------------------------------------------------------------------------------

def strip_heredocs(script: str) -> str:
    """Drops heredoc bodies (their lines are data, not commands)."""
    out: list[str] = []
    until: str | None = None
    for line in script.split("\n"):
        if until is not None:
            if line.strip() == until:
                until = None
            continue
        out.append(line)
        m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", line)
        if m:
            until = m.group(1)
    return "\n".join(out)


def simple_commands(script: str) -> list[list[str]]:
    """The script's simple commands as word lists (continuations joined, comments, heredocs and redirections out)."""
    tokens: list[str] = []
    for line in strip_heredocs(script).replace("\\\n", " ").split("\n"):
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            tokens += list(lexer) + [";"]
        except ValueError:
            continue
    commands: list[list[str]] = [[]]
    skip_next = False
    for tok in tokens:
        if skip_next:
            skip_next = False
            continue
        if tok and set(tok) <= set(";&|()\n"):
            commands.append([])
        elif tok and set(tok) <= set("<>"):
            skip_next = True  # the redirection's target
        else:
            commands[-1].append(tok)
    return [c for c in commands if c]


def program_words(words: list[str]) -> list[str]:
    """The words from the program on: leading assignments, keywords and wrappers (timeout, mpirun, srun) out."""
    i = 0
    while i < len(words):
        w = words[i]
        if w in PREFIX_WORDS or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w):
            i += 1
        elif w in ("timeout", "nice"):
            i += 2 if w == "timeout" else 1
        elif w in ("mpirun", "srun", "torchrun"):
            rest = words[i + 1:]
            for j, r in enumerate(rest):
                if os.path.basename(r) == "omnilearn":
                    return rest[j:]
            return words[i:]
        else:
            break
    return words[i:]


class Linter:
    def __init__(self, root: Path, build: Path):
        self.root = root
        self.binary = build / "cli" / "omnilearn"
        self.unavailable: set[str] = set()  # subcommands this build left out

    def subcommands_used(self, block: Block) -> set[str]:
        used = set()
        for text in (block.text, block.directives.get("instead", ""), block.directives.get("before", "")):
            for words in simple_commands(text) if block.language == "bash" or text is not block.text else []:
                words = program_words(words)
                if len(words) > 1 and os.path.basename(words[0]) == "omnilearn":
                    used.add(words[1])
        return used

    @functools.lru_cache(maxsize=None)
    def help_text(self, *sub: str) -> str | None:
        if not self.binary.exists():
            return None
        r = subprocess.run([str(self.binary), *sub, "--help"], capture_output=True, text=True, timeout=60)
        return r.stdout + r.stderr

    @functools.lru_cache(maxsize=None)
    def analysis_help(self, sub: str) -> str:
        """The options of `python3 -m omnilearn_analysis SUB` as its argparse source declares them ("" if no SUB):
        read, not run, to spare a pandas import per subcommand."""
        source = (self.root / "analysis" / "omnilearn_analysis" / "__main__.py").read_text(encoding="utf-8")
        parts = re.split(r"add_parser\(", source)
        for part in parts[1:]:
            if part.startswith((f'"{sub}"', f"'{sub}'")):
                return part
        return ""

    def check_paths(self, words: list[str], where: str) -> list[str]:
        errors = []
        for w in words:
            for candidate in (w, w.partition("=")[2]):
                c = candidate.rstrip(",.;:")
                if not c.startswith(TOP) or re.search(r"[$*<>{}\[\]]|\.\.\.", c):
                    continue
                if not (self.root / c).exists():
                    errors.append(f"{where}: '{c}' does not exist in the repository")
        return errors

    def check_options(self, words: list[str], text: str, what: str, where: str) -> list[str]:
        errors = []
        for w in words:
            w = w.strip("[]")
            if w.startswith("--") and len(w) > 2:
                name = w.split("=", 1)[0]
                if not re.search(rf"{re.escape(name)}(?![\w-])", text):
                    errors.append(f"{where}: {what} has no option {name}")
        return errors

    def lint_omnilearn(self, args: list[str], where: str) -> list[str]:
        top = self.help_text()
        if top is None:
            return [f"{where}: {self.binary} is not built"]
        if not args or args[0] in ("--help", "-h", "--version"):
            return []
        sub = [args[0]]
        if not re.search(rf"^\s+{re.escape(args[0])}\s", top, re.M):
            return [f"{where}: omnilearn has no subcommand '{args[0]}'"]
        if args[0] in ("trace", "jobs", "report") and len(args) > 1 and re.fullmatch(r"[a-z][a-z-]*", args[1]):
            sub.append(args[1])
        if args[0] == "report":  # the rest goes to python3 -m omnilearn_analysis; --python is the C++ side's own
            name = sub[1] if len(sub) > 1 else "report"
            text = self.analysis_help(name)
            if not text:
                return [f"{where}: omnilearn report has no subcommand '{name}'"]
            return self.check_options(args[len(sub):], text + " --python", "omnilearn " + " ".join(sub), where) + \
                self.check_paths(args, where)
        text = self.help_text(*sub) or ""
        if re.search(r"unknown command '", text):  # listed, but this build left it out (no SimGrid, no testbed)
            self.unavailable.add(args[0])
            return []
        return self.check_options(args[len(sub):], text, "omnilearn " + " ".join(sub), where) + \
            self.check_paths(args, where)

    def lint_script(self, script: str, args: list[str], where: str) -> list[str]:
        path = self.root / script
        if not path.is_file():
            return [f"{where}: {script} does not exist"]
        return self.check_options(args, path.read_text(encoding="utf-8", errors="replace"), script, where) + \
            self.check_paths(args, where)

    def lint_command(self, words: list[str], where: str) -> list[str]:
        words = program_words(words)
        if not words:
            return []
        prog = words[0]
        if os.path.basename(prog) == "omnilearn":
            return self.lint_omnilearn(words[1:], where)
        if prog in ("bash", "sh") and len(words) > 1 and words[1].endswith(".sh") and words[1].startswith(TOP):
            return self.lint_script(words[1], words[2:], where)
        if prog.endswith(".sh") and "/" in prog and not prog.startswith(("/", "$")):
            return self.lint_script(prog, words[1:], where)
        if os.path.basename(prog).startswith("python3") or prog.endswith("/python"):
            rest = words[1:]
            if len(rest) >= 2 and rest[0] == "-m" and rest[1] == "omnilearn_analysis":
                if len(rest) < 3:
                    return []
                text = self.analysis_help(rest[2])
                if not text:
                    return [f"{where}: python3 -m omnilearn_analysis has no subcommand '{rest[2]}'"]
                return self.check_options(rest[3:], text, f"omnilearn_analysis {rest[2]}", where) + \
                    self.check_paths(rest, where)
            for k, w in enumerate(rest):  # python3 [-m torch.distributed.run ...] path/to/script.py ARGS
                if w.endswith(".py") and w.startswith(TOP):
                    return self.lint_script(w, rest[k + 1:], where)
            return self.check_paths(rest, where)
        if prog in SHELL_BUILTINS:
            return []
        return self.check_paths(words[1:], where)

    def lint_block(self, block: Block) -> list[str]:
        if block.language == "python":
            try:
                compile(block.text, block.where, "exec")
            except SyntaxError as e:
                return [f"{block.where}: the python block does not compile: {e}"]
            return []
        errors = []
        for words in simple_commands(block.text):
            errors += self.lint_command(words, block.where)
        for key in ("instead", "before"):
            for words in simple_commands(block.directives.get(key, "")):
                errors += self.lint_command(words, f"{block.where} ({key})")
        return errors

    def lint_prose(self, page: Page) -> list[str]:
        """Inline `omnilearn ...` commands of the prose: the subcommand and its options exist."""
        errors = []
        for m in re.finditer(r"`([^`]+)`", page.prose):
            span = " ".join(m.group(1).split())
            if not re.match(r"^(mpirun .*\s)?omnilearn (-|[a-z])", span):
                continue
            line = page.prose[:m.start()].count("\n") + 1
            try:
                words = shlex.split(span.replace("...", ""))
            except ValueError:
                words = span.split()
            errors += self.lint_command(words, f"{page.path} (prose, near line {line}: `{span[:60]}`)")
        return errors


# --- links ------------------------------------------------------------------------------------------------------

def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation out, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@functools.lru_cache(maxsize=None)
def anchors(path: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    out = set()
    in_fence = False
    for line in path.read_text(encoding="utf-8").split("\n"):
        if re.match(r"^\s*(```|~~~)", line):
            in_fence = not in_fence
        m = None if in_fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return frozenset(out)


def check_links(page: Page, file: Path) -> list[str]:
    errors = []
    for m in re.finditer(r"\]\(([^)\s]+)\)", page.prose):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):
            continue
        ref, _, anchor = target.partition("#")
        dest = (file.parent / ref).resolve() if ref else file
        if not dest.exists():
            errors.append(f"{page.path}: link to {target}: {ref} does not exist")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            errors.append(f"{page.path}: link to {target}: {dest.name} has no heading with anchor #{anchor}")
    return errors


# --- running ----------------------------------------------------------------------------------------------------

class Machine:
    """What this machine and build have, for `needs:`; each answer is a reason when missing, else None."""

    def __init__(self, root: Path, build: Path):
        self.root, self.build = root, build

    @functools.lru_cache(maxsize=None)
    def missing(self, need: str) -> str | None:
        if need == "cgroup":
            return self._cgroup()
        if need == "torch":
            if not (self.build / "cli" / "omnilearn-sim-train").exists():
                return "the build has no LibTorch (no build/cli/omnilearn-sim-train)"
            r = subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True, text=True)
            return None if r.returncode == 0 else "/usr/bin/python3 cannot import torch (python3-torch)"
        if need == "python-ext":
            found = list((self.build / "python" / "omnilearn").glob("_core*.so"))
            return None if found else "no Python extension in build/python/omnilearn (pybind11 missing?)"
        if need == "fashion-mnist":
            return None if Path("/usr/share/datasets/fashion-mnist").is_dir() else \
                "Fashion-MNIST missing: install the Debian package dataset-fashion-mnist"
        if need == "mpi":
            if not shutil.which("mpirun"):
                return "mpirun is not on PATH (openmpi-bin)"
            r = subprocess.run(["ldd", str(self.build / "cli" / "omnilearn")], capture_output=True, text=True)
            return None if "libmpi" in r.stdout else "omnilearn was built without MPI"
        if need == "smpi":
            return None if shutil.which("smpicc") else "smpicc is not on PATH (SimGrid's SMPI)"
        if need == "gpu":
            if not shutil.which("nvidia-smi"):
                return "no GPU here (no nvidia-smi)"
            r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
            return None if r.returncode == 0 and "GPU" in r.stdout else "nvidia-smi lists no GPU"
        if need == "raw-traces":
            return None if (self.root.parent / "shared" / "traces-raw").is_dir() else \
                "the raw traces are not beside the clone (../shared/traces-raw)"
        return f"unknown need {need}"

    @staticmethod
    def _cgroup() -> str | None:
        try:
            mounts = Path("/proc/mounts").read_text().split("\n")
        except OSError as e:
            return f"cannot read /proc/mounts ({e})"
        for m in mounts:
            parts = m.split()
            if len(parts) < 4:
                continue
            if (parts[2] == "cgroup" and "cpu" in parts[3].split(",")) or \
                    (parts[2] == "cgroup2" and parts[1] == "/sys/fs/cgroup"):
                if os.access(parts[1], os.W_OK):
                    return None
                return f"no cgroup write access ({parts[1]} is not writable)"
        return "no cgroup cpu controller mounted"


SHIM = """#!/bin/bash
# docs-check: the build's omnilearn, with the block's `set:` overrides added to scenario runs.
extra=()
if [ -n "${DOCS_CHECK_SET:-}" ]; then
  case "${1:-}" in
    sim|sweep|emulate|validate)
      for arg in "$@"; do
        case "$arg" in *.yaml) for kv in $DOCS_CHECK_SET; do extra+=(--set "$kv"); done; break ;; esac
      done ;;
  esac
fi
exec "%s" "$@" "${extra[@]}"
"""


def with_append(script: str, args: str) -> str:
    """Adds `args` at the end of the script's last command line (before a trailing `# comment`)."""
    lines = script.rstrip("\n").split("\n")
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip() and not lines[i].lstrip().startswith("#"):
            m = re.search(r"\s+#\s", lines[i])
            code, rest = (lines[i][:m.start()], lines[i][m.start():]) if m else (lines[i], "")
            lines[i] = f"{code.rstrip()} {args}{rest}"
            break
    return "\n".join(lines) + "\n"


def copy_tree(root: Path, build: Path, dest: Path) -> None:
    def ignore(folder: str, names: list[str]) -> set[str]:
        top = Path(folder) == root
        return {n for n in names if n in NOT_COPIED or (top and n.startswith("build")) or (Path(folder) / n) == build}
    shutil.copytree(root, dest, ignore=ignore, symlinks=True)
    (dest / "build").symlink_to(build)
    shared = root.parent / "shared"
    if shared.is_dir():
        (dest.parent / "shared").symlink_to(shared)


class Runner:
    def __init__(self, root: Path, build: Path, machine: Machine, linter: Linter, keep: bool):
        self.root, self.build, self.machine, self.linter, self.keep = root, build, machine, linter, keep

    def run_page(self, page: Page) -> tuple[list[str], int, int]:
        """Runs the page's blocks in one temporary tree; returns (failures, blocks run, blocks skipped)."""
        failures: list[str] = []
        ran = skipped = 0
        runnable = [b for b in page.blocks if "lint" not in b.directives]
        for b in page.blocks:
            if "lint" in b.directives:
                print(f"lint only: {b.where}: {b.directives['lint']}")
        if not runnable:
            return failures, ran, skipped
        tmp = Path(tempfile.mkdtemp(prefix="omnilearn-docs-check-"))
        try:
            work = tmp / "repo"
            copy_tree(self.root, self.build, work)
            for d in ("home", "tmp", "cache", "bin", "blocks"):
                (tmp / d).mkdir()
            shim = tmp / "bin" / "omnilearn"
            shim.write_text(SHIM % (self.build / "cli" / "omnilearn"))
            shim.chmod(0o755)
            env = dict(os.environ, HOME=str(tmp / "home"), TMPDIR=str(tmp / "tmp"), XDG_CACHE_HOME=str(tmp / "cache"),
                       PATH=f"{tmp / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}", PYTHONDONTWRITEBYTECODE="1",
                       OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            env.pop("DOCS_CHECK_SET", None)
            # The datasets' cache: reuse the user's decompressed Fashion-MNIST instead of a copy per page.
            user_cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "omnilearn"
            if user_cache.is_dir():
                (tmp / "cache" / "omnilearn").symlink_to(user_cache)
            for b in runnable:
                missing = [f"{n} ({why})" for n in b.directives.get("needs", "").split()
                           if (why := self.machine.missing(n))]
                missing += [f"omnilearn {c} (not in this build)" for c in
                            sorted(self.linter.subcommands_used(b) & self.linter.unavailable)]
                if missing:
                    print(f"skipped: {b.where}: needs {'; '.join(missing)}")
                    skipped += 1
                    continue
                error = self.run_block(b, work, tmp, env)
                ran += 1
                if error:
                    print(f"FAILED: {b.where} (the output is at the end)")
                    failures.append(error)
        finally:
            if self.keep:
                print(f"docs-check: kept {tmp}")
            else:
                shutil.rmtree(tmp, ignore_errors=True)
        return failures, ran, skipped

    def run_block(self, b: Block, work: Path, tmp: Path, base_env: dict) -> str | None:
        env = dict(base_env)
        if "set" in b.directives:
            env["DOCS_CHECK_SET"] = b.directives["set"]
        if b.language == "python":
            env["PYTHONPATH"] = f"{work / 'python'}:{work / 'analysis'}"
            env["OMNILEARN_EXTENSION_DIR"] = str(self.build / "python" / "omnilearn")
        suffix = ".py" if b.language == "python" else ".sh"
        block_file = tmp / "blocks" / f"{b.path.name}-{b.line}{suffix}"
        block_file.write_text(b.text)
        env["BLOCK"] = str(block_file)
        steps: list[tuple[str, list[str]]] = []
        if "before" in b.directives:
            steps.append(("before", ["bash", "-euo", "pipefail", "-c", b.directives["before"]]))
        if "instead" in b.directives:
            steps.append(("instead", ["bash", "-euo", "pipefail", "-c", b.directives["instead"]]))
        elif b.language == "python":
            steps.append(("block", ["/usr/bin/python3", str(block_file)]))
        else:
            text = with_append(b.text, b.directives["append"]) if "append" in b.directives else b.text
            run_file = tmp / "blocks" / f"{b.path.name}-{b.line}.run.sh"
            run_file.write_text(text)
            steps.append(("block", ["bash", "-euo", "pipefail", str(run_file)]))
        start = time.monotonic()
        for name, cmd in steps:
            try:
                r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
                code, out = r.returncode, r.stdout + r.stderr
            except subprocess.TimeoutExpired as e:
                code = -1
                out = f"timed out after {BLOCK_TIMEOUT_S} s\n" + ((e.stdout or b"").decode(errors="replace") if
                                                                 isinstance(e.stdout, bytes) else (e.stdout or ""))
            if code != 0:
                shown = b.directives.get("instead") if name == "instead" else (
                    b.directives["before"] if name == "before" else b.text)
                tail = "\n".join(out.rstrip().split("\n")[-40:])
                return (f"{b.where}: the {name} step failed (exit {code}):\n--- ran:\n{shown.rstrip()}\n"
                        f"--- output (last lines):\n{tail}\n---")
        how = ", ".join(f"{k}: {v}" for k, v in b.directives.items() if k in ("set", "append", "instead"))
        print(f"ok: {b.where} ({time.monotonic() - start:.1f} s{'; ' + how if how else ''})")
        return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/*.md)")
    ap.add_argument("--build", default=None, help="build folder (default: <repository>/build)")
    ap.add_argument("--root", default=None, help="repository root (default: this script's parent's parent)")
    ap.add_argument("--lint-only", action="store_true", help="check commands, paths and links; run nothing")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folders (their paths are printed)")
    opts = ap.parse_args()
    root = Path(opts.root).resolve() if opts.root else Path(__file__).resolve().parent.parent
    build = Path(opts.build).resolve() if opts.build else root / "build"
    files = [Path(f) for f in opts.files] or \
        [Path("README.md"), *(p.relative_to(root) for p in sorted((root / "docs").glob("*.md")))]
    started = time.monotonic()
    linter, machine = Linter(root, build), Machine(root, build)
    runner = Runner(root, build, machine, linter, opts.keep)
    problems: list[str] = []
    ran = skipped = 0
    for f in files:
        full = f if f.is_absolute() else root / f
        page = parse_page(full, f)
        problems += page.errors + check_links(page, full) + linter.lint_prose(page)
        for b in page.blocks:
            problems += linter.lint_block(b)
    if problems:
        for p in problems:
            print(f"docs-check: {p}", file=sys.stderr)
        print(f"docs-check: FAILED: {len(problems)} problem(s) in the lint (commands, paths, links)", file=sys.stderr)
        return 1
    if not opts.lint_only:
        for f in files:
            full = f if f.is_absolute() else root / f
            failures, r, s = runner.run_page(parse_page(full, f))
            ran, skipped = ran + r, skipped + s
            problems += failures
    for p in problems:
        print(f"docs-check: {p}", file=sys.stderr)
    verdict = "FAILED" if problems else "ok"
    print(f"docs-check: {verdict}: {len(files)} files, {ran} blocks run, {skipped} skipped, "
          f"{len(problems)} failed, {time.monotonic() - started:.0f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
