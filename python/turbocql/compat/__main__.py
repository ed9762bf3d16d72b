"""``python -m turbocql.compat``: run a script or module with the compat shim installed.

Usage, like ``python`` itself::

    python -m turbocql.compat [--allow-shadow] script.py [args...]
    python -m turbocql.compat [--allow-shadow] -m module [args...]
    python -m turbocql.compat [--allow-shadow] -c "code" [args...]

The program sees ``sys.argv`` as it would under ``python script.py args...`` /
``python -m module args...``, and ``sys.path[0]`` is the script's directory (the current
directory for ``-m`` and ``-c``). ``--allow-shadow`` (or ``TURBOCQL_COMPAT_SHADOW=1``)
lets the shim shadow a real classic driver installed in the same environment. The launcher
sets ``TURBOCQL_COMPAT=1`` (and ``TURBOCQL_COMPAT_SHADOW=1`` with ``--allow-shadow``) in
``os.environ`` for child processes that have a site hook (see the package's docstring).
"""

from __future__ import annotations

import os
import runpy
import sys

from turbocql.compat import CompatError, install

USAGE = """\
usage: python -m turbocql.compat [--allow-shadow] (script.py | -m module | -c code) [args...]

Runs the program with `import cassandra` resolving to turbocql (the same module objects).

options:
  --allow-shadow  install the shim even though a real cassandra-driver is installed here
                  (same as TURBOCQL_COMPAT_SHADOW=1)
  -m module       run a module as a script, like `python -m module`
  -c code         run code, like `python -c code`
  -h, --help      show this help and exit
"""


def _parse(argv: list[str]) -> tuple[bool, str, str, list[str]]:
    """(allow_shadow, kind, target, rest) with kind one of "script", "module", "code"."""
    allow_shadow = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--allow-shadow":
            allow_shadow = True
        elif arg in ("-h", "--help"):
            sys.stdout.write(USAGE)
            raise SystemExit(0)
        elif arg in ("-m", "-c"):
            if i + 1 >= len(argv):
                raise SystemExit("python -m turbocql.compat: argument %s needs a value\n\n%s" % (arg, USAGE))
            kind = "module" if arg == "-m" else "code"
            return allow_shadow, kind, argv[i + 1], argv[i + 2 :]
        elif arg.startswith("-m") or arg.startswith("-c"):  # -mpytest, as python accepts
            kind = "module" if arg[1] == "m" else "code"
            return allow_shadow, kind, arg[2:], argv[i + 1 :]
        elif arg == "--":
            i += 1
            break
        elif arg.startswith("-"):
            raise SystemExit("python -m turbocql.compat: unknown option %r\n\n%s" % (arg, USAGE))
        else:
            break
        i += 1
    if i >= len(argv):
        raise SystemExit("python -m turbocql.compat: no script, -m module or -c code given\n\n%s" % USAGE)
    return allow_shadow, "script", argv[i], argv[i + 1 :]


def main(argv: list[str] | None = None) -> None:
    allow_shadow, kind, target, rest = _parse(list(sys.argv[1:] if argv is None else argv))
    try:
        install(allow_shadow=allow_shadow)
    except CompatError as exc:
        raise SystemExit("python -m turbocql.compat: %s" % exc) from None
    os.environ["TURBOCQL_COMPAT"] = "1"
    if allow_shadow:
        os.environ["TURBOCQL_COMPAT_SHADOW"] = "1"

    if kind == "module":
        sys.argv = [target, *rest]  # run_module(alter_sys=True) puts the module's path in argv[0]
        sys.path[0:1] = [os.getcwd()]
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    elif kind == "code":
        sys.argv = ["-c", *rest]
        sys.path[0:1] = [""]
        namespace = {"__name__": "__main__", "__builtins__": __builtins__, "__doc__": None}
        exec(compile(target, "<string>", "exec"), namespace)
    else:
        if not os.path.exists(target):
            sys.stderr.write("python -m turbocql.compat: can't open file %r: no such file\n" % target)
            raise SystemExit(2)
        sys.argv = [target, *rest]
        sys.path[0:1] = [os.path.dirname(os.path.abspath(target))]
        runpy.run_path(target, run_name="__main__")


if __name__ == "__main__":
    main()
