"""Writing a table derived from a raw public source (traces/devices/*.csv): the one writer the table scripts share
(scripts/pollux-tables.py, scripts/sailor-tables.py, scripts/sailor-plans.py), so every derived table opens the same
way."""
import os
import sys


def write_table(path, command, attribution, description, header, lines, notes=()):
    """Writes one derived table: the command that made it, the `attribution` line (naming the source, its licence and
    the raw files), a comment saying what a row holds, one comment line per entry of `notes`, the column header, then
    one row per list of fields in `lines`."""
    with open(path, "w", newline="") as out:
        out.write(command + "\n")
        out.write(attribution + ":\n")
        out.write("# " + description + "\n")
        for note in notes:
            out.write("# " + note + "\n")
        out.write(header + "\n")
        for fields in lines:
            out.write(",".join(fields) + "\n")


def raw_folder(raw, *parts):
    """The raw source's folder under `raw` (../shared/traces-raw); exits naming it when it is not there."""
    base = os.path.join(raw, *parts)
    if not os.path.isdir(base):
        sys.exit(f"{base}: not found (clone ../shared beside the repository)")
    return base
