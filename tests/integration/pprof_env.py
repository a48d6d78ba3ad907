"""pprof_env.py - a scratch directory and environment for `go tool pprof`,
shared by the tests that run it (pprof_check.py, long_names.py): go's caches
and pprof's own files under the test's work directory, never the user's
home, and no debuginfod server asked for what the profile lacks."""
import os
import shutil


def pprof_env(work):
    """Empties `work` and returns the environment to run go tool pprof in."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ)
    env.update(HOME=work, GOCACHE=os.path.join(work, "gocache"),
               GOPATH=os.path.join(work, "gopath"), PPROF_TMPDIR=work, GOFLAGS="")
    env.pop("DEBUGINFOD_URLS", None)
    return env
