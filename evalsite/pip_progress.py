"""``pip install`` with one progress line instead of its log: what pip is doing and how many
packages it has reached. Its whole log is printed only if it fails.

Run with the virtualenv's Python (the Makefile does): ``.venv/bin/python evalsite/pip_progress.py
-r requirements.txt``. The standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import subprocess
import sys

# pip's log lines that move the count, and what the line then says.
STEPS = {
    "Collecting ": "resolving",
    "Requirement already satisfied: ": "resolving",
    "Downloading ": "downloading",
    "Using cached ": "resolving",
    "Building wheel": "building",
}


class Line:
    """One line rewritten in place on a terminal; elsewhere (a log) a line per phase only."""

    def __init__(self) -> None:
        self.tty = sys.stdout.isatty()
        self.phase = ""

    def show(self, phase: str, text: str) -> None:
        if self.tty:
            sys.stdout.write(f"\r\x1b[K  pip: {text[:100]}")
            sys.stdout.flush()
        elif phase != self.phase:
            print(f"  pip: {text}", flush=True)
        self.phase = phase

    def end(self, text: str) -> None:
        if self.tty:
            sys.stdout.write("\r\x1b[K")
        print(f"  pip: {text}", flush=True)


def main(arguments: list[str]) -> int:
    command = [sys.executable, "-m", "pip", "install", "--progress-bar", "off", *arguments]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )
    assert process.stdout is not None
    log: list[str] = []
    line, packages = Line(), 0
    for text in process.stdout:
        log.append(text)
        for start, phase in STEPS.items():
            if text.startswith(start):
                packages += start in ("Collecting ", "Requirement already satisfied: ")
                name = text[len(start) :].split()[0] if text[len(start) :].split() else ""
                line.show(phase, f"{packages} requirements read · {phase} {name}")
        if text.startswith("Installing collected packages:"):
            count = len(text.split(":", 1)[1].split(","))
            line.show("installing", f"installing {count} packages (the longest step) ...")
    code = process.wait()
    if code:
        line.end(f"failed (exit {code}); its log:")
        sys.stdout.write("".join(log))
        return code
    installed = [t for t in log if t.startswith("Successfully installed ")]
    count = len(installed[-1].split()) - 2 if installed else 0
    line.end(f"{count} packages installed" if count else "every package already there")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
