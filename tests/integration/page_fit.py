"""page_fit.py - how wide an HTML report is in headless chromium, for the
tests that check a page fits its window (long_names.py, flame_check.py).
The report has no script and forbids them, so a copy of the page without
its Content-Security-Policy and with a probe script added is measured."""
import os
import re
import subprocess
import tempfile

CHROMIUM = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--window-size=1280,2000"]


def chromium(work, *args):
    """chromium (headless, a fresh profile under work, 1280x2000) with args:
    (exit status, stdout, stderr)."""
    profile = tempfile.mkdtemp(dir=work)
    r = subprocess.run(["timeout", "90", *CHROMIUM, "--user-data-dir=" + profile, *args],
                       capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def page_width(html, work):
    """(the page's scroll width, the window's width) in pixels, or None when
    the probe did not run."""
    probe = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    probe = probe.replace("</body>", "<script>document.body.setAttribute('data-fit', "
                          "document.documentElement.scrollWidth + ' ' + window.innerWidth);"
                          "</script></body>")
    path = os.path.join(work, "probe.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(probe)
    _, dom, _ = chromium(work, "--dump-dom", "file://" + path)
    m = re.search(r'data-fit="(\d+) (\d+)"', dom)
    return (int(m.group(1)), int(m.group(2))) if m else None
