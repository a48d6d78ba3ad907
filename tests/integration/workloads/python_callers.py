"""python_callers.py SECONDS - keeps CPython's _PyEval_EvalFrameDefault hot
through three C callers: the module's frame (PyEval_EvalCode), g called by
map (_PyFunction_Vectorcall) and a generator resumed by sum (gen_send_ex2,
static: no name in Debian's stripped python3)."""
import sys
import time


def g(i):
    return (i * 7) ^ (i >> 3)


def direct(n):
    t = 0
    for i in range(n):  # Python to Python: no C frame between the two
        t += g(i)
    return t


def via_map(n):
    return sum(map(g, range(n)))


def via_generator(n):
    return sum((i * 5) ^ (i >> 2) for i in range(n))


end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    direct(50000)
    via_map(30000)
    via_generator(30000)
