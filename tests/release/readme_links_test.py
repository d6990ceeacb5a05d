"""Every file or folder that README.md points at is in the repository: relative Markdown links, and backticked
paths under a top-level folder of the repository or ending in .md. Output paths (runs/, build/), placeholders
(<...>, $VAR, *, ...) and paths outside the clone (../shared/...) are not files of the repository and are left out.
Usage: readme_links_test.py SOURCE_DIR [FILE.md ...] (default README.md)."""
import pathlib
import re
import sys

SKIP_PREFIXES = ("runs/", "build", "http:", "https:", "mailto:", "#", "../", "/", "~")
# Files of other repositories: the raw traces' SOURCE.md in ../shared/traces-raw/<source>/, and the upstream
# datasets' own documents that traces/README.md names beside their URLs.
EXTERNAL = {"SOURCE.md", "AzurePublicDatasetV1.md", "AzureVMNoiseDataset2024.md", "cluster-trace-v2017/trace_201708.md"}
TOP = ("base/", "controller/", "traces/", "scenarios/", "sim/", "emulator/", "cli/", "fuzz/", "analysis/",
       "tests/", "bench/", "scripts/", "cmake/", "docs/", ".ci/")


def references(text: str):
    for target in re.findall(r"\]\(([^)\s]+)\)", text):  # [text](target)
        yield target.split("#")[0]
    for token in re.findall(r"`([^`\s]+)`", text):
        if token.endswith(".md") or token.startswith(TOP):
            yield token
    for name in re.findall(r"(?<![\w/.-])([A-Z][A-Za-z]*\.md)\b", text):  # bare NOTES.md, DESIGN.md ...
        yield name


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    files = sys.argv[2:] or ["README.md"]
    missing = []
    for name in files:
        text = (root / name).read_text(encoding="utf-8")
        base = (root / name).parent
        for ref in sorted(set(references(text))):
            if not ref or ref in EXTERNAL or ref.startswith(SKIP_PREFIXES) or re.search(r"[<>*$…{}]|\.\.\.", ref):
                continue
            path = ref.rstrip(":,.;")
            if not ((base / path).exists() or (root / path).exists()):
                missing.append(f"{name}: {ref}")
    for m in missing:
        print(f"missing: {m}")
    print(f"readme_links_test: {'FAILED' if missing else 'ok'} ({len(missing)} missing)")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
